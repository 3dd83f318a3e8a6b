/*
 * Gather(v), Scatter(v), Allgather(v), Alltoall(v,w), Reduce, Allreduce (non-commutative user op),
 * Reduce_scatter and Reduce_scatter_block on intercommunicators, blocking, nonblocking and
 * persistent. For every split of MPI_COMM_WORLD into a low group (ranks < k) and a high group:
 * every root of either group (MPI_ROOT at the root, MPI_PROC_NULL at its group's other members,
 * the root's rank in the other group), with NULL buffers where they are not significant; zero
 * counts; a derived (strided) datatype on either side. Results are checked against what the
 * other group's inputs say. Then the errors: MPI_IN_PLACE where an intercommunicator forbids it,
 * Scan/Exscan (MPI_ERR_COMM). At 1 process there is no intercommunicator: only " No Errors".
 */
#include "mtest.h"

#define RUN3(mode, blocking, nonblocking, init)                                                       \
    do {                                                                                              \
        MPI_Request req_;                                                                             \
        if ((mode) == 0) {                                                                            \
            blocking;                                                                                 \
        } else if ((mode) == 1) {                                                                     \
            nonblocking;                                                                              \
            MPI_Wait(&req_, MPI_STATUS_IGNORE);                                                       \
        } else {                                                                                      \
            init;                                                                                     \
            MPI_Start(&req_);                                                                         \
            MPI_Wait(&req_, MPI_STATUS_IGNORE);                                                       \
            MPI_Request_free(&req_);                                                                  \
        }                                                                                             \
    } while (0)

static int k_split, low, lrank, lsize, rsize, mode;
static MPI_Comm inter;
static MPI_Datatype strided; /* ints 0 and 2 of every 3: extent 3 ints, 2 ints of data */
/* MPICH 4.0.2 rejects a NULL sendbuf in Reduce at MPI_ROOT (not significant there): umpi gets NULL */
static int is_umpi;
static int dummy[64];

/* world rank of rank r of the low (in_low) or high group */
static int wrank_of(int in_low, int r)
{
    return in_low ? r : k_split + r;
}

/* ---- typed buffers of ints: T is MPI_INT or strided ------------------------------------------- */

static int ext(MPI_Datatype t)
{
    return t == MPI_INT ? 1 : 3;
}
static int per(MPI_Datatype t)
{
    return t == MPI_INT ? 1 : 2;
}
/* index in a buffer of t of data int j counted from element e */
static int pos(MPI_Datatype t, int e, int j)
{
    return e * ext(t) + (t == MPI_INT ? j : (j / 2) * 3 + (j % 2) * 2);
}
static int *mkbuf(MPI_Datatype t, int nelem)
{
    int n = nelem * ext(t) + 1, *b = malloc(sizeof(int) * (size_t) n);
    for (int i = 0; i < n; i++)
        b[i] = -1;
    return b;
}
static int span(MPI_Datatype t, int nelem)
{
    return nelem * ext(t) + 1;
}
/* writes m data ints x(tag, j) at element e */
static int val(int tag, int j)
{
    return tag * 1000 + j + 1;
}
static void fill(int *b, MPI_Datatype t, int e, int m, int tag)
{
    for (int j = 0; j < m; j++)
        b[pos(t, e, j)] = val(tag, j);
}
/* A received buffer: every data int matches want[] (want[i] = -1 where nothing is to arrive). */
static void check_buf(const int *b, const int *want, int n, const char *what)
{
    for (int i = 0; i < n; i++)
        if (b[i] != want[i]) {
            MT_CHECK(b[i] == want[i], "%s: k=%d mode %d: [%d]=%d want %d", what, k_split, mode, i, b[i], want[i]);
            return;
        }
}

typedef struct {
    MPI_Datatype st, rt;
    int sc, rc; /* sc * per(st) == rc * per(rt) */
} tcase_t;
static tcase_t tcases[4];

