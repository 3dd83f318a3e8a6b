/*
 * Barrier, hierarchical (umpi_coll_comm_t): see src/coll/hier.c for the node structure.
 */
#include "coll/umpi_coll.h"

/* Barrier: node barrier, leaders' barrier, node barrier (the second one releases the members
 * only after their leader saw every node arrive). */
UMPI_COLL_BUILD(umpi_barrier_hier)
{
    (void) v;
    umpi_coll_comm_t *cc = a->comm->coll;
    UMPI_COLL_TRY(umpi_barrier_dissemination(s, &cc->node, a));
    UMPI_COLL_TRY(umpi_sched_fence(s));
    if (cc->leaders.rank >= 0) {
        UMPI_COLL_TRY(umpi_barrier_dissemination(s, &cc->leaders, a));
        UMPI_COLL_TRY(umpi_sched_fence(s));
    }
    return umpi_barrier_dissemination(s, &cc->node, a);
}
