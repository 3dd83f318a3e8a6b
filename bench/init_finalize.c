/* MPI_Init then MPI_Finalize and nothing else: what bench/launch_startup times. Rank 0 prints the
 * job size, so that a run that did not start every rank is seen. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0)
        printf("size %d\n", size);
    MPI_Finalize();
    return 0;
}