/* For every root: my root argument (loop over root_low, r) */
#define FOR_ROOTS(rootw, root, mine)                                                                   \
    for (int root_low = 0; root_low < 2; root_low++)                                                 \
        for (int r_ = 0; r_ < (root_low ? k_split : mt_size - k_split); r_++)                         \
            for (int mine = low == root_low, root = mine ? (lrank == r_ ? MPI_ROOT : MPI_PROC_NULL) : r_, \
                     rootw = wrank_of(root_low, r_), once_ = 1;                                       \
                 once_; once_ = 0)

/* ---- gather / gatherv ------------------------------------------------------------------------- */

static void test_gather(const tcase_t *c, int v)
{
    FOR_ROOTS(rootw, root, mine) {
        int *sb = NULL, *rb = NULL, *want = NULL, n = 0;
        MPI_Count dummy = 0;
        (void) dummy;
        int *rcounts = malloc(sizeof(int) * (size_t) rsize), *displs = malloc(sizeof(int) * (size_t) rsize);
        int mult = v ? lrank % 3 : 1; /* gatherv: my block has (lrank % 3) * sc elements */
        for (int j = 0; j < rsize; j++) {
            rcounts[j] = c->rc * (v ? j % 3 : 1);
            displs[j] = (rsize - 1 - j) * (2 * c->rc + 1);
        }
        if (root == MPI_ROOT) {
            n = span(c->rt, rsize * (2 * c->rc + 1));
            rb = mkbuf(c->rt, rsize * (2 * c->rc + 1));
            want = mkbuf(c->rt, rsize * (2 * c->rc + 1));
            for (int j = 0; j < rsize; j++)
                fill(want, c->rt, v ? displs[j] : j * c->rc, rcounts[j] * per(c->rt), wrank_of(!low, j));
        } else if (root != MPI_PROC_NULL) {
            sb = mkbuf(c->st, c->sc * mult);
            fill(sb, c->st, 0, c->sc * mult * per(c->st), mt_rank);
        }
        if (v)
            RUN3(mode, MPI_Gatherv(sb, c->sc * mult, c->st, rb, rcounts, displs, c->rt, root, inter),
                 MPI_Igatherv(sb, c->sc * mult, c->st, rb, rcounts, displs, c->rt, root, inter, &req_),
                 MPI_Gatherv_init(sb, c->sc * mult, c->st, rb, rcounts, displs, c->rt, root, inter, MPI_INFO_NULL,
                                  &req_));
        else
            RUN3(mode, MPI_Gather(sb, c->sc, c->st, rb, c->rc, c->rt, root, inter),
                 MPI_Igather(sb, c->sc, c->st, rb, c->rc, c->rt, root, inter, &req_),
                 MPI_Gather_init(sb, c->sc, c->st, rb, c->rc, c->rt, root, inter, MPI_INFO_NULL, &req_));
        if (rb)
            check_buf(rb, want, n, v ? "gatherv" : "gather");
        (void) rootw;
        (void) mine;
        free(sb), free(rb), free(want), free(rcounts), free(displs);
    }
}

/* ---- scatter / scatterv ----------------------------------------------------------------------- */

