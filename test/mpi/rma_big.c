/*
 * One-sided operations of 1 MiB (above the rendezvous threshold, so the target receives them in
 * pieces inside its progress hook): put, accumulate (MPI_BXOR back to zero) and get.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    const int n = 1 << 18; /* 1 MiB of ints */
    int *mem, *src = malloc(n * sizeof(int)), *back = malloc(n * sizeof(int));
    MPI_Win win;
    MPI_Win_allocate(n * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    for (int i = 0; i < n; i++) {
        mem[i] = 0;
        src[i] = i ^ mt_rank;
    }
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    MPI_Win_fence(0, win);
    MPI_Put(src, n, MPI_INT, right, 0, n, MPI_INT, win);
    MPI_Win_fence(0, win);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += mem[i] != (i ^ left);
    MT_CHECK(bad == 0, "big put: %d wrong", bad);
    /* The check above is a local load of the window: the accumulate below must not be in its epoch
     * (a rank that leaves the fence first could otherwise XOR this rank's data back to zero before
     * it has looked). */
    MPI_Win_fence(0, win);
    MPI_Accumulate(src, n, MPI_INT, right, 0, n, MPI_INT, MPI_BXOR, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    bad = 0;
    for (int i = 0; i < n; i++)
        bad += mem[i] != 0;
    MT_CHECK(bad == 0, "big xor accumulate: %d wrong", bad);
    mem[7] = 7; /* the get below must see the owner's own store too */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, left, 0, win);
    MPI_Get(back, n, MPI_INT, left, 0, n, MPI_INT, win);
    MPI_Win_unlock(left, win);
    bad = 0;
    for (int i = 0; i < n; i++)
        bad += back[i] != (i == 7 ? 7 : 0);
    MT_CHECK(bad == 0, "big get: %d wrong", bad);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    free(src);
    free(back);
    return mt_finish();
}
