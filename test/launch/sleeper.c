/* Prints "rank R ready" and sleeps until killed, for the signal tests. With the argument
 * "ignore" it ignores SIGTERM and SIGINT, so that only mpirun's SIGKILL can end it. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank;

    if (argc > 1 && strcmp(argv[1], "ignore") == 0) {
        signal(SIGTERM, SIG_IGN);
        signal(SIGINT, SIG_IGN);
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("rank %d ready\n", rank);
    fflush(stdout);
    for (;;)
        pause();
    MPI_Finalize();
    return 0;
}
