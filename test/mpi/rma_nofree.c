/*
 * Windows still alive at MPI_Finalize (the standard does not ask a program to free them): their
 * UCX registrations go before UCX does, and the job ends cleanly. The data moved before is right.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int *amem, cmem[4] = { 0 }, v = 5 + mt_rank;
    MPI_Win awin, cwin, dwin;
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &amem, &awin);
    MPI_Win_create(cmem, sizeof(cmem), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &cwin);
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dwin);
    amem[0] = 0;
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    MPI_Win_fence(0, awin);
    MPI_Win_fence(0, cwin);
    MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, awin);
    MPI_Put(&v, 1, MPI_INT, right, 1, 1, MPI_INT, cwin);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, awin);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, cwin);
    MT_CHECK(amem[0] == 5 + left && cmem[1] == 5 + left, "puts: %d %d, want %d", amem[0], cmem[1], 5 + left);
    return mt_finish(); /* MPI_Finalize with three windows alive */
}
