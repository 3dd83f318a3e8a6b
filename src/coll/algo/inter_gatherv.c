/*
 * Gatherv on an intercommunicator, linear: remote rank i sends its block to the root (MPI_ROOT),
 * which receives rcounts[i] elements at displacement rdispls[i] (in extents of its datatype).
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_inter_gatherv)
{
    umpi_coll_view_t rv;
    umpi_coll_view_remote(&rv, a->comm);
    if (a->root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (a->root != MPI_ROOT)
        return umpi_sched_send(s, &rv, a->root, a->sbuf, a->scount, a->sdt);
    for (int i = 0; i < rv.size; i++)
        UMPI_COLL_TRY(umpi_sched_recv(s, &rv, i, umpi_coll_at(a->rbuf, a->rdispls[i], a->rdt), a->rcounts[i],
                                      a->rdt));
    return MPI_SUCCESS;
}
