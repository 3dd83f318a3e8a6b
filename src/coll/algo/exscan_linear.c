/*
 * Exscan, linear chain: member r receives the reduction of members 0..r - 1 from r - 1 straight
 * into recvbuf, folds its own data behind it and passes that on to r + 1. p - 1 steps on the
 * critical path; rank order, any op. Member 0's recvbuf is never written.
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_exscan_linear)
{
    int p = v->size, r = v->rank;
    MPI_Count n = a->rcount;
    umpi_dtype_t *dt = a->rdt;
    const void *in = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
    if (p == 1)
        return MPI_SUCCESS;
    if (r == 0)
        return umpi_sched_send(s, v, 1, in, n, dt);
    void *mine = NULL;
    if (r < p - 1) {
        /* my own data, saved before recvbuf (maybe holding it: MPI_IN_PLACE) is overwritten */
        mine = umpi_sched_buf_dt(s, n, dt);
        if (mine == NULL)
            return umpi_err_create(MPI_ERR_OTHER, "out of memory for a %lld-element exscan", (long long) n);
        UMPI_COLL_TRY(umpi_sched_copy(s, in, n, dt, mine, n, dt));
    }
    UMPI_COLL_TRY(umpi_sched_recv(s, v, r - 1, a->rbuf, n, dt));
    if (r == p - 1)
        return MPI_SUCCESS;
    UMPI_COLL_TRY(umpi_sched_fence(s));
    UMPI_COLL_TRY(umpi_sched_reduce(s, a->rbuf, mine, n, dt, a->op));
    return umpi_sched_send(s, v, r + 1, mine, n, dt);
}
