/*
 * Reduce, binomial tree: member r (numbered from the tree's top) receives the partial results of
 * its subtrees r + 1, r + 2, r + 4, ... below its lowest set bit, folds each into its own, and sends
 * the result to r minus that bit. Each subtree covers a contiguous range of higher numbers, so
 * with the top at member 0 the data is combined in rank order: non-commutative ops use that tree
 * and member 0 sends the result on to the root; commutative ones put the top at the root.
 * log2 p rounds of the whole vector.
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_reduce_binomial)
{
    int p = v->size, r = v->rank, root = a->root;
    int commute = umpi_op_is_commutative(a->op);
    int top = commute ? root : 0;
    int vr = (r - top + p) % p;
    MPI_Count n = a->scount;
    umpi_dtype_t *dt = a->sdt;
    const void *cur = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf; /* my partial result so far */
    void *acc = NULL, *tmp = NULL;

    if (p == 1)
        return a->sbuf == MPI_IN_PLACE ? MPI_SUCCESS : umpi_sched_copy(s, a->sbuf, n, dt, a->rbuf, n, dt);
    int mask;
    for (mask = 1; mask < p; mask <<= 1) {
        if (vr & mask) {
            UMPI_COLL_TRY(umpi_sched_send(s, v, (vr - mask + top) % p, cur, n, dt));
            break;
        }
        if (vr + mask >= p)
            continue;
        if (tmp == NULL) {
            tmp = umpi_sched_buf_dt(s, n, dt);
            acc = commute && r == root ? a->rbuf : umpi_sched_buf_dt(s, n, dt);
            if (tmp == NULL || acc == NULL)
                return umpi_err_create(MPI_ERR_OTHER, "out of memory for a %lld-element reduce", (long long) n);
            if (acc != cur) {
                /* the first subtree's data straight into acc, then mine folded in (mine is the
                 * lower range): no copy of my data first (at 1 MiB on 2 ranks a 1 MiB memcpy) */
                UMPI_COLL_TRY(umpi_sched_recv(s, v, (vr + mask + top) % p, acc, n, dt));
                UMPI_COLL_TRY(umpi_sched_fence(s));
                UMPI_COLL_TRY(umpi_sched_reduce(s, cur, acc, n, dt, a->op));
                cur = acc;
                continue;
            }
        }
        UMPI_COLL_TRY(umpi_sched_recv(s, v, (vr + mask + top) % p, tmp, n, dt));
        UMPI_COLL_TRY(umpi_sched_fence(s));
        if (commute) {
            UMPI_COLL_TRY(umpi_sched_reduce(s, tmp, acc, n, dt, a->op));
        } else {
            /* tmp = acc op tmp: mine is the lower range; the buffers swap roles */
            UMPI_COLL_TRY(umpi_sched_reduce(s, acc, tmp, n, dt, a->op));
            void *t = acc;
            acc = tmp;
            tmp = t;
        }
        cur = acc;
    }
    if (top == root) {
        if (r == root && acc != a->rbuf)
            UMPI_COLL_TRY(umpi_sched_copy(s, acc, n, dt, a->rbuf, n, a->rdt));
        return MPI_SUCCESS;
    }
    /* non-commutative with root != 0: member 0 holds the result */
    UMPI_COLL_TRY(umpi_sched_fence(s));
    if (r == 0)
        UMPI_COLL_TRY(umpi_sched_send(s, v, root, acc, n, dt));
    else if (r == root)
        UMPI_COLL_TRY(umpi_sched_recv(s, v, 0, a->rbuf, n, a->rdt));
    return MPI_SUCCESS;
}
