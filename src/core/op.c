/*
 * MPI_Op objects: the predefined ops, user ops (MPI_Op_create/_c, MPI_Op_free), the check of an
 * (op, datatype) pair, and umpi_op_apply, which every reduction goes through (umpi_op.h).
 */
#include "core/umpi_err.h"
#include "core/umpi_op.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#if __has_include("mpi/gen/umpi_impl.h")
#include "mpi/gen/umpi_impl.h"
#endif

/* ---- objects ------------------------------------------------------------------------------------- */

#define UMPI__OP(name, commute) [UMPI_OP_##name] = { MPI_##name, UMPI_OP_##name, commute, 0, {NULL}, 1 }
/* MPI_REPLACE and MPI_NO_OP are not commutative (the order of accumulates matters), as MPICH says. */
umpi_op_t umpi_op_builtin[UMPI_OP_NBUILTIN] = {
    UMPI__OP(MAX, 1), UMPI__OP(MIN, 1), UMPI__OP(SUM, 1), UMPI__OP(PROD, 1), UMPI__OP(LAND, 1),
    UMPI__OP(BAND, 1), UMPI__OP(LOR, 1), UMPI__OP(BOR, 1), UMPI__OP(LXOR, 1), UMPI__OP(BXOR, 1),
    UMPI__OP(MINLOC, 1), UMPI__OP(MAXLOC, 1), UMPI__OP(REPLACE, 0), UMPI__OP(NO_OP, 0),
};
_Static_assert(UMPI_HANDLE_INDEX(MPI_MAX) == UMPI_OP_MAX && UMPI_HANDLE_INDEX(MPI_NO_OP) == UMPI_OP_NO_OP &&
               UMPI_HANDLE_KIND(MPI_SUM) == UMPI_KIND_BUILTIN && UMPI_HANDLE_OBJ(MPI_SUM) == UMPI_OBJ_OP,
               "predefined ops: the enum follows MPICH's handle values");

static const char *const umpi__op_names[UMPI_OP_NBUILTIN] = {
    [UMPI_OP_MAX] = "MPI_MAX", [UMPI_OP_MIN] = "MPI_MIN", [UMPI_OP_SUM] = "MPI_SUM",
    [UMPI_OP_PROD] = "MPI_PROD", [UMPI_OP_LAND] = "MPI_LAND", [UMPI_OP_BAND] = "MPI_BAND",
    [UMPI_OP_LOR] = "MPI_LOR", [UMPI_OP_BOR] = "MPI_BOR", [UMPI_OP_LXOR] = "MPI_LXOR",
    [UMPI_OP_BXOR] = "MPI_BXOR", [UMPI_OP_MINLOC] = "MPI_MINLOC", [UMPI_OP_MAXLOC] = "MPI_MAXLOC",
    [UMPI_OP_REPLACE] = "MPI_REPLACE", [UMPI_OP_NO_OP] = "MPI_NO_OP",
};

/* User ops: direct handles, any index (MPI_OP_NULL is kind 0, so index 0 is fine). */
struct umpi_handle_table umpi_op_table = {.lock = PTHREAD_MUTEX_INITIALIZER, .first_dynamic = 0};

void umpi_op_retain(umpi_op_t *op)
{
    if (op->kind == UMPI_OP_USER)
        __atomic_add_fetch(&op->refcount, 1, __ATOMIC_RELAXED);
}

