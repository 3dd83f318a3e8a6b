/*
 * The topology record a communicator carries (core/umpi_topo.h): made by the topology
 * constructors (topo.c, topo_graph.c), copied by MPI_Comm_dup (comm_create.c, comm_idup.c), freed
 * with the communicator (comm.c).
 */
#include "api/umpi_comm.h"
#include "api/umpi_topo_internal.h"

#include <stdlib.h>
#include <string.h>

/* Points the arrays of t into data[] (sizes from the counts already in t). */
static void umpi__topo_layout(umpi_topo_t *t)
{
    int *p = t->data;
    t->dims = p, p += t->ndims;
    t->periods = p, p += t->ndims;
    t->coords = p, p += t->ndims;
    t->index = p, p += t->nnodes;
    t->edges = p, p += t->nedges;
    t->in = p, p += t->indegree;
    t->inw = p, p += t->indegree;
    t->out = p, p += t->outdegree;
    t->outw = p;
}

umpi_topo_t *umpi_topo_new(int kind, int ndims, int nnodes, int nedges, int indegree, int outdegree)
{
    size_t n = 3 * (size_t) ndims + (size_t) nnodes + (size_t) nedges + 2 * (size_t) indegree +
               2 * (size_t) outdegree;
    umpi_topo_t *t = calloc(1, sizeof(*t) + n * sizeof(int));
    if (t == NULL)
        return NULL;
    t->kind = kind;
    t->ndims = ndims;
    t->nnodes = nnodes;
    t->nedges = nedges;
    t->indegree = indegree;
    t->outdegree = outdegree;
    t->nints = (int) n;
    umpi__topo_layout(t);
    return t;
}

umpi_topo_t *umpi_topo_dup(const umpi_topo_t *t, int *nomem)
{
    *nomem = 0;
    if (t == NULL)
        return NULL;
    size_t bytes = sizeof(*t) + (size_t) t->nints * sizeof(int);
    umpi_topo_t *c = malloc(bytes);
    if (c == NULL) {
        *nomem = 1;
        return NULL;
    }
    memcpy(c, t, bytes);
    umpi__topo_layout(c);
    return c;
}

void umpi_topo_free(umpi_topo_t *t)
{
    free(t);
}

