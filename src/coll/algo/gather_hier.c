/*
 * Gather, hierarchical (the node structure is in src/coll/hier.c): each node's
 * members send their blocks up a binomial tree to the node leader, which then holds its node's
 * blocks packed in rank order; the leaders send those pieces to the leader of the root's node in
 * one message each (a linear gatherv among the leaders, pieces differ when nodes are uneven),
 * that leader hands the whole packed vector to the root when the root is another member of its
 * node, and the root places every block by rank (hier_blocks.h). One inter-node message per node.
 */
#include "hier_blocks.h"

UMPI_COLL_BUILD(umpi_gather_hier)
{
    (void) v;
    umpi_coll_comm_t *cc = a->comm->coll;
    int p = a->comm->size, me = a->comm->rank, root = a->root;
    int mynode = cc->node_idx[me], rnode = cc->node_idx[root], root_leader = cc->leader_src[rnode];
    int leader = cc->leaders.rank >= 0;
    size_t blk = a->bytes;
    umpi_dtype_t *byte = umpi_dtype_get(MPI_BYTE);
    umpi_hier_layout_t l;
    UMPI_COLL_TRY(umpi_hier_layout(s, cc, p, root, &l));

    char *all = NULL, *nb = NULL; /* every block packed (root, its leader); my node's blocks (leaders) */
    if (me == root || me == root_leader)
        all = umpi_hier_bytes(s, (size_t) p * blk);
    if (leader)
        nb = me == root_leader ? all + l.off[mynode] * blk : umpi_hier_bytes(s, (size_t) cc->node.size * blk);
    if (((me == root || me == root_leader) && all == NULL) || (leader && nb == NULL))
        return umpi_err_create(MPI_ERR_OTHER, "out of memory for a %zu-byte hierarchical gather", (size_t) p * blk);

    /* 1. inside each node, to its leader */
    umpi_coll_args_t b = *a;
    b.kind = UMPI_COLL_GATHER;
    if (me == root && a->sbuf == MPI_IN_PLACE) {
        b.sbuf = umpi_coll_at(a->rbuf, (MPI_Count) root * a->rcount, a->rdt);
        b.scount = a->rcount;
        b.sdt = a->rdt;
    }
    b.rbuf = nb;
    b.rcount = (MPI_Count) blk;
    b.rdt = byte;
    b.root = 0;
    b.bytes = blk;
    UMPI_COLL_TRY(umpi_gather_binomial(s, &cc->node, &b));
    UMPI_COLL_TRY(umpi_sched_fence(s));

    /* 2. among the leaders, to the root's node leader: node k's piece at off[k] blocks */
    if (leader) {
        int k = cc->nnodes;
        MPI_Count *cnt = umpi_coll_counts(s, k);
        MPI_Aint *displ = umpi_sched_buf(s, (size_t) k * sizeof(MPI_Aint));
        if (cnt == NULL || displ == NULL)
            return umpi_err_create(MPI_ERR_OTHER, "out of memory for a hierarchical gather over %d nodes", k);
        for (int i = 0; i < k; i++) {
            cnt[i] = (l.off[i + 1] - l.off[i]) * (MPI_Count) blk;
            displ[i] = (MPI_Aint) (l.off[i] * (MPI_Count) blk);
        }
        umpi_coll_args_t g = {.kind = UMPI_COLL_GATHERV, .comm = a->comm, .sbuf = me == root_leader ? MPI_IN_PLACE : nb,
                              .scount = (MPI_Count) ((size_t) cc->node.size * blk), .sdt = byte, .rbuf = all,
                              .rcounts = cnt, .rdispls = displ, .rdt = byte, .root = rnode, .bytes = blk};
        UMPI_COLL_TRY(umpi_gatherv_linear(s, &cc->leaders, &g));
        UMPI_COLL_TRY(umpi_sched_fence(s));
    }

    /* 3. to the root, when it does not lead its node */
    if (root != root_leader && mynode == rnode) {
        if (me == root_leader)
            UMPI_COLL_TRY(umpi_sched_send(s, &cc->node, l.root_idx, all, (MPI_Count) ((size_t) p * blk), byte));
        else if (me == root)
            UMPI_COLL_TRY(umpi_sched_recv(s, &cc->node, 0, all, (MPI_Count) ((size_t) p * blk), byte));
        UMPI_COLL_TRY(umpi_sched_fence(s));
    }
    if (me != root)
        return MPI_SUCCESS;
    return umpi_hier_move(s, &l, p, all, blk, a->rbuf, a->rcount, a->rdt, a->sbuf == MPI_IN_PLACE ? root : -1, 1);
}
