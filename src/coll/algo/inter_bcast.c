/*
 * Broadcast on an intercommunicator: the root (MPI_ROOT) sends the message to rank 0 of the other
 * group, which broadcasts it there along a binomial tree. The root's other group members
 * (MPI_PROC_NULL) take no part.
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_inter_bcast)
{
    umpi_coll_view_t rv;
    umpi_coll_view_remote(&rv, a->comm);
    if (a->root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (a->root == MPI_ROOT)
        return umpi_sched_send(s, &rv, 0, a->rbuf, a->rcount, a->rdt);
    if (v->rank == 0)
        UMPI_COLL_TRY(umpi_sched_recv(s, &rv, a->root, a->rbuf, a->rcount, a->rdt));
    return umpi_coll_inter_bcast_local(s, v, a->rbuf, a->rcount, a->rdt);
}