void umpi_op_release(umpi_op_t *op)
{
    if (op->kind != UMPI_OP_USER || __atomic_sub_fetch(&op->refcount, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    umpi_debug(2, "op 0x%x freed", (unsigned) op->handle);
    umpi_ht_remove(&umpi_op_table, UMPI_HANDLE_INDEX(op->handle));
    free(op);
}

/* ---- which ops a datatype has --------------------------------------------------------------------- */

/*
 * The one predefined type that every basic element of dt is, or NULL when there are several. A
 * derived type of one predefined type (a vector of MPI_DOUBLE, a contiguous of MPI_DOUBLE_INT) is
 * reduced as that type, element by element of its packed stream; size-0 parts (markers, empty
 * blocks) carry no elements and do not count.
 */
const umpi_dtype_t *umpi_op_leaf(const umpi_dtype_t *dt)
{
    if (dt->builtin)
        return dt;
    if (dt->shadow != NULL)
        return umpi_op_leaf(dt->shadow);
    const umpi_dtype_t *leaf = NULL;
    for (int i = 0; i < dt->nkids; i++) {
        const umpi_dt_kid_t *kid = &dt->kids[i];
        if (kid->reps == 0 || kid->type->size == 0)
            continue;
        const umpi_dtype_t *l = umpi_op_leaf(kid->type);
        if (l == NULL || (leaf != NULL && l != leaf))
            return NULL;
        leaf = l;
    }
    return leaf;
}

static const char *umpi__op_name(const umpi_op_t *op)
{
    return op->kind < UMPI_OP_NBUILTIN ? umpi__op_names[op->kind] : "a user operation";
}

static int umpi__undefined(const umpi_op_t *op, const umpi_dtype_t *dt, const char *ctx, const char *why)
{
    if (dt->builtin)
        return umpi_err_create(MPI_ERR_OP, "operation %s in argument '%s' is not defined on datatype %s%s",
                               umpi__op_name(op), ctx, dt->name, why);
    return umpi_err_create(MPI_ERR_OP, "operation %s in argument '%s' is not defined on datatype 0x%x%s%s%s%s",
                           umpi__op_name(op), ctx, (unsigned) dt->handle,
                           dt->user_name[0] ? " (" : "", dt->user_name, dt->user_name[0] ? ")" : "", why);
}

static int umpi__check_predefined(const umpi_op_t *op, const umpi_dtype_t *dt, const char *ctx)
{
    if (dt->size == 0)
        return MPI_SUCCESS;     /* no data: nothing to combine */
    const umpi_dtype_t *leaf = umpi_op_leaf(dt);
    if (leaf == NULL)
        return umpi_err_create(MPI_ERR_OP, "operation %s in argument '%s' needs a datatype whose basic "
                               "elements are all of one predefined type; datatype 0x%x mixes several",
                               umpi__op_name(op), ctx, (unsigned) dt->handle);
    if (umpi_op_kernel(op->kind, leaf) != NULL)
        return MPI_SUCCESS;
    if (leaf != dt)
        return umpi_err_create(MPI_ERR_OP, "operation %s in argument '%s' is not defined on %s, the "
                               "basic type of datatype 0x%x", umpi__op_name(op), ctx, leaf->name,
                               (unsigned) dt->handle);
    return umpi__undefined(op, dt, ctx, "");
}

int umpi_op_check(const umpi_op_t *op, const umpi_dtype_t *dt, const char *call_arg_context)
{
    if (op->kind == UMPI_OP_USER)
        return MPI_SUCCESS;
    if (umpi_unlikely(op->kind == UMPI_OP_REPLACE || op->kind == UMPI_OP_NO_OP))
        return umpi__undefined(op, dt, call_arg_context, " (it is valid only in accumulate operations)");
    if (umpi_likely(dt->builtin) && umpi_op_kernel(op->kind, dt) != NULL)
        return MPI_SUCCESS;
    return umpi__check_predefined(op, dt, call_arg_context);
}

int umpi_op_check_accumulate(const umpi_op_t *op, const umpi_dtype_t *dt, const char *call_arg_context)
{
    if (op->kind == UMPI_OP_REPLACE || op->kind == UMPI_OP_NO_OP)
        return MPI_SUCCESS;
    return umpi_op_check(op, dt, call_arg_context);
}

/* ---- applying an op ------------------------------------------------------------------------------- */

static void umpi__apply_user(const umpi_op_t *op, const void *in, void *inout, MPI_Count count,
                             const umpi_dtype_t *dt)
{
    MPI_Datatype h = dt->handle;
    if (op->large) {
        MPI_Count c = count;
        op->user.fn_c((void *) in, inout, &c, &h);
        return;
    }
    /* MPI_User_function takes an int count: larger counts go in pieces. */
    while (count > 0) {
        int c = count > INT_MAX ? INT_MAX : (int) count;
        op->user.fn((void *) in, inout, &c, &h);
        in = (const char *) in + (MPI_Count) c * dt->extent;
        inout = (char *) inout + (MPI_Count) c * dt->extent;
        count -= c;
    }
}

/* A derived type: its packed stream is a run of leaf elements (packed, for pair types), reduced a
 * chunk at a time through two stack buffers. */
#define UMPI__CHUNK 8192
static void umpi__apply_derived(const umpi_op_t *op, const void *in, void *inout, MPI_Count count,
                                umpi_dtype_t *dt)
{
    MPI_Count total = count * dt->size;
    if (total == 0 || op->kind == UMPI_OP_NO_OP)
        return;
    const umpi_dtype_t *leaf = op->kind == UMPI_OP_REPLACE ? NULL : umpi_op_leaf(dt);
    umpi_op_kernel_t *k = leaf ? umpi_op_kernel_packed(op->kind, leaf) : NULL;
    if (k == NULL && op->kind != UMPI_OP_REPLACE)
        return;     /* a pair umpi_op_check refuses: inout stays */
    if (k != NULL && dt->contig) {
        k((const char *) in + dt->true_lb, (char *) inout + dt->true_lb, (size_t) (total / leaf->size));
        return;
    }
    _Alignas(64) char a[UMPI__CHUNK], b[UMPI__CHUNK];
    MPI_Count step = leaf ? UMPI__CHUNK / leaf->size * leaf->size : UMPI__CHUNK;
    for (MPI_Count off = 0; off < total; off += step) {
        MPI_Count len = total - off < step ? total - off : step;
        umpi_dtype_pack_range(dt, in, count, off, a, len);
        if (k != NULL) {
            umpi_dtype_pack_range(dt, inout, count, off, b, len);
            k(a, b, (size_t) (len / leaf->size));
        }
        umpi_dtype_unpack_range(dt, inout, count, off, k != NULL ? b : a, len);
    }
}

void umpi_op_apply(const umpi_op_t *op, const void *in, void *inout, MPI_Count count, umpi_dtype_t *dt)
{
    if (umpi_likely(dt->builtin && op->kind < UMPI_OP_NBUILTIN)) {
        umpi_op_kernel_t *k = umpi_op_kernel(op->kind, dt);
        if (umpi_likely(k != NULL))
            k(in, inout, (size_t) count);
        else if (op->kind == UMPI_OP_REPLACE)
            memcpy(inout, in, (size_t) (count * dt->extent));
        /* MPI_NO_OP, or a pair umpi_op_check refused: inout stays */
        return;
    }
    if (op->kind == UMPI_OP_USER)
        umpi__apply_user(op, in, inout, count, dt);
    else
        umpi__apply_derived(op, in, inout, count, dt);
}

/* ---- MPI functions -------------------------------------------------------------------------------- */

#ifdef UMPI_IMPL_H
int umpi_impl_op_create(MPI_User_function_c *user_fn, int commute, MPI_Op *op, int large)
{
    umpi_op_t *o = malloc(sizeof(*o));
    if (o == NULL)
        return umpi_err_create(MPI_ERR_NO_MEM, "cannot allocate an operation");
    o->kind = UMPI_OP_USER;
    o->commute = commute != 0;
    o->large = large;
    if (large)
        o->user.fn_c = user_fn;
    else
        o->user.fn = (MPI_User_function *) user_fn;   /* the binding passed it cast: cast it back */
    o->refcount = 1;
    int idx = umpi_ht_insert(&umpi_op_table, o);
    if (idx < 0) {
        free(o);
        return umpi_err_from_status(UMPI_ERR_NOMEM, "cannot register an operation");
    }
    o->handle = UMPI_HANDLE_MAKE(UMPI_KIND_DIRECT, UMPI_OBJ_OP, idx);
    *op = o->handle;
    umpi_debug(2, "op 0x%x created (%scommutative%s)", (unsigned) o->handle, commute ? "" : "non-",
               large ? ", large count" : "");
    return MPI_SUCCESS;
}

int umpi_impl_op_free(MPI_Op *op)
{
    umpi_op_t *o = umpi_op_get(*op);
    if (o == NULL && *op == MPI_OP_NULL)
        return umpi_err_create(MPI_ERR_OP, "MPI_OP_NULL in argument 'op'");
    if (o == NULL)
        return umpi_err_create(MPI_ERR_OP, "invalid operation 0x%x in argument 'op'", (unsigned) *op);
    if (o->kind != UMPI_OP_USER)
        return umpi_err_create(MPI_ERR_OP, "predefined operation %s in argument 'op' cannot be freed",
                               umpi__op_name(o));
    *op = MPI_OP_NULL;
    umpi_op_release(o);     /* pending operations may still hold it */
    return MPI_SUCCESS;
}

int umpi_impl_op_commutative(MPI_Op op, int *commute)
{
    *commute = umpi_op_get(op)->commute;   /* the binding checked op */
    return MPI_SUCCESS;
}
#endif