static void test_scatter(const tcase_t *c, int v)
{
    FOR_ROOTS(rootw, root, mine) {
        int *sb = NULL, *rb = NULL, *want = NULL, n = 0;
        int *scounts = malloc(sizeof(int) * (size_t) rsize), *displs = malloc(sizeof(int) * (size_t) rsize);
        int mult = v ? lrank % 3 : 1;
        for (int j = 0; j < rsize; j++) {
            scounts[j] = c->sc * (v ? j % 3 : 1);
            displs[j] = (rsize - 1 - j) * (2 * c->sc + 1);
        }
        if (root == MPI_ROOT) {
            sb = mkbuf(c->st, rsize * (2 * c->sc + 1));
            for (int j = 0; j < rsize; j++)
                fill(sb, c->st, v ? displs[j] : j * c->sc, scounts[j] * per(c->st), mt_rank * 16 + j);
        } else if (root != MPI_PROC_NULL) {
            n = span(c->rt, c->rc * mult);
            rb = mkbuf(c->rt, c->rc * mult);
            want = mkbuf(c->rt, c->rc * mult);
            fill(want, c->rt, 0, c->rc * mult * per(c->rt), rootw * 16 + lrank);
        }
        if (v)
            RUN3(mode, MPI_Scatterv(sb, scounts, displs, c->st, rb, c->rc * mult, c->rt, root, inter),
                 MPI_Iscatterv(sb, scounts, displs, c->st, rb, c->rc * mult, c->rt, root, inter, &req_),
                 MPI_Scatterv_init(sb, scounts, displs, c->st, rb, c->rc * mult, c->rt, root, inter, MPI_INFO_NULL,
                                   &req_));
        else
            RUN3(mode, MPI_Scatter(sb, c->sc, c->st, rb, c->rc, c->rt, root, inter),
                 MPI_Iscatter(sb, c->sc, c->st, rb, c->rc, c->rt, root, inter, &req_),
                 MPI_Scatter_init(sb, c->sc, c->st, rb, c->rc, c->rt, root, inter, MPI_INFO_NULL, &req_));
        if (rb)
            check_buf(rb, want, n, v ? "scatterv" : "scatter");
        (void) mine;
        free(sb), free(rb), free(want), free(scounts), free(displs);
    }
}

/* ---- allgather / allgatherv ------------------------------------------------------------------- */

static void test_allgather(const tcase_t *c, int v)
{
    int *rcounts = malloc(sizeof(int) * (size_t) rsize), *displs = malloc(sizeof(int) * (size_t) rsize);
    int mult = v ? (lrank + 1) % 3 : 1;
    for (int j = 0; j < rsize; j++) {
        rcounts[j] = c->rc * (v ? (j + 1) % 3 : 1);
        displs[j] = (rsize - 1 - j) * (2 * c->rc + 1);
    }
    int nel = rsize * (2 * c->rc + 1), n = span(c->rt, nel);
    int *sb = mkbuf(c->st, c->sc * mult), *rb = mkbuf(c->rt, nel), *want = mkbuf(c->rt, nel);
    fill(sb, c->st, 0, c->sc * mult * per(c->st), mt_rank);
    for (int j = 0; j < rsize; j++)
        fill(want, c->rt, v ? displs[j] : j * c->rc, rcounts[j] * per(c->rt), wrank_of(!low, j));
    if (v)
        RUN3(mode, MPI_Allgatherv(sb, c->sc * mult, c->st, rb, rcounts, displs, c->rt, inter),
             MPI_Iallgatherv(sb, c->sc * mult, c->st, rb, rcounts, displs, c->rt, inter, &req_),
             MPI_Allgatherv_init(sb, c->sc * mult, c->st, rb, rcounts, displs, c->rt, inter, MPI_INFO_NULL, &req_));
    else
        RUN3(mode, MPI_Allgather(sb, c->sc, c->st, rb, c->rc, c->rt, inter),
             MPI_Iallgather(sb, c->sc, c->st, rb, c->rc, c->rt, inter, &req_),
             MPI_Allgather_init(sb, c->sc, c->st, rb, c->rc, c->rt, inter, MPI_INFO_NULL, &req_));
    check_buf(rb, want, n, v ? "allgatherv" : "allgather");
    free(sb), free(rb), free(want), free(rcounts), free(displs);
}

/* ---- alltoall / alltoallv / alltoallw (w = 2) --------------------------------------------------- */

