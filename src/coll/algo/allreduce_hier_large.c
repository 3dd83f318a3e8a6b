/*
 * Allreduce for large vectors, hierarchical (the node structure is in src/coll/hier.c),
 * commutative ops: a Rabenseifner reduce inside each node to its leader, a bandwidth-optimal
 * allreduce among the leaders (Rabenseifner when their number is a power of two, the ring
 * otherwise, where Rabenseifner's fold would send the whole vector once more), and a
 * scatter + allgather broadcast from each leader inside its node.
 *
 * Why node reduce + leaders allreduce + node broadcast rather than a node reduce-scatter whose
 * pieces cross the network in parallel: the latter needs every node to hold the same number of
 * members (piece i of every node meets piece i of the others), which uneven nodes and nodes of
 * one break; this one runs on any node structure, and its network phase, the expensive one, still
 * moves about 2n bytes per leader. Each node phase moves about 2n bytes per member over shared
 * memory, which is an order of magnitude cheaper per byte than the network.
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_allreduce_hier_large)
{
    (void) v;
    umpi_coll_comm_t *cc = a->comm->coll;
    umpi_coll_args_t b = *a;
    b.root = 0;
    UMPI_COLL_TRY(umpi_reduce_rabenseifner(s, &cc->node, &b));
    UMPI_COLL_TRY(umpi_sched_fence(s));
    if (cc->leaders.rank >= 0) {
        b.sbuf = MPI_IN_PLACE;
        if ((cc->nnodes & (cc->nnodes - 1)) == 0)
            UMPI_COLL_TRY(umpi_allreduce_rabenseifner(s, &cc->leaders, &b));
        else
            UMPI_COLL_TRY(umpi_allreduce_ring(s, &cc->leaders, &b));
        UMPI_COLL_TRY(umpi_sched_fence(s));
    }
    b.kind = UMPI_COLL_BCAST;
    return umpi_bcast_scatter_allgather(s, &cc->node, &b);
}
