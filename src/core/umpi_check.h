/*
 * Argument checks of the generated MPI entry points (src/mpi/gen/bindings.c), and of the
 * collectives where a check depends on the rank (arguments significant only at the root).
 *
 * maint/gen_bindings.py picks one check per parameter from its kind in the MPI standard's API list
 * (COMMUNICATOR, RANK, TAG, counts, ...), so every function reports a bad argument the same way.
 * Each check returns MPI_SUCCESS or a new error code whose message names the argument and its value;
 * the entry point then jumps to its one error exit. The fast path is one or two compares; the
 * message is built out of line by umpi_err_create().
 */
#ifndef UMPI_CHECK_H
#define UMPI_CHECK_H

#include <limits.h>
#include <stdlib.h>
#include "core/umpi.h"
#include "core/umpi_err.h"
#include "core/umpi_obj.h"
#include "core/umpi_op.h"
#include "core/umpi_topo.h"

/* Largest tag a user may send: the tag field of the UCX tag layout decides it (defined in core). */
extern const int umpi_tag_ub;
#define UMPI_TAG_UB umpi_tag_ub

static inline int umpi_check_comm(MPI_Comm comm, umpi_comm_t **comm_ptr, const char *arg)
{
    *comm_ptr = umpi_comm_get(comm);
    if (umpi_likely(*comm_ptr != NULL))
        return MPI_SUCCESS;
    if (comm == MPI_COMM_NULL)
        return umpi_err_create(MPI_ERR_COMM, "MPI_COMM_NULL in argument '%s'", arg);
    return umpi_err_create(MPI_ERR_COMM, "invalid communicator 0x%x in argument '%s'",
                           (unsigned) comm, arg);
}

/* need_commit: the datatype describes a buffer (communication, pack); constructors and queries
 * accept uncommitted types. */
static inline int umpi_check_dtype(MPI_Datatype dtype, umpi_dtype_t **dtype_ptr, int need_commit,
                                   const char *arg)
{
    *dtype_ptr = umpi_dtype_get(dtype);
    if (umpi_likely(*dtype_ptr != NULL && ((*dtype_ptr)->committed || !need_commit)))
        return MPI_SUCCESS;
    if (dtype == MPI_DATATYPE_NULL)
        return umpi_err_create(MPI_ERR_TYPE, "MPI_DATATYPE_NULL in argument '%s'", arg);
    if (*dtype_ptr == NULL)
        return umpi_err_create(MPI_ERR_TYPE, "invalid datatype 0x%x in argument '%s'",
                               (unsigned) dtype, arg);
    return umpi_err_create(MPI_ERR_TYPE, "datatype 0x%x in argument '%s' is not committed",
                           (unsigned) dtype, arg);
}

/* A peer rank: valid in comm, MPI_PROC_NULL, or MPI_ANY_SOURCE where the call accepts it. Peers of
 * an intercommunicator are the ranks of its remote group (remote_size). */
static inline int umpi_check_rank(int rank, const umpi_comm_t *comm, int allow_any, const char *arg)
{
    if (umpi_likely((unsigned) rank < (unsigned) comm->remote_size) || rank == MPI_PROC_NULL ||
        (allow_any && rank == MPI_ANY_SOURCE))
        return MPI_SUCCESS;
    return umpi_err_create(MPI_ERR_RANK, "invalid rank %d in argument '%s' (%s size %d)", rank, arg,
                           comm->is_inter ? "remote group" : "communicator", comm->remote_size);
}

/* The root of a collective: a rank of an intracommunicator; for an intercommunicator MPI_ROOT (the
 * root's side), MPI_PROC_NULL (the root's group, other than the root) or a rank of the remote group. */
static inline int umpi_check_root(int root, const umpi_comm_t *comm, const char *arg)
{
    if (umpi_likely(!comm->is_inter && (unsigned) root < (unsigned) comm->size))
        return MPI_SUCCESS;
    if (comm->is_inter && ((unsigned) root < (unsigned) comm->remote_size || root == MPI_ROOT ||
                           root == MPI_PROC_NULL))
        return MPI_SUCCESS;
    if (comm->is_inter)
        return umpi_err_create(MPI_ERR_ROOT, "invalid root %d in argument '%s' (remote group size %d; or "
                               "MPI_ROOT, MPI_PROC_NULL)", root, arg, comm->remote_size);
    return umpi_err_create(MPI_ERR_ROOT, "invalid root %d in argument '%s' (communicator size %d)",
                           root, arg, comm->size);
}

