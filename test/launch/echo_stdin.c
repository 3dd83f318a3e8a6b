/* Rank 0 copies its stdin to stdout; every other rank checks that its stdin is empty. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, c, n = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    while ((c = getchar()) != EOF) {
        if (rank == 0)
            putchar(c);
        n++;
    }
    if (rank != 0)
        printf("rank %d read %d bytes of stdin\n", rank, n);
    MPI_Finalize();
    return 0;
}
