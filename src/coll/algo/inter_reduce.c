/*
 * Reduce on an intercommunicator: the group without the root reduces its vectors to its rank 0
 * (linear, in rank order), which sends the result to the root (MPI_ROOT) in the other group.
 * The count and datatype are rcount / rdt (set at every process, as for allreduce).
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_inter_reduce)
{
    umpi_coll_view_t rv;
    umpi_coll_view_remote(&rv, a->comm);
    if (a->root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (a->root == MPI_ROOT)
        return umpi_sched_recv(s, &rv, 0, a->rbuf, a->rcount, a->rdt);
    void *acc = NULL;
    if (v->rank == 0 && (acc = umpi_sched_buf_dt(s, a->rcount, a->rdt)) == NULL)
        return umpi_err_create(MPI_ERR_OTHER, "out of memory for a %lld-element reduce buffer", (long long) a->rcount);
    UMPI_COLL_TRY(umpi_coll_inter_reduce_local(s, v, a->sbuf, acc, a->rcount, a->rdt, a->op));
    if (v->rank == 0)
        UMPI_COLL_TRY(umpi_sched_send(s, &rv, a->root, acc, a->rcount, a->rdt));
    return MPI_SUCCESS;
}
