/*
 * Alltoall on an intercommunicator, linear: block i of the send buffer goes to remote rank i,
 * block i of the receive buffer comes from it. One phase.
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_inter_alltoall)
{
    umpi_coll_view_t rv;
    umpi_coll_view_remote(&rv, a->comm);
    for (int i = 0; i < rv.size; i++) {
        UMPI_COLL_TRY(umpi_sched_recv(s, &rv, i, umpi_coll_at(a->rbuf, i * a->rcount, a->rdt), a->rcount, a->rdt));
        UMPI_COLL_TRY(umpi_sched_send(s, &rv, i, umpi_coll_at(a->sbuf, i * a->scount, a->sdt), a->scount, a->sdt));
    }
    (void) v;
    return MPI_SUCCESS;
}
