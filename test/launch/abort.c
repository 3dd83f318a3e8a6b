/* The last rank calls MPI_Abort(MPI_COMM_WORLD, 7) once every rank is up; the others would sleep
 * for a minute, so mpirun must end them. */
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
    if (rank == size - 1) {
        sleep(1);   /* let the others reach their sleep */
        MPI_Abort(MPI_COMM_WORLD, 7);
    }
    sleep(60);
    MPI_Finalize();
    return 0;
}
