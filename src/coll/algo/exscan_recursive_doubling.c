/*
 * Exscan, recursive doubling: as Scan's (algo/scan_recursive_doubling.c), but a member's result
 * takes only what comes from lower partners; the first such piece is copied, later ones folded
 * in front. Member 0's recvbuf is never written. ceil(log2 p) rounds; any op.
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_exscan_recursive_doubling)
{
    int p = v->size, r = v->rank;
    MPI_Count n = a->rcount;
    umpi_dtype_t *dt = a->rdt;
    if (p == 1)
        return MPI_SUCCESS;
    int commute = umpi_op_is_commutative(a->op), have = 0;
    void *partial = umpi_sched_buf_dt(s, n, dt), *tmp = umpi_sched_buf_dt(s, n, dt);
    if (partial == NULL || tmp == NULL)
        return umpi_err_create(MPI_ERR_OTHER, "out of memory for a %lld-element exscan", (long long) n);
    UMPI_COLL_TRY(umpi_sched_copy(s, a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf, n, dt, partial, n, dt));
    for (int mask = 1; mask < p; mask <<= 1) {
        int peer = r ^ mask;
        if (peer >= p)
            continue;
        UMPI_COLL_TRY(umpi_sched_recv(s, v, peer, tmp, n, dt));
        UMPI_COLL_TRY(umpi_sched_send(s, v, peer, partial, n, dt));
        UMPI_COLL_TRY(umpi_sched_fence(s));
        if (peer < r) {
            if (have)
                UMPI_COLL_TRY(umpi_sched_reduce(s, tmp, a->rbuf, n, dt, a->op));
            else
                UMPI_COLL_TRY(umpi_sched_copy(s, tmp, n, dt, a->rbuf, n, dt));
            have = 1;
            UMPI_COLL_TRY(umpi_sched_reduce(s, tmp, partial, n, dt, a->op));
        } else if (commute) {
            UMPI_COLL_TRY(umpi_sched_reduce(s, tmp, partial, n, dt, a->op));
        } else {
            UMPI_COLL_TRY(umpi_sched_reduce(s, partial, tmp, n, dt, a->op));
            UMPI_COLL_TRY(umpi_sched_copy(s, tmp, n, dt, partial, n, dt));
        }
    }
    return MPI_SUCCESS;
}
