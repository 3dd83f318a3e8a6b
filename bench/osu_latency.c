/*
 * osu_latency: point-to-point latency between two ranks, OSU methodology and output.
 *
 * Rank 0 sends SIZE bytes and waits for the same size back; rank 1 mirrors it. The time of
 * `iters` round trips (after `skip` untimed ones) divided by 2 * iters is the one-way latency.
 * Blocking MPI_Send/MPI_Recv, as OSU does, so the number includes each call's full path.
 * `-d cuda X Y` puts the buffers in device memory (umpi_bench.h); `-c` checks, after each size,
 * that both sides received the other's bytes.
 */
#include "umpi_bench.h"

#define TAG 1

static double run_size(const struct bench_opts *o, int rank, char *sbuf, char *rbuf, size_t size, int *valid)
{
    int iters = bench_iters(o, size), skip = bench_skip(o, size);
    int count = (int)size, peer = bench_peer(rank), first = bench_first(rank);
    double t0 = 0.0, lat;

    bench_buf_fill(sbuf, o->validate ? bench_pattern(size, first) : 'a', size, o->mem);
    bench_buf_fill(rbuf, o->validate ? bench_pattern(size, !first) ^ 0xff : 'b', size, o->mem);
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
    lat = (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
    *valid = 1;
    if (o->validate) {
        /* both sides received the other's bytes; the pair agrees on the verdict */
        int mine = bench_buf_check(rbuf, bench_pattern(size, !first), size, o->mem) == 0, theirs = 0;
        MPI_Sendrecv(&mine, 1, MPI_INT, peer, BENCH_TAG_SYNC, &theirs, 1, MPI_INT, peer, BENCH_TAG_SYNC,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        *valid = mine && theirs;
    }
    return lat;
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    char *sbuf = NULL, *rbuf = NULL;
    int rank, rc = EXIT_FAILURE, failed = 0;

    bench_opts_default(&o, BENCH_LATENCY);
    if (bench_init(&argc, &argv, &o, &rank, &rc) != 0)
        return rc;
    if (bench_buf_alloc((void **)&sbuf, o.max_size, o.mem) != 0
        || bench_buf_alloc((void **)&rbuf, o.max_size, o.mem) != 0) {
        fprintf(stderr, "%s: cannot allocate 2 x %zu bytes of %s memory\n", argv[0], o.max_size,
                bench_mem_name(o.mem));
        MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
        goto fail;
    }

    if (rank == 0)
        bench_print_header(&o);
    for (size_t size = bench_first_size(o.min_size); size <= o.max_size; size = bench_next_size(size)) {
        int valid;
        double lat = run_size(&o, rank, sbuf, rbuf, size, &valid);
        failed |= !valid;
        if (rank == 0)
            bench_print_row_ext(&o, size, lat, 0.0, valid);
    }
    rc = failed ? EXIT_FAILURE : EXIT_SUCCESS;

fail:
    bench_buf_free(sbuf, o.mem);
    bench_buf_free(rbuf, o.mem);
    MPI_Finalize();
    return rc;
}
