/*
 * dtype_pack: MPI_Pack of the strided vector of dtype_bench.h (8-byte blocks, 16-byte stride)
 * against memcpy of the same payload. The value printed is pack time / memcpy time (lower is
 * better; 1.0 would be packing at memcpy speed). Rank 0 measures; the other ranks only take part
 * in MPI_Init and MPI_Finalize (bench/compare runs everything on 2 ranks unless given -n).
 */
#include "dtype_bench.h"

static double time_loop(int iters, int what, MPI_Datatype t, int count, const void *src, void *dst, size_t payload)
{
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (what == 0) {
            int pos = 0;
            MPI_Pack(src, count, t, dst, (int) payload, &pos, MPI_COMM_SELF);
        } else {
            memcpy(dst, src, payload);
        }
    }
    return MPI_Wtime() - t0;
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    int rank, rc = EXIT_FAILURE;
    size_t unit, extent;
    void *src = NULL, *dst = NULL;

    bench_opts_default(&o, BENCH_LATENCY);
    o.min_size = 64;
    if (bench_init(&argc, &argv, &o, &rank, &rc) != 0)
        return rc;
    MPI_Datatype t = dtype_bench_make("vector", &unit, &extent);
    size_t span = (o.max_size / unit + 1) * extent;
    if (bench_buf_alloc(&src, span, o.mem) != 0 || bench_buf_alloc(&dst, span, o.mem) != 0) {
        fprintf(stderr, "%s: cannot allocate 2 x %zu bytes\n", argv[0], span);
        MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
    }
    bench_buf_fill(src, 'a', span, o.mem);
    bench_buf_fill(dst, 'b', span, o.mem);
    if (rank == 0) {
        printf("# " BENCH_NAME_PREFIX " MPI_Pack of a strided vector v" BENCH_VERSION "\n");
        printf("# %-*s%*s\n", BENCH_SIZE_WIDTH + 4, "Size", BENCH_FIELD_WIDTH - 6, "Pack/memcpy");
        for (size_t size = bench_first_size(o.min_size); size <= o.max_size; size = bench_next_size(size)) {
            int count = (int) (size / unit), iters = bench_iters(&o, size), skip = bench_skip(&o, size);
            size_t payload = (size_t) count * unit;
            /* Interleave warm-up and timing so both see the same cache state. */
            time_loop(skip, 0, t, count, src, dst, payload);
            double pack = time_loop(iters, 0, t, count, src, dst, payload);
            time_loop(skip, 1, t, count, src, dst, payload);
            double copy = time_loop(iters, 1, t, count, src, dst, payload);
            bench_print_row(payload, pack / copy);
        }
    }
    MPI_Type_free(&t);
    bench_buf_free(src, o.mem);
    bench_buf_free(dst, o.mem);
    MPI_Finalize();
    return EXIT_SUCCESS;
}
