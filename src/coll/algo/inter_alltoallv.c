/*
 * Alltoallv on an intercommunicator, linear: scounts[i] elements at sdispls[i] go to remote rank
 * i, rcounts[i] elements at rdispls[i] come from it (displacements in extents). One phase.
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_inter_alltoallv)
{
    umpi_coll_view_t rv;
    umpi_coll_view_remote(&rv, a->comm);
    for (int i = 0; i < rv.size; i++) {
        UMPI_COLL_TRY(umpi_sched_recv(s, &rv, i, umpi_coll_at(a->rbuf, a->rdispls[i], a->rdt), a->rcounts[i],
                                      a->rdt));
        UMPI_COLL_TRY(umpi_sched_send(s, &rv, i, umpi_coll_at(a->sbuf, a->sdispls[i], a->sdt), a->scounts[i],
                                      a->sdt));
    }
    (void) v;
    return MPI_SUCCESS;
}
