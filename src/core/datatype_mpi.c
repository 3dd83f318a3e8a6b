/*
 * The MPI datatype functions: constructors, commit/free, envelope/contents, size and extent
 * queries, names, MPI_Type_match_size, MPI_Get_address, MPI_Pack/Unpack/Pack_size.
 *
 * The bindings pass every count and displacement in the large-count form (the classic ones are
 * widened); constructors check what the generated checks cannot (array entries, subarray shape)
 * and hand the arguments to umpi_dtype_create() in its normalized layout (datatype_type.c).
 */
#include "core/umpi_attr.h"
#include "core/umpi_err.h"
#include "core/umpi_obj.h"
#include "mpi/gen/umpi_impl.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Compiling fills in the ops of a type and, on demand, of the types it is built from, which other
 * types (committed by other threads) may share: one compile at a time. */
static pthread_mutex_t umpi__compile_lock = PTHREAD_MUTEX_INITIALIZER;

static umpi_status_t umpi__compile(umpi_dtype_t *dt)
{
    pthread_mutex_lock(&umpi__compile_lock);
    umpi_status_t st = umpi_dtype_compile(dt);
    pthread_mutex_unlock(&umpi__compile_lock);
    return st;
}

static int umpi__nomem(const char *what)
{
    return umpi_err_create(MPI_ERR_NO_MEM, "out of memory creating a %s datatype", what);
}

static int umpi__negative(const char *arg, MPI_Count i, MPI_Count v)
{
    return umpi_err_create(MPI_ERR_ARG, "negative block length %ld in argument '%s[%ld]'", (long) v, arg,
                           (long) i);
}

/* large: made by MPI_X_c, whose arguments MPI_Type_get_contents gives back as large counts */
static int umpi__make(int combiner, const MPI_Count *counts, MPI_Count n, const int *ints, int ni,
                      umpi_dtype_t *const *types, int nt, MPI_Datatype *newtype, const char *what, int large)
{
    umpi_dtype_t *dt;
    if (umpi_dtype_create(combiner, counts, n, ints, ni, types, nt, &dt) != UMPI_OK)
        return umpi__nomem(what);
    dt->large |= large;
    *newtype = dt->handle;
    return MPI_SUCCESS;
}

/* count, then the entries of up to two arrays of n: the layout of the indexed family. */
static int umpi__make_arrays(int combiner, MPI_Count first, MPI_Count second_scalar, int has_scalar,
                             MPI_Count n, const MPI_Count *a, const MPI_Count *b, umpi_dtype_t *old,
                             MPI_Datatype *newtype, const char *what, int large)
{
    MPI_Count len = 1 + has_scalar + (a ? n : 0) + n;
    MPI_Count *c = malloc((size_t) len * sizeof(*c)), k = 0;
    if (c == NULL)
        return umpi__nomem(what);
    c[k++] = first;
    if (has_scalar)
        c[k++] = second_scalar;
    for (MPI_Count i = 0; a && i < n; i++)
        c[k++] = a[i];
    for (MPI_Count i = 0; i < n; i++)
        c[k++] = b[i];
    int err = umpi__make(combiner, c, len, NULL, 0, &old, 1, newtype, what, large);
    free(c);
    return err;
}

static int umpi__check_blocklengths(const MPI_Count *bl, MPI_Count n)
{
    for (MPI_Count i = 0; i < n; i++)
        if (bl[i] < 0)
            return umpi__negative("array_of_blocklengths", i, bl[i]);
    return MPI_SUCCESS;
}

int umpi_impl_type_contiguous(MPI_Count count, umpi_dtype_t *oldtype_ptr, MPI_Datatype *newtype, int large)
{
    MPI_Count c[1] = {count};
    return umpi__make(MPI_COMBINER_CONTIGUOUS, c, 1, NULL, 0, &oldtype_ptr, 1, newtype, "contiguous", large);
}

