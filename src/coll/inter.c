/*
 * Helpers of the intercommunicator algorithms (algo/inter_*.c): the phases they run inside one
 * group, over its local view (LOCAL tag bit, so they never meet traffic between the groups).
 */
#include "coll/umpi_coll.h"

/*
 * Linear reduction to member 0: the others send their vectors, member 0 combines them from the
 * highest rank down (acc = d_i op acc), so a non-commutative op sees rank order. acc is scratch of
 * count elements of dt at member 0.
 */
int umpi_coll_inter_reduce_local(umpi_sched_t *s, const umpi_coll_view_t *lv, const void *sbuf, void *acc,
                                 MPI_Count count, umpi_dtype_t *dt, umpi_op_t *op)
{
    int p = lv->size;
    if (lv->rank != 0)
        return umpi_sched_send(s, lv, 0, sbuf, count, dt);
    const void **in = umpi_sched_buf(s, (size_t) p * sizeof(*in));
    if (in == NULL)
        return umpi_err_create(MPI_ERR_OTHER, "out of memory for a reduction of %d vectors", p);
    in[0] = sbuf;
    for (int i = 1; i < p; i++) {
        void *b = umpi_sched_buf_dt(s, count, dt);
        if (b == NULL)
            return umpi_err_create(MPI_ERR_OTHER, "out of memory for a %lld-element reduction buffer",
                                   (long long) count);
        UMPI_COLL_TRY(umpi_sched_recv(s, lv, i, b, count, dt));
        in[i] = b;
    }
    UMPI_COLL_TRY(umpi_sched_fence(s));
    UMPI_COLL_TRY(umpi_sched_copy(s, in[p - 1], count, dt, acc, count, dt));
    for (int i = p - 2; i >= 0; i--)
        UMPI_COLL_TRY(umpi_sched_reduce(s, in[i], acc, count, dt, op));
    return umpi_sched_fence(s);
}

/* Member 0's buf to every member: the binomial broadcast over the local view. */
int umpi_coll_inter_bcast_local(umpi_sched_t *s, const umpi_coll_view_t *lv, void *buf, MPI_Count count,
                                umpi_dtype_t *dt)
{
    umpi_coll_args_t b = {.kind = UMPI_COLL_BCAST, .rbuf = buf, .rcount = count, .rdt = dt, .root = 0};
    UMPI_COLL_TRY(umpi_sched_fence(s));
    return umpi_bcast_binomial(s, lv, &b);
}

/*
 * Reduce_scatter(_block) on an intercommunicator (algo/inter_reduce_scatter*.c): each group
 * reduces its vectors (the sum of the counts; both groups' sums agree) to its rank 0, the leaders
 * swap the results, and each leader hands member i of its group its block (linear): counts[i]
 * elements, or count for every member when counts is NULL.
 */
int umpi_coll_inter_reduce_scatter_counts(umpi_sched_t *s, const umpi_coll_view_t *v, const umpi_coll_args_t *a,
                                          const MPI_Count *counts, MPI_Count count)
{
    umpi_coll_view_t rv;
    umpi_coll_view_remote(&rv, a->comm);
    umpi_dtype_t *dt = a->rdt;
    MPI_Count total = 0;
    for (int i = 0; i < v->size; i++)
        total += counts ? counts[i] : count;
    void *acc = NULL, *res = NULL;
    if (v->rank == 0 && ((acc = umpi_sched_buf_dt(s, total, dt)) == NULL ||
                         (res = umpi_sched_buf_dt(s, total, dt)) == NULL))
        return umpi_err_create(MPI_ERR_OTHER, "out of memory for a %lld-element reduce_scatter buffer",
                               (long long) total);
    UMPI_COLL_TRY(umpi_coll_inter_reduce_local(s, v, a->sbuf, acc, total, dt, a->op));
    if (v->rank != 0)
        return umpi_sched_recv(s, v, 0, a->rbuf, counts ? counts[v->rank] : count, dt);
    UMPI_COLL_TRY(umpi_sched_recv(s, &rv, 0, res, total, dt));
    UMPI_COLL_TRY(umpi_sched_send(s, &rv, 0, acc, total, dt));
    UMPI_COLL_TRY(umpi_sched_fence(s));
    MPI_Count off = counts ? counts[0] : count;
    UMPI_COLL_TRY(umpi_sched_copy(s, res, off, dt, a->rbuf, off, dt));
    for (int i = 1; i < v->size; i++) {
        MPI_Count c = counts ? counts[i] : count;
        UMPI_COLL_TRY(umpi_sched_send(s, v, i, umpi_coll_at(res, off, dt), c, dt));
        off += c;
    }
    return MPI_SUCCESS;
}

