/*
 * osu_bw: unidirectional bandwidth between two ranks, OSU methodology and output.
 *
 * Each iteration rank 0 posts a window of MPI_Isend, rank 1 a window of MPI_Irecv, both
 * MPI_Waitall; rank 1 then returns a 4-byte ack so rank 0's clock sees the data land.
 * Bandwidth = size * window * iters / time, in MB/s (MB = 1e6 bytes). All messages of a
 * window share one buffer, as OSU's do, so the numbers compare with OSU's (it also means
 * messages up to cache size are sent from, and land in, cache).
 *
 * `-d cuda X Y` puts the buffers in device memory (umpi_bench.h); `-c` checks, after each size,
 * what the receiver got. `--copy-baseline` (D D) also times, on the first rank's GPU, the same
 * bytes moved by cuMemcpyDtoDAsync between two device buffers (window copies, then a stream
 * synchronize, per iteration): the ceiling that a device-to-device MPI transfer on one GPU is
 * measured against, in the same run.
 */
#include "umpi_bench.h"

#define TAG_DATA 100
#define TAG_ACK  101

/* cuMemcpyDtoD bandwidth of `size` bytes from sbuf to rbuf (both device memory of this rank), with
 * the MPI measurement's iterations and window, in MB/s. */
static double copy_baseline(const struct bench_opts *o, char *sbuf, char *rbuf, size_t size)
{
    int iters = bench_iters(o, size), skip = bench_skip(o, size), w = o->window;
    unsigned long long s = (unsigned long long)(uintptr_t)sbuf, r = (unsigned long long)(uintptr_t)rbuf;
    double t0 = 0.0;

    for (int i = 0; i < iters + skip; i++) {
        if (i == skip)
            t0 = MPI_Wtime();
        for (int j = 0; j < w; j++)
            bench_cuda_check("cuMemcpyDtoDAsync", bench_cu.dtod_async(r, s, size, NULL));
        bench_cuda_check("cuStreamSynchronize", bench_cu.stream_sync(NULL));
    }
    return (double)size / 1e6 * (double)iters * (double)w / (MPI_Wtime() - t0);
}

static double run_size(const struct bench_opts *o, int rank, char *sbuf, char *rbuf,
                       MPI_Request *reqs, MPI_Status *stats, size_t size, int *valid)
{
    int iters = bench_iters(o, size), skip = bench_skip(o, size);
    int count = (int)size, peer = bench_peer(rank), w = o->window, first = bench_first(rank);
    double t0 = 0.0, t;
    char ack[4] = {0};

    bench_buf_fill(sbuf, o->validate && first ? bench_pattern(size, 1) : 'a', size, o->mem);
    bench_buf_fill(rbuf, o->validate ? bench_pattern(size, 1) ^ 0xff : 'b', size, o->mem);
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
    *valid = 1;
    if (o->validate) {
        /* the receiver checks; the sender learns the verdict */
        int ok = first ? 0 : bench_buf_check(rbuf, bench_pattern(size, 1), size, o->mem) == 0;
        if (first)
            MPI_Recv(&ok, 1, MPI_INT, peer, BENCH_TAG_SYNC, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
            MPI_Send(&ok, 1, MPI_INT, peer, BENCH_TAG_SYNC, MPI_COMM_WORLD);
        *valid = ok;
    }
    return (double)size / 1e6 * (double)iters * (double)w / t;
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    char *sbuf = NULL, *rbuf = NULL;
    MPI_Request *reqs = NULL;
    MPI_Status *stats = NULL;
    int rank, rc = EXIT_FAILURE, failed = 0;

    bench_opts_default(&o, BENCH_BW);
    if (bench_init(&argc, &argv, &o, &rank, &rc) != 0)
        return rc;
    reqs = malloc(sizeof(*reqs) * (size_t)o.window);
    stats = malloc(sizeof(*stats) * (size_t)o.window);
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
        double bw = run_size(&o, rank, sbuf, rbuf, reqs, stats, size, &valid), copy = 0.0;
        failed |= !valid;
        /* after the MPI measurement, on rank 0 alone (its peer waits in the next size's sync) */
        if (o.copy_baseline && rank == 0)
            copy = copy_baseline(&o, sbuf, rbuf, size);
        if (rank == 0)
            bench_print_row_ext(&o, size, bw, copy, valid);
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
