/*
 * crash MODE RANK: every rank reports "rank R on HOST ready" and meets the others; then rank RANK
 * fails (MODE segv: SIGSEGV; exit: exit(3) without MPI_Finalize; abort: MPI_Abort(.., 7); hang:
 * it does not fail, for a node to be killed from outside) while the others wait in MPI_Recv for a
 * message that never comes. Only the launcher can end the job. MODE dup: as hang, but the first
 * communication is an MPI_Comm_dup (the context id agreement) instead of the barrier.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size, victim, dummy;
    char host[64] = "";

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3 || (victim = atoi(argv[2])) < 0 || victim >= size) {
        if (rank == 0)
            fprintf(stderr, "usage: %s segv|exit|abort|hang|dup RANK (0..%d)\n", argv[0], size - 1);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (argc == 3 && strcmp(argv[1], "dup") == 0) {
        MPI_Comm dup;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        MPI_Comm_free(&dup);
    }
    gethostname(host, sizeof(host) - 1);
    printf("rank %d on %s ready\n", rank, host);
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == victim && strcmp(argv[1], "hang") != 0 && strcmp(argv[1], "dup") != 0) {
        usleep(200000);   /* the others are in MPI_Recv by now */
        if (strcmp(argv[1], "segv") == 0)
            *(volatile int *)0 = 1;
        else if (strcmp(argv[1], "exit") == 0)
            exit(3);
        else
            MPI_Abort(MPI_COMM_WORLD, 7);
    }
    MPI_Recv(&dummy, 1, MPI_INT, victim, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