static inline int umpi_check_tag(int tag, int allow_any, const char *arg)
{
    if (umpi_likely(tag >= 0 && tag <= UMPI_TAG_UB) || (allow_any && tag == MPI_ANY_TAG))
        return MPI_SUCCESS;
    return umpi_err_create(MPI_ERR_TAG, "invalid tag %d in argument '%s' (valid tags: 0..%d%s)",
                           tag, arg, UMPI_TAG_UB, allow_any ? " and MPI_ANY_TAG" : "");
}

/* Element counts and byte sizes that must not be negative. */
static inline int umpi_check_count(MPI_Count count, const char *arg)
{
    if (umpi_likely(count >= 0))
        return MPI_SUCCESS;
    return umpi_err_create(MPI_ERR_COUNT, "negative count %ld in argument '%s'", (long) count, arg);
}

/* The length of an array argument (requests of MPI_Waitall...): a bad one is MPI_ERR_ARG. */
static inline int umpi_check_length(MPI_Count n, const char *arg)
{
    if (umpi_likely(n >= 0))
        return MPI_SUCCESS;
    return umpi_err_create(MPI_ERR_ARG, "negative array length %ld in argument '%s'", (long) n, arg);
}

/*
 * A data buffer of count elements of dtype. NULL is MPI_BOTTOM, which only derived datatypes with
 * absolute addresses may use: hence the test of dtype->builtin, the hook for those types.
 */
static inline int umpi_check_buffer(const void *buf, MPI_Count count, const umpi_dtype_t *dtype,
                                    const char *arg)
{
    if (umpi_likely(buf != NULL) || count == 0 || dtype->size == 0 || !dtype->builtin)
        return MPI_SUCCESS;
    return umpi_err_create(MPI_ERR_BUFFER, "NULL buffer in argument '%s' with count %ld of %s",
                           arg, (long) count, dtype->name ? dtype->name : "a predefined datatype");
}

/* A buffer given by its size in bytes (MPI_Buffer_attach). */
static inline int umpi_check_bytes_buffer(const void *buf, MPI_Count size, const char *arg)
{
    if (umpi_likely(buf != NULL) || size == 0)
        return MPI_SUCCESS;
    return umpi_err_create(MPI_ERR_BUFFER, "NULL buffer in argument '%s' of %ld bytes", arg,
                           (long) size);
}

/* Where the call stores a result (flag, count, request, ...). */
static inline int umpi_check_ptr(const void *p, const char *arg)
{
    if (umpi_likely(p != NULL))
        return MPI_SUCCESS;
    return umpi_err_create(MPI_ERR_ARG, "argument '%s' is NULL", arg);
}

/* An array of n entries (requests, indices, statuses): NULL only when it is empty. */
static inline int umpi_check_array(const void *p, MPI_Count n, const char *arg)
{
    if (umpi_likely(p != NULL) || n == 0)
        return MPI_SUCCESS;
    return umpi_err_create(MPI_ERR_ARG, "argument '%s' is NULL with %ld entries", arg, (long) n);
}

/* A status the call reads or updates: MPI_STATUS_IGNORE holds nothing to read. */
static inline int umpi_check_status(const MPI_Status *s, const char *arg)
{
    if (umpi_likely(s != NULL && s != MPI_STATUS_IGNORE))
        return MPI_SUCCESS;
    return umpi_err_create(MPI_ERR_ARG, "argument '%s' is %s", arg,
                           s == NULL ? "NULL" : "MPI_STATUS_IGNORE");
}

