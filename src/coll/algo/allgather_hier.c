/*
 * Allgather, hierarchical (the node structure is in src/coll/hier.c): each node's
 * blocks go up a binomial tree to the node leader, the leaders pass their nodes' pieces round a
 * ring (an allgatherv: nodes may be uneven), each leader broadcasts the whole packed vector inside
 * its node, and every member places the blocks by rank (nodes need not hold consecutive ranks;
 * hier_blocks.h). The inter-node phase has nnodes - 1 steps instead of p - 1.
 */
#include "hier_blocks.h"

UMPI_COLL_BUILD(umpi_allgather_hier)
{
    (void) v;
    umpi_coll_comm_t *cc = a->comm->coll;
    int p = a->comm->size, me = a->comm->rank, mynode = cc->node_idx[me];
    size_t blk = a->bytes;
    umpi_dtype_t *byte = umpi_dtype_get(MPI_BYTE);
    umpi_hier_layout_t l;
    UMPI_COLL_TRY(umpi_hier_layout(s, cc, p, -1, &l));
    char *all = umpi_hier_bytes(s, (size_t) p * blk);
    if (all == NULL)
        return umpi_err_create(MPI_ERR_OTHER, "out of memory for a %zu-byte hierarchical allgather", (size_t) p * blk);

    /* 1. inside each node, to its leader, which keeps the blocks at its node's place in `all` */
    umpi_coll_args_t b = *a;
    b.kind = UMPI_COLL_GATHER;
    if (a->sbuf == MPI_IN_PLACE) {
        b.sbuf = umpi_coll_at(a->rbuf, (MPI_Count) me * a->rcount, a->rdt);
        b.scount = a->rcount;
        b.sdt = a->rdt;
    }
    b.rbuf = all + l.off[mynode] * blk;
    b.rcount = (MPI_Count) blk;
    b.rdt = byte;
    b.root = 0;
    b.bytes = blk;
    UMPI_COLL_TRY(umpi_gather_binomial(s, &cc->node, &b));
    UMPI_COLL_TRY(umpi_sched_fence(s));

    /* 2. the leaders exchange their nodes' pieces */
    if (cc->leaders.rank >= 0) {
        int k = cc->nnodes;
        MPI_Count *cnt = umpi_coll_counts(s, k);
        MPI_Aint *displ = umpi_sched_buf(s, (size_t) k * sizeof(MPI_Aint));
        if (cnt == NULL || displ == NULL)
            return umpi_err_create(MPI_ERR_OTHER, "out of memory for a hierarchical allgather over %d nodes", k);
        for (int i = 0; i < k; i++) {
            cnt[i] = (l.off[i + 1] - l.off[i]) * (MPI_Count) blk;
            displ[i] = (MPI_Aint) (l.off[i] * (MPI_Count) blk);
        }
        umpi_coll_args_t g = {.kind = UMPI_COLL_ALLGATHERV, .comm = a->comm, .sbuf = MPI_IN_PLACE, .rbuf = all,
                              .rcounts = cnt, .rdispls = displ, .rdt = byte, .bytes = blk};
        UMPI_COLL_TRY(umpi_allgatherv_ring(s, &cc->leaders, &g));
        UMPI_COLL_TRY(umpi_sched_fence(s));
    }

    /* 3. the whole vector from each leader to its node, then into place by rank */
    umpi_coll_args_t c = {.kind = UMPI_COLL_BCAST, .comm = a->comm, .rbuf = all,
                          .rcount = (MPI_Count) ((size_t) p * blk), .rdt = byte, .root = 0, .bytes = (size_t) p * blk};
    UMPI_COLL_TRY(umpi_bcast_binomial(s, &cc->node, &c));
    UMPI_COLL_TRY(umpi_sched_fence(s));
    return umpi_hier_move(s, &l, p, all, blk, a->rbuf, a->rcount, a->rdt, a->sbuf == MPI_IN_PLACE ? me : -1, 1);
}
