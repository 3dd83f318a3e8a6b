/*
 * Accumulates: MPI_Accumulate with predefined types and a derived (vector) target type, concurrent
 * accumulates from every rank onto one target inside shared locks (the sums must be exact: each
 * element update is atomic), MPI_Get_accumulate (MPI_SUM, MPI_NO_OP, MPI_REPLACE), MPI_Fetch_and_op
 * as a ticket counter under exclusive locks, MPI_Compare_and_swap as a lock word, derived
 * origin types on MPI_Put / MPI_Get, and MPI_MINLOC on a pair type with padding.
 */
#include "mtest.h"

#define N 32
#define ROUNDS 50

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    long *mem;
    MPI_Win win;
    /* [0, N): accumulate target; [N, 2N): vector target; [2N]: ticket counter; [2N+1]: CAS word;
     * [2N+2, 3N+2): put/get area */
    MPI_Win_allocate((3 * N + 2) * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    for (int i = 0; i < 3 * N + 2; i++)
        mem[i] = 0;
    MPI_Barrier(MPI_COMM_WORLD);

    /* 1. concurrent accumulates onto rank 0, shared locks, ROUNDS times each */
    long add[N];
    for (int i = 0; i < N; i++)
        add[i] = mt_rank + 1 + i;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    for (int k = 0; k < ROUNDS; k++)
        MPI_Accumulate(add, N, MPI_LONG, 0, 0, N, MPI_LONG, MPI_SUM, win);
    MPI_Win_unlock(0, win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (mt_rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        MPI_Win_sync(win);
        long sumranks = (long) mt_size * (mt_size + 1) / 2;
        for (int i = 0; i < N; i++) {
            long want = ROUNDS * (sumranks + (long) mt_size * i);
            MT_CHECK(mem[i] == want, "concurrent accumulate: mem[%d] = %ld, want %ld", i, mem[i], want);
        }
        MPI_Win_unlock(0, win);
    }

    /* 2. a derived target type: every other long of [N, 2N) on the last rank gets MPI_MAX / SUM */
    MPI_Datatype every2;
    MPI_Type_vector(N / 2, 1, 2, MPI_LONG, &every2);
    MPI_Type_commit(&every2);
    int last = mt_size - 1;
    long vals[N / 2];
    for (int i = 0; i < N / 2; i++)
        vals[i] = (long) (mt_rank + 1) * (i + 1);
    MPI_Win_fence(0, win);
    MPI_Accumulate(vals, N / 2, MPI_LONG, last, N, 1, every2, MPI_MAX, win);
    MPI_Win_fence(0, win);
    MPI_Accumulate(vals, N / 2, MPI_LONG, last, N + 1, 1, every2, MPI_SUM, win);
    MPI_Win_fence(0, win);
    if (mt_rank == last) {
        for (int i = 0; i < N / 2; i++) {
            long wmax = (long) mt_size * (i + 1), wsum = (long) mt_size * (mt_size + 1) / 2 * (i + 1);
            MT_CHECK(mem[N + 2 * i] == wmax, "vector MPI_MAX: [%d] = %ld, want %ld", 2 * i, mem[N + 2 * i], wmax);
            MT_CHECK(mem[N + 2 * i + 1] == wsum, "vector MPI_SUM: [%d] = %ld, want %ld", 2 * i + 1,
                     mem[N + 2 * i + 1], wsum);
        }
    }

    /* 3. get_accumulate: NO_OP reads, REPLACE swaps, SUM returns the value before */
    long old[N / 2], mine[N / 2];
    MPI_Get_accumulate(NULL, 0, MPI_LONG, old, N / 2, MPI_LONG, last, N, 1, every2, MPI_NO_OP, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N / 2; i++)
        MT_CHECK(old[i] == (long) mt_size * (i + 1), "get_accumulate NO_OP: [%d] = %ld", i, old[i]);
    if (mt_rank == 0) {
        for (int i = 0; i < N / 2; i++)
            mine[i] = -i;
        MPI_Get_accumulate(mine, N / 2, MPI_LONG, old, N / 2, MPI_LONG, last, N, 1, every2, MPI_REPLACE, win);
    }
    MPI_Win_fence(0, win);
    if (mt_rank == last)
        for (int i = 0; i < N / 2; i++)
            MT_CHECK(mem[N + 2 * i] == -i, "get_accumulate REPLACE: [%d] = %ld, want %d", 2 * i, mem[N + 2 * i], -i);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);

    /* 4. fetch_and_op as a ticket counter at rank 0: every ticket is handed out exactly once */
    long one = 1, ticket, *seen = calloc((size_t) mt_size * ROUNDS, sizeof(long));
    long *tickets = malloc(ROUNDS * sizeof(long));
    for (int k = 0; k < ROUNDS; k++) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Fetch_and_op(&one, &ticket, MPI_LONG, 0, 2 * N, MPI_SUM, win);
        MPI_Win_unlock(0, win);
        tickets[k] = ticket;
    }
    long *all = malloc((size_t) mt_size * ROUNDS * sizeof(long));
    MPI_Gather(tickets, ROUNDS, MPI_LONG, all, ROUNDS, MPI_LONG, 0, MPI_COMM_WORLD);
    if (mt_rank == 0) {
        for (int i = 0; i < mt_size * ROUNDS; i++) {
            MT_CHECK(all[i] >= 0 && all[i] < mt_size * ROUNDS, "ticket %ld out of range", all[i]);
            if (all[i] >= 0 && all[i] < mt_size * ROUNDS) {
                MT_CHECK(!seen[all[i]], "ticket %ld handed out twice", all[i]);
                seen[all[i]] = 1;
            }
        }
    }
    free(seen);
    free(all);
    free(tickets);

    /* 5. compare_and_swap: a lock word at rank last; each rank takes it, bumps a counter, frees it */
    long counter_before, zero = 0, me = mt_rank + 1, got;
    for (int k = 0; k < 10; k++) {
        do {
            MPI_Win_lock(MPI_LOCK_SHARED, last, 0, win);
            MPI_Compare_and_swap(&me, &zero, &got, MPI_LONG, last, 2 * N + 1, win);
            MPI_Win_unlock(last, win);
        } while (got != 0);
        MPI_Win_lock(MPI_LOCK_SHARED, last, 0, win);
        MPI_Get(&counter_before, 1, MPI_LONG, last, 2 * N + 2, 1, MPI_LONG, win);
        MPI_Win_flush(last, win);
        counter_before++;
        MPI_Put(&counter_before, 1, MPI_LONG, last, 2 * N + 2, 1, MPI_LONG, win);
        MPI_Win_flush(last, win);
        MPI_Compare_and_swap(&zero, &me, &got, MPI_LONG, last, 2 * N + 1, win);
        MPI_Win_unlock(last, win);
        MT_CHECK(got == me, "CAS release: lock word %ld, want mine %ld", got, me);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (mt_rank == last) {
        MPI_Win_lock(MPI_LOCK_SHARED, last, 0, win);
        MT_CHECK(mem[2 * N + 2] == 10L * mt_size, "CAS-protected counter %ld, want %ld", mem[2 * N + 2],
                 10L * mt_size);
        MPI_Win_unlock(last, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* 6. derived origin types: put a strided origin into a contiguous target, get it back strided */
    long strided[N], back[N];
    for (int i = 0; i < N; i++)
        strided[i] = i % 2 == 0 ? 1000 * mt_rank + i : -1;
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    MPI_Win_fence(0, win);
    MPI_Put(strided, 1, every2, right, 2 * N + 2, N / 2, MPI_LONG, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N / 2; i++)
        MT_CHECK(mem[2 * N + 2 + i] == 1000 * left + 2 * i, "strided put: [%d] = %ld", i, mem[2 * N + 2 + i]);
    for (int i = 0; i < N; i++)
        back[i] = -7;
    MPI_Get(back, 1, every2, right, 2 * N + 2, N / 2, MPI_LONG, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    for (int i = 0; i < N; i++)
        MT_CHECK(back[i] == (i % 2 == 0 ? 1000 * mt_rank + i : -7), "strided get: back[%d] = %ld", i, back[i]);

    MPI_Type_free(&every2);
    MPI_Win_free(&win);

    /* 7. MPI_MINLOC on MPI_DOUBLE_INT, a pair type with padding: the minimum and who had it */
    struct di {
        double v;
        int i;
    } *dmem, src2[4];
    MPI_Win dwin;
    MPI_Win_allocate(4 * sizeof(struct di), sizeof(struct di), MPI_INFO_NULL, MPI_COMM_WORLD, &dmem, &dwin);
    for (int k = 0; k < 4; k++) {
        dmem[k].v = 1e9;
        dmem[k].i = -1;
        src2[k].v = (mt_rank + k) % mt_size;
        src2[k].i = mt_rank;
    }
    MPI_Win_fence(0, dwin);
    MPI_Accumulate(src2, 4, MPI_DOUBLE_INT, 0, 0, 4, MPI_DOUBLE_INT, MPI_MINLOC, dwin);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, dwin);
    if (mt_rank == 0)
        for (int k = 0; k < 4; k++)
            MT_CHECK(dmem[k].v == 0 && dmem[k].i == (mt_size - k % mt_size) % mt_size,
                     "MPI_MINLOC on MPI_DOUBLE_INT: [%d] = (%g, %d), want (0, %d)", k, dmem[k].v, dmem[k].i,
                     (mt_size - k % mt_size) % mt_size);
    MPI_Win_free(&dwin);

    /* MPI_MAXLOC on MPI_SHORT_INT, whose gap lies inside each element (short, padding, int) */
    struct si {
        short v;
        int i;
    } *smem, src3[3];
    MPI_Win_allocate(3 * sizeof(struct si), sizeof(struct si), MPI_INFO_NULL, MPI_COMM_WORLD, &smem, &dwin);
    for (int k = 0; k < 3; k++) {
        smem[k].v = -1;
        smem[k].i = -1;
        src3[k].v = (short) ((mt_rank + k) % mt_size);
        src3[k].i = mt_rank;
    }
    MPI_Win_fence(0, dwin);
    MPI_Accumulate(src3, 3, MPI_SHORT_INT, 0, 0, 3, MPI_SHORT_INT, MPI_MAXLOC, dwin);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, dwin);
    if (mt_rank == 0)
        for (int k = 0; k < 3; k++)
            MT_CHECK(smem[k].v == mt_size - 1 && smem[k].i == (2 * mt_size - 1 - k) % mt_size,
                     "MPI_MAXLOC on MPI_SHORT_INT: [%d] = (%d, %d), want (%d, %d)", k, smem[k].v, smem[k].i,
                     mt_size - 1, (2 * mt_size - 1 - k) % mt_size);
    MPI_Win_free(&dwin);
    return mt_finish();
}
