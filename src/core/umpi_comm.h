/*
 * What the communicator constructors share (comm.c, comm_create.c, intercomm.c). The object
 * itself is declared in umpi_obj.h.
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

/* A new communicator over group (and remote group: an intercommunicator) on the context pair
 * agreed, inheriting parent's error handler; takes its own references to the groups and marks
 * the context used. Called with the big lock held. */
int umpi_comm_new(const umpi_comm_t *parent, umpi_group_t *group, umpi_group_t *remote, uint32_t context,
                  MPI_Comm *newcomm);

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

/* Allreduce over every process of c, both groups of an intercommunicator. */
umpi_status_t umpi_comm_allreduce_int(const umpi_comm_t *c, int *buf, int n, umpi_coll_op_t op);

#endif
