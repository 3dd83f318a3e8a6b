/*
 * Allreduce on an intercommunicator (each group gets the reduction of the other group's
 * vectors): each group reduces to its rank 0 (linear, in rank order), the two leaders swap their
 * results, and each leader broadcasts what it got along a binomial tree in its group.
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_inter_allreduce)
{
    umpi_coll_view_t rv;
    umpi_coll_view_remote(&rv, a->comm);
    MPI_Count n = a->rcount;
    void *acc = NULL;
    if (v->rank == 0 && (acc = umpi_sched_buf_dt(s, n, a->rdt)) == NULL)
        return umpi_err_create(MPI_ERR_OTHER, "out of memory for a %lld-element allreduce buffer", (long long) n);
    UMPI_COLL_TRY(umpi_coll_inter_reduce_local(s, v, a->sbuf, acc, n, a->rdt, a->op));
    if (v->rank == 0) {
        UMPI_COLL_TRY(umpi_sched_recv(s, &rv, 0, a->rbuf, n, a->rdt));
        UMPI_COLL_TRY(umpi_sched_send(s, &rv, 0, acc, n, a->rdt));
    }
    return umpi_coll_inter_bcast_local(s, v, a->rbuf, n, a->rdt);
}
