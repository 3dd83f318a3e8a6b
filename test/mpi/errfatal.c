/*
 * MPI_ERRORS_ARE_FATAL, the default: a bad call ends the whole job with a nonzero exit status and a
 * message naming the call. The testlist marks this test xfail=1 expect=MPI_Send. The other ranks
 * wait for a message that never comes: the job must end anyway.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    int buf = 0;

    mt_init(&argc, &argv);
    if (mt_rank == 0)
        MPI_Send(&buf, 1, MPI_INT, mt_size, 0, MPI_COMM_WORLD); /* no such rank */
    else
        MPI_Recv(&buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    fprintf(stderr, "[%d] the bad MPI_Send returned\n", mt_rank);
    return mt_finish();
}
