/*
 * Gather on an intercommunicator, linear: every process of the other group sends its block
 * straight to the root (MPI_ROOT), which receives block i from remote rank i. One phase.
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_inter_gather)
{
    umpi_coll_view_t rv;
    umpi_coll_view_remote(&rv, a->comm);
    if (a->root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (a->root != MPI_ROOT)
        return umpi_sched_send(s, &rv, a->root, a->sbuf, a->scount, a->sdt);
    for (int i = 0; i < rv.size; i++)
        UMPI_COLL_TRY(umpi_sched_recv(s, &rv, i, umpi_coll_at(a->rbuf, i * a->rcount, a->rdt), a->rcount, a->rdt));
    return MPI_SUCCESS;
}
