/*
 * osu_barrier: MPI_Barrier latency, OSU methodology.
 *
 * One row (size 0): the mean time of one barrier.
 * OSU methodology and output (coll_bench.h); standard MPI only.
 */
#include "coll_bench.h"

struct ctx {
    char *sbuf, *rbuf;
    int nprocs;
};

static void call(void *arg, size_t size)
{
    struct ctx *c = arg;
    (void)c;
    (void)size;
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    static const struct coll_bench b = {"Barrier Latency Test", 0, 1, 1};
    struct coll_opts o;
    struct ctx c = {NULL, NULL, 0};
    int rank, rc = EXIT_FAILURE;

    if (coll_init(&argc, &argv, &o, &b, &rank, &rc) != 0)
        return rc;
    MPI_Comm_size(MPI_COMM_WORLD, &c.nprocs);
    size_t len = o.max_size * 1;
    if (bench_buf_alloc((void **)&c.sbuf, len, BENCH_MEM_HOST) != 0
        || bench_buf_alloc((void **)&c.rbuf, len, BENCH_MEM_HOST) != 0) {
        fprintf(stderr, "%s: cannot allocate 2 x %zu bytes\n", argv[0], len);
        MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
        goto fail;
    }
    /* Written before timing, so the pages exist. */
    bench_buf_fill(c.sbuf, 0, len, BENCH_MEM_HOST);
    bench_buf_fill(c.rbuf, 0, len, BENCH_MEM_HOST);

    coll_run_sweep(&o, &b, rank, call, &c);
    rc = EXIT_SUCCESS;

fail:
    bench_buf_free(c.sbuf, BENCH_MEM_HOST);
    bench_buf_free(c.rbuf, BENCH_MEM_HOST);
    MPI_Finalize();
    return rc;
}
