/*
 * Graph topologies (MPI 4.1 sec. 8.5.3, 8.5.4): MPI_Graph_* (every process knows the whole graph)
 * and MPI_Dist_graph_* (each process knows its own neighbours). reorder is ignored: ranks stay
 * those of the old communicator.
 */
#include "api/umpi_topo_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---- MPI_Graph_* ---------------------------------------------------------------------------------- */

static int umpi__graph_check(const umpi_comm_t *c, int nnodes, const int index[], const int edges[])
{
    if (nnodes < 0 || nnodes > c->size)
        return umpi_err_create(MPI_ERR_ARG, "invalid number of nodes %d in argument 'nnodes' (communicator size "
                               "%d)", nnodes, c->size);
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            return umpi_err_create(MPI_ERR_ARG, "argument 'index[%d]' is %d, less than %s", i, index[i],
                                   i ? "the entry before it" : "zero");
    int nedges = nnodes ? index[nnodes - 1] : 0;
    if (edges == NULL && nedges > 0)
        return umpi_err_create(MPI_ERR_ARG, "argument 'edges' is NULL with %d edges", nedges);
    for (int i = 0; i < nedges; i++)
        if (edges[i] < 0 || edges[i] >= nnodes)
            return umpi_err_create(MPI_ERR_RANK, "invalid node %d in argument 'edges[%d]' (the graph has %d "
                                   "nodes)", edges[i], i, nnodes);
    return MPI_SUCCESS;
}

int umpi_impl_graph_create(umpi_comm_t *comm_old_ptr, int nnodes, const int index[], const int edges[], int reorder,
                           MPI_Comm *comm_graph)
{
    (void) reorder;
    int err = umpi_topo_need_intra(comm_old_ptr, "comm_old");
    if (err == MPI_SUCCESS)
        err = umpi__graph_check(comm_old_ptr, nnodes, index, edges);
    if (err != MPI_SUCCESS)
        return err;
    int nedges = nnodes ? index[nnodes - 1] : 0;
    umpi_topo_t *t = umpi_topo_new(MPI_GRAPH, 0, nnodes, nedges, 0, 0);
    if (t == NULL)
        return umpi_err_create(MPI_ERR_NO_MEM, "out of memory creating a graph topology");
    memcpy(t->index, index, (size_t) nnodes * sizeof(int));
    memcpy(t->edges, edges, (size_t) nedges * sizeof(int));
    return umpi_topo_attach(comm_old_ptr, nnodes, t, comm_graph);
}

int umpi_impl_graph_map(umpi_comm_t *comm_ptr, int nnodes, const int index[], const int edges[], int *newrank)
{
    int err = umpi_topo_need_intra(comm_ptr, "comm");
    if (err == MPI_SUCCESS)
        err = umpi__graph_check(comm_ptr, nnodes, index, edges);
    if (err == MPI_SUCCESS)
        *newrank = comm_ptr->rank < nnodes ? comm_ptr->rank : MPI_UNDEFINED;
    return err;
}

int umpi_impl_graphdims_get(umpi_comm_t *comm_ptr, int *nnodes, int *nedges)
{
    const umpi_topo_t *t;
    int err = umpi_topo_of(comm_ptr, MPI_GRAPH, &t);
    if (err == MPI_SUCCESS) {
        *nnodes = t->nnodes;
        *nedges = t->nedges;
    }
    return err;
}

int umpi_impl_graph_get(umpi_comm_t *comm_ptr, int maxindex, int maxedges, int index[], int edges[])
{
    const umpi_topo_t *t;
    int err = umpi_topo_of(comm_ptr, MPI_GRAPH, &t);
    if (err != MPI_SUCCESS)
        return err;
    memcpy(index, t->index, (size_t) (maxindex < t->nnodes ? maxindex : t->nnodes) * sizeof(int));
    memcpy(edges, t->edges, (size_t) (maxedges < t->nedges ? maxedges : t->nedges) * sizeof(int));
    return MPI_SUCCESS;
}