int umpi_impl_type_vector(MPI_Count count, MPI_Count blocklength, MPI_Count stride, umpi_dtype_t *oldtype_ptr,
                          MPI_Datatype *newtype, int large)
{
    MPI_Count c[3] = {count, blocklength, stride};
    return umpi__make(MPI_COMBINER_VECTOR, c, 3, NULL, 0, &oldtype_ptr, 1, newtype, "vector", large);
}

int umpi_impl_type_create_hvector(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                                  umpi_dtype_t *oldtype_ptr, MPI_Datatype *newtype, int large)
{
    MPI_Count c[3] = {count, blocklength, stride};
    return umpi__make(MPI_COMBINER_HVECTOR, c, 3, NULL, 0, &oldtype_ptr, 1, newtype, "hvector", large);
}

int umpi_impl_type_indexed(MPI_Count count, const MPI_Count array_of_blocklengths[],
                           const MPI_Count array_of_displacements[], umpi_dtype_t *oldtype_ptr,
                           MPI_Datatype *newtype, int large)
{
    int err = umpi__check_blocklengths(array_of_blocklengths, count);
    if (err != MPI_SUCCESS)
        return err;
    return umpi__make_arrays(MPI_COMBINER_INDEXED, count, 0, 0, count, array_of_blocklengths,
                             array_of_displacements, oldtype_ptr, newtype, "indexed", large);
}

int umpi_impl_type_create_hindexed(MPI_Count count, const MPI_Count array_of_blocklengths[],
                                   const MPI_Count array_of_displacements[], umpi_dtype_t *oldtype_ptr,
                                   MPI_Datatype *newtype, int large)
{
    int err = umpi__check_blocklengths(array_of_blocklengths, count);
    if (err != MPI_SUCCESS)
        return err;
    return umpi__make_arrays(MPI_COMBINER_HINDEXED, count, 0, 0, count, array_of_blocklengths,
                             array_of_displacements, oldtype_ptr, newtype, "hindexed", large);
}

int umpi_impl_type_create_indexed_block(MPI_Count count, MPI_Count blocklength,
                                        const MPI_Count array_of_displacements[], umpi_dtype_t *oldtype_ptr,
                                        MPI_Datatype *newtype, int large)
{
    return umpi__make_arrays(MPI_COMBINER_INDEXED_BLOCK, count, blocklength, 1, count, NULL,
                             array_of_displacements, oldtype_ptr, newtype, "indexed block", large);
}

int umpi_impl_type_create_hindexed_block(MPI_Count count, MPI_Count blocklength,
                                         const MPI_Count array_of_displacements[], umpi_dtype_t *oldtype_ptr,
                                         MPI_Datatype *newtype, int large)
{
    return umpi__make_arrays(MPI_COMBINER_HINDEXED_BLOCK, count, blocklength, 1, count, NULL,
                             array_of_displacements, oldtype_ptr, newtype, "hindexed block", large);
}

int umpi_impl_type_create_struct(MPI_Count count, const MPI_Count array_of_blocklengths[],
                                 const MPI_Count array_of_displacements[], const MPI_Datatype array_of_types[],
                                 MPI_Datatype *newtype, int large)
{
    int err = umpi__check_blocklengths(array_of_blocklengths, count);
    if (err != MPI_SUCCESS)
        return err;
    umpi_dtype_t **types = malloc((size_t) (count ? count : 1) * sizeof(*types));
    MPI_Count *c = malloc((size_t) (1 + 2 * count) * sizeof(*c));
    if (types == NULL || c == NULL) {
        err = umpi__nomem("struct");
        goto out;
    }
    for (MPI_Count i = 0; i < count; i++) {
        types[i] = umpi_dtype_get(array_of_types[i]);
        if (types[i] == NULL) {
            err = umpi_err_create(MPI_ERR_TYPE, "invalid datatype 0x%x in argument 'array_of_types[%ld]'",
                                  (unsigned) array_of_types[i], (long) i);
            goto out;
        }
        c[1 + i] = array_of_blocklengths[i];
        c[1 + count + i] = array_of_displacements[i];
    }
    c[0] = count;
    err = umpi__make(MPI_COMBINER_STRUCT, c, 1 + 2 * count, NULL, 0, types, (int) count, newtype, "struct", large);
out:
    free(types);
    free(c);
    return err;
}

