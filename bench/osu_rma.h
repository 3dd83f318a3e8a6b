/*
 * The one-sided benchmarks, OSU's methodology (its default "flush" synchronization): each origin
 * (the first side of a pair, umpi_bench.h) opens a shared passive-target epoch on its peer's
 * window once per size; an iteration is the operation (osu_*_bw: `window` of them) then
 * MPI_Win_flush, so the time is that of the operation completed at the target. The target waits
 * inside MPI meanwhile (in the pair's closing synchronization), as OSU's does in MPI_Barrier: an
 * MPI whose target must call MPI to serve an operation is not penalized for it here.
 *
 * The program that includes this defines RMA_OP (the operation) and RMA_BW (1: bandwidth, MB/s;
 * 0: latency, us per operation). -c checks the data at the end of each size: what a put wrote or
 * a get read, the sum the accumulates left, every value fetch_and_op and compare_and_swap
 * returned. fetch_and_op and compare_and_swap move one 8-byte integer (size 8 only).
 */
#include "umpi_bench.h"

#include <stdint.h>

enum { RMA_PUT, RMA_GET, RMA_ACC, RMA_FOP, RMA_CAS };

static const char *const rma_name[] = { "MPI_Put", "MPI_Get", "MPI_Accumulate", "MPI_Fetch_and_op",
                                        "MPI_Compare_and_swap" };

/* Before a size: the target's window and the origin's buffer in a known state. */
static void rma_prepare(int first, unsigned char *win_buf, unsigned char *buf, size_t size)
{
    for (size_t i = 0; i < size; i++) {
        win_buf[i] = first ? 0 : (unsigned char) (RMA_OP == RMA_GET ? i * 7 + 3 : 0);
        buf[i] = first ? (unsigned char) (RMA_OP == RMA_ACC ? 1 : i * 5 + 1) : 0;
    }
}