/* My neighbours in a graph topology: node rank's slice of edges. */
static int umpi__graph_node(const umpi_comm_t *c, int rank, const umpi_topo_t **t, int *first, int *n)
{
    int err = umpi_topo_of(c, MPI_GRAPH, t);
    if (err != MPI_SUCCESS)
        return err;
    if (rank < 0 || rank >= (*t)->nnodes)
        return umpi_err_create(MPI_ERR_RANK, "invalid rank %d in argument 'rank' (the graph has %d nodes)", rank,
                               (*t)->nnodes);
    *first = rank ? (*t)->index[rank - 1] : 0;
    *n = (*t)->index[rank] - *first;
    return MPI_SUCCESS;
}

int umpi_impl_graph_neighbors_count(umpi_comm_t *comm_ptr, int rank, int *nneighbors)
{
    const umpi_topo_t *t;
    int first;
    return umpi__graph_node(comm_ptr, rank, &t, &first, nneighbors);
}

int umpi_impl_graph_neighbors(umpi_comm_t *comm_ptr, int rank, int maxneighbors, int neighbors[])
{
    const umpi_topo_t *t;
    int first, n;
    int err = umpi__graph_node(comm_ptr, rank, &t, &first, &n);
    if (err == MPI_SUCCESS)
        memcpy(neighbors, t->edges + first, (size_t) (maxneighbors < n ? maxneighbors : n) * sizeof(int));
    return err;
}

/* ---- MPI_Dist_graph_* ----------------------------------------------------------------------------- */

enum { UMPI__WEIGHTS_GIVEN = 1, UMPI__WEIGHTS_NONE = 2 }; /* what a weights argument said */

/* A weights argument for n edges: MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY (only when n is 0), or n
 * non-negative weights. *said gets UMPI__WEIGHTS_NONE for MPI_UNWEIGHTED, UMPI__WEIGHTS_GIVEN for
 * weights, and 0 when nothing was said (no edges). */
static int umpi__weights_check(const int *w, int n, const char *arg, int *said)
{
    *said = 0;
    if (w == MPI_UNWEIGHTED) {
        *said = UMPI__WEIGHTS_NONE;
        return MPI_SUCCESS;
    }
    if (n == 0)
        return MPI_SUCCESS; /* MPI_WEIGHTS_EMPTY, NULL or any array: nothing to read */
    if (w == MPI_WEIGHTS_EMPTY || w == NULL)
        return umpi_err_create(MPI_ERR_ARG, "argument '%s' is %s with %d edges", arg,
                               w == NULL ? "NULL" : "MPI_WEIGHTS_EMPTY", n);
    for (int i = 0; i < n; i++)
        if (w[i] < 0)
            return umpi_err_create(MPI_ERR_ARG, "negative weight %d in argument '%s[%d]'", w[i], arg, i);
    *said = UMPI__WEIGHTS_GIVEN;
    return MPI_SUCCESS;
}

static int umpi__ranks_check(const umpi_comm_t *c, const int *r, int n, const char *arg)
{
    for (int i = 0; i < n; i++)
        if (r[i] < 0 || r[i] >= c->size)
            return umpi_err_create(MPI_ERR_RANK, "invalid rank %d in argument '%s[%d]' (communicator size %d)", r[i],
                                   arg, i, c->size);
    return MPI_SUCCESS;
}

static int umpi__degree_check(int d, const char *arg)
{
    if (d >= 0)
        return MPI_SUCCESS;
    return umpi_err_create(MPI_ERR_ARG, "negative degree %d in argument '%s'", d, arg);
}