int umpi_impl_type_create_subarray(int ndims, const MPI_Count array_of_sizes[], const MPI_Count array_of_subsizes[],
                                   const MPI_Count array_of_starts[], int order, umpi_dtype_t *oldtype_ptr,
                                   MPI_Datatype *newtype, int large)
{
    if (ndims <= 0)
        return umpi_err_create(MPI_ERR_ARG, "invalid ndims %d in argument 'ndims' (must be positive)", ndims);
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return umpi_err_create(MPI_ERR_ARG, "invalid order %d in argument 'order'", order);
    for (int d = 0; d < ndims; d++) {
        if (array_of_sizes[d] <= 0)
            return umpi_err_create(MPI_ERR_ARG, "size %ld in argument 'array_of_sizes[%d]' is not positive",
                                   (long) array_of_sizes[d], d);
        if (array_of_subsizes[d] <= 0 || array_of_subsizes[d] > array_of_sizes[d])
            return umpi_err_create(MPI_ERR_ARG, "subsize %ld in argument 'array_of_subsizes[%d]' not in 1..%ld",
                                   (long) array_of_subsizes[d], d, (long) array_of_sizes[d]);
        if (array_of_starts[d] < 0 || array_of_starts[d] + array_of_subsizes[d] > array_of_sizes[d])
            return umpi_err_create(MPI_ERR_ARG,
                                   "start %ld in argument 'array_of_starts[%d]' puts the subarray (size %ld) "
                                   "outside the array (size %ld)", (long) array_of_starts[d], d,
                                   (long) array_of_subsizes[d], (long) array_of_sizes[d]);
    }
    MPI_Count *c = malloc((size_t) (3 * ndims) * sizeof(*c));
    if (c == NULL)
        return umpi__nomem("subarray");
    memcpy(c, array_of_sizes, (size_t) ndims * sizeof(*c));
    memcpy(c + ndims, array_of_subsizes, (size_t) ndims * sizeof(*c));
    memcpy(c + 2 * ndims, array_of_starts, (size_t) ndims * sizeof(*c));
    int ints[2] = {ndims, order};
    int err = umpi__make(MPI_COMBINER_SUBARRAY, c, 3 * ndims, ints, 2, &oldtype_ptr, 1, newtype, "subarray", large);
    free(c);
    return err;
}

/* The indices of dimension d that process coordinate r owns: blocks (start, length). */
static MPI_Count umpi__darray_blocks(MPI_Count g, int distrib, int darg, int p, int r, MPI_Count *start,
                                     MPI_Count *len)
{
    if (distrib == MPI_DISTRIBUTE_NONE) {
        start[0] = 0, len[0] = g;
        return g > 0;
    }
    MPI_Count b = distrib == MPI_DISTRIBUTE_BLOCK ? (darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : darg)
                                                  : (darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg);
    MPI_Count n = 0;
    for (MPI_Count s = (MPI_Count) r * b; s < g; s += (MPI_Count) p * b) {
        start[n] = s;
        len[n++] = s + b <= g ? b : g - s;
        if (distrib == MPI_DISTRIBUTE_BLOCK)
            break;
    }
    return n;
}

/*
 * The data of a darray as a tree of hindexed types, fastest dimension innermost: level d lists the
 * indices this process owns along dimension d at their byte offsets in the global array.
 */
