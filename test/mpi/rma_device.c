/*
 * One-sided communication on memory of the kind under test (MPITEST_MEMTYPE: host, device, mix):
 * window memory from MPI_Win_create and MPI_Win_attach, and every origin, result and compare
 * buffer, are that kind; MPI_Win_allocate's memory stays host memory. Every operation kind, in
 * fence, lock and lock_all epochs, contiguous and derived types, MINLOC on a pair type with
 * padding, and the request-based forms. The test reads and writes its own window memory only
 * through mt_copy_in / mt_copy_out (driver copies), between epochs.
 */
#include "mtest.h"

#define N 16
#define ROUNDS 10
#define M 4 /* MINLOC pairs */

/* Window layout, in longs. */
enum {
    W_PUT = 0,            /* [0, N): put by the left neighbour, read back by it */
    W_ACC = N,            /* [N, 2N): accumulates from every rank */
    W_TICKET = 2 * N,     /* fetch-and-op counter */
    W_CAS = 2 * N + 1,    /* compare-and-swap word */
    W_GACC = 2 * N + 2,   /* [.., +N): get_accumulate / vector puts from the left neighbour */
    W_PAIR = 3 * N + 2,   /* M double-int pairs (2 longs each) */
    W_LEN = 3 * N + 2 + 2 * M
};

typedef struct {
    double v;
    int i;
} pair_t;

static long *wh;          /* host copy of my window memory */
static MPI_Aint *addrs;   /* dynamic windows: every rank's window memory address, else NULL */

/* The target displacement of long number slot of rank t's window memory. */
static MPI_Aint D(int t, int slot)
{
    return addrs != NULL ? addrs[t] + slot * (MPI_Aint) sizeof(long) : slot;
}
static void *wd;          /* my window memory (device or host) */

static void wpull(void)
{
    mt_copy_out(wh, wd, W_LEN * sizeof(long));
}

static void wpush(void)
{
    mt_copy_in(wd, wh, W_LEN * sizeof(long));
}

static void fill(mt_buf_t *b, long base)
{
    for (size_t i = 0; i < b->n / sizeof(long); i++)
        ((long *) b->h)[i] = base + (long) i;
    mt_push(b);
}

