/*
 * What the communicator constructors share (comm.c, comm_create.c, intercomm.c). The object
 * itself and its storage (umpi_comm_new) are declared in core/umpi_obj.h.
 */
#ifndef UMPI_COMM_H
#define UMPI_COMM_H

#include "coll/umpi_coll_internal.h"
#include "core/umpi_context.h"
#include "core/umpi_err.h"
#include "core/umpi_obj.h"
#include "core/umpi_progress.h"

#if __has_include("mpi/gen/umpi_impl.h")
#include "mpi/gen/umpi_impl.h"
#endif

/* The lowest context pair free at every member: of g when given, else of c (both groups of an
 * intercommunicator). An MPI error code. */
int umpi_comm_context_agree(const umpi_comm_t *c, const umpi_coll_grp_t *g, uint32_t *context);
/* The same under an explicit agreement key (umpi_context_round_begin); c may be NULL when g is
 * given (MPI_Comm_create_from_group: no parent). */
int umpi_comm_context_agree_key(const umpi_comm_t *c, const umpi_coll_grp_t *g, uint32_t key, uint32_t *context);

/* MPI_Comm_create and MPI_Comm_split on an intercommunicator (intercomm_sub.c). */
int umpi_intercomm_create_sub(umpi_comm_t *ic, umpi_group_t *g, MPI_Comm *newcomm);
int umpi_intercomm_split(umpi_comm_t *ic, int color, int key, MPI_Comm *newcomm);

/* MPI_Comm_idup with the given hints (comm_idup.c): the new communicator's handle at once, usable
 * when *request completes. An MPI error code. Called without the big lock. */
int umpi_comm_idup_start(umpi_comm_t *parent, unsigned hints, MPI_Comm *newcomm, MPI_Request *request);

/* A communicator's topology (core/umpi_topo.h) follows it (topo.c): a copy for a duplicated
 * communicator (NULL for NULL; NULL also when out of memory, which *nomem then says), freed with it. */
struct umpi_topo *umpi_topo_dup(const struct umpi_topo *t, int *nomem);
void umpi_topo_free(struct umpi_topo *t);

/* Frees what the layers above core hang on a communicator (its collective state, its topology):
 * core's umpi_comm_free_above, set at MPI_Init. */
void umpi_comm_free_layers(umpi_comm_t *c);

/* Allreduce over every process of c, both groups of an intercommunicator. */
umpi_status_t umpi_comm_allreduce_int(const umpi_comm_t *c, int *buf, int n, umpi_coll_op_t op);

#endif