static int umpi__darray_shadow(int rank, int ndims, const MPI_Count *gsizes, const int *distribs, const int *dargs,
                               const int *psizes, int order, umpi_dtype_t *old, umpi_dtype_t **out)
{
    int coords[ndims], err = MPI_SUCCESS;
    for (int d = ndims - 1, r = rank; d >= 0; d--) { /* the process grid is row-major */
        coords[d] = r % psizes[d];
        r /= psizes[d];
    }
    umpi_dtype_t *cur = old;
    umpi_dtype_retain(old);
    MPI_Aint stride = old->extent;
    for (int i = 0; i < ndims && err == MPI_SUCCESS; i++) {
        int d = order == MPI_ORDER_C ? ndims - 1 - i : i;
        MPI_Count g = gsizes[d];
        MPI_Count *start = malloc((size_t) g * sizeof(MPI_Count)), *len = malloc((size_t) g * sizeof(MPI_Count));
        MPI_Count *c = malloc((size_t) (1 + 2 * g) * sizeof(MPI_Count));
        if (start == NULL || len == NULL || c == NULL) {
            err = umpi__nomem("darray");
        } else {
            /* c = [n, 1 x n, byte displacement of each owned index] */
            MPI_Count nb = umpi__darray_blocks(g, distribs[d], dargs[d], psizes[d], coords[d], start, len), n = 0;
            for (MPI_Count k = 0; k < nb; k++)
                n += len[k];
            c[0] = n;
            for (MPI_Count k = 0, at = 0; k < nb; k++)
                for (MPI_Count j = 0; j < len[k]; j++, at++) {
                    c[1 + at] = 1;
                    c[1 + n + at] = (start[k] + j) * stride;
                }
            MPI_Count total = n;
            umpi_dtype_t *next;
            if (umpi_dtype_create(MPI_COMBINER_HINDEXED, c, 1 + 2 * total, NULL, 0, &cur, 1, &next) != UMPI_OK)
                err = umpi__nomem("darray");
            else {
                umpi_dtype_release(cur);
                cur = next;
            }
        }
        free(start), free(len), free(c);
        stride *= g;
    }
    if (err != MPI_SUCCESS) {
        umpi_dtype_release(cur);
        return err;
    }
    *out = cur;
    return MPI_SUCCESS;
}

int umpi_impl_type_create_darray(int size, int rank, int ndims, const MPI_Count array_of_gsizes[],
                                 const int array_of_distribs[], const int array_of_dargs[], const int array_of_psizes[],
                                 int order, umpi_dtype_t *oldtype_ptr, MPI_Datatype *newtype, int large)
{
    if (size <= 0)
        return umpi_err_create(MPI_ERR_ARG, "invalid size %d in argument 'size'", size);
    if (rank < 0 || rank >= size)
        return umpi_err_create(MPI_ERR_RANK, "invalid rank %d in argument 'rank' (size %d)", rank, size);
    if (ndims <= 0)
        return umpi_err_create(MPI_ERR_ARG, "invalid ndims %d in argument 'ndims' (must be positive)", ndims);
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return umpi_err_create(MPI_ERR_ARG, "invalid order %d in argument 'order'", order);
    MPI_Count grid = 1;
    for (int d = 0; d < ndims; d++) {
        MPI_Count g = array_of_gsizes[d];
        int dist = array_of_distribs[d], darg = array_of_dargs[d], p = array_of_psizes[d];
        if (g <= 0)
            return umpi_err_create(MPI_ERR_ARG, "size %ld in argument 'array_of_gsizes[%d]' is not positive", (long) g, d);
        if (p <= 0)
            return umpi_err_create(MPI_ERR_ARG, "process grid size %d in argument 'array_of_psizes[%d]' is not positive",
                                   p, d);
        if (dist != MPI_DISTRIBUTE_BLOCK && dist != MPI_DISTRIBUTE_CYCLIC && dist != MPI_DISTRIBUTE_NONE)
            return umpi_err_create(MPI_ERR_ARG, "invalid distribution %d in argument 'array_of_distribs[%d]'", dist, d);
        if (dist == MPI_DISTRIBUTE_NONE && p != 1)
            return umpi_err_create(MPI_ERR_ARG, "dimension %d is not distributed but has %d processes "
                                   "(array_of_psizes[%d] must be 1)", d, p, d);
        if (darg != MPI_DISTRIBUTE_DFLT_DARG && dist != MPI_DISTRIBUTE_NONE &&
            (darg <= 0 || (dist == MPI_DISTRIBUTE_BLOCK && (MPI_Count) darg * p < g)))
            return umpi_err_create(MPI_ERR_ARG, "invalid distribution argument %d in 'array_of_dargs[%d]' "
                                   "(size %ld over %d processes)", darg, d, (long) g, p);
        grid *= p;
    }
    if (grid != size)
        return umpi_err_create(MPI_ERR_ARG, "the process grid has %ld processes, argument 'size' says %d",
                               (long) grid, size);
    umpi_dtype_t *shadow, *dt;
    int err = umpi__darray_shadow(rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs, array_of_psizes,
                                  order, oldtype_ptr, &shadow);
    if (err != MPI_SUCCESS)
        return err;
    int *ints = malloc((size_t) (3 * ndims + 4) * sizeof(int));
    if (ints == NULL) {
        umpi_dtype_release(shadow);
        return umpi__nomem("darray");
    }
    ints[0] = size, ints[1] = rank, ints[2] = ndims;
    memcpy(ints + 3, array_of_distribs, (size_t) ndims * sizeof(int));
    memcpy(ints + 3 + ndims, array_of_dargs, (size_t) ndims * sizeof(int));
    memcpy(ints + 3 + 2 * ndims, array_of_psizes, (size_t) ndims * sizeof(int));
    ints[3 + 3 * ndims] = order;
    if (umpi_dtype_create_shadowed(MPI_COMBINER_DARRAY, array_of_gsizes, ndims, ints, 3 * ndims + 4, &oldtype_ptr, 1,
                                   shadow, &dt) != UMPI_OK) {
        umpi_dtype_release(shadow);
        err = umpi__nomem("darray");
    } else {
        dt->large |= large;
        *newtype = dt->handle;
    }
    free(ints);
    return err;
}

