/*
 * Scan, recursive doubling: in round k member r swaps with r XOR 2^k the reduction of its aligned
 * block of 2^k members; data from a lower partner is folded into both the block's partial and
 * r's result, data from a higher one into the partial only, always lower ranks first, so
 * non-commutative ops are fine. ceil(log2 p) rounds of the whole vector.
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_scan_recursive_doubling)
{
    int p = v->size, r = v->rank;
    MPI_Count n = a->rcount;
    umpi_dtype_t *dt = a->rdt;
    if (a->sbuf != MPI_IN_PLACE)
        UMPI_COLL_TRY(umpi_sched_copy(s, a->sbuf, n, dt, a->rbuf, n, dt));
    if (p == 1)
        return MPI_SUCCESS;
    int commute = umpi_op_is_commutative(a->op);
    void *partial = umpi_sched_buf_dt(s, n, dt), *tmp = umpi_sched_buf_dt(s, n, dt);
    if (partial == NULL || tmp == NULL)
        return umpi_err_create(MPI_ERR_OTHER, "out of memory for a %lld-element scan", (long long) n);
    UMPI_COLL_TRY(umpi_sched_fence(s));
    UMPI_COLL_TRY(umpi_sched_copy(s, a->rbuf, n, dt, partial, n, dt));
    for (int mask = 1; mask < p; mask <<= 1) {
        int peer = r ^ mask;
        if (peer >= p)
            continue;
        UMPI_COLL_TRY(umpi_sched_recv(s, v, peer, tmp, n, dt));
        UMPI_COLL_TRY(umpi_sched_send(s, v, peer, partial, n, dt));
        UMPI_COLL_TRY(umpi_sched_fence(s));
        /* these lead the next phase: done before its messages are posted */
        if (peer < r) {
            UMPI_COLL_TRY(umpi_sched_reduce(s, tmp, partial, n, dt, a->op));
            UMPI_COLL_TRY(umpi_sched_reduce(s, tmp, a->rbuf, n, dt, a->op));
        } else if (commute) {
            UMPI_COLL_TRY(umpi_sched_reduce(s, tmp, partial, n, dt, a->op));
        } else {
            UMPI_COLL_TRY(umpi_sched_reduce(s, partial, tmp, n, dt, a->op));
            UMPI_COLL_TRY(umpi_sched_copy(s, tmp, n, dt, partial, n, dt));
        }
    }
    return MPI_SUCCESS;
}
