/*
 * MPI calls on a shared window (MPI_Win_allocate_shared): applied by the calling process straight
 * into the node's segment, so they need nothing from the target process. A ticket counter by
 * MPI_Fetch_and_op from every rank (each ticket handed out once), accumulates into rank 0 while
 * rank 0 computes without calling MPI (it sees them in its own memory), a compare-and-swap lock
 * word guarding a plain counter, put/get with a derived (vector) type between fences, and
 * accumulates from buffers of the memory kind under test (device ones travel as messages).
 */
#include "mtest.h"

#define ROUNDS 500

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nr, ns;
    MPI_Comm_rank(node, &nr);
    MPI_Comm_size(node, &ns);
    long *mem;
    MPI_Win win;
    MPI_Win_allocate_shared(16 * sizeof(long), sizeof(long), MPI_INFO_NULL, node, &mem, &win);
    for (int i = 0; i < 16; i++)
        mem[i] = 0;
    MPI_Barrier(node);

    /* tickets: [0] of rank 0 */
    long *tickets = malloc(ROUNDS * sizeof(long)), one = 1;
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    for (int k = 0; k < ROUNDS; k++)
        MPI_Fetch_and_op(&one, &tickets[k], MPI_LONG, 0, 0, MPI_SUM, win);
    MPI_Win_unlock_all(win);
    long *all = nr == 0 ? malloc((size_t) ns * ROUNDS * sizeof(long)) : NULL;
    MPI_Gather(tickets, ROUNDS, MPI_LONG, all, ROUNDS, MPI_LONG, 0, node);
    if (nr == 0) {
        char *seen = calloc((size_t) ns * ROUNDS, 1);
        int bad = 0;
        for (int i = 0; i < ns * ROUNDS; i++) {
            if (all[i] < 0 || all[i] >= ns * ROUNDS || seen[all[i]])
                bad++;
            else
                seen[all[i]] = 1;
        }
        MT_CHECK(bad == 0, "fetch_and_op tickets: %d out of range or handed out twice", bad);
        MT_CHECK(mem[0] == (long) ns * ROUNDS, "ticket counter %ld, want %ld", mem[0], (long) ns * ROUNDS);
        free(seen);
        free(all);
    }
    MPI_Barrier(node);

    /* accumulates into rank 0's [1] while rank 0 makes no MPI call: it waits in its own memory */
    if (nr == 0) {
        double t0 = mt_now();
        while (__atomic_load_n(&mem[1], __ATOMIC_ACQUIRE) < (long) (ns - 1) * 10 && mt_now() - t0 < 10)
            ;
        MT_CHECK(__atomic_load_n(&mem[1], __ATOMIC_ACQUIRE) == (long) (ns - 1) * 10,
                 "accumulates towards a rank outside MPI: %ld after 10 s, want %ld", mem[1], (long) (ns - 1) * 10);
    } else {
        MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
        for (int k = 0; k < 10; k++)
            MPI_Accumulate(&one, 1, MPI_LONG, 0, 1, 1, MPI_LONG, MPI_SUM, win);
        MPI_Win_flush(0, win);
        MPI_Win_unlock_all(win);
    }
    MPI_Barrier(node);

    /* accumulates into rank 0's [4] from buffers of the memory kind under test (MPITEST_MEMTYPE:
     * a device buffer goes as a message its target applies, under the same lock as the direct
     * ones), all at once: the sum is exact */
    mt_buf_t ob;
    mt_buf_init(&ob, sizeof(long));
    *(long *) ob.h = nr + 1;
    mt_push(&ob);
    MPI_Win_lock_all(0, win);
    for (int k = 0; k < 20; k++)
        MPI_Accumulate(ob.d, 1, MPI_LONG, 0, 4, 1, MPI_LONG, MPI_SUM, win);
    MPI_Win_unlock_all(win);
    mt_buf_free(&ob);
    MPI_Barrier(node);
    if (nr == 0)
        MT_CHECK(mem[4] == 20L * ns * (ns + 1) / 2, "accumulates from every rank: %ld, want %ld", mem[4],
                 20L * ns * (ns + 1) / 2);

    /* a compare-and-swap lock word ([2] of the last rank) guarding a plain read-increment-write of [3] */
    int last = ns - 1;
    long me = nr + 1, zero = 0, got;
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    for (int k = 0; k < 50; k++) {
        do
            MPI_Compare_and_swap(&me, &zero, &got, MPI_LONG, last, 2, win);
        while (got != 0);
        long v;
        MPI_Get(&v, 1, MPI_LONG, last, 3, 1, MPI_LONG, win);
        MPI_Win_flush(last, win);
        v++;
        MPI_Put(&v, 1, MPI_LONG, last, 3, 1, MPI_LONG, win);
        MPI_Win_flush(last, win);
        MPI_Compare_and_swap(&zero, &me, &got, MPI_LONG, last, 2, win);
        MT_CHECK(got == me, "CAS release: lock word %ld, want mine %ld", got, me);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(node);
    if (nr == last)
        MT_CHECK(mem[3] == 50L * ns, "CAS-guarded counter %ld, want %ld", mem[3], 50L * ns);

    /* a vector put into the right neighbour's [8..15] (every other long), read back by a get */
    int right = (nr + 1) % ns, left = (nr + ns - 1) % ns;
    long src[4] = { 10L * nr, 10L * nr + 1, 10L * nr + 2, 10L * nr + 3 }, back[8];
    MPI_Datatype every2;
    MPI_Type_vector(4, 1, 2, MPI_LONG, &every2);
    MPI_Type_commit(&every2);
    MPI_Win_fence(0, win);
    MPI_Put(src, 4, MPI_LONG, right, 8, 1, every2, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < 4; i++)
        MT_CHECK(mem[8 + 2 * i] == 10L * left + i && mem[9 + 2 * i] == 0, "vector put from %d: [%d] = %ld [%d] = %ld",
                 left, 8 + 2 * i, mem[8 + 2 * i], 9 + 2 * i, mem[9 + 2 * i]);
    MPI_Get(back, 8, MPI_LONG, right, 8, 8, MPI_LONG, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    for (int i = 0; i < 4; i++)
        MT_CHECK(back[2 * i] == 10L * nr + i && back[2 * i + 1] == 0, "get back: [%d] = %ld", 2 * i, back[2 * i]);
    MPI_Type_free(&every2);
    MPI_Win_free(&win);
    free(tickets);
    MPI_Comm_free(&node);
    return mt_finish();
}
