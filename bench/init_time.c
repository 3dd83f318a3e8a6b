/*
 * Start-up cost of an MPI library as its ranks see it: each rank times MPI_Init and MPI_Finalize
 * (CLOCK_MONOTONIC around each call) and prints one line
 *
 *     init_time rank R host H init_ms I finalize_ms F
 *
 * after MPI_Finalize (so that the line costs the job nothing measured). A barrier before
 * MPI_Finalize makes every rank start finalizing together. Standard MPI only: any MPI builds it.
 * bench/slurm_startup takes the largest value over the ranks, and the wall time of the whole
 * launch (srun, mpirun) around it.
 */
#include <mpi.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    double t0, t1, t2, t3;
    int rank;
    char host[64] = "";

    t0 = now_ms();
    MPI_Init(&argc, &argv);
    t1 = now_ms();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    t2 = now_ms();
    MPI_Finalize();
    t3 = now_ms();
    gethostname(host, sizeof(host) - 1);
    printf("init_time rank %d host %s init_ms %.2f finalize_ms %.2f\n", rank, host, t1 - t0, t3 - t2);
    return 0;
}