static void test_alltoall(const tcase_t *c, int v)
{
    int *sc = malloc(sizeof(int) * (size_t) rsize), *sd = malloc(sizeof(int) * (size_t) rsize);
    int *rc = malloc(sizeof(int) * (size_t) rsize), *rd = malloc(sizeof(int) * (size_t) rsize);
    MPI_Datatype *sts = malloc(sizeof(MPI_Datatype) * (size_t) rsize);
    MPI_Datatype *rts = malloc(sizeof(MPI_Datatype) * (size_t) rsize);
    /* block to remote j: (lrank + j) % 3 times the case's count (v, w); reversed order with gaps */
    for (int j = 0; j < rsize; j++) {
        int m = v ? (lrank + j) % 3 : 1;
        sc[j] = c->sc * m;
        rc[j] = c->rc * m;
        sd[j] = (rsize - 1 - j) * (2 * c->sc + 1);
        rd[j] = (rsize - 1 - j) * (2 * c->rc + 1);
        sts[j] = c->st;
        rts[j] = c->rt;
    }
    int snel = rsize * (2 * c->sc + 1), rnel = rsize * (2 * c->rc + 1), n = span(c->rt, rnel);
    int *sb = mkbuf(c->st, snel), *rb = mkbuf(c->rt, rnel), *want = mkbuf(c->rt, rnel);
    for (int j = 0; j < rsize; j++) {
        fill(sb, c->st, v ? sd[j] : j * c->sc, sc[j] * per(c->st), mt_rank * 16 + j);
        fill(want, c->rt, v ? rd[j] : j * c->rc, rc[j] * per(c->rt), wrank_of(!low, j) * 16 + lrank);
    }
    if (v == 2) {
        for (int j = 0; j < rsize; j++) {
            sd[j] *= ext(c->st) * (int) sizeof(int);
            rd[j] *= ext(c->rt) * (int) sizeof(int);
        }
        RUN3(mode, MPI_Alltoallw(sb, sc, sd, sts, rb, rc, rd, rts, inter),
             MPI_Ialltoallw(sb, sc, sd, sts, rb, rc, rd, rts, inter, &req_),
             MPI_Alltoallw_init(sb, sc, sd, sts, rb, rc, rd, rts, inter, MPI_INFO_NULL, &req_));
    } else if (v) {
        RUN3(mode, MPI_Alltoallv(sb, sc, sd, c->st, rb, rc, rd, c->rt, inter),
             MPI_Ialltoallv(sb, sc, sd, c->st, rb, rc, rd, c->rt, inter, &req_),
             MPI_Alltoallv_init(sb, sc, sd, c->st, rb, rc, rd, c->rt, inter, MPI_INFO_NULL, &req_));
    } else {
        RUN3(mode, MPI_Alltoall(sb, c->sc, c->st, rb, c->rc, c->rt, inter),
             MPI_Ialltoall(sb, c->sc, c->st, rb, c->rc, c->rt, inter, &req_),
             MPI_Alltoall_init(sb, c->sc, c->st, rb, c->rc, c->rt, inter, MPI_INFO_NULL, &req_));
    }
    check_buf(rb, want, n, v == 2 ? "alltoallw" : v ? "alltoallv" : "alltoall");
    free(sb), free(rb), free(want), free(sc), free(sd), free(rc), free(rd), free(sts), free(rts);
}

/* ---- reductions --------------------------------------------------------------------------------- */

static int rin(int w, int j)
{
    return (w * 3 + j) % 7 + 1;
}

/* sum of rin over the remote group, or the max; element j */
static int rref(MPI_Op op, int j)
{
    int x = rin(wrank_of(!low, 0), j);
    for (int r = 1; r < rsize; r++) {
        int y = rin(wrank_of(!low, r), j);
        x = op == MPI_SUM ? x + y : (y > x ? y : x);
    }
    return x;
}

