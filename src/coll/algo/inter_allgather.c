/*
 * Allgather on an intercommunicator, linear: every process sends its block to every process of
 * the other group and receives block i from remote rank i. One phase; p * q messages in all.
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_inter_allgather)
{
    umpi_coll_view_t rv;
    umpi_coll_view_remote(&rv, a->comm);
    for (int i = 0; i < rv.size; i++) {
        UMPI_COLL_TRY(umpi_sched_recv(s, &rv, i, umpi_coll_at(a->rbuf, i * a->rcount, a->rdt), a->rcount, a->rdt));
        UMPI_COLL_TRY(umpi_sched_send(s, &rv, i, a->sbuf, a->scount, a->sdt));
    }
    (void) v;
    return MPI_SUCCESS;
}
