/*
 * Reduction operations: the contract between the collectives (and later RMA accumulate) and the
 * MPI_Op objects.
 *
 * Predefined ops are static objects whose index is the low bits of MPICH's handle (MPI_MAX = 1 ...
 * MPI_NO_OP = 14); user ops (MPI_Op_create) are direct objects of a handle table, reference-counted
 * so that a nonblocking collective keeps a freed op alive until it completes. The arithmetic lives
 * in op_kernels.c: one kernel per (op, C type), generated from one enumeration, looked up by the
 * datatype's handle.
 */
#ifndef UMPI_OP_H
#define UMPI_OP_H

#include "core/umpi.h"
#include "core/umpi_obj.h"

#include <stddef.h>

/* Predefined ops, numbered as the low bits of their handles (include/mpi.h). */
enum {
    UMPI_OP_MAX = 1, UMPI_OP_MIN, UMPI_OP_SUM, UMPI_OP_PROD, UMPI_OP_LAND, UMPI_OP_BAND, UMPI_OP_LOR,
    UMPI_OP_BOR, UMPI_OP_LXOR, UMPI_OP_BXOR, UMPI_OP_MINLOC, UMPI_OP_MAXLOC, UMPI_OP_REPLACE,
    UMPI_OP_NO_OP,
    UMPI_OP_NBUILTIN,         /* one past the last predefined op */
    UMPI_OP_USER = UMPI_OP_NBUILTIN,
};

typedef struct umpi_op umpi_op_t;       /* predefined ops are static objects, user ops from a handle table */
struct umpi_op {
    MPI_Op handle;
    int kind;                 /* UMPI_OP_* */
    int commute;
    int large;                /* user function is MPI_User_function_c (MPI_Op_create_c) */
    union {
        MPI_User_function *fn;
        MPI_User_function_c *fn_c;
    } user;
    int refcount;             /* user ops: the handle (until MPI_Op_free) + pending operations */
};

extern umpi_op_t umpi_op_builtin[UMPI_OP_NBUILTIN];
extern struct umpi_handle_table umpi_op_table;

/* NULL if h is not a valid op (MPI_OP_NULL included). */
static inline umpi_op_t *umpi_op_get(MPI_Op h)
{
    uint32_t idx = UMPI_HANDLE_INDEX(h);
    if (umpi_unlikely(UMPI_HANDLE_OBJ(h) != UMPI_OBJ_OP))
        return NULL;
    if (umpi_likely(UMPI_HANDLE_KIND(h) == UMPI_KIND_BUILTIN))
        return idx >= 1 && idx < UMPI_OP_NBUILTIN ? &umpi_op_builtin[idx] : NULL;
    if (UMPI_HANDLE_KIND(h) != UMPI_KIND_DIRECT)
        return NULL;
    return (umpi_op_t *) umpi_ht_get(&umpi_op_table, idx);
}

static inline int umpi_op_is_commutative(const umpi_op_t *op)
{
    return op->commute;
}

/*
 * MPI_SUCCESS, or an MPI_ERR_OP code naming op, datatype and call_arg_context (say "MPI_Reduce")
 * when op is not defined on dt. Predefined ops are defined on the standard's type classes (plus
 * MPI_CHAR as a C integer and Fortran integers for the logical ops, as MPICH) and on derived types
 * whose basic elements all are one such type; user ops on every type. MPI_REPLACE and MPI_NO_OP
 * are accumulate-only: rejected here, accepted by umpi_op_check_accumulate.
 */
int umpi_op_check(const umpi_op_t *op, const umpi_dtype_t *dt, const char *call_arg_context);
/* The same for MPI_Accumulate and friends: MPI_REPLACE and MPI_NO_OP on any datatype too. */
int umpi_op_check_accumulate(const umpi_op_t *op, const umpi_dtype_t *dt, const char *call_arg_context);

/*
 * inout[i] = in[i] op inout[i] for count elements of dt, laid out by dt's extent (in is the earlier
 * rank's data for non-commutative ops, as MPI_Reduce_local(inbuf, inoutbuf) defines). dt must
 * have passed umpi_op_check (and be committed when derived). Contiguous predefined types cost one
 * table lookup and the kernel; derived types go through the pack engine in small chunks.
 */
void umpi_op_apply(const umpi_op_t *op, const void *in, void *inout, MPI_Count count, umpi_dtype_t *dt);

/* The one predefined type every basic element of dt is (dt itself when predefined), NULL when dt
 * mixes several: the type a predefined op reduces a derived type as, element by element of its
 * packed stream. Size-0 parts carry no elements and do not count. */
const umpi_dtype_t *umpi_op_leaf(const umpi_dtype_t *dt);

/* Nonblocking collectives hold ops: a freed user op lives until its last release. No-ops on
 * predefined ops. */
void umpi_op_retain(umpi_op_t *op);
void umpi_op_release(umpi_op_t *op);

/* ---- kernels (op_kernels.c) ---- */

/* inout[i] = in[i] op inout[i] for n elements of one predefined type laid out naturally. */
typedef void umpi_op_kernel_t(const void *restrict in, void *restrict inout, size_t n);

/* The kernel of a predefined op on a predefined datatype, or NULL where the op is not defined. */
umpi_op_kernel_t *umpi_op_kernel(int kind, const umpi_dtype_t *dt);
/* The same for the packed form of a pair type (no padding between value and index, as the pack
 * engine lays out MPI_DOUBLE_INT & co. of a derived type); for other types umpi_op_kernel. */
umpi_op_kernel_t *umpi_op_kernel_packed(int kind, const umpi_dtype_t *dt);

#endif /* UMPI_OP_H */
