/* Prints N lines (argv[1], default 100) per rank to stdout, one line to stderr, and ends stdout
 * with a partial line (no newline), for the line-by-line forwarding tests. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, n = argc > 1 ? atoi(argv[1]) : 100;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < n; i++) {
        /* Unbuffered pieces: a line reaches mpirun in several writes, and must leave it whole. */
        printf("rank %d line %d ", rank, i);
        fflush(stdout);
        printf("end\n");
        if (i % 7 == 0)
            fflush(stdout);
    }
    fprintf(stderr, "rank %d to stderr\n", rank);
    printf("rank %d partial", rank);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
