/* Rank 2 (or the last rank) exits with code 3 without MPI_Finalize; the others would sleep for a
 * minute. With the argument "zero" it exits with 0 instead (still without MPI_Finalize). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size, code = argc > 1 && strcmp(argv[1], "zero") == 0 ? 0 : 3;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("rank %d ready\n", rank);
    fflush(stdout);
    if (rank == (size > 2 ? 2 : size - 1)) {
        sleep(1);
        exit(code);
    }
    sleep(60);
    MPI_Finalize();
    return 0;
}
