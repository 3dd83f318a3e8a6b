/*
 * Scatter, hierarchical (the node structure is in src/coll/hier.c): the root packs the
 * blocks node by node (hier_blocks.h) and hands them to its node's leader when it does not lead
 * the node itself; that leader sends each other leader its node's piece (a linear scatterv among
 * the leaders), and each leader scatters its piece inside its node along a binomial tree. One
 * inter-node message per node.
 */
#include "hier_blocks.h"

UMPI_COLL_BUILD(umpi_scatter_hier)
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

    char *all = NULL, *nb = NULL, *junk = NULL;
    if (me == root || me == root_leader)
        all = umpi_hier_bytes(s, (size_t) p * blk);
    if (leader)
        nb = me == root_leader ? all + l.off[mynode] * blk : umpi_hier_bytes(s, (size_t) cc->node.size * blk);
    if (me == root && a->rbuf == MPI_IN_PLACE && !leader) /* its block comes back down the node tree */
        junk = umpi_hier_bytes(s, blk);
    if (((me == root || me == root_leader) && all == NULL) || (leader && nb == NULL) ||
        (me == root && a->rbuf == MPI_IN_PLACE && !leader && junk == NULL))
        return umpi_err_create(MPI_ERR_OTHER, "out of memory for a %zu-byte hierarchical scatter", (size_t) p * blk);

    /* 1. the root packs the blocks node by node, and hands them to its leader */
    if (me == root)
        UMPI_COLL_TRY(umpi_hier_move(s, &l, p, all, blk, (void *) a->sbuf, a->scount, a->sdt, -1, 0));
    if (root != root_leader && mynode == rnode) {
        UMPI_COLL_TRY(umpi_sched_fence(s));
        if (me == root)
            UMPI_COLL_TRY(umpi_sched_send(s, &cc->node, 0, all, (MPI_Count) ((size_t) p * blk), byte));
        else if (me == root_leader)
            UMPI_COLL_TRY(umpi_sched_recv(s, &cc->node, l.root_idx, all, (MPI_Count) ((size_t) p * blk), byte));
    }
    UMPI_COLL_TRY(umpi_sched_fence(s));

    /* 2. from the root's node leader to the other leaders, a piece per node */
    if (leader) {
        int k = cc->nnodes;
        MPI_Count *cnt = umpi_coll_counts(s, k);
        MPI_Aint *displ = umpi_sched_buf(s, (size_t) k * sizeof(MPI_Aint));
        if (cnt == NULL || displ == NULL)
            return umpi_err_create(MPI_ERR_OTHER, "out of memory for a hierarchical scatter over %d nodes", k);
        for (int i = 0; i < k; i++) {
            cnt[i] = (l.off[i + 1] - l.off[i]) * (MPI_Count) blk;
            displ[i] = (MPI_Aint) (l.off[i] * (MPI_Count) blk);
        }
        umpi_coll_args_t g = {.kind = UMPI_COLL_SCATTERV, .comm = a->comm, .sbuf = all, .scounts = cnt,
                              .sdispls = displ, .sdt = byte, .rbuf = me == root_leader ? MPI_IN_PLACE : nb,
                              .rcount = (MPI_Count) ((size_t) cc->node.size * blk), .rdt = byte, .root = rnode,
                              .bytes = blk};
        UMPI_COLL_TRY(umpi_scatterv_linear(s, &cc->leaders, &g));
        UMPI_COLL_TRY(umpi_sched_fence(s));
    }

    /* 3. inside each node, from its leader */
    umpi_coll_args_t b = *a;
    b.kind = UMPI_COLL_SCATTER;
    b.sbuf = nb;
    b.scount = (MPI_Count) blk;
    b.sdt = byte;
    if (junk != NULL) {
        b.rbuf = junk;
        b.rcount = (MPI_Count) blk;
        b.rdt = byte;
    }
    b.root = 0;
    b.bytes = blk;
    return umpi_scatter_binomial(s, &cc->node, &b);
}
