/*
 * The segmented (pipelined) reduce of the algorithms pipeline (reduce_pipeline.c) and
 * tree_pipeline (reduce_tree_pipeline.c): the vector is cut into segments of UMPI_REDUCE_SEGMENT_SIZE
 * bytes (whole elements) that flow up a tree one after the other. In phase t a member reduces
 * segment t - 1 (which its children sent in phase t - 1) and sends it to its parent while its
 * children's segment t arrives, so the members of every level work at once and each piece is
 * received, reduced and sent on while it is still in the cache. A binomial reduce of a large
 * vector instead reduces the whole vector per round, out of the cache (bench/NOTES.md, "segmented
 * reduce, the barrier's exit order, cached pieces").
 *
 * Two tree shapes: a chain (`pipeline`: every member has one child, the segments need p - 2 +
 * nseg steps; the root takes in the vector once) and a binomial tree (`tree_pipeline`: log2 p
 * levels; the root takes in the vector log2 p times).
 *
 *   chain, root 0 (or any root, commutative op):    3 -> 2 -> 1 -> 0
 *   chain, root 2 of 5, non-commutative op:          0 -> 1 -> [2] <- 3 <- 4
 *
 * Members are renumbered u; every subtree covers a contiguous range of u, and a member combines
 * its children's partial results and its own data in increasing u. For a commutative op u is
 * the rank relative to the root (the root is u = 0, the trees grow upwards); for a non-commutative
 * one u is the rank itself, and the tree is rooted at the root with one part growing down to 0
 * (left) and one up to p - 1 (right), so the data is combined in rank order without a last hop
 * from member 0 to the root.
 *
 * Buffers: a child's segment arrives in one segment-sized scratch buffer per child (reduced at
 * the start of the next phase, before the next segment's receive is posted); the running result
 * is two segment-sized slots at a member that sends it on (segment j in slot j % 2: its send has
 * completed by the time segment j + 2 arrives there), the receive buffer at the root.
 */
#include "coll/umpi_coll.h"

#include <limits.h>

/* children per member: a binomial root has a part of each side, up to 31 levels each */
#define UMPI__MAX_KIDS 64

/* Index x of a subtree of m members (x = 0 its top): parent (-1 at the top) and children, increasing. */
static int umpi__sub(int shape, int m, int x, int *kids, int *nkids)
{
    *nkids = 0;
    if (shape == UMPI_COLL_SEG_CHAIN) {
        if (x + 1 < m)
            kids[(*nkids)++] = x + 1;
        return x > 0 ? x - 1 : -1;
    }
    int low = x > 0 ? x & -x : INT_MAX; /* the children are x + 2^k below x's lowest set bit */
    for (long k = 1; k < low && x + k < m; k <<= 1)
        kids[(*nkids)++] = x + (int) k;
    return x > 0 ? x - low : -1;
}

/*
 * The tree over p members rooted at R (numbering u): the part [R, p) grows up from R, the part
 * [0, R] down from it. Returns u's parent (-1 at R); *kids gets its children in increasing u.
 */
static int umpi__tree(int shape, int p, int R, int u, int *kids, int *nkids)
{
    int tmp[UMPI__MAX_KIDS / 2], n, par;
    *nkids = 0;
    if (u <= R) { /* left part, mirrored: index R - u, its children lower in u */
        par = umpi__sub(shape, R + 1, R - u, tmp, &n);
        for (int i = n - 1; i >= 0; i--) /* larger index = smaller u */
            kids[(*nkids)++] = R - tmp[i];
        if (u < R)
            return R - par;
    }
    par = umpi__sub(shape, p - R, u - R, tmp, &n);
    for (int i = 0; i < n; i++)
        kids[(*nkids)++] = R + tmp[i];
    return u == R ? -1 : R + par;
}

