/*
 * Passive-target progress while the target computes: rank 0 spins on flags in its own window
 * memory, making no MPI call, while every other rank locks it (exclusive and shared, in turn),
 * accumulates, fetch_and_ops, gets, puts, flushes and unlocks, and finally puts a "done" flag into
 * rank 0's window. Rank 0 must see every flag before its time bound (argv[1] seconds, default
 * 10): only then do the origins' operations complete without rank 0's help, which MPI requires
 * of passive target (umpi: UMPI_ASYNC_PROGRESS=1). Without that progress the bound passes, rank 0
 * reports it and enters MPI again, so the program ends either way (the testlist's xfail line runs
 * it so, with a 1-second bound).
 */
#include "mtest.h"

#include <time.h>

#define ITERS 20
#define NDATA 16
/* window layout, in ints: counters, the data the origins read, one "done" slot per rank */
enum { ACC = 0, FOP = 1, PUT = 2, DATA = 4, DONE = DATA + NDATA };

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    double bound = argc > 1 ? atof(argv[1]) : 10.0;
    int *mem;
    MPI_Win win;
    MPI_Win_allocate((DONE + mt_size) * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    for (int i = 0; i < DONE + mt_size; i++)
        mem[i] = i >= DATA && i < DONE ? 1000 + i : 0;
    MPI_Barrier(MPI_COMM_WORLD);

    if (mt_rank == 0) {
        /* compute: no MPI call until every origin's flag is here or the bound passes */
        volatile int *flags = mem + DONE;
        double t0 = mt_now(), t;
        int seen;
        do {
            seen = 0;
            for (int r = 1; r < mt_size; r++)
                seen += flags[r];
            t = mt_now() - t0;
        } while (seen < mt_size - 1 && t < bound);
        MT_CHECK(seen == mt_size - 1,
                 "passive target made no progress while rank 0 computed: %d of %d origins done after %.1f s",
                 seen, mt_size - 1, t);
        if (seen == mt_size - 1) {
            /* what the origins did is all in place before rank 0 called MPI again */
            MT_CHECK(mem[ACC] == ITERS * (mt_size - 1), "accumulated %d, want %d", mem[ACC], ITERS * (mt_size - 1));
            MT_CHECK(mem[FOP] == 2 * ITERS * (mt_size - 1), "fetch_and_op sum %d, want %d", mem[FOP],
                     2 * ITERS * (mt_size - 1));
        }
    } else {
        int one = 1, two = 2, old, got[NDATA];
        double t0 = mt_now();
        for (int k = 0; k < ITERS; k++) {
            MPI_Win_lock(k % 2 ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE, 0, 0, win);
            MPI_Accumulate(&one, 1, MPI_INT, 0, ACC, 1, MPI_INT, MPI_SUM, win);
            MPI_Fetch_and_op(&two, &old, MPI_INT, 0, FOP, MPI_SUM, win);
            MPI_Get(got, NDATA, MPI_INT, 0, DATA, NDATA, MPI_INT, win);
            MPI_Win_flush(0, win);
            MT_CHECK(old % 2 == 0 && old < 2 * ITERS * (mt_size - 1), "fetch_and_op returned %d", old);
            for (int i = 0; i < NDATA; i++)
                MT_CHECK(got[i] == 1000 + DATA + i, "got[%d] = %d, want %d", i, got[i], 1000 + DATA + i);
            if (k == ITERS - 2 && mt_rank == 1) /* a put by message, under an exclusive lock */
                MPI_Put(&mt_rank, 1, MPI_INT, 0, PUT, 1, MPI_INT, win);
            MPI_Win_unlock(0, win);
        }
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        MPI_Put(&one, 1, MPI_INT, 0, DONE + mt_rank, 1, MPI_INT, win);
        MPI_Win_unlock(0, win);
        if (argc > 2)
            printf("[%d] %d epochs on a computing target: %.3f ms\n", mt_rank, ITERS + 1, (mt_now() - t0) * 1e3);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (mt_rank == 0)
        MT_CHECK(mem[PUT] == 1, "put %d, want 1", mem[PUT]);
    MPI_Win_free(&win);
    return mt_finish();
}