int umpi_impl_type_create_resized(umpi_dtype_t *oldtype_ptr, MPI_Count lb, MPI_Count extent, MPI_Datatype *newtype, int large)
{
    MPI_Count c[2] = {lb, extent};
    return umpi__make(MPI_COMBINER_RESIZED, c, 2, NULL, 0, &oldtype_ptr, 1, newtype, "resized", large);
}

int umpi_impl_type_dup(umpi_dtype_t *oldtype_ptr, MPI_Datatype *newtype)
{
    int err = umpi__make(MPI_COMBINER_DUP, NULL, 0, NULL, 0, &oldtype_ptr, 1, newtype, "duplicate", 0);
    if (err != MPI_SUCCESS)
        return err;
    umpi_dtype_t *dt = umpi_dtype_get(*newtype);
    if (oldtype_ptr->committed && umpi__compile(dt) == UMPI_OK)
        dt->committed = 1; /* a duplicate is committed when its original is (MPI 4.1 sec. 5.1.10) */
    /* The copy callbacks decide which attributes the duplicate gets; a failing one fails the dup. */
    err = umpi_attr_list_copy(UMPI_OBJ_DATATYPE, oldtype_ptr->handle, oldtype_ptr->attrs, dt->handle, &dt->attrs);
    if (err != MPI_SUCCESS) {
        umpi_dtype_release(dt);
        *newtype = MPI_DATATYPE_NULL;
    }
    return err;
}

/* ---- commit, free -------------------------------------------------------------------------------- */

static int umpi__lookup(MPI_Datatype h, umpi_dtype_t **dt)
{
    *dt = umpi_dtype_get(h);
    if (*dt != NULL)
        return MPI_SUCCESS;
    if (h == MPI_DATATYPE_NULL)
        return umpi_err_create(MPI_ERR_TYPE, "MPI_DATATYPE_NULL in argument 'datatype'");
    return umpi_err_create(MPI_ERR_TYPE, "invalid datatype 0x%x in argument 'datatype'", (unsigned) h);
}

