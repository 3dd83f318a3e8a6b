/*
 * Barrier on an intercommunicator: a dissemination barrier inside each group, the two leaders
 * (rank 0 of each group) exchange an empty message, and each leader releases its group with an
 * empty binomial broadcast. No process leaves before every process of both groups entered.
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_inter_barrier)
{
    umpi_coll_view_t rv;
    umpi_coll_view_remote(&rv, a->comm);
    umpi_dtype_t *byte = umpi_dtype_get(MPI_BYTE);
    UMPI_COLL_TRY(umpi_barrier_dissemination(s, v, a));
    UMPI_COLL_TRY(umpi_sched_fence(s));
    if (v->rank == 0) {
        UMPI_COLL_TRY(umpi_sched_recv(s, &rv, 0, NULL, 0, byte));
        UMPI_COLL_TRY(umpi_sched_send(s, &rv, 0, NULL, 0, byte));
    }
    return umpi_coll_inter_bcast_local(s, v, NULL, 0, byte);
}
