/* What topo.c and topo_graph.c share. */
#ifndef UMPI_TOPO_INTERNAL_H
#define UMPI_TOPO_INTERNAL_H

#include "api/umpi_comm.h"
#include "core/umpi_topo.h"

/* A zeroed record with room for the given array lengths; NULL when out of memory. */
umpi_topo_t *umpi_topo_new(int kind, int ndims, int nnodes, int nedges, int indegree, int outdegree);
/* MPI_ERR_TOPOLOGY unless c carries a topology of this kind (then in *t). */
int umpi_topo_of(const umpi_comm_t *c, int kind, const umpi_topo_t **t);
/* MPI_ERR_COMM for an intercommunicator in argument arg. */
int umpi_topo_need_intra(const umpi_comm_t *c, const char *arg);
/* The processes of c with rank < members, in their order, as a new communicator carrying t (which
 * it takes over); the others get MPI_COMM_NULL. Collective over c. */
int umpi_topo_attach(umpi_comm_t *c, int members, umpi_topo_t *t, MPI_Comm *newcomm);

#endif