int umpi_impl_type_commit(MPI_Datatype *datatype)
{
    umpi_dtype_t *dt;
    int err = umpi__lookup(*datatype, &dt);
    if (err != MPI_SUCCESS || dt->committed)
        return err;
    if (umpi__compile(dt) != UMPI_OK)
        return umpi_err_create(MPI_ERR_NO_MEM, "out of memory compiling datatype 0x%x", (unsigned) *datatype);
    dt->committed = 1;
    return MPI_SUCCESS;
}

int umpi_impl_type_free(MPI_Datatype *datatype)
{
    umpi_dtype_t *dt;
    int err = umpi__lookup(*datatype, &dt);
    if (err != MPI_SUCCESS)
        return err;
    if (dt->builtin)
        return umpi_err_create(MPI_ERR_TYPE, "predefined datatype %s in argument 'datatype' cannot be freed",
                               dt->name);
    /* Delete callbacks first; a failing one fails the free and leaves the type as it was. */
    err = umpi_attr_list_delete(UMPI_OBJ_DATATYPE, dt->handle, &dt->attrs);
    if (err != MPI_SUCCESS)
        return err;
    *datatype = MPI_DATATYPE_NULL;
    umpi_dtype_release(dt); /* pending operations keep their own references */
    return MPI_SUCCESS;
}

/* ---- envelope and contents ------------------------------------------------------------------------ */

/* The classic layout: integers and addresses split; subarray's integers all in one list. */
static void umpi__classic_envelope(const umpi_dtype_t *dt, MPI_Count *ni, MPI_Count *na)
{
    *ni = dt->n_ints;
    *na = 0;
    for (MPI_Count i = 0; i < dt->n_counts; i++) {
        if (umpi_dtype_is_address(dt->combiner, dt->counts, i))
            (*na)++;
        else
            (*ni)++;
    }
}

int umpi_impl_type_get_envelope(umpi_dtype_t *datatype_ptr, MPI_Count *num_integers, MPI_Count *num_addresses,
                                MPI_Count *num_large_counts, MPI_Count *num_datatypes, int *combiner, int large)
{
    const umpi_dtype_t *dt = datatype_ptr;
    *combiner = dt->combiner;
    if (num_large_counts != NULL)
        *num_large_counts = 0;
    if (dt->builtin) {
        *num_integers = *num_addresses = *num_datatypes = 0;
        return MPI_SUCCESS;
    }
    *num_datatypes = dt->n_types;
    /* A type made by MPI_X_c is described by MPI_Type_get_envelope_c only (as MPICH does). */
    if (dt->large && !large)
        return umpi_err_create(MPI_ERR_TYPE, "datatype 0x%x was made by a large-count constructor: use "
                               "MPI_Type_get_envelope_c", (unsigned) dt->handle);
    if (dt->large) {
        *num_integers = dt->n_ints;
        *num_addresses = 0;
        *num_large_counts = dt->n_counts;
        return MPI_SUCCESS;
    }
    umpi__classic_envelope(dt, num_integers, num_addresses);
    return MPI_SUCCESS;
}

