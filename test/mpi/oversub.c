/*
 * More ranks than cores: a ring exchange of 10000 small messages per rank must finish in seconds
 * (the testlist runs it at 4 ranks with a short timeout), so waiting ranks must not starve the
 * ones they wait for.
 */
#include "mtest.h"

#define ITERS 10000

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size, bad = 0;
    double t0 = MPI_Wtime();
    for (int i = 0; i < ITERS; i++) {
        int out = mt_rank + i, in = -1;
        MPI_Sendrecv(&out, 1, MPI_INT, right, 0, &in, 1, MPI_INT, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        bad += in != left + i;
    }
    MT_CHECK(bad == 0, "%d wrong messages", bad);
    if (mt_rank == 0)
        fprintf(stderr, "%d ring steps in %.2f s\n", ITERS, MPI_Wtime() - t0);
    return mt_finish();
}