int umpi_impl_dist_graph_create_adjacent(umpi_comm_t *comm_old_ptr, int indegree, const int sources[],
                                         const int sourceweights[], int outdegree, const int destinations[],
                                         const int destweights[], MPI_Info info, int reorder,
                                         MPI_Comm *comm_dist_graph)
{
    int sin, sout;
    (void) info, (void) reorder; /* no hints are used; ranks are kept */
    int err = umpi_topo_need_intra(comm_old_ptr, "comm_old");
    if (err == MPI_SUCCESS)
        err = umpi__degree_check(indegree, "indegree");
    if (err == MPI_SUCCESS)
        err = umpi__degree_check(outdegree, "outdegree");
    if (err == MPI_SUCCESS)
        err = umpi__ranks_check(comm_old_ptr, sources, indegree, "sources");
    if (err == MPI_SUCCESS)
        err = umpi__ranks_check(comm_old_ptr, destinations, outdegree, "destinations");
    if (err == MPI_SUCCESS)
        err = umpi__weights_check(sourceweights, indegree, "sourceweights", &sin);
    if (err == MPI_SUCCESS)
        err = umpi__weights_check(destweights, outdegree, "destweights", &sout);
    if (err == MPI_SUCCESS && (sin | sout) == (UMPI__WEIGHTS_GIVEN | UMPI__WEIGHTS_NONE))
        err = umpi_err_create(MPI_ERR_ARG, "arguments 'sourceweights' and 'destweights': one is MPI_UNWEIGHTED "
                              "and the other is not");
    if (err != MPI_SUCCESS)
        return err;
    umpi_topo_t *t = umpi_topo_new(MPI_DIST_GRAPH, 0, 0, 0, indegree, outdegree);
    if (t == NULL)
        return umpi_err_create(MPI_ERR_NO_MEM, "out of memory creating a distributed graph topology");
    t->weighted = sin != UMPI__WEIGHTS_NONE && sout != UMPI__WEIGHTS_NONE;
    for (int i = 0; i < indegree; i++) {
        t->in[i] = sources[i];
        t->inw[i] = t->weighted ? sourceweights[i] : 1;
    }
    for (int i = 0; i < outdegree; i++) {
        t->out[i] = destinations[i];
        t->outw[i] = t->weighted ? destweights[i] : 1;
    }
    return umpi_topo_attach(comm_old_ptr, comm_old_ptr->size, t, comm_dist_graph);
}

/*
 * MPI_Dist_graph_create: any process may give any edge, so the edges travel. Every process learns
 * the whole edge list through two allreduces (an allgather: each fills its own slots of a zeroed
 * array and the bitwise OR joins them): first the number of edges each gives and what it said
 * about weights, then the edges as (source, destination, weight). Each keeps the edges that touch
 * it, in the order of the list. O(edges) memory per process: the internal collectives have no
 * personalised exchange (an internal alltoall would bring it to O(degree)).
 */
