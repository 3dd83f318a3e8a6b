/*
 * Process topologies (MPI 4.1 chapter 8): the record a communicator carries when it was made by
 * MPI_Cart_create, MPI_Cart_sub, MPI_Graph_create or MPI_Dist_graph_create(_adjacent), and how
 * it follows the communicator (copied by MPI_Comm_dup, freed with it).
 */
#ifndef UMPI_TOPO_H
#define UMPI_TOPO_H

/* One allocation: the arrays point into data[]. Which fields mean something depends on kind. */
typedef struct umpi_topo {
    int kind;                       /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
    /* MPI_CART: grid shape and my coordinates in it */
    int ndims;
    int *dims, *periods, *coords;
    /* MPI_GRAPH: the whole graph, as the creator gave it */
    int nnodes, nedges;
    int *index, *edges;
    /* MPI_DIST_GRAPH: my neighbours only, in the order they were given (create_adjacent) or
     * in the order of the edge list over the ranks that gave it (create) */
    int indegree, outdegree, weighted;
    int *in, *inw, *out, *outw;
    int nints;                      /* entries of data[] */
    int data[];
} umpi_topo_t;

/* A copy for a duplicated communicator (NULL for NULL); NULL also when out of memory, which
 * *nomem then says. */
umpi_topo_t *umpi_topo_dup(const umpi_topo_t *t, int *nomem);
void umpi_topo_free(umpi_topo_t *t);

#endif
