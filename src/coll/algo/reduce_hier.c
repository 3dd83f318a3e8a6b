/*
 * Reduce, hierarchical (the node structure is in src/coll/hier.c), commutative ops:
 * a binomial reduce inside each node to its leader, a binomial reduce among the leaders to the
 * leader of the root's node, and a last message to the root when it does not lead its node. The
 * contributions are combined node by node, not in rank order: commutative ops only.
 */
#include "coll/umpi_coll.h"

UMPI_COLL_BUILD(umpi_reduce_hier)
{
    (void) v;
    umpi_coll_comm_t *cc = a->comm->coll;
    int me = a->comm->rank, root = a->root;
    int mynode = cc->node_idx[me], rnode = cc->node_idx[root], root_leader = cc->leader_src[rnode];
    int leader = cc->leaders.rank >= 0;
    MPI_Count n = a->scount;
    umpi_dtype_t *dt = a->sdt;

    /* the leader's node result: the root's recvbuf when the root leads, else scratch */
    void *acc = NULL;
    if (leader) {
        acc = me == root ? a->rbuf : umpi_sched_buf_dt(s, n, dt);
        if (acc == NULL)
            return umpi_err_create(MPI_ERR_OTHER, "out of memory for a %lld-element reduce", (long long) n);
    }

    /* 1. inside each node, to its leader */
    umpi_coll_args_t b = *a;
    if (me == root && !leader && a->sbuf == MPI_IN_PLACE)
        b.sbuf = a->rbuf; /* the root's data, sent up as any other member's */
    b.rbuf = leader ? acc : a->rbuf;
    b.rdt = dt;
    b.root = 0;
    UMPI_COLL_TRY(umpi_reduce_binomial(s, &cc->node, &b));
    UMPI_COLL_TRY(umpi_sched_fence(s));

    /* 2. among the leaders, in place, to the root's node leader */
    if (leader) {
        b.sbuf = MPI_IN_PLACE;
        b.rbuf = acc;
        b.root = rnode;
        UMPI_COLL_TRY(umpi_reduce_binomial(s, &cc->leaders, &b));
        UMPI_COLL_TRY(umpi_sched_fence(s));
    }

    /* 3. to the root */
    if (root != root_leader && mynode == rnode) {
        if (me == root_leader) {
            int idx = 0; /* the root's index among my node's members */
            for (int r = 0; r < root; r++)
                idx += cc->node_idx[r] == rnode;
            UMPI_COLL_TRY(umpi_sched_send(s, &cc->node, idx, acc, n, dt));
        } else if (me == root) {
            UMPI_COLL_TRY(umpi_sched_recv(s, &cc->node, 0, a->rbuf, n, a->rdt));
        }
    }
    return MPI_SUCCESS;
}
