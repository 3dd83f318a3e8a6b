/*
 * osu_bw: unidirectional bandwidth between two ranks, OSU methodology and output.
 *
 * Each iteration rank 0 posts a window of MPI_Isend, rank 1 a window of MPI_Irecv, both
 * MPI_Waitall; rank 1 then returns a 4-byte ack so rank 0's clock sees the data land.
 * Bandwidth = size * window * iters / time, in MB/s (MB = 1e6 bytes). All messages of a
 * window share one buffer, as OSU's do, so the numbers compare with OSU's (it also means
 * messages up to cache size are sent from, and land in, cache).
 */
#include "umpi_bench.h"

#define TAG_DATA 100
#define TAG_ACK  101

static double run_size(const struct bench_opts *o, int rank, char *sbuf, char *rbuf,
                       MPI_Request *reqs, MPI_Status *stats, size_t size)
{
    int iters = bench_iters(o, size), skip = bench_skip(o, size);
    int count = (int)size, peer = bench_peer(rank), w = o->window;
    double t0 = 0.0, t;
    char ack[4] = {0};

    bench_buf_fill(sbuf, 'a', size, o->mem);
    bench_buf_fill(rbuf, 'b', size, o->mem);
    bench_sync(peer);

    for (int i = 0; i < iters + skip; i++) {
        if (i == skip)
            t0 = MPI_Wtime();
        if (bench_first(rank)) {
            for (int j = 0; j < w; j++)
                MPI_Isend(sbuf, count, MPI_CHAR, peer, TAG_DATA, MPI_COMM_WORLD, &reqs[j]);
            MPI_Waitall(w, reqs, stats);
            MPI_Recv(ack, 4, MPI_CHAR, peer, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            for (int j = 0; j < w; j++)
                MPI_Irecv(rbuf, count, MPI_CHAR, peer, TAG_DATA, MPI_COMM_WORLD, &reqs[j]);
            MPI_Waitall(w, reqs, stats);
            MPI_Send(ack, 4, MPI_CHAR, peer, TAG_ACK, MPI_COMM_WORLD);
        }
    }
    t = MPI_Wtime() - t0;
    return (double)size / 1e6 * (double)iters * (double)w / t;
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    char *sbuf = NULL, *rbuf = NULL;
    MPI_Request *reqs = NULL;
    MPI_Status *stats = NULL;
    int rank, rc = EXIT_FAILURE;

    bench_opts_default(&o, BENCH_BW);
    if (bench_init(&argc, &argv, &o, &rank, &rc) != 0)
        return rc;
    reqs = malloc(sizeof(*reqs) * (size_t)o.window);
    stats = malloc(sizeof(*stats) * (size_t)o.window);
    if (reqs == NULL || stats == NULL || bench_buf_alloc((void **)&sbuf, o.max_size, o.mem) != 0
        || bench_buf_alloc((void **)&rbuf, o.max_size, o.mem) != 0) {
        fprintf(stderr, "%s: cannot allocate 2 x %zu bytes\n", argv[0], o.max_size);
        MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
        goto fail;
    }

    if (rank == 0)
        bench_print_header(&o);
    for (size_t size = bench_first_size(o.min_size); size <= o.max_size; size = bench_next_size(size)) {
        double bw = run_size(&o, rank, sbuf, rbuf, reqs, stats, size);
        if (rank == 0)
            bench_print_row(size, bw);
    }
    rc = EXIT_SUCCESS;

fail:
    bench_buf_free(sbuf, o.mem);
    bench_buf_free(rbuf, o.mem);
    free(reqs);
    free(stats);
    MPI_Finalize();
    return rc;
}