/* MPICH reports bad error handlers as MPI_ERR_ARG; we keep its classes. */
static inline int umpi_check_errhandler(MPI_Errhandler eh, const char *arg)
{
    if (umpi_likely(umpi_errhandler_get(eh) != NULL))
        return MPI_SUCCESS;
    if (eh == MPI_ERRHANDLER_NULL)
        return umpi_err_create(MPI_ERR_ARG, "MPI_ERRHANDLER_NULL in argument '%s'", arg);
    return umpi_err_create(MPI_ERR_ARG, "invalid error handler 0x%x in argument '%s'",
                           (unsigned) eh, arg);
}

static inline int umpi_check_op(MPI_Op op, const char *arg)
{
    if (umpi_likely(umpi_op_get(op) != NULL))
        return MPI_SUCCESS;
    if (op == MPI_OP_NULL)
        return umpi_err_create(MPI_ERR_OP, "MPI_OP_NULL in argument '%s'", arg);
    return umpi_err_create(MPI_ERR_OP, "invalid operation 0x%x in argument '%s'", (unsigned) op, arg);
}

static inline int umpi_check_thread_level(int level, const char *arg)
{
    if (umpi_likely(level >= MPI_THREAD_SINGLE && level <= MPI_THREAD_MULTIPLE))
        return MPI_SUCCESS;
    return umpi_err_create(MPI_ERR_ARG, "invalid thread level %d in argument '%s'", level, arg);
}

/* An info object; MPI_INFO_NULL where the call takes it as "no hints". */
static inline int umpi_check_info(MPI_Info info, int null_ok, const char *arg)
{
    if (umpi_likely(umpi_info_get(info) != NULL) || (null_ok && info == MPI_INFO_NULL))
        return MPI_SUCCESS;
    if (info == MPI_INFO_NULL)
        return umpi_err_create(MPI_ERR_INFO, "MPI_INFO_NULL in argument '%s'", arg);
    return umpi_err_create(MPI_ERR_INFO, "invalid info 0x%x in argument '%s'", (unsigned) info, arg);
}

/* An output count of the int binding: values beyond int become MPI_UNDEFINED (MPI-4.0 sec. 3.2.5). */
static inline int umpi_count_to_int(MPI_Count c)
{
    return (c >= INT_MIN && c <= INT_MAX) ? (int) c : MPI_UNDEFINED;
}

/* The generator passes MPI_Aint and MPI_Count arrays and pointers for each other. */
_Static_assert(sizeof(MPI_Aint) == sizeof(MPI_Count), "MPI_Aint and MPI_Count differ in width");

/* The entries of a collective's per-process array: one per process of the group it addresses. */
static inline MPI_Count umpi_check_peers(const umpi_comm_t *comm)
{
    return comm->is_inter ? comm->remote_size : comm->size;
}

/* Whether this process is the root of a rooted collective (arguments significant at the root only). */
static inline int umpi_check_at_root(int root, const umpi_comm_t *comm)
{
    return comm->is_inter ? root == MPI_ROOT : root == comm->rank;
}

/* An int array of the classic binding widened for the implementation's large-count signature
 * (the caller frees *out); a NULL array (allowed where the argument
 * is not significant) widens to NULL. */
static inline int umpi_widen_array(const int *in, MPI_Count n, MPI_Count **out, const char *arg)
{
    if (in == NULL) {
        *out = NULL;
        return MPI_SUCCESS;
    }
    *out = malloc((size_t) (n > 0 ? n : 1) * sizeof(MPI_Count));
    if (*out == NULL)
        return umpi_err_create(MPI_ERR_NO_MEM, "out of memory widening argument '%s' (%ld entries)",
                               arg, (long) n);
    for (MPI_Count i = 0; i < n; i++)
        (*out)[i] = in[i];
    return MPI_SUCCESS;
}

/* Lengths of array arguments the standard leaves open (bindings.def's len= directive): the
 * numbers of in- and out-neighbours of a communicator's process topology (0 without one; the
 * call then reports MPI_ERR_TOPOLOGY). */
static inline MPI_Count umpi_len_indegree(const umpi_comm_t *c)
{
    return umpi_topo_degree(c, 0);
}
static inline MPI_Count umpi_len_outdegree(const umpi_comm_t *c)
{
    return umpi_topo_degree(c, 1);
}

#endif /* UMPI_CHECK_H */
