/*
 * Helpers of the hierarchical gather / scatter / allgather: where each member's block
 * sits in a packed buffer of all blocks laid out node by node. Node leaders move the blocks of
 * their whole node as one piece, so a packed buffer holds node 0's members (in rank order), then
 * node 1's, and so on; when nodes do not hold consecutive ranks that is not rank order, and the
 * blocks are placed by rank when they are unpacked.
 */
#ifndef UMPI_HIER_BLOCKS_H
#define UMPI_HIER_BLOCKS_H

#include "coll/umpi_coll.h"

typedef struct {
    MPI_Count *off;  /* nnodes + 1: members on the nodes before node k */
    int *pos;        /* p: member r's block index in the packed buffer */
    int root_idx;    /* the root's index among its node's members (a->root), 0 when unused */
} umpi_hier_layout_t;

/* Fills l for comm's p members (scratch of s); MPI_ERR_OTHER when out of memory. */
static inline int umpi_hier_layout(umpi_sched_t *s, const umpi_coll_comm_t *cc, int p, int root,
                                   umpi_hier_layout_t *l)
{
    int k = cc->nnodes;
    l->root_idx = 0;
    l->off = umpi_coll_counts(s, k + 1);
    l->pos = umpi_sched_buf(s, (size_t) p * sizeof(int));
    if (l->off == NULL || l->pos == NULL)
        return umpi_err_create(MPI_ERR_OTHER, "out of memory laying out a hierarchical collective of %d members", p);
    for (int i = 0; i <= k; i++)
        l->off[i] = 0;
    for (int r = 0; r < p; r++)
        l->off[cc->node_idx[r] + 1]++;
    for (int i = 0; i < k; i++)
        l->off[i + 1] += l->off[i];
    MPI_Count *next = umpi_coll_counts(s, k);
    if (next == NULL)
        return umpi_err_create(MPI_ERR_OTHER, "out of memory laying out a hierarchical collective of %d members", p);
    for (int i = 0; i < k; i++)
        next[i] = l->off[i];
    for (int r = 0; r < p; r++) {
        l->pos[r] = (int) next[cc->node_idx[r]]++;
        if (r == root)
            l->root_idx = (int) (l->pos[r] - l->off[cc->node_idx[r]]);
    }
    return MPI_SUCCESS;
}

/* Scratch of n bytes (at least one), or NULL. */
static inline char *umpi_hier_bytes(umpi_sched_t *s, size_t n)
{
    return umpi_sched_buf(s, n ? n : 1);
}

/*
 * Copies between the packed buffer (blk bytes per block) and a user buffer of p blocks of count
 * elements of dt, block r at position pos[r]: unpack (to_user) or pack. Runs of members that sit
 * next to each other in both are copied in one step; member `skip` (-1: none) is left out.
 */
static inline int umpi_hier_move(umpi_sched_t *s, const umpi_hier_layout_t *l, int p, char *packed, size_t blk,
                                 void *user, MPI_Count count, umpi_dtype_t *dt, int skip, int to_user)
{
    umpi_dtype_t *byte = umpi_dtype_get(MPI_BYTE);
    for (int r = 0; r < p;) {
        if (r == skip) {
            r++;
            continue;
        }
        int e = r + 1;
        while (e < p && e != skip && l->pos[e] == l->pos[e - 1] + 1)
            e++;
        char *pk = packed + (size_t) l->pos[r] * blk;
        void *u = umpi_coll_at(user, (MPI_Count) r * count, dt);
        MPI_Count nb = (MPI_Count) ((size_t) (e - r) * blk), nu = (MPI_Count) (e - r) * count;
        if (to_user)
            UMPI_COLL_TRY(umpi_sched_copy(s, pk, nb, byte, u, nu, dt));
        else
            UMPI_COLL_TRY(umpi_sched_copy(s, u, nu, dt, pk, nb, byte));
        r = e;
    }
    return MPI_SUCCESS;
}

#endif