/* Fence epochs: put, accumulate, get, get_accumulate, derived origin and target types, MINLOC. */
static void fence_ops(MPI_Win win, const char *what)
{
    int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
    mt_buf_t src, add, res, vec;
    mt_buf_init(&src, N * sizeof(long));
    mt_buf_init(&add, N * sizeof(long));
    mt_buf_init(&res, N * sizeof(long));
    mt_buf_init(&vec, 2 * N * sizeof(long));
    fill(&src, 1000L * (mt_rank + 1));
    fill(&add, mt_rank + 1);
    for (int i = 0; i < W_LEN; i++)
        wh[i] = -1;
    for (int i = 0; i < N; i++)
        wh[W_ACC + i] = 0;
    wpush();
    MPI_Datatype every2;
    MPI_Type_vector(N / 2, 1, 2, MPI_LONG, &every2);
    MPI_Type_commit(&every2);

    MPI_Win_fence(0, win);
    MPI_Put(src.d, N, MPI_LONG, right, D(right, W_PUT), N, MPI_LONG, win);
    for (int t = 0; t < mt_size; t++)
        MPI_Accumulate(add.d, N, MPI_LONG, t, D(t, W_ACC), N, MPI_LONG, MPI_SUM, win);
    /* a derived target type: the first N/2 of src to every other long of W_GACC */
    MPI_Put(src.d, N / 2, MPI_LONG, right, D(right, W_GACC), 1, every2, win);
    MPI_Win_fence(0, win);
    wpull();
    long sumranks = (long) mt_size * (mt_size + 1) / 2;
    for (int i = 0; i < N; i++) {
        MT_CHECK(wh[W_PUT + i] == 1000L * (left + 1) + i, "%s put: [%d] = %ld", what, i, wh[W_PUT + i]);
        MT_CHECK(wh[W_ACC + i] == sumranks + (long) mt_size * i, "%s acc: [%d] = %ld", what, i, wh[W_ACC + i]);
        long want = i % 2 == 0 ? 1000L * (left + 1) + i / 2 : -1;
        MT_CHECK(wh[W_GACC + i] == want, "%s vector put: [%d] = %ld, want %ld", what, i, wh[W_GACC + i], want);
    }

    /* get back what I put; a derived origin type: every other long of vec */
    MPI_Get(res.d, N, MPI_LONG, right, D(right, W_PUT), N, MPI_LONG, win);
    MPI_Get(vec.d, 1, every2, right, D(right, W_ACC), N / 2, MPI_LONG, win);
    MPI_Win_fence(0, win);
    mt_pull(&res);
    mt_pull(&vec);
    for (int i = 0; i < N; i++)
        MT_CHECK(((long *) res.h)[i] == 1000L * (mt_rank + 1) + i, "%s get: [%d] = %ld", what, i, ((long *) res.h)[i]);
    for (int i = 0; i < 2 * N; i++) {
        long want = i % 2 == 0 && i / 2 < N / 2 ? sumranks + (long) mt_size * (i / 2) : 0;
        MT_CHECK(((long *) vec.h)[i] == want, "%s get to a vector: [%d] = %ld, want %ld", what, i,
                 ((long *) vec.h)[i], want);
    }

    /* get_accumulate: the old data comes back, the sum stays; a vector origin type for a put */
    MPI_Get_accumulate(add.d, N, MPI_LONG, res.d, N, MPI_LONG, right, D(right, W_ACC), N, MPI_LONG, MPI_SUM, win);
    fill(&vec, 50000);
    MPI_Put(vec.d, 1, every2, right, D(right, W_PUT), N / 2, MPI_LONG, win);
    MPI_Win_fence(0, win);
    mt_pull(&res);
    wpull();
    for (int i = 0; i < N; i++) {
        long old = sumranks + (long) mt_size * i;
        MT_CHECK(((long *) res.h)[i] == old, "%s get_accumulate result: [%d] = %ld, want %ld", what, i,
                 ((long *) res.h)[i], old);
        long want = old + left + 1 + i;
        MT_CHECK(wh[W_ACC + i] == want, "%s get_accumulate: [%d] = %ld, want %ld", what, i, wh[W_ACC + i], want);
        want = i < N / 2 ? 50000 + 2 * i : 1000L * (left + 1) + i;
        MT_CHECK(wh[W_PUT + i] == want, "%s put from a vector: [%d] = %ld, want %ld", what, i, wh[W_PUT + i], want);
    }

    /* MINLOC on double-int pairs (a type with padding) from every rank onto rank 0 */
    mt_buf_t pairs;
    mt_buf_init(&pairs, M * sizeof(pair_t));
    pair_t *p = pairs.h;
    for (int k = 0; k < M; k++) {
        p[k].v = (double) ((mt_rank * 7 + k * 3) % mt_size);
        p[k].i = mt_rank;
    }
    mt_push(&pairs);
    if (mt_rank == 0) {
        pair_t *q = (pair_t *) &wh[W_PAIR];
        for (int k = 0; k < M; k++)
            q[k] = (pair_t){ 1e9, -1 };
        wpush();
    }
    MPI_Win_fence(0, win);
    MPI_Accumulate(pairs.d, M, MPI_DOUBLE_INT, 0, D(0, W_PAIR), M, MPI_DOUBLE_INT, MPI_MINLOC, win);
    MPI_Win_fence(0, win);
    if (mt_rank == 0) {
        wpull();
        pair_t *q = (pair_t *) &wh[W_PAIR];
        for (int k = 0; k < M; k++) {
            double best = 1e9;
            int at = -1;
            for (int r = 0; r < mt_size; r++) {
                double v = (double) ((r * 7 + k * 3) % mt_size);
                if (v < best) {
                    best = v;
                    at = r;
                }
            }
            MT_CHECK(q[k].v == best && q[k].i == at, "%s minloc [%d] = (%g, %d), want (%g, %d)", what, k, q[k].v,
                     q[k].i, best, at);
        }
    }
    MPI_Type_free(&every2);
    mt_buf_free(&pairs);
    mt_buf_free(&src);
    mt_buf_free(&add);
    mt_buf_free(&res);
    mt_buf_free(&vec);
}

