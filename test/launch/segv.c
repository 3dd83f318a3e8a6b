/* Rank 1 (or the only rank) dies of SIGSEGV; the others would sleep for a minute. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("rank %d ready\n", rank);
    fflush(stdout);
    if (rank == (size > 1 ? 1 : 0)) {
        sleep(1);
        *(volatile int *)0 = 1;
    }
    sleep(60);
    MPI_Finalize();
    return 0;
}