int umpi_impl_type_get_contents(umpi_dtype_t *datatype_ptr, MPI_Count max_integers, MPI_Count max_addresses,
                                MPI_Count max_large_counts, MPI_Count max_datatypes, int array_of_integers[],
                                MPI_Aint array_of_addresses[], MPI_Count array_of_large_counts[],
                                MPI_Datatype array_of_datatypes[], int called_large)
{
    const umpi_dtype_t *dt = datatype_ptr;
    if (dt->builtin)
        return umpi_err_create(MPI_ERR_TYPE, "datatype %s in argument 'datatype' is predefined: it has no contents",
                               dt->name);
    MPI_Count ni, na, nc = 0;
    int large = dt->large;
    if (large && !called_large)
        return umpi_err_create(MPI_ERR_TYPE, "datatype 0x%x was made by a large-count constructor: use "
                               "MPI_Type_get_contents_c", (unsigned) dt->handle);
    if (large)
        ni = dt->n_ints, na = 0, nc = dt->n_counts;
    else
        umpi__classic_envelope(dt, &ni, &na);
    if (max_integers < ni || max_addresses < na || max_datatypes < dt->n_types || (nc && max_large_counts < nc))
        return umpi_err_create(MPI_ERR_ARG, "the arrays are too small for the contents of datatype 0x%x "
                               "(%ld integers, %ld addresses, %ld large counts, %ld datatypes needed)",
                               (unsigned) dt->handle, (long) ni, (long) na, (long) nc, (long) dt->n_types);
    if (large) {
        memcpy(array_of_integers, dt->ints, (size_t) ni * sizeof(int));
        memcpy(array_of_large_counts, dt->counts, (size_t) nc * sizeof(MPI_Count));
    } else if (dt->combiner == MPI_COMBINER_DARRAY) {
        /* size, rank, ndims, gsizes, distribs, dargs, psizes, order */
        int nd = dt->ints[2];
        memcpy(array_of_integers, dt->ints, 3 * sizeof(int));
        for (int i = 0; i < nd; i++)
            array_of_integers[3 + i] = (int) dt->counts[i];
        memcpy(array_of_integers + 3 + nd, dt->ints + 3, (size_t) (3 * nd + 1) * sizeof(int));
    } else if (dt->combiner == MPI_COMBINER_SUBARRAY) {
        int nd = dt->ints[0];
        array_of_integers[0] = nd;
        for (int i = 0; i < 3 * nd; i++)
            array_of_integers[1 + i] = (int) dt->counts[i];
        array_of_integers[1 + 3 * nd] = dt->ints[1];
    } else {
        MPI_Count ki = 0, ka = 0;
        for (MPI_Count i = 0; i < dt->n_counts; i++) {
            if (umpi_dtype_is_address(dt->combiner, dt->counts, i))
                array_of_addresses[ka++] = (MPI_Aint) dt->counts[i];
            else
                array_of_integers[ki++] = (int) dt->counts[i];
        }
    }
    /* Derived types come back as new references, which the caller frees (MPI 4.1 sec. 5.1.13). */
    for (MPI_Count i = 0; i < dt->n_types; i++) {
        umpi_dtype_retain(dt->types[i]);
        array_of_datatypes[i] = dt->types[i]->handle;
    }
    return MPI_SUCCESS;
}

/* ---- size, extent, names ----------------------------------------------------------------------------- */

int umpi_impl_type_size(umpi_dtype_t *datatype_ptr, MPI_Count *size)
{
    *size = datatype_ptr->size;
    return MPI_SUCCESS;
}

int umpi_impl_type_get_extent(umpi_dtype_t *datatype_ptr, MPI_Count *lb, MPI_Count *extent)
{
    *lb = datatype_ptr->lb;
    *extent = datatype_ptr->extent;
    return MPI_SUCCESS;
}

int umpi_impl_type_get_true_extent(umpi_dtype_t *datatype_ptr, MPI_Count *true_lb, MPI_Count *true_extent)
{
    *true_lb = datatype_ptr->true_lb;
    *true_extent = datatype_ptr->true_extent;
    return MPI_SUCCESS;
}

int umpi_impl_type_set_name(umpi_dtype_t *datatype_ptr, const char *type_name)
{
    umpi_dtype_t *dt = datatype_ptr;
    /* names longer than MPI_MAX_OBJECT_NAME - 1 are cut (MPI 4.1 sec. 7.8 allows it) */
    strncpy(dt->user_name, type_name, MPI_MAX_OBJECT_NAME - 1);
    dt->user_name[MPI_MAX_OBJECT_NAME - 1] = '\0';
    dt->name = dt->user_name;
    return MPI_SUCCESS;
}

int umpi_impl_type_get_name(umpi_dtype_t *datatype_ptr, char *type_name, int *resultlen)
{
    const char *name = datatype_ptr->name ? datatype_ptr->name : "";
    size_t n = strlen(name);
    if (n > MPI_MAX_OBJECT_NAME - 1)
        n = MPI_MAX_OBJECT_NAME - 1;
    memcpy(type_name, name, n);
    type_name[n] = '\0';
    *resultlen = (int) n;
    return MPI_SUCCESS;
}

