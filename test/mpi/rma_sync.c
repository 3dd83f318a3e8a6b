/*
 * Synchronization modes: exclusive locks serialise read-modify-write sequences, MPI_Win_lock_all
 * with MPI_Win_flush / flush_all / flush_local, request-based MPI_Rput / MPI_Rget / MPI_Raccumulate
 * / MPI_Rget_accumulate, PSCW (post/start/complete/wait and MPI_Win_test) on a ring, and a fence
 * epoch with the large-count MPI_Put_c.
 */
#include "mtest.h"

#define N 8

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int *mem;
    MPI_Win win;
    MPI_Win_allocate((4 * N + 1) * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    for (int i = 0; i < 4 * N + 1; i++)
        mem[i] = 0;
    MPI_Barrier(MPI_COMM_WORLD);

    /* exclusive lock: get, increment, put is atomic as a whole */
    for (int k = 0; k < 20; k++) {
        int v;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Get(&v, 1, MPI_INT, 0, 4 * N, 1, MPI_INT, win);
        MPI_Win_flush(0, win);
        v++;
        MPI_Put(&v, 1, MPI_INT, 0, 4 * N, 1, MPI_INT, win);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (mt_rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        MT_CHECK(mem[4 * N] == 20 * mt_size, "exclusive-lock counter %d, want %d", mem[4 * N], 20 * mt_size);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* lock_all: each rank writes its slot at every rank, flushes, reads it back with Rget */
    MPI_Win_lock_all(0, win);
    int val = 100 + mt_rank;
    for (int r = 0; r < mt_size; r++) {
        MPI_Request req;
        MPI_Rput(&val, 1, MPI_INT, r, mt_rank % N, 1, MPI_INT, win, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    MPI_Win_flush_local_all(win);
    MPI_Win_flush_all(win);
    for (int r = 0; r < mt_size; r++) {
        int got = -1;
        MPI_Request req;
        MPI_Rget(&got, 1, MPI_INT, r, mt_rank % N, 1, MPI_INT, win, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        if (mt_size <= N)
            MT_CHECK(got == val, "Rget from %d after flush: %d, want %d", r, got, val);
    }
    int one = 1, before;
    MPI_Request req;
    MPI_Raccumulate(&one, 1, MPI_INT, 0, N, 1, MPI_INT, MPI_SUM, win, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Win_flush(0, win);
    MPI_Rget_accumulate(&one, 1, MPI_INT, &before, 1, MPI_INT, 0, N + 1, 1, MPI_INT, MPI_SUM, win, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MT_CHECK(before >= 0 && before < mt_size, "Rget_accumulate: %d before, want 0..%d", before, mt_size - 1);
    MPI_Win_flush_local(0, win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (mt_rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        MT_CHECK(mem[N] == mt_size && mem[N + 1] == mt_size, "Raccumulate / Rget_accumulate sums %d %d, want %d",
                 mem[N], mem[N + 1], mt_size);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* PSCW on a ring: rank r exposes to its left neighbour, accesses its right one */
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    MPI_Group world, gl, gr;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &left, &gl);
    MPI_Group_incl(world, 1, &right, &gr);
    for (int round = 0; round < 3; round++) {
        int data[N];
        for (int i = 0; i < N; i++)
            data[i] = round * 100 + mt_rank * 10 + i;
        MPI_Win_post(gl, 0, win);
        MPI_Win_start(gr, 0, win);
        MPI_Put(data, N, MPI_INT, right, 2 * N, N, MPI_INT, win);
        MPI_Win_complete(win);
        if (round == 1) {
            int flag = 0;
            while (!flag)
                MPI_Win_test(win, &flag);
        } else {
            MPI_Win_wait(win);
        }
        for (int i = 0; i < N; i++)
            MT_CHECK(mem[2 * N + i] == round * 100 + left * 10 + i, "PSCW round %d: [%d] = %d, want %d", round, i,
                     mem[2 * N + i], round * 100 + left * 10 + i);
    }
    MPI_Group_free(&gl);
    MPI_Group_free(&gr);
    MPI_Group_free(&world);

    /* a fence epoch with the large-count put */
    int src[N];
    for (int i = 0; i < N; i++)
        src[i] = -mt_rank - i;
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    MPI_Put_c(src, (MPI_Count) N, MPI_INT, right, (MPI_Aint) (3 * N), (MPI_Count) N, MPI_INT, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    for (int i = 0; i < N; i++)
        MT_CHECK(mem[3 * N + i] == -left - i, "MPI_Put_c: [%d] = %d, want %d", i, mem[3 * N + i], -left - i);

    /* the other large-count calls, in fence epochs: [3N, 4N) holds -left - i at every rank */
    int got[N], res[N], ones[N];
    for (int i = 0; i < N; i++)
        ones[i] = 1;
    MPI_Win_fence(0, win);
    MPI_Get_c(got, (MPI_Count) N, MPI_INT, right, (MPI_Aint) (3 * N), (MPI_Count) N, MPI_INT, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        MT_CHECK(got[i] == -mt_rank - i, "MPI_Get_c: [%d] = %d, want %d", i, got[i], -mt_rank - i);
    MPI_Accumulate_c(ones, (MPI_Count) N, MPI_INT, right, (MPI_Aint) (3 * N), (MPI_Count) N, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(0, win);
    MPI_Get_accumulate_c(ones, (MPI_Count) N, MPI_INT, res, (MPI_Count) N, MPI_INT, right, (MPI_Aint) (3 * N),
                         (MPI_Count) N, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        MT_CHECK(res[i] == -mt_rank - i + 1, "MPI_Accumulate_c / Get_accumulate_c: [%d] = %d, want %d", i, res[i],
                 -mt_rank - i + 1);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    /* now -left - i + 2 at this rank; the request-based ones in a passive epoch */
    MPI_Request rq[4];
    int zero[N] = { 0 }, before2[N], after[N];
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
    MPI_Raccumulate_c(ones, (MPI_Count) N, MPI_INT, right, (MPI_Aint) (3 * N), (MPI_Count) N, MPI_INT, MPI_SUM, win,
                      &rq[0]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    MPI_Win_flush(right, win);
    MPI_Rget_accumulate_c(zero, (MPI_Count) N, MPI_INT, before2, (MPI_Count) N, MPI_INT, right, (MPI_Aint) (3 * N),
                          (MPI_Count) N, MPI_INT, MPI_REPLACE, win, &rq[1]);
    MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
    MPI_Win_flush(right, win);
    MPI_Rput_c(ones, (MPI_Count) 1, MPI_INT, right, (MPI_Aint) (3 * N), (MPI_Count) 1, MPI_INT, win, &rq[2]);
    MPI_Wait(&rq[2], MPI_STATUS_IGNORE);
    MPI_Win_flush(right, win);
    MPI_Rget_c(after, (MPI_Count) N, MPI_INT, right, (MPI_Aint) (3 * N), (MPI_Count) N, MPI_INT, win, &rq[3]);
    MPI_Wait(&rq[3], MPI_STATUS_IGNORE);
    MPI_Win_unlock(right, win);
    for (int i = 0; i < N; i++) {
        MT_CHECK(before2[i] == -mt_rank - i + 3, "MPI_Rget_accumulate_c: [%d] = %d, want %d", i, before2[i],
                 -mt_rank - i + 3);
        MT_CHECK(after[i] == (i == 0 ? 1 : 0), "MPI_Rput_c / Rget_c: [%d] = %d, want %d", i, after[i], i == 0);
    }

    MPI_Win_free(&win);
    return mt_finish();
}
