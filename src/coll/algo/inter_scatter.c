/*
 * Scatter on an intercommunicator, linear: the root (MPI_ROOT) sends block i straight to remote
 * rank i. One phase.
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_inter_scatter)
{
    umpi_coll_view_t rv;
    umpi_coll_view_remote(&rv, a->comm);
    if (a->root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (a->root != MPI_ROOT)
        return umpi_sched_recv(s, &rv, a->root, a->rbuf, a->rcount, a->rdt);
    for (int i = 0; i < rv.size; i++)
        UMPI_COLL_TRY(umpi_sched_send(s, &rv, i, umpi_coll_at(a->sbuf, i * a->scount, a->sdt), a->scount, a->sdt));
    return MPI_SUCCESS;
}