/* Reduce of n elements of t (MPI_INT or strided) with op, every root. */
static void test_reduce(MPI_Datatype t, int nel, MPI_Op op)
{
    int m = nel * per(t), n = span(t, nel);
    FOR_ROOTS(rootw, root, mine) {
        int *sb = NULL, *rb = NULL, *want = NULL;
        if (root == MPI_ROOT) {
            sb = is_umpi ? NULL : dummy;
            rb = mkbuf(t, nel);
            want = mkbuf(t, nel);
            for (int j = 0; j < m; j++)
                want[pos(t, 0, j)] = rref(op, j);
        } else if (root != MPI_PROC_NULL) {
            sb = mkbuf(t, nel);
            for (int j = 0; j < m; j++)
                sb[pos(t, 0, j)] = rin(mt_rank, j);
        }
        RUN3(mode, MPI_Reduce(sb, rb, nel, t, op, root, inter), MPI_Ireduce(sb, rb, nel, t, op, root, inter, &req_),
             MPI_Reduce_init(sb, rb, nel, t, op, root, inter, MPI_INFO_NULL, &req_));
        if (rb)
            check_buf(rb, want, n, "reduce");
        (void) rootw;
        (void) mine;
        if (sb != dummy)
            free(sb);
        free(rb), free(want);
    }
}

/*
 * A non-commutative op on (digits, length) pairs of ints: the result of a op b is the digits of a
 * followed by those of b (base 8). Reduced in rank order over ranks 0..p-1 with digit rank+1,
 * the result's digits name the ranks in order.
 */
static void concat_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++, a += 2, b += 2) {
        int sh = 1;
        for (int k = 0; k < b[1]; k++)
            sh *= 8;
        b[0] = a[0] * sh + b[0];
        b[1] += a[1];
    }
    (void) dt;
}

static void test_noncommutative(MPI_Datatype pair, MPI_Op concat)
{
    int want = 0;
    for (int r = 0; r < rsize; r++)
        want = want * 8 + r + 1;
    int in[4] = {lrank + 1, 1, lrank + 1, 1}, out[4] = {-1, -1, -1, -1};
    RUN3(mode, MPI_Allreduce(in, out, 2, pair, concat, inter), MPI_Iallreduce(in, out, 2, pair, concat, inter, &req_),
         MPI_Allreduce_init(in, out, 2, pair, concat, inter, MPI_INFO_NULL, &req_));
    for (int i = 0; i < 2; i++)
        MT_CHECK(out[2 * i] == want && out[2 * i + 1] == rsize, "allreduce non-commutative k=%d mode %d: (%o,%d) want (%o,%d)",
                 k_split, mode, out[2 * i], out[2 * i + 1], want, rsize);
    FOR_ROOTS(rootw, root, mine) {
        int o[2] = {-1, -1};
        const void *sb = root == MPI_ROOT && is_umpi ? NULL : in;
        RUN3(mode, MPI_Reduce(sb, root == MPI_ROOT ? o : NULL, 1, pair, concat, root, inter),
             MPI_Ireduce(sb, root == MPI_ROOT ? o : NULL, 1, pair, concat, root, inter, &req_),
             MPI_Reduce_init(sb, root == MPI_ROOT ? o : NULL, 1, pair, concat, root, inter,
                             MPI_INFO_NULL, &req_));
        if (root == MPI_ROOT)
            MT_CHECK(o[0] == want && o[1] == rsize, "reduce non-commutative k=%d mode %d: (%o,%d) want (%o,%d)", k_split,
                     mode, o[0], o[1], want, rsize);
        (void) rootw;
        (void) mine;
    }
}

/*
 * Reduce_scatter: both groups' counts sum to total; member i of my group gets its share of the
 * reduction of the remote group's vectors. Block: recvcount * lsize must equal the remote
 * group's, so recvcount = q * rsize (q elements per pair of members).
 */
