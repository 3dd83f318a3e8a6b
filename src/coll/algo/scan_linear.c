/*
 * Scan, linear chain: member r waits for the inclusive result of r - 1, folds in its own data and
 * passes its result to r + 1. p - 1 steps on the critical path, one message per member: small
 * communicators or when latency matters less than the traffic. Rank order: any op.
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_scan_linear)
{
    int p = v->size, r = v->rank;
    MPI_Count n = a->rcount;
    umpi_dtype_t *dt = a->rdt;
    if (a->sbuf != MPI_IN_PLACE)
        UMPI_COLL_TRY(umpi_sched_copy(s, a->sbuf, n, dt, a->rbuf, n, dt));
    if (r > 0) {
        void *tmp = umpi_sched_buf_dt(s, n, dt);
        if (tmp == NULL)
            return umpi_err_create(MPI_ERR_OTHER, "out of memory for a %lld-element scan", (long long) n);
        UMPI_COLL_TRY(umpi_sched_recv(s, v, r - 1, tmp, n, dt));
        UMPI_COLL_TRY(umpi_sched_fence(s));
        UMPI_COLL_TRY(umpi_sched_reduce(s, tmp, a->rbuf, n, dt, a->op));
    }
    if (r < p - 1)
        UMPI_COLL_TRY(umpi_sched_send(s, v, r + 1, a->rbuf, n, dt));
    return MPI_SUCCESS;
}