int umpi_impl_type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    static const struct { int typeclass, size; MPI_Datatype type; } match[] = {
        {MPI_TYPECLASS_INTEGER, 1, MPI_INTEGER1}, {MPI_TYPECLASS_INTEGER, 2, MPI_INTEGER2},
        {MPI_TYPECLASS_INTEGER, 4, MPI_INTEGER4}, {MPI_TYPECLASS_INTEGER, 8, MPI_INTEGER8},
        {MPI_TYPECLASS_REAL, 4, MPI_REAL4}, {MPI_TYPECLASS_REAL, 8, MPI_REAL8},
        {MPI_TYPECLASS_REAL, 16, MPI_REAL16}, {MPI_TYPECLASS_COMPLEX, 8, MPI_COMPLEX8},
        {MPI_TYPECLASS_COMPLEX, 16, MPI_COMPLEX16}, {MPI_TYPECLASS_COMPLEX, 32, MPI_COMPLEX32},
    };
    if (typeclass != MPI_TYPECLASS_INTEGER && typeclass != MPI_TYPECLASS_REAL && typeclass != MPI_TYPECLASS_COMPLEX)
        return umpi_err_create(MPI_ERR_ARG, "invalid type class %d in argument 'typeclass'", typeclass);
    for (size_t i = 0; i < UMPI_ARRAY_SIZE(match); i++) {
        if (match[i].typeclass == typeclass && match[i].size == size) {
            *datatype = match[i].type;
            return MPI_SUCCESS;
        }
    }
    return umpi_err_create(MPI_ERR_ARG, "no datatype of type class %d has size %d (argument 'size')", typeclass,
                           size);
}

int umpi_impl_get_address(const void *location, MPI_Aint *address)
{
    *address = (MPI_Aint) (uintptr_t) location;
    return MPI_SUCCESS;
}

/* ---- MPI_Pack, MPI_Unpack, MPI_Pack_size ---------------------------------------------------------------- */

int umpi_impl_pack(const void *inbuf, MPI_Count incount, umpi_dtype_t *datatype_ptr, void *outbuf,
                   MPI_Count outsize, MPI_Count *position, umpi_comm_t *comm_ptr)
{
    MPI_Count bytes = incount * datatype_ptr->size;
    (void) comm_ptr;
    if (*position < 0 || *position > outsize || bytes > outsize - *position)
        return umpi_err_create(MPI_ERR_TRUNCATE, "%ld bytes of data do not fit at position %ld of an output "
                               "buffer of %ld bytes", (long) bytes, (long) *position, (long) outsize);
    umpi_dtype_pack_range(datatype_ptr, inbuf, incount, 0, (char *) outbuf + *position, bytes);
    *position += bytes;
    return MPI_SUCCESS;
}

int umpi_impl_unpack(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf, MPI_Count outcount,
                     umpi_dtype_t *datatype_ptr, umpi_comm_t *comm_ptr)
{
    (void) comm_ptr;
    if (outcount < 0)
        return umpi_err_create(MPI_ERR_COUNT, "negative count %ld in argument 'outcount'", (long) outcount);
    MPI_Count bytes = outcount * datatype_ptr->size;
    if (*position < 0 || *position > insize || bytes > insize - *position)
        return umpi_err_create(MPI_ERR_TRUNCATE, "unpacking %ld bytes at position %ld runs past the input "
                               "buffer of %ld bytes", (long) bytes, (long) *position, (long) insize);
    umpi_dtype_unpack_range(datatype_ptr, outbuf, outcount, 0, (const char *) inbuf + *position, bytes);
    *position += bytes;
    return MPI_SUCCESS;
}

int umpi_impl_pack_size(MPI_Count incount, umpi_dtype_t *datatype_ptr, umpi_comm_t *comm_ptr, MPI_Count *size)
{
    (void) comm_ptr;
    *size = incount * datatype_ptr->size; /* packed data is the bytes themselves, no header */
    return MPI_SUCCESS;
}