static void test_reduce_scatter(int total, int block, int q)
{
    int *counts = malloc(sizeof(int) * (size_t) lsize), off = 0, rcount = q * rsize;
    if (block)
        total = q * rsize * lsize;
    for (int i = 0; i < lsize; i++) {
        counts[i] = block ? rcount : total / lsize + (i < total % lsize);
        if (i < lrank)
            off += counts[i];
    }
    int *sb = malloc(sizeof(int) * (size_t) (total + 1)), *rb = malloc(sizeof(int) * (size_t) (counts[lrank] + 1));
    for (int j = 0; j < total; j++)
        sb[j] = rin(mt_rank, j);
    for (int j = 0; j <= counts[lrank]; j++)
        rb[j] = -1;
    if (block)
        RUN3(mode, MPI_Reduce_scatter_block(sb, rb, rcount, MPI_INT, MPI_SUM, inter),
             MPI_Ireduce_scatter_block(sb, rb, rcount, MPI_INT, MPI_SUM, inter, &req_),
             MPI_Reduce_scatter_block_init(sb, rb, rcount, MPI_INT, MPI_SUM, inter, MPI_INFO_NULL, &req_));
    else
        RUN3(mode, MPI_Reduce_scatter(sb, rb, counts, MPI_INT, MPI_SUM, inter),
             MPI_Ireduce_scatter(sb, rb, counts, MPI_INT, MPI_SUM, inter, &req_),
             MPI_Reduce_scatter_init(sb, rb, counts, MPI_INT, MPI_SUM, inter, MPI_INFO_NULL, &req_));
    for (int j = 0; j < counts[lrank]; j++)
        if (rb[j] != rref(MPI_SUM, off + j)) {
            MT_CHECK(rb[j] == rref(MPI_SUM, off + j), "reduce_scatter%s k=%d mode %d total %d: [%d]=%d want %d",
                     block ? "_block" : "", k_split, mode, total, j, rb[j], rref(MPI_SUM, off + j));
            break;
        }
    MT_CHECK(rb[counts[lrank]] == -1, "reduce_scatter%s wrote past its block", block ? "_block" : "");
    free(counts), free(sb), free(rb);
}

/* ---- errors ------------------------------------------------------------------------------------- */

static void expect(int err, int cls, const char *what)
{
    MT_CHECK(mt_class(err) == cls, "%s on an intercommunicator: class %d want %d (%s)", what, mt_class(err), cls,
             err == MPI_SUCCESS ? "success" : mt_errstr(err));
}

