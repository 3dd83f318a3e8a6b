/*
 * Broadcast, hierarchical (umpi_coll_comm_t): see src/coll/hier.c for the node structure.
 */
#include "coll/umpi_coll.h"

/* Broadcast: the root hands the data to its node's leader, the leaders broadcast it, each leader
 * broadcasts it inside its node. */
UMPI_COLL_BUILD(umpi_bcast_hier)
{
    (void) v;
    umpi_coll_comm_t *cc = a->comm->coll;
    int me = a->comm->rank, root = a->root, rnode = cc->node_idx[root];
    int root_leader = cc->leader_src[rnode];
    if (root != root_leader && cc->node_idx[me] == rnode) {
        if (me == root) {
            UMPI_COLL_TRY(umpi_sched_send(s, &cc->node, 0, a->rbuf, a->rcount, a->rdt));
        } else if (me == root_leader) {
            int idx = 0; /* the root's index among my node's members */
            for (int r = 0; r < root; r++)
                idx += cc->node_idx[r] == rnode;
            UMPI_COLL_TRY(umpi_sched_recv(s, &cc->node, idx, a->rbuf, a->rcount, a->rdt));
        }
        UMPI_COLL_TRY(umpi_sched_fence(s));
    }
    umpi_coll_args_t b = *a;
    if (cc->leaders.rank >= 0) {
        b.root = rnode;
        UMPI_COLL_TRY(umpi_bcast_binomial(s, &cc->leaders, &b));
        UMPI_COLL_TRY(umpi_sched_fence(s));
    }
    b.root = 0;
    return umpi_bcast_binomial(s, &cc->node, &b);
}
