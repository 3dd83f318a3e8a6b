/*
 * Windows on a communicator other than MPI_COMM_WORLD: the even and the odd ranks each make one
 * (ranks, groups and PSCW groups are those of the sub-communicator), and a window on
 * MPI_COMM_SELF. Two windows are alive at once and their traffic does not mix.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, -mt_rank, &half); /* reversed order inside */
    int hr, hs;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_size(half, &hs);
    int *a, *b;
    MPI_Win wa, wb;
    MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, half, &a, &wa);
    MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, half, &b, &wb);
    a[0] = a[1] = b[0] = b[1] = -1;

    MPI_Group g, hg;
    int cmp;
    MPI_Win_get_group(wa, &g);
    MPI_Comm_group(half, &hg);
    MPI_Group_compare(g, hg, &cmp);
    MT_CHECK(cmp == MPI_IDENT, "the window's group is not the sub-communicator's (%d)", cmp);
    MPI_Group_free(&g);

    /* PSCW in the sub-communicator: each rank exposes to its next, accesses its previous */
    int next = (hr + 1) % hs, prev = (hr + hs - 1) % hs;
    MPI_Group gnext, gprev;
    MPI_Group_incl(hg, 1, &next, &gnext);
    MPI_Group_incl(hg, 1, &prev, &gprev);
    MPI_Win_post(gnext, 0, wa);
    MPI_Win_start(gprev, 0, wa);
    int v = 1000 + mt_rank;
    MPI_Put(&v, 1, MPI_INT, prev, 0, 1, MPI_INT, wa);
    MPI_Win_complete(wa);
    MPI_Win_wait(wa);
    /* my next put here: its world rank */
    int want_world;
    MPI_Group wg;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_translate_ranks(hg, 1, &next, wg, &want_world);
    MT_CHECK(a[0] == 1000 + want_world, "PSCW put: %d, want %d", a[0], 1000 + want_world);

    /* the other window, passive target, at the same time as a lock on the first */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, 0, wb);
    MPI_Win_lock(MPI_LOCK_SHARED, next, 0, wa);
    int w2 = 2000 + mt_rank, w3 = 3000 + mt_rank;
    MPI_Put(&w2, 1, MPI_INT, next, 1, 1, MPI_INT, wb);
    MPI_Put(&w3, 1, MPI_INT, next, 1, 1, MPI_INT, wa);
    MPI_Win_unlock(next, wa);
    MPI_Win_unlock(next, wb);
    MPI_Barrier(half);
    int from_world;
    MPI_Group_translate_ranks(hg, 1, &prev, wg, &from_world);
    MPI_Win_lock(MPI_LOCK_SHARED, hr, 0, wa);
    MPI_Win_lock(MPI_LOCK_SHARED, hr, 0, wb);
    MT_CHECK(b[1] == 2000 + from_world && a[1] == 3000 + from_world, "lock puts: %d %d, want %d %d", b[1], a[1],
             2000 + from_world, 3000 + from_world);
    MPI_Win_unlock(hr, wb);
    MPI_Win_unlock(hr, wa);
    MPI_Group_free(&gnext);
    MPI_Group_free(&gprev);
    MPI_Group_free(&hg);
    MPI_Group_free(&wg);
    MPI_Win_free(&wb);
    MPI_Win_free(&wa);

    /* a window of one process */
    long *s;
    MPI_Win ws;
    MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_SELF, &s, &ws);
    *s = 0;
    long add = 3, old = -1;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, ws);
    MPI_Fetch_and_op(&add, &old, MPI_LONG, 0, 0, MPI_SUM, ws);
    MPI_Win_unlock(0, ws);
    MT_CHECK(old == 0 && *s == 3, "MPI_COMM_SELF window: old %ld, now %ld", old, *s);
    MPI_Win_free(&ws);
    MPI_Comm_free(&half);
    return mt_finish();
}
