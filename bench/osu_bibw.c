/*
 * osu_bibw: bidirectional bandwidth between two ranks, OSU methodology and output.
 *
 * Each iteration both ranks post a window of MPI_Irecv, then a window of MPI_Isend, and
 * wait for all of them: traffic flows both ways at once. Bandwidth counts the bytes of both
 * directions: 2 * size * window * iters / time, in MB/s (MB = 1e6 bytes).
 * `-d cuda X Y` puts the buffers in device memory (umpi_bench.h); `-c` checks, after each size,
 * that both sides received the other's bytes.
 */
#include "umpi_bench.h"

#define TAG_DATA 100

static double run_size(const struct bench_opts *o, int rank, char *sbuf, char *rbuf,
                       MPI_Request *reqs, MPI_Status *stats, size_t size, int *valid)
{
    int iters = bench_iters(o, size), skip = bench_skip(o, size);
    int count = (int)size, peer = bench_peer(rank), w = o->window, first = bench_first(rank);
    double t0 = 0.0, t;

    bench_buf_fill(sbuf, o->validate ? bench_pattern(size, first) : 'a', size, o->mem);
    bench_buf_fill(rbuf, o->validate ? bench_pattern(size, !first) ^ 0xff : 'b', size, o->mem);
    bench_sync(peer);

    for (int i = 0; i < iters + skip; i++) {
        if (i == skip)
            t0 = MPI_Wtime();
        /* Receives first, so no send arrives unexpected. */
        for (int j = 0; j < w; j++)
            MPI_Irecv(rbuf, count, MPI_CHAR, peer, TAG_DATA, MPI_COMM_WORLD, &reqs[j]);
        for (int j = 0; j < w; j++)
            MPI_Isend(sbuf, count, MPI_CHAR, peer, TAG_DATA, MPI_COMM_WORLD, &reqs[w + j]);
        MPI_Waitall(2 * w, reqs, stats);
    }
    t = MPI_Wtime() - t0;
    *valid = 1;
    if (o->validate) {
        int mine = bench_buf_check(rbuf, bench_pattern(size, !first), size, o->mem) == 0, theirs = 0;
        MPI_Sendrecv(&mine, 1, MPI_INT, peer, BENCH_TAG_SYNC, &theirs, 1, MPI_INT, peer, BENCH_TAG_SYNC,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        *valid = mine && theirs;
    }
    return (double)size / 1e6 * 2.0 * (double)iters * (double)w / t;
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    char *sbuf = NULL, *rbuf = NULL;
    MPI_Request *reqs = NULL;
    MPI_Status *stats = NULL;
    int rank, rc = EXIT_FAILURE, failed = 0;

    bench_opts_default(&o, BENCH_BIBW);
    if (bench_init(&argc, &argv, &o, &rank, &rc) != 0)
        return rc;
    reqs = malloc(sizeof(*reqs) * 2 * (size_t)o.window);
    stats = malloc(sizeof(*stats) * 2 * (size_t)o.window);
    if (reqs == NULL || stats == NULL || bench_buf_alloc((void **)&sbuf, o.max_size, o.mem) != 0
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
        double bw = run_size(&o, rank, sbuf, rbuf, reqs, stats, size, &valid);
        failed |= !valid;
        if (rank == 0)
            bench_print_row_ext(&o, size, bw, 0.0, valid);
    }
    rc = failed ? EXIT_FAILURE : EXIT_SUCCESS;

fail:
    bench_buf_free(sbuf, o.mem);
    bench_buf_free(rbuf, o.mem);
    free(reqs);
    free(stats);
    MPI_Finalize();
    return rc;
}