int umpi_impl_dist_graph_create(umpi_comm_t *comm_old_ptr, int n, const int sources[], const int degrees[],
                                const int destinations[], const int weights[], MPI_Info info, int reorder,
                                MPI_Comm *comm_dist_graph)
{
    (void) info, (void) reorder;
    umpi_comm_t *c = comm_old_ptr;
    int err = umpi_topo_need_intra(c, "comm_old"), said = 0;
    long total = 0;
    for (int i = 0; i < n && err == MPI_SUCCESS; i++) {
        err = umpi__degree_check(degrees[i], "degrees[i]");
        total += degrees[i];
    }
    if (err == MPI_SUCCESS && total > INT_MAX / 3)
        err = umpi_err_create(MPI_ERR_ARG, "too many edges (%ld) in argument 'degrees'", total);
    if (err == MPI_SUCCESS && destinations == NULL && total > 0)
        err = umpi_err_create(MPI_ERR_ARG, "argument 'destinations' is NULL with %ld edges", total);
    if (err == MPI_SUCCESS)
        err = umpi__ranks_check(c, sources, n, "sources");
    if (err == MPI_SUCCESS)
        err = umpi__ranks_check(c, destinations, (int) total, "destinations");
    if (err == MPI_SUCCESS)
        err = umpi__weights_check(weights, (int) total, "weights", &said);
    if (err != MPI_SUCCESS)
        return err;

    int size = c->size, *counts = calloc((size_t) size + 1, sizeof(int)), *all = NULL;
    umpi_topo_t *t = NULL;
    if (counts == NULL)
        goto nomem;
    counts[c->rank] = (int) total;
    counts[size] = said;
    umpi_lock();
    umpi_status_t st = umpi_comm_allreduce_int(c, counts, size + 1, UMPI_COLL_BOR);
    umpi_unlock();
    if (st != UMPI_OK) {
        err = umpi_err_from_status(st, "exchanging edge counts");
        goto out;
    }
    long all_edges = 0, mine = 0;
    for (int r = 0; r < size; r++) {
        if (r == c->rank)
            mine = all_edges;
        all_edges += counts[r];
    }
    if (all_edges > INT_MAX / 3) {
        err = umpi_err_create(MPI_ERR_ARG, "too many edges in the distributed graph (%ld)", all_edges);
        goto out;
    }
    all = calloc(3 * (size_t) all_edges + 1, sizeof(int));
    if (all == NULL)
        goto nomem;
    for (int i = 0, e = 0; i < n; i++) {
        for (int j = 0; j < degrees[i]; j++, e++) {
            int *rec = all + 3 * (mine + e);
            rec[0] = sources[i];
            rec[1] = destinations[e];
            rec[2] = said == UMPI__WEIGHTS_GIVEN ? weights[e] : 1;
        }
    }
    umpi_lock();
    st = umpi_comm_allreduce_int(c, all, 3 * (int) all_edges, UMPI_COLL_BOR);
    umpi_unlock();
    if (st != UMPI_OK) {
        err = umpi_err_from_status(st, "exchanging the edges");
        goto out;
    }
    /* The same verdict everywhere, since every process saw every flag. */
    if (counts[size] == (UMPI__WEIGHTS_GIVEN | UMPI__WEIGHTS_NONE)) {
        err = umpi_err_create(MPI_ERR_ARG, "argument 'weights' is MPI_UNWEIGHTED at some processes and weights at "
                              "others");
        goto out;
    }
    int in = 0, out = 0;
    for (long e = 0; e < all_edges; e++) {
        in += all[3 * e + 1] == c->rank;
        out += all[3 * e] == c->rank;
    }
    t = umpi_topo_new(MPI_DIST_GRAPH, 0, 0, 0, in, out);
    if (t == NULL)
        goto nomem;
    t->weighted = !(counts[size] & UMPI__WEIGHTS_NONE);
    in = out = 0;
    for (long e = 0; e < all_edges; e++) {
        const int *rec = all + 3 * e;
        if (rec[1] == c->rank) {
            t->in[in] = rec[0];
            t->inw[in++] = rec[2];
        }
        if (rec[0] == c->rank) {
            t->out[out] = rec[1];
            t->outw[out++] = rec[2];
        }
    }
    err = umpi_topo_attach(c, size, t, comm_dist_graph);
    t = NULL;
    goto out;
nomem:
    err = umpi_err_create(MPI_ERR_NO_MEM, "out of memory creating a distributed graph topology");
out:
    umpi_topo_free(t);
    free(counts);
    free(all);
    return err;
}

int umpi_impl_dist_graph_neighbors_count(umpi_comm_t *comm_ptr, int *indegree, int *outdegree, int *weighted)
{
    const umpi_topo_t *t;
    int err = umpi_topo_of(comm_ptr, MPI_DIST_GRAPH, &t);
    if (err == MPI_SUCCESS) {
        *indegree = t->indegree;
        *outdegree = t->outdegree;
        *weighted = t->weighted;
    }
    return err;
}

/* Weights are written where the caller gave an array for them (not MPI_UNWEIGHTED). */
static void umpi__copy_out(int *dst, int *dstw, const int *src, const int *srcw, int n, int max)
{
    n = max < n ? max : n;
    memcpy(dst, src, (size_t) n * sizeof(int));
    if (dstw != NULL && dstw != MPI_UNWEIGHTED && dstw != MPI_WEIGHTS_EMPTY)
        memcpy(dstw, srcw, (size_t) n * sizeof(int));
}

int umpi_impl_dist_graph_neighbors(umpi_comm_t *comm_ptr, int maxindegree, int sources[], int sourceweights[],
                                   int maxoutdegree, int destinations[], int destweights[])
{
    const umpi_topo_t *t;
    int err = umpi_topo_of(comm_ptr, MPI_DIST_GRAPH, &t);
    if (err != MPI_SUCCESS)
        return err;
    umpi__copy_out(sources, sourceweights, t->in, t->inw, t->indegree, maxindegree);
    umpi__copy_out(destinations, destweights, t->out, t->outw, t->outdegree, maxoutdegree);
    return MPI_SUCCESS;
}