/* One size on one pair; *valid: -c's verdict, agreed by the pair. */
static double rma_run_size(const struct bench_opts *o, int rank, MPI_Win win, unsigned char *win_buf,
                           unsigned char *buf, unsigned char *res, size_t size, int *valid)
{
    int iters = bench_iters(o, size), skip = bench_skip(o, size), peer = bench_peer(rank);
    int first = bench_first(rank), per = RMA_BW ? o->window : 1, ok = 1;
    int64_t one = 1, *fetched = (int64_t *) res;
    double t0 = 0.0, t = 0.0;

    rma_prepare(first, win_buf, buf, size);
    bench_sync(peer);
    if (first) {
        MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win);
        for (int i = 0; i < iters + skip; i++) {
            if (i == skip)
                t0 = MPI_Wtime();
            for (int k = 0; k < per; k++) {
                long n = (long) i * per + k; /* the operation's number, for fetch_and_op and cas */
                switch (RMA_OP) {
                case RMA_PUT: MPI_Put(buf, (int) size, MPI_BYTE, peer, 0, (int) size, MPI_BYTE, win); break;
                case RMA_GET: MPI_Get(res, (int) size, MPI_BYTE, peer, 0, (int) size, MPI_BYTE, win); break;
                case RMA_ACC:
                    MPI_Accumulate(buf, (int) size, MPI_UNSIGNED_CHAR, peer, 0, (int) size, MPI_UNSIGNED_CHAR,
                                   MPI_SUM, win);
                    break;
                case RMA_FOP:
                    MPI_Fetch_and_op(&one, &fetched[0], MPI_INT64_T, peer, 0, MPI_SUM, win);
                    break;
                case RMA_CAS: {
                    int64_t expect = n, next = n + 1;
                    MPI_Compare_and_swap(&next, &expect, &fetched[0], MPI_INT64_T, peer, 0, win);
                    break;
                }
                }
            }
            MPI_Win_flush(peer, win);
            if (RMA_OP == RMA_FOP || RMA_OP == RMA_CAS)
                ok &= fetched[0] == i; /* one operation an iteration: the i-th fetched i */
        }
        t = MPI_Wtime() - t0;
        MPI_Win_unlock(peer, win);
        if (RMA_OP == RMA_GET)
            for (size_t i = 0; i < size; i++)
                ok &= res[i] == (unsigned char) (i * 7 + 3);
    }
    bench_sync(peer);
    if (!first) {
        /* the target's window after the size: what the origin's operations left there */
        long total = (long) (iters + skip) * per;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win); /* a local epoch: the window's memory is current */
        if (RMA_OP == RMA_PUT)
            for (size_t i = 0; i < size; i++)
                ok &= win_buf[i] == (unsigned char) (i * 5 + 1);
        if (RMA_OP == RMA_ACC)
            for (size_t i = 0; i < size; i++)
                ok &= win_buf[i] == (unsigned char) total;
        if (RMA_OP == RMA_FOP || RMA_OP == RMA_CAS)
            ok &= *(int64_t *) win_buf == total;
        MPI_Win_unlock(rank, win);
    }
    *valid = 1;
    if (o->validate) {
        int theirs = 0;
        MPI_Sendrecv(&ok, 1, MPI_INT, peer, BENCH_TAG_SYNC, &theirs, 1, MPI_INT, peer, BENCH_TAG_SYNC,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        *valid = ok && theirs;
    }
    if (RMA_BW)
        return t > 0 ? (double) size * per * iters / t / 1e6 : 0.0;
    return t * 1e6 / iters;
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    unsigned char *buf = NULL, *res = NULL, *win_buf = NULL;
    int rank, rc = EXIT_FAILURE, failed = 0;
    MPI_Win win;

    bench_opts_default(&o, RMA_BW ? BENCH_BW : BENCH_LATENCY);
    if (RMA_OP == RMA_FOP || RMA_OP == RMA_CAS)
        o.min_size = o.max_size = 8;
    if (bench_init(&argc, &argv, &o, &rank, &rc) != 0)
        return rc;
    if (RMA_OP == RMA_FOP || RMA_OP == RMA_CAS)
        o.min_size = o.max_size = 8; /* one 8-byte integer, whatever -m said */
    size_t len = o.max_size < 8 ? 8 : o.max_size;
    buf = malloc(len);
    res = malloc(len);
    if (buf == NULL || res == NULL || MPI_Win_allocate((MPI_Aint) len, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win_buf,
                                                       &win) != MPI_SUCCESS) {
        fprintf(stderr, "%s: cannot allocate 3 x %zu bytes\n", argv[0], len);
        MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
    }
    if (rank == 0) {
        printf("# " BENCH_NAME_PREFIX " %s %s Test v" BENCH_VERSION " (passive target, flush)\n", rma_name[RMA_OP],
               RMA_BW ? "Bandwidth" : "Latency");
        if (RMA_BW)
            printf("# %-*s%*s", BENCH_SIZE_WIDTH, "Size", BENCH_FIELD_WIDTH - 2, "Bandwidth (MB/s)");
        else
            printf("# %-*s%*s", BENCH_SIZE_WIDTH + 4, "Size", BENCH_FIELD_WIDTH - 6, "Latency (us)");
        if (o.validate)
            printf("%*s", BENCH_FIELD_WIDTH, "Validation");
        printf("\n");
    }
    for (size_t size = bench_first_size(o.min_size); size <= o.max_size; size = bench_next_size(size)) {
        int valid;
        double v = rma_run_size(&o, rank, win, win_buf, buf, res, size, &valid);
        failed |= !valid;
        if (rank == 0)
            bench_print_row_ext(&o, size, v, 0.0, valid);
    }
    rc = failed ? EXIT_FAILURE : EXIT_SUCCESS;
    MPI_Win_free(&win);
    free(buf);
    free(res);
    MPI_Finalize();
    return rc;
}
