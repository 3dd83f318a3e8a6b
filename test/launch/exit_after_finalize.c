/* Every rank finalizes; then rank 1 exits with 5 at once and the others 1 s later with 0. The
 * job is not ended early (the others are done with MPI) and mpirun exits with 5. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Finalize();
    if (rank == 1)
        return 5;
    sleep(1);
    printf("rank %d finished\n", rank);
    return 0;
}
