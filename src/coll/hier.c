/*
 * The node structure of a communicator, for the cost model and the hierarchical algorithms
 * (umpi_coll.h): which members share a node, a view of my node's members and a view of the node
 * leaders. Computed on the first collective of a communicator, from what every process knows
 * (the launcher's node of each world rank, or UMPI_COLL_RANKS_PER_NODE), so no messages.
 *
 * The hierarchical algorithms (src/coll/algo/<kind>_hier.c) compose a phase inside each node (shared
 * memory) and a phase among the node leaders (the network) from the flat algorithms over these
 * views, in one schedule. They pay when a communicator spans nodes and several members share
 * each node: the expensive inter-node phase then runs among nnodes processes instead of p.
 */
#include "coll/umpi_coll.h"
#include "coll/umpi_coll_device.h"
#include "pmi/umpi_pmi.h"

#include <stdlib.h>

int umpi_coll_node_of(int world_rank)
{
    if (umpi_config.coll_ranks_per_node > 0)
        return world_rank / umpi_config.coll_ranks_per_node;
    return umpi_pmi_node_of(world_rank);
}

void umpi_coll_nodes_free(umpi_coll_comm_t *cc)
{
    if (cc == NULL)
        return;
    free(cc->node_idx);
    free(cc->node_world);
    free(cc->node_src);
    free(cc->leader_world);
    free(cc->leader_src);
    free(cc);
}

/* Builds the structure of c's local group; NULL when out of memory. */
static umpi_coll_comm_t *umpi__build(const umpi_comm_t *c)
{
    int p = c->size;
    const int *world = c->is_inter ? c->group->world : c->world_rank;
    umpi_coll_comm_t *cc = calloc(1, sizeof(*cc));
    int *lnode = malloc((size_t) p * sizeof(int)); /* node id of each node found so far */
    if (cc == NULL || lnode == NULL)
        goto fail;
    cc->node_idx = malloc((size_t) p * sizeof(int));
    cc->node_world = malloc((size_t) p * sizeof(int));
    cc->node_src = malloc((size_t) p * sizeof(int));
    cc->leader_world = malloc((size_t) p * sizeof(int));
    cc->leader_src = malloc((size_t) p * sizeof(int));
    if (p < 1 || !cc->node_idx || !cc->node_world || !cc->node_src || !cc->leader_world || !cc->leader_src)
        goto fail;

    /* Nodes numbered by first appearance in rank order; the first member seen is the leader. */
    for (int r = 0; r < p; r++) {
        int w = world ? world[r] : r;
        int id = umpi_coll_node_of(w), k = 0;
        while (k < cc->nnodes && lnode[k] != id)
            k++;
        if (k == cc->nnodes) {
            lnode[k] = id;
            cc->leader_src[k] = r;
            cc->leader_world[k] = w;
            cc->nnodes++;
        }
        cc->node_idx[r] = k;
    }
    int mine = cc->node_idx[c->rank], n = 0;
    int count[64] = {0};
    cc->max_ppn = 0;
    for (int r = 0; r < p; r++) {
        if (cc->node_idx[r] < 64 && ++count[cc->node_idx[r]] > cc->max_ppn)
            cc->max_ppn = count[cc->node_idx[r]];
        if (cc->node_idx[r] == mine) {
            if (r == c->rank)
                cc->node.rank = n;
            cc->node_src[n] = r;
            cc->node_world[n++] = world ? world[r] : r;
        }
    }
    if (cc->nnodes > 64) /* counted only the first 64 nodes: recount */
        cc->max_ppn = (p + cc->nnodes - 1) / cc->nnodes;
    cc->node.size = n;
    cc->node.my_src = c->rank;
    cc->node.tag_bits = UMPI_COLL_TAG_SUB(1) | (c->is_inter ? UMPI_COLL_TAG_LOCAL : 0);
    cc->node.world = cc->node_world;
    cc->node.src = cc->node_src;
    cc->leaders.rank = cc->leader_src[mine] == c->rank ? mine : -1;
    cc->leaders.size = cc->nnodes;
    cc->leaders.my_src = c->rank;
    cc->leaders.tag_bits = UMPI_COLL_TAG_SUB(2) | (c->is_inter ? UMPI_COLL_TAG_LOCAL : 0);
    cc->leaders.world = cc->leader_world;
    cc->leaders.src = cc->leader_src;
    free(lnode);
    umpi_debug(2, "communicator 0x%x: %d members on %d nodes, %d on mine, at most %d per node",
               (unsigned) c->handle, p, cc->nnodes, n, cc->max_ppn);
    return cc;
fail:
    free(lnode);
    umpi_coll_nodes_free(cc);
    return NULL;
}

umpi_coll_comm_t *umpi_coll_comm(umpi_comm_t *c)
{
    if (c->coll == NULL)
        c->coll = umpi__build(c);
    return c->coll;
}

int umpi_coll_hier_usable(const umpi_coll_view_t *v, const umpi_coll_args_t *a)
{
    const umpi_coll_comm_t *cc = a->comm->coll;
    return !a->comm->is_inter && cc != NULL && v->size == a->comm->size && cc->nnodes > 1 && cc->max_ppn > 1;
}

int umpi_coll_hier_usable_commutative(const umpi_coll_view_t *v, const umpi_coll_args_t *a)
{
    /* Node-then-leader grouping reorders the ranks' contributions unless nodes hold consecutive
     * ranks: only commutative ops may take it. */
    return umpi_coll_hier_usable(v, a) && umpi_op_is_commutative(a->op);
}

