/*
 * A window's default error handler is MPI_ERRORS_ARE_FATAL: a put outside any epoch ends the job
 * with a message naming the call and the error class (the testlist expects it to fail so).
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int *mem, v = 1;
    MPI_Win win;
    MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win); /* no epoch: MPI_ERR_RMA_SYNC, fatal */
    MPI_Win_free(&win);
    return mt_finish();
}
