/*
 * Allreduce, recursive doubling: in round k member r exchanges its whole partial result with
 * r XOR 2^k and reduces. With p not a power of two, the first 2 * rem members (rem = p - 2^floor(log2 p))
 * pair up first: each even one hands its data to the odd one above it and waits for the result at
 * the end. Pairs always combine the lower ranks' data first, so non-commutative ops get the rank
 * order they need. Cost: log2 p rounds of the whole vector (good for small messages).
 *
 * With a separate send buffer and p a power of two, the first exchange sends from the send buffer
 * and receives straight into the receive buffer, where the send buffer is then folded in: no copy
 * up front (for non-commutative ops only where the partner is the higher rank, so that the lower
 * rank's data still comes first).
 */
#include "coll/umpi_coll.h"

/* rbuf = (lower's data) op (higher's data) where the partner's data arrived in tmp. */
static int umpi__combine(umpi_sched_t *s, const umpi_coll_args_t *a, void *tmp, int partner_is_lower)
{
    int err;
    if (partner_is_lower || umpi_op_is_commutative(a->op))
        return umpi_sched_reduce(s, tmp, a->rbuf, a->rcount, a->rdt, a->op);
    err = umpi_sched_reduce(s, a->rbuf, tmp, a->rcount, a->rdt, a->op);
    if (err == MPI_SUCCESS)
        err = umpi_sched_fence(s);
    if (err == MPI_SUCCESS)
        err = umpi_sched_copy(s, tmp, a->rcount, a->rdt, a->rbuf, a->rcount, a->rdt);
    return err;
}

UMPI_COLL_BUILD(umpi_allreduce_recursive_doubling)
{
    int p = v->size, r = v->rank;
    MPI_Count n = a->rcount;
    umpi_dtype_t *dt = a->rdt;
    int pof2 = 1 << umpi_coll_log2(p), rem = p - pof2, newrank;
    /* the first exchange straight from the send buffer (partner r ^ 1) */
    int direct = a->sbuf != MPI_IN_PLACE && p > 1 && rem == 0 && (umpi_op_is_commutative(a->op) || r % 2 == 0);
    if (a->sbuf != MPI_IN_PLACE && !direct)
        UMPI_COLL_TRY(umpi_sched_copy(s, a->sbuf, n, dt, a->rbuf, n, dt));
    if (p == 1)
        return MPI_SUCCESS;
    UMPI_COLL_TRY(umpi_sched_fence(s));
    if (direct) {
        UMPI_COLL_TRY(umpi_sched_recv(s, v, r ^ 1, a->rbuf, n, dt));
        UMPI_COLL_TRY(umpi_sched_send(s, v, r ^ 1, a->sbuf, n, dt));
        UMPI_COLL_TRY(umpi_sched_fence(s));
        /* rbuf = mine op partner's: mine is the lower rank's or the op commutes */
        UMPI_COLL_TRY(umpi_sched_reduce(s, a->sbuf, a->rbuf, n, dt, a->op));
        if (p == 2)
            return MPI_SUCCESS;
        UMPI_COLL_TRY(umpi_sched_fence(s));
    }
    void *tmp = umpi_sched_buf_dt(s, n, dt);
    if (tmp == NULL)
        return umpi_err_create(MPI_ERR_OTHER, "out of memory for a %lld-element allreduce buffer", (long long) n);

    if (r < 2 * rem) {
        if (r % 2 == 0) {
            UMPI_COLL_TRY(umpi_sched_send(s, v, r + 1, a->rbuf, n, dt));
            newrank = -1;
        } else {
            UMPI_COLL_TRY(umpi_sched_recv(s, v, r - 1, tmp, n, dt));
            UMPI_COLL_TRY(umpi_sched_fence(s));
            UMPI_COLL_TRY(umpi__combine(s, a, tmp, 1));
            newrank = r / 2;
        }
        UMPI_COLL_TRY(umpi_sched_fence(s));
    } else {
        newrank = r - rem;
    }
    if (newrank >= 0) {
        for (int mask = direct ? 2 : 1; mask < pof2; mask <<= 1) {
            int newdst = newrank ^ mask;
            int dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
            UMPI_COLL_TRY(umpi_sched_recv(s, v, dst, tmp, n, dt));
            UMPI_COLL_TRY(umpi_sched_send(s, v, dst, a->rbuf, n, dt));
            UMPI_COLL_TRY(umpi_sched_fence(s));
            UMPI_COLL_TRY(umpi__combine(s, a, tmp, dst < r));
            UMPI_COLL_TRY(umpi_sched_fence(s));
        }
    }
    if (r < 2 * rem) {
        if (r % 2)
            UMPI_COLL_TRY(umpi_sched_send(s, v, r - 1, a->rbuf, n, dt));
        else
            UMPI_COLL_TRY(umpi_sched_recv(s, v, r + 1, a->rbuf, n, dt));
    }
    return MPI_SUCCESS;
}
