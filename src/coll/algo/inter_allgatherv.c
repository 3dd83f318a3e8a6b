/*
 * Allgatherv on an intercommunicator, linear: every process sends its block to every process of
 * the other group and receives rcounts[i] elements from remote rank i at displacement rdispls[i].
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_inter_allgatherv)
{
    umpi_coll_view_t rv;
    umpi_coll_view_remote(&rv, a->comm);
    for (int i = 0; i < rv.size; i++) {
        UMPI_COLL_TRY(umpi_sched_recv(s, &rv, i, umpi_coll_at(a->rbuf, a->rdispls[i], a->rdt), a->rcounts[i],
                                      a->rdt));
        UMPI_COLL_TRY(umpi_sched_send(s, &rv, i, a->sbuf, a->scount, a->sdt));
    }
    (void) v;
    return MPI_SUCCESS;
}