int umpi_coll_reduce_segmented(umpi_sched_t *s, const umpi_coll_view_t *v, const umpi_coll_args_t *a, int shape)
{
    int p = v->size, root = a->root;
    int commute = umpi_op_is_commutative(a->op);
    MPI_Count n = a->scount;
    umpi_dtype_t *dt = a->sdt;
    int in_place = a->sbuf == MPI_IN_PLACE;
    const void *mine = in_place ? a->rbuf : a->sbuf;

    if (p == 1)
        return in_place ? MPI_SUCCESS : umpi_sched_copy(s, a->sbuf, n, dt, a->rbuf, n, dt);
    if (n == 0)
        return MPI_SUCCESS; /* every member has the same count: nobody sends */

    /* numbering: commutative, the rank relative to the root (R = 0); else the rank (R = root) */
    int R = commute ? 0 : root;
    int u = commute ? (v->rank - root + p) % p : v->rank;
    int kids[UMPI__MAX_KIDS], nkids;
    int parent = umpi__tree(shape, p, R, u, kids, &nkids);
#define UMPI__MEMBER(x) (commute ? ((x) + root) % p : (x))

    /* segments: whole elements, at least one; 0 bytes: one segment */
    size_t seg = umpi_config.reduce_segment_size;
    MPI_Count segn = dt->size > 0 && seg > 0 ? (MPI_Count) (seg / (size_t) dt->size) : n;
    if (segn < 1)
        segn = 1;
    if (segn > n)
        segn = n;
    MPI_Count nseg = (n + segn - 1) / segn;

    if (nkids == 0) { /* a leaf: its own segments to the parent, one per phase */
        for (MPI_Count j = 0; j < nseg; j++) {
            MPI_Count len = n - j * segn < segn ? n - j * segn : segn;
            UMPI_COLL_TRY(umpi_sched_send(s, v, UMPI__MEMBER(parent), umpi_coll_at(mine, j * segn, dt), len, dt));
            UMPI_COLL_TRY(umpi_sched_fence(s));
        }
        return MPI_SUCCESS;
    }

    /*
     * The elements combined, in the order of the op: the children and me (-1), by increasing u.
     * The result builds up from the right: the last element lands in acc first (a child's
     * segment received there, or mine copied), then each element to its left is reduced in as
     * `in` (reduce computes inout = in op inout). Commutative: any order, so mine goes first
     * (reduced last, nothing to copy), or last when mine already is acc (IN_PLACE at the root).
     */
    int elem[UMPI__MAX_KIDS + 1], nelem = 0, is_root = parent < 0;
    int acc_is_mine = 0;
    if (commute) {
        acc_is_mine = is_root && in_place;
        if (!acc_is_mine)
            elem[nelem++] = -1;
        for (int i = 0; i < nkids; i++)
            elem[nelem++] = kids[i];
        if (acc_is_mine)
            elem[nelem++] = -1;
    } else {
        int i = 0;
        for (; i < nkids && kids[i] < u; i++)
            elem[nelem++] = kids[i];
        elem[nelem++] = -1;
        for (; i < nkids; i++)
            elem[nelem++] = kids[i];
        acc_is_mine = is_root && in_place && elem[nelem - 1] == -1;
    }

    /* acc: the receive buffer at the root unless it holds my data there and mine is not last */
    void *acc_full = NULL, *slot[2] = {NULL, NULL};
    if (is_root && (!in_place || acc_is_mine)) {
        acc_full = a->rbuf;
    } else {
        slot[0] = umpi_sched_buf_dt(s, segn, dt);
        slot[1] = umpi_sched_buf_dt(s, segn, dt);
    }
    void *tmp[UMPI__MAX_KIDS + 1] = {NULL}; /* per element: a child's scratch (not the last one) */
    for (int e = 0; e < nelem - 1; e++)
        if (elem[e] >= 0)
            tmp[e] = umpi_sched_buf_dt(s, segn, dt);
    for (int e = 0; e < nelem - 1; e++)
        if (elem[e] >= 0 && tmp[e] == NULL)
            goto nomem;
    if (acc_full == NULL && (slot[0] == NULL || slot[1] == NULL))
        goto nomem;

    /* phase t: reduce segment t - 1 and send it on; receive segment t */
    for (MPI_Count t = 0; t <= nseg; t++) {
        if (t > 0) {
            MPI_Count j = t - 1, off = j * segn, len = n - off < segn ? n - off : segn;
            void *acc = acc_full ? umpi_coll_at(acc_full, off, dt) : slot[j % 2];
            const void *my = umpi_coll_at(mine, off, dt);
            if (elem[nelem - 1] == -1 && !acc_is_mine)
                UMPI_COLL_TRY(umpi_sched_copy(s, my, len, dt, acc, len, dt));
            for (int e = nelem - 2; e >= 0; e--)
                UMPI_COLL_TRY(umpi_sched_reduce(s, elem[e] < 0 ? my : tmp[e], acc, len, dt, a->op));
            if (!is_root)
                UMPI_COLL_TRY(umpi_sched_send(s, v, UMPI__MEMBER(parent), acc, len, dt));
            else if (acc_full == NULL)
                UMPI_COLL_TRY(umpi_sched_copy(s, acc, len, dt, umpi_coll_at(a->rbuf, off, dt), len, dt));
        }
        if (t < nseg) {
            MPI_Count off = t * segn, len = n - off < segn ? n - off : segn;
            for (int e = 0; e < nelem; e++) {
                if (elem[e] < 0)
                    continue;
                void *dst = e < nelem - 1 ? tmp[e] : acc_full ? umpi_coll_at(acc_full, off, dt) : slot[t % 2];
                UMPI_COLL_TRY(umpi_sched_recv(s, v, UMPI__MEMBER(elem[e]), dst, len, dt));
            }
        }
        UMPI_COLL_TRY(umpi_sched_fence(s));
    }
    return MPI_SUCCESS;
#undef UMPI__MEMBER
nomem:
    return umpi_err_create(MPI_ERR_OTHER, "out of memory for a %lld-element segmented reduce", (long long) n);
}
