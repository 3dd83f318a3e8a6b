/*
 * rma_busy_target: MPI_Fetch_and_op latency (MPI_SUM on one 8-byte integer, one operation per
 * flush) from rank 0 to rank 1 while rank 1 computes without calling MPI (it spins on a flag in
 * its window memory, which rank 0 sets at the end), against the same with rank 1 waiting inside
 * MPI (MPI_Barrier). Under an MPI without asynchronous progress the first case ends only after
 * the bound (argv[1] seconds, default 5), so it reports the bound.
 *
 *   mpirun -n 2 ./rma_busy_target [BOUND_S] [ITERS]
 *
 * Prints, for each case: the first operation (which may find the target's progress asleep), and
 * the median and 90th percentile of the others, in us.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double bound = argc > 1 ? atof(argv[1]) : 5.0;
    int iters = argc > 2 ? atoi(argv[2]) : 1000;
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "rma_busy_target: run on 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    long *mem;
    MPI_Win win;
    MPI_Win_allocate(2 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    double *t = malloc(iters * sizeof(double));
    if (rank == 0)
        printf("# rma_busy_target: fetch_and_op 8 B, rank 0 -> rank 1, %d operations\n"
               "# %-22s %12s %12s %12s\n", iters, "target", "first (us)", "median (us)", "p90 (us)");
    for (int busy = 1; busy >= 0; busy--) {
        mem[0] = mem[1] = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) /* the lock while rank 1 is still in MPI: only the operations are timed */
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1) {
            if (busy) {
                volatile long *flag = mem + 1;
                double t0 = now();
                while (*flag == 0 && now() - t0 < bound)
                    ;
                if (*flag == 0)
                    printf("# rank 1 computed %.1f s without seeing rank 0's flag: no passive-target "
                           "progress\n", bound);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        } else {
            long one = 1, old;
            for (int i = 0; i < iters; i++) {
                double t0 = now();
                MPI_Fetch_and_op(&one, &old, MPI_LONG, 1, 0, MPI_SUM, win);
                MPI_Win_flush(1, win);
                t[i] = now() - t0;
            }
            MPI_Put(&one, 1, MPI_LONG, 1, 1, 1, MPI_LONG, win);
            MPI_Win_unlock(1, win);
            MPI_Barrier(MPI_COMM_WORLD);
            double first = t[0];
            qsort(t + 1, iters - 1, sizeof(double), cmp);
            printf("  %-22s %12.2f %12.2f %12.2f\n", busy ? "computing (no MPI)" : "in MPI_Barrier",
                   first * 1e6, t[(iters - 1) / 2 + 1] * 1e6, t[(iters - 1) * 9 / 10 + 1] * 1e6);
        }
    }
    free(t);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
