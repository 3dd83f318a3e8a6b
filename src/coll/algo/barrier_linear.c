/*
 * Barrier, flat fan-in and fan-out: every member signals member 0 and waits for its release; member
 * 0 waits for all the signals, then releases everyone in one round. Two rounds whatever p, p - 1
 * messages each at member 0; nobody forwards. Member 0 leaves first, which is what a broadcast
 * from it that follows wants (its data leaves before the others are released): when ranks
 * outnumber cores, osu_bcast measures exactly that (bench/NOTES.md, "segmented reduce, the barrier's
 * exit order, cached pieces").
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_barrier_linear)
{
    (void) a;
    umpi_dtype_t *byte = umpi_dtype_get(MPI_BYTE);
    int p = v->size;
    if (v->rank != 0) {
        UMPI_COLL_TRY(umpi_sched_send(s, v, 0, NULL, 0, byte));
        return umpi_sched_recv(s, v, 0, NULL, 0, byte);
    }
    for (int k = 1; k < p; k++)
        UMPI_COLL_TRY(umpi_sched_recv(s, v, k, NULL, 0, byte));
    UMPI_COLL_TRY(umpi_sched_fence(s));
    for (int k = 1; k < p; k++)
        UMPI_COLL_TRY(umpi_sched_send(s, v, k, NULL, 0, byte));
    return MPI_SUCCESS;
}
