/*
 * Process topologies (MPI 4.1 chapter 8): the record a communicator carries when it was made by
 * MPI_Cart_create, MPI_Cart_sub, MPI_Graph_create or MPI_Dist_graph_create(_adjacent), and how
 * it follows the communicator (copied by MPI_Comm_dup, freed with it: src/api/topo.c). Here, below
 * coll, because the neighborhood collectives read it.
 */
#ifndef UMPI_TOPO_H
#define UMPI_TOPO_H

#include "core/umpi_obj.h"

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

/* My number of in-neighbours (out = 0) or out-neighbours (out = 1) in c's topology: the lengths of
 * the neighborhood collectives' arrays; 0 without a topology (or on an intercommunicator). Out of
 * line (comm.c): the generated bindings call it from many entry points. */
int umpi_topo_degree(const umpi_comm_t *c, int out);


#endif