/* Lock epochs: concurrent accumulates, a fetch-and-op ticket counter, a compare-and-swap race. */
static void lock_ops(MPI_Win win, const char *what)
{
    int last = mt_size - 1;
    mt_buf_t add, one, ticket, cas_new, cas_cmp, cas_res;
    mt_buf_init(&add, N * sizeof(long));
    mt_buf_init(&one, sizeof(long));
    mt_buf_init(&ticket, sizeof(long));
    mt_buf_init(&cas_new, sizeof(long));
    mt_buf_init(&cas_cmp, sizeof(long));
    mt_buf_init(&cas_res, sizeof(long));
    fill(&add, mt_rank + 1);
    *(long *) one.h = 1;
    mt_push(&one);
    *(long *) cas_new.h = 100 + mt_rank;
    mt_push(&cas_new);
    *(long *) cas_cmp.h = 0;
    mt_push(&cas_cmp);
    for (int i = 0; i < W_LEN; i++)
        wh[i] = 0;
    wpush();
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    for (int k = 0; k < ROUNDS; k++)
        MPI_Accumulate(add.d, N, MPI_LONG, 0, D(0, W_ACC), N, MPI_LONG, MPI_SUM, win);
    MPI_Win_unlock(0, win);

    long tsum = 0, prev = -1;
    for (int k = 0; k < ROUNDS; k++) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, last, 0, win);
        MPI_Fetch_and_op(one.d, ticket.d, MPI_LONG, last, D(last, W_TICKET), MPI_SUM, win);
        MPI_Win_unlock(last, win);
        mt_pull(&ticket);
        long t = *(long *) ticket.h;
        MT_CHECK(t > prev && t < (long) mt_size * ROUNDS, "%s ticket %ld after %ld", what, t, prev);
        prev = t;
        tsum += t;
    }

    MPI_Win_lock(MPI_LOCK_SHARED, last, 0, win);
    MPI_Compare_and_swap(cas_new.d, cas_cmp.d, cas_res.d, MPI_LONG, last, D(last, W_CAS), win);
    MPI_Win_unlock(last, win);
    mt_pull(&cas_res);
    long got = *(long *) cas_res.h;
    int won = got == 0, winners = 0;
    MT_CHECK(got == 0 || (got >= 100 && got < 100 + mt_size), "%s compare_and_swap result %ld", what, got);

    long all_tsum = 0;
    MPI_Allreduce(&tsum, &all_tsum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    long total = (long) mt_size * ROUNDS;
    MT_CHECK(all_tsum == total * (total - 1) / 2, "%s tickets sum to %ld, want %ld", what, all_tsum,
             total * (total - 1) / 2);
    MT_CHECK(winners == 1, "%s %d ranks won the compare_and_swap", what, winners);
    int winner = won ? mt_rank : -1, the_winner;
    MPI_Allreduce(&winner, &the_winner, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MT_CHECK(won || got == 100 + the_winner, "%s compare_and_swap lost to %ld, the winner is %d", what, got,
             the_winner);
    wpull();
    if (mt_rank == 0) {
        long sumranks = (long) mt_size * (mt_size + 1) / 2;
        for (int i = 0; i < N; i++) {
            long want = ROUNDS * (sumranks + (long) mt_size * i);
            MT_CHECK(wh[W_ACC + i] == want, "%s concurrent accumulate [%d] = %ld, want %ld", what, i, wh[W_ACC + i],
                     want);
        }
    }
    if (mt_rank == last) {
        MT_CHECK(wh[W_TICKET] == total, "%s ticket counter %ld, want %ld", what, wh[W_TICKET], total);
        MT_CHECK(wh[W_CAS] == 100 + the_winner, "%s compare_and_swap word %ld, want %d", what, wh[W_CAS],
                 100 + the_winner);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    mt_buf_free(&add);
    mt_buf_free(&one);
    mt_buf_free(&ticket);
    mt_buf_free(&cas_new);
    mt_buf_free(&cas_cmp);
    mt_buf_free(&cas_res);
}

/* lock_all and the request-based forms, with flushes between dependent operations. */
static void request_ops(MPI_Win win, const char *what)
{
    int right = (mt_rank + 1) % mt_size;
    mt_buf_t src, res, add;
    mt_buf_init(&src, N * sizeof(long));
    mt_buf_init(&res, N * sizeof(long));
    mt_buf_init(&add, N * sizeof(long));
    fill(&src, 7000 + mt_rank);
    fill(&add, 1);
    for (int i = 0; i < W_LEN; i++)
        wh[i] = 5;
    wpush();
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Request rq[2];
    MPI_Win_lock_all(0, win);
    MPI_Rput(src.d, N, MPI_LONG, right, D(right, W_PUT), N, MPI_LONG, win, &rq[0]);
    MPI_Raccumulate(add.d, N, MPI_LONG, right, D(right, W_GACC), N, MPI_LONG, MPI_SUM, win, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    MPI_Win_flush(right, win);
    MPI_Rget(res.d, N, MPI_LONG, right, D(right, W_PUT), N, MPI_LONG, win, &rq[0]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    mt_pull(&res);
    for (int i = 0; i < N; i++)
        MT_CHECK(((long *) res.h)[i] == 7000 + mt_rank + i, "%s rget: [%d] = %ld", what, i, ((long *) res.h)[i]);
    MPI_Rget_accumulate(NULL, 0, MPI_LONG, res.d, N, MPI_LONG, right, D(right, W_GACC), N, MPI_LONG, MPI_NO_OP, win,
                        &rq[0]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    mt_pull(&res);
    for (int i = 0; i < N; i++)
        MT_CHECK(((long *) res.h)[i] == 5 + 1 + i, "%s rget_accumulate: [%d] = %ld", what, i, ((long *) res.h)[i]);
    /* MPI_REPLACE: get_accumulate swaps, accumulate overwrites */
    MPI_Get_accumulate(src.d, N, MPI_LONG, res.d, N, MPI_LONG, right, D(right, W_GACC), N, MPI_LONG, MPI_REPLACE,
                       win);
    MPI_Win_flush(right, win);
    mt_pull(&res);
    for (int i = 0; i < N; i++)
        MT_CHECK(((long *) res.h)[i] == 5 + 1 + i, "%s replacing get_accumulate: [%d] = %ld", what, i,
                 ((long *) res.h)[i]);
    MPI_Accumulate(add.d, N / 2, MPI_LONG, right, D(right, W_GACC), N / 2, MPI_LONG, MPI_REPLACE, win);
    MPI_Win_flush(right, win);
    MPI_Get(res.d, N, MPI_LONG, right, D(right, W_GACC), N, MPI_LONG, win);
    MPI_Win_flush(right, win);
    mt_pull(&res);
    for (int i = 0; i < N; i++) {
        long want = i < N / 2 ? 1 + i : 7000 + mt_rank + i;
        MT_CHECK(((long *) res.h)[i] == want, "%s replacing accumulate: [%d] = %ld, want %ld", what, i,
                 ((long *) res.h)[i], want);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    mt_buf_free(&src);
    mt_buf_free(&res);
    mt_buf_free(&add);
}

/* Bad input keeps its error class with device memory. */
static void bad_input(MPI_Win win)
{
    if (!mt_mem_device())
        return;
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    mt_buf_t small;
    mt_buf_init(&small, N * sizeof(long));
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    int err = MPI_Put(small.d, 2 * N, MPI_LONG, 0, 0, 2 * N, MPI_LONG, win);
    MT_CHECK(mt_class(err) == MPI_ERR_BUFFER, "put from past the end of a device buffer: %s", mt_errstr(err));
    MPI_Win_unlock(0, win);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Win bad = MPI_WIN_NULL;
    err = MPI_Win_create(small.d, 4 * N * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &bad);
    MT_CHECK(mt_class(err) == MPI_ERR_BASE, "window past the end of a device buffer: %s", mt_errstr(err));
    if (err == MPI_SUCCESS)
        MPI_Win_free(&bad);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    mt_buf_free(&small);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    wh = calloc(W_LEN, sizeof(long));
    wd = mt_alloc(W_LEN * sizeof(long));
    MPI_Win win;

    /* MPI_Win_create on memory of the kind under test */
    MPI_Win_create(wd, W_LEN * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    fence_ops(win, "create");
    lock_ops(win, "create");
    request_ops(win, "create");
    bad_input(win);
    MPI_Win_free(&win);

    /* a dynamic window with that memory attached (disp: the address) */
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_attach(win, wd, W_LEN * sizeof(long));
    MPI_Aint mine;
    addrs = malloc(mt_size * sizeof(MPI_Aint));
    MPI_Get_address(wd, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
    fence_ops(win, "dynamic");
    lock_ops(win, "dynamic");
    request_ops(win, "dynamic");
    MPI_Win_detach(win, wd);
    MPI_Win_free(&win);
    free(addrs);
    addrs = NULL;

    /* MPI_Win_allocate: host memory (the CPU reads it here), origin buffers of the kind under test */
    long *mem;
    MPI_Win_allocate(N * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    {
        int right = (mt_rank + 1) % mt_size, left = (mt_rank + mt_size - 1) % mt_size;
        mt_buf_t src, res;
        mt_buf_init(&src, N * sizeof(long));
        mt_buf_init(&res, N * sizeof(long));
        fill(&src, 90 + mt_rank);
        MPI_Win_fence(0, win);
        MPI_Put(src.d, N, MPI_LONG, right, 0, N, MPI_LONG, win);
        MPI_Win_fence(0, win);
        MPI_Get(res.d, N, MPI_LONG, right, 0, N, MPI_LONG, win);
        MPI_Win_fence(0, win);
        mt_pull(&res);
        for (int i = 0; i < N; i++) {
            MT_CHECK(mem[i] == 90 + left + i, "allocate put: [%d] = %ld", i, mem[i]);
            MT_CHECK(((long *) res.h)[i] == 90 + mt_rank + i, "allocate get: [%d] = %ld", i, ((long *) res.h)[i]);
        }
        mt_buf_free(&src);
        mt_buf_free(&res);
    }
    MPI_Win_free(&win);
    mt_free(wd);
    free(wh);
    return mt_finish();
}
