/*
 * Alltoallw on an intercommunicator, linear: scounts[i] elements of sdts[i] at byte displacement
 * sdispls[i] go to remote rank i, rcounts[i] of rdts[i] at rdispls[i] come from it. One phase.
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_inter_alltoallw)
{
    umpi_coll_view_t rv;
    umpi_coll_view_remote(&rv, a->comm);
    for (int i = 0; i < rv.size; i++) {
        UMPI_COLL_TRY(umpi_sched_recv(s, &rv, i, (char *) a->rbuf + a->rdispls[i], a->rcounts[i], a->rdts[i]));
        UMPI_COLL_TRY(umpi_sched_send(s, &rv, i, (const char *) a->sbuf + a->sdispls[i], a->scounts[i], a->sdts[i]));
    }
    (void) v;
    return MPI_SUCCESS;
}
