/*
 * coll_icount.c: one collective called in a loop, for counting its instructions with valgrind's
 * callgrind (bench/coll_icount runs it; bench/NOTES.md has the numbers).
 *
 *   coll_icount KIND [ITERS [BYTES]]   KIND: allreduce reduce allgather alltoall barrier bcast
 *
 * Rank 0 is the process counted. Before each call it sleeps (outside the MPI function) while the
 * other ranks enter the same call at once, so their messages are already waiting when rank 0
 * calls: its count is the path of one call with nothing to wait for, the same every time, instead
 * of a number of empty polls that depends on the scheduling. Reduce and bcast use root 0.
 * Standard MPI only, built with each MPI's mpicc.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: %s allreduce|reduce|allgather|alltoall|barrier|bcast [ITERS [BYTES]]\n",
                    argv[0]);
        MPI_Finalize();
        return 2;
    }
    const char *kind = argv[1];
    int iters = argc > 2 ? atoi(argv[2]) : 100;
    size_t bytes = argc > 3 ? (size_t) atol(argv[3]) : 8;
    int count = (int) (bytes / sizeof(float));
    float *sbuf = calloc(bytes * (size_t) size + 1, 1), *rbuf = calloc(bytes * (size_t) size + 1, 1);
    if (sbuf == NULL || rbuf == NULL) {
        fprintf(stderr, "out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = 0; i < iters; i++) {
        /* point-to-point, so that no collective but the one counted runs */
        int token = i;
        if (rank == 0) {
            for (int r = 1; r < size; r++)
                MPI_Send(&token, 1, MPI_INT, r, 0, MPI_COMM_WORLD);
            usleep(20000); /* the others' messages arrive meanwhile */
        } else {
            MPI_Recv(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        if (strcmp(kind, "allreduce") == 0)
            MPI_Allreduce(sbuf, rbuf, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        else if (strcmp(kind, "reduce") == 0)
            MPI_Reduce(sbuf, rbuf, count, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
        else if (strcmp(kind, "allgather") == 0)
            MPI_Allgather(sbuf, (int) bytes, MPI_CHAR, rbuf, (int) bytes, MPI_CHAR, MPI_COMM_WORLD);
        else if (strcmp(kind, "alltoall") == 0)
            MPI_Alltoall(sbuf, (int) bytes, MPI_CHAR, rbuf, (int) bytes, MPI_CHAR, MPI_COMM_WORLD);
        else if (strcmp(kind, "barrier") == 0)
            MPI_Barrier(MPI_COMM_WORLD);
        else if (strcmp(kind, "bcast") == 0)
            MPI_Bcast(sbuf, (int) bytes, MPI_CHAR, 0, MPI_COMM_WORLD);
        else {
            if (rank == 0)
                fprintf(stderr, "unknown collective '%s'\n", kind);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