static void test_errors(void)
{
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    int x[64] = {0}, y[64], c[8] = {1, 1, 1, 1, 1, 1, 1, 1}, d[8] = {0};
    MPI_Datatype ts[8] = {MPI_INT, MPI_INT, MPI_INT, MPI_INT, MPI_INT, MPI_INT, MPI_INT, MPI_INT};
    expect(MPI_Allgather(MPI_IN_PLACE, 1, MPI_INT, y, 1, MPI_INT, inter), MPI_ERR_BUFFER, "allgather MPI_IN_PLACE");
    expect(MPI_Allgatherv(MPI_IN_PLACE, 1, MPI_INT, y, c, d, MPI_INT, inter), MPI_ERR_BUFFER,
           "allgatherv MPI_IN_PLACE");
    expect(MPI_Alltoall(MPI_IN_PLACE, 1, MPI_INT, y, 1, MPI_INT, inter), MPI_ERR_BUFFER, "alltoall MPI_IN_PLACE");
    expect(MPI_Alltoallv(MPI_IN_PLACE, c, d, MPI_INT, y, c, d, MPI_INT, inter), MPI_ERR_BUFFER,
           "alltoallv MPI_IN_PLACE");
    expect(MPI_Alltoallw(MPI_IN_PLACE, c, d, ts, y, c, d, ts, inter), MPI_ERR_BUFFER, "alltoallw MPI_IN_PLACE");
    expect(MPI_Allreduce(MPI_IN_PLACE, y, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_BUFFER, "allreduce MPI_IN_PLACE");
    expect(MPI_Reduce_scatter(MPI_IN_PLACE, y, c, MPI_INT, MPI_SUM, inter), MPI_ERR_BUFFER,
           "reduce_scatter MPI_IN_PLACE");
    expect(MPI_Reduce_scatter_block(MPI_IN_PLACE, y, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_BUFFER,
           "reduce_scatter_block MPI_IN_PLACE");
    /* in the group that sends to a remote root */
    expect(MPI_Reduce(MPI_IN_PLACE, y, 1, MPI_INT, MPI_SUM, 0, inter), MPI_ERR_BUFFER, "reduce MPI_IN_PLACE");
    expect(MPI_Gather(MPI_IN_PLACE, 1, MPI_INT, y, 1, MPI_INT, 0, inter), MPI_ERR_BUFFER, "gather MPI_IN_PLACE");
    expect(MPI_Scatter(x, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, 0, inter), MPI_ERR_BUFFER, "scatter MPI_IN_PLACE");
    expect(MPI_Scan(x, y, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_COMM, "scan");
    expect(MPI_Exscan(x, y, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_COMM, "exscan");
    MPI_Request req = MPI_REQUEST_NULL;
    expect(MPI_Iscan(x, y, 1, MPI_INT, MPI_SUM, inter, &req), MPI_ERR_COMM, "iscan");
    expect(MPI_Iexscan(x, y, 1, MPI_INT, MPI_SUM, inter, &req), MPI_ERR_COMM, "iexscan");
    expect(MPI_Scan_init(x, y, 1, MPI_INT, MPI_SUM, inter, MPI_INFO_NULL, &req), MPI_ERR_COMM, "scan_init");
    expect(MPI_Exscan_init(x, y, 1, MPI_INT, MPI_SUM, inter, MPI_INFO_NULL, &req), MPI_ERR_COMM, "exscan_init");
    /* a root that is not a remote rank */
    expect(MPI_Gather(x, 1, MPI_INT, y, 1, MPI_INT, rsize, inter), MPI_ERR_ROOT, "gather root = remote size");
    expect(MPI_Reduce(x, y, 1, MPI_INT, MPI_SUM, -7, inter), MPI_ERR_ROOT, "reduce root -7");
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    is_umpi = strstr(lib, "umpi") != NULL;
    MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    MPI_Op concat;
    MPI_Op_create(concat_fn, 0, &concat);
    tcases[0] = (tcase_t){MPI_INT, MPI_INT, 0, 0};
    tcases[1] = (tcase_t){MPI_INT, MPI_INT, 3, 3};
    tcases[2] = (tcase_t){strided, MPI_INT, 2, 4};
    tcases[3] = (tcase_t){MPI_INT, strided, 4, 2};
    for (k_split = 1; k_split < mt_size; k_split++) {
        low = mt_rank < k_split;
        MPI_Comm local;
        MPI_Comm_split(MPI_COMM_WORLD, low, mt_rank, &local);
        MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? k_split : 0, 7, &inter);
        MPI_Comm_rank(inter, &lrank);
        MPI_Comm_size(inter, &lsize);
        MPI_Comm_remote_size(inter, &rsize);
        for (mode = 0; mode < 3; mode++) {
            for (int c = 0; c < 4; c++) {
                for (int v = 0; v < 2; v++) {
                    test_gather(&tcases[c], v);
                    test_scatter(&tcases[c], v);
                    test_allgather(&tcases[c], v);
                }
                for (int v = 0; v < 3; v++)
                    test_alltoall(&tcases[c], v);
            }
            test_reduce(MPI_INT, 0, MPI_SUM);
            test_reduce(MPI_INT, 7, MPI_SUM);
            test_reduce(MPI_INT, 7, MPI_MAX);
            if (is_umpi) /* MPICH 4.0.2 takes predefined ops on predefined types only */
                test_reduce(strided, 3, MPI_SUM);
            test_noncommutative(pair, concat);
            test_reduce_scatter(0, 0, 0);
            test_reduce_scatter(7, 0, 0);
            test_reduce_scatter(lsize * rsize, 0, 0);
            test_reduce_scatter(0, 1, 0);
            test_reduce_scatter(0, 1, 2);
        }
        /* MPICH 4.0.2 takes MPI_IN_PLACE on an intercommunicator (and crashes): umpi only */
        if (is_umpi)
            test_errors();
        MPI_Comm_free(&inter);
        MPI_Comm_free(&local);
    }
    MPI_Op_free(&concat);
    MPI_Type_free(&pair);
    MPI_Type_free(&strided);
    return mt_finish();
}
