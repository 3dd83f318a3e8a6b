/*
 * Scatterv on an intercommunicator, linear: the root (MPI_ROOT) sends scounts[i] elements at
 * displacement sdispls[i] (in extents of its datatype) straight to remote rank i.
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_inter_scatterv)
{
    umpi_coll_view_t rv;
    umpi_coll_view_remote(&rv, a->comm);
    if (a->root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (a->root != MPI_ROOT)
        return umpi_sched_recv(s, &rv, a->root, a->rbuf, a->rcount, a->rdt);
    for (int i = 0; i < rv.size; i++)
        UMPI_COLL_TRY(umpi_sched_send(s, &rv, i, umpi_coll_at(a->sbuf, a->sdispls[i], a->sdt), a->scounts[i],
                                      a->sdt));
    return MPI_SUCCESS;
}
