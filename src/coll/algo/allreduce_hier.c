/*
 * Allreduce, hierarchical (umpi_coll_comm_t), commutative ops: see src/coll/hier.c.
 */
#include "coll/umpi_coll.h"

/* Allreduce: inside the node, then among the leaders (in place), then from each leader to its node. */
UMPI_COLL_BUILD(umpi_allreduce_hier)
{
    (void) v;
    umpi_coll_comm_t *cc = a->comm->coll;
    UMPI_COLL_TRY(umpi_allreduce_recursive_doubling(s, &cc->node, a));
    UMPI_COLL_TRY(umpi_sched_fence(s));
    umpi_coll_args_t b = *a;
    b.sbuf = MPI_IN_PLACE;
    if (cc->leaders.rank >= 0) {
        UMPI_COLL_TRY(umpi_allreduce_recursive_doubling(s, &cc->leaders, &b));
        UMPI_COLL_TRY(umpi_sched_fence(s));
    }
    b.root = 0;
    return umpi_bcast_binomial(s, &cc->node, &b);
}
