/*
 * osu_latency: point-to-point latency between two ranks, OSU methodology and output.
 *
 * Rank 0 sends SIZE bytes and waits for the same size back; rank 1 mirrors it. The time of
 * `iters` round trips (after `skip` untimed ones) divided by 2 * iters is the one-way latency.
 * Blocking MPI_Send/MPI_Recv, as OSU does, so the number includes each call's full path.
 */
#include "umpi_bench.h"

#define TAG 1

static double run_size(const struct bench_opts *o, int rank, char *sbuf, char *rbuf, size_t size)
{
    int iters = bench_iters(o, size), skip = bench_skip(o, size);
    int count = (int)size, peer = bench_peer(rank);
    double t0 = 0.0;

    bench_buf_fill(sbuf, 'a', size, o->mem);
    bench_buf_fill(rbuf, 'b', size, o->mem);
    bench_sync(peer);

    for (int i = 0; i < iters + skip; i++) {
        if (i == skip)
            t0 = MPI_Wtime();
        if (bench_first(rank)) {
            MPI_Send(sbuf, count, MPI_CHAR, peer, TAG, MPI_COMM_WORLD);
            MPI_Recv(rbuf, count, MPI_CHAR, peer, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rbuf, count, MPI_CHAR, peer, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, count, MPI_CHAR, peer, TAG, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    char *sbuf = NULL, *rbuf = NULL;
    int rank, rc = EXIT_FAILURE;

    bench_opts_default(&o, BENCH_LATENCY);
    if (bench_init(&argc, &argv, &o, &rank, &rc) != 0)
        return rc;
    if (bench_buf_alloc((void **)&sbuf, o.max_size, o.mem) != 0
        || bench_buf_alloc((void **)&rbuf, o.max_size, o.mem) != 0) {
        fprintf(stderr, "%s: cannot allocate 2 x %zu bytes\n", argv[0], o.max_size);
        MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
        goto fail;
    }

    if (rank == 0)
        bench_print_header(&o);
    for (size_t size = bench_first_size(o.min_size); size <= o.max_size; size = bench_next_size(size)) {
        double lat = run_size(&o, rank, sbuf, rbuf, size);
        if (rank == 0)
            bench_print_row(size, lat);
    }
    rc = EXIT_SUCCESS;

fail:
    bench_buf_free(sbuf, o.mem);
    bench_buf_free(rbuf, o.mem);
    MPI_Finalize();
    return rc;
}
