/*
 * Puts and gets to MPI_Win_create windows on memory of the kind under test (MPITEST_MEMTYPE), in
 * fence and PSCW epochs: within a node, device windows take CUDA IPC (umpi's counter rma_ipc, which
 * test/fakegpu/rma_ipc.sh checks), the others messages or UCX RMA. Each round the owner rewrites
 * its window with a driver copy that may still be running when the call returns (cuMemcpyHtoD from
 * pageable memory), just before the epoch opens; the neighbours then get it and put into it, with
 * origin buffers in host and device memory, at offsets that change; in the first half of the
 * rounds an accumulate shares the epoch.
 */
#include "mtest.h"

#define N 64
#define ROUNDS 8

/* Window layout, in longs: [0, N) written by the owner, read by the left neighbour's gets;
 * [N, 2N) the left neighbour's puts; [2N, 3N) accumulates from every rank. */
enum { W_OWN = 0, W_PUT = N, W_ACC = 2 * N, W_LEN = 3 * N };

static long own_val(int owner, int k, int i)
{
    return owner * 1000000L + k * 1000L + i;
}

static long put_val(int origin, int k, int i)
{
    return -(origin * 1000000L + k * 1000L + i) - 7;
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    long *wh = calloc(W_LEN, sizeof(long));
    void *wd = mt_alloc(W_LEN * sizeof(long));
    MPI_Win win;
    MPI_Win_create(wd, W_LEN * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Group world, lg, rg;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &left, &lg);
    MPI_Group_incl(world, 1, &right, &rg);

    for (int k = 0; k < ROUNDS; k++) {
        int pscw = k % 2, off = k % 3, len = N - 3, acc = k < ROUNDS / 2;
        const char *what = pscw ? "PSCW" : "fence";
        /* origin buffers: device and host memory in turn (device ones only where the kind has them) */
        mt_buf_t src, res, one;
        mt_buf_init_kind(&src, N * sizeof(long), (k / 2) % 2 ? 0 : -1);
        mt_buf_init_kind(&res, N * sizeof(long), (k / 2) % 2 ? -1 : 0);
        mt_buf_init(&one, sizeof(long));
        for (int i = 0; i < N; i++)
            ((long *) src.h)[i] = put_val(mt_rank, k, i);
        mt_push(&src);
        ((long *) one.h)[0] = mt_rank + 1;
        mt_push(&one);
        memset(res.h, 0, N * sizeof(long));
        mt_push(&res);
        for (int i = 0; i < N; i++) {
            wh[W_OWN + i] = own_val(mt_rank, k, i);
            wh[W_PUT + i] = -1;
            wh[W_ACC + i] = 0;
        }
        mt_copy_in(wd, wh, W_LEN * sizeof(long)); /* the device write may still be queued */

        if (pscw) {
            MPI_Win_post(lg, 0, win);
            MPI_Win_start(rg, 0, win);
        } else {
            MPI_Win_fence(0, win);
        }
        /* the accumulate first, and in the first rounds only: its origin data copied out of device
         * memory, and the target applying it, wait for the copy stream, which would hide a missing
         * wait for the puts and gets queued there */
        if (acc)
            MPI_Accumulate(one.d, 1, MPI_LONG, right, W_ACC + off, 1, MPI_LONG, MPI_SUM, win);
        MPI_Get(res.d, len, MPI_LONG, right, W_OWN + off, len, MPI_LONG, win);
        MPI_Put(src.d, len, MPI_LONG, right, W_PUT + off, len, MPI_LONG, win);
        if (pscw) {
            MPI_Win_complete(win);
            MPI_Win_wait(win);
        } else {
            MPI_Win_fence(0, win);
        }

        /* even ranks check their windows first, while the odd ones wait in a barrier without
         * touching their own streams: a put an odd origin did not wait for is not there yet (the
         * fake driver shows another process only what the origin waited for) */
        for (int turn = 0; turn < 2; turn++) {
            if (mt_rank % 2 == turn) {
                mt_copy_out(wh, wd, W_LEN * sizeof(long));
                for (int i = 0; i < N; i++) {
                    long want = i >= off && i < off + len ? put_val(left, k, i - off) : -1;
                    MT_CHECK(wh[W_PUT + i] == want, "%s round %d put: [%d] = %ld, want %ld", what, k, i,
                             wh[W_PUT + i], want);
                    want = acc && i == off ? left + 1 : 0;
                    MT_CHECK(wh[W_ACC + i] == want, "%s round %d accumulate: [%d] = %ld, want %ld", what, k, i,
                             wh[W_ACC + i], want);
                    MT_CHECK(wh[W_OWN + i] == own_val(mt_rank, k, i), "%s round %d own data: [%d] = %ld", what, k,
                             i, wh[W_OWN + i]);
                }
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
        mt_pull(&res);
        for (int i = 0; i < N; i++) {
            long got = ((long *) res.h)[i], want = i < len ? own_val(right, k, i + off) : 0;
            MT_CHECK(got == want, "%s round %d get: [%d] = %ld, want %ld", what, k, i, got, want);
        }
        mt_buf_free(&src);
        mt_buf_free(&res);
        mt_buf_free(&one);
    }

    /* a lock epoch on the same window: messages (no IPC), the data right all the same */
    mt_buf_t src;
    mt_buf_init(&src, N * sizeof(long));
    for (int i = 0; i < N; i++)
        ((long *) src.h)[i] = put_val(mt_rank, ROUNDS, i);
    mt_push(&src);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
    MPI_Put(src.d, N, MPI_LONG, right, W_PUT, N, MPI_LONG, win);
    MPI_Win_unlock(right, win);
    MPI_Barrier(MPI_COMM_WORLD);
    mt_copy_out(wh, wd, W_LEN * sizeof(long));
    for (int i = 0; i < N; i++)
        MT_CHECK(wh[W_PUT + i] == put_val(left, ROUNDS, i), "lock put: [%d] = %ld", i, wh[W_PUT + i]);
    mt_buf_free(&src);

    MPI_Group_free(&lg);
    MPI_Group_free(&rg);
    MPI_Group_free(&world);
    MPI_Win_free(&win);
    mt_free(wd);
    free(wh);
    return mt_finish();
}
