/*
 * Derived datatype objects: creation from a constructor's arguments, bounds, life cycle.
 *
 * Every constructor stores its arguments in one normalized form, the large-count one: the
 * integers and addresses of MPI_Type_*_c in counts[] (MPI_Type_create_subarray keeps ndims and
 * order in ints[]), the old types in types[]. The bounds, size and basic-element count follow
 * from it here; the pack engine (datatype_engine.c) compiles the same contents at commit, and
 * MPI_Type_get_contents gives them back in the classic or large-count layout
 * (umpi_dtype_is_address() says which entries are addresses in the classic one).
 *
 * References: the handle holds one; a type holds one on each type in its contents; a pending
 * operation holds one on its datatype. MPI_Type_free drops the handle's; the object goes when the
 * last goes.
 */
#include "core/umpi_obj.h"

#include <stdlib.h>
#include <string.h>

extern struct umpi_handle_table umpi_dtype_table;

int umpi_dtype_is_address(int combiner, const MPI_Count *counts, MPI_Count i)
{
    switch (combiner) {
    case MPI_COMBINER_HVECTOR:
        return i == 2;
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_STRUCT:
        return i >= 1 + counts[0];
    case MPI_COMBINER_HINDEXED_BLOCK:
        return i >= 2;
    case MPI_COMBINER_RESIZED:
        return 1;
    default:
        return 0;
    }
}

/* Bounds of the data seen so far. */
struct umpi__acc {
    int any;
    MPI_Aint lb, ub, tlb, tub;
};

static inline MPI_Aint umpi__min0(MPI_Aint a) { return a < 0 ? a : 0; }
static inline MPI_Aint umpi__max0(MPI_Aint a) { return a > 0 ? a : 0; }

/* bl elements of t (by its extent) as a block, count blocks by stride, from disp. */
static void umpi__place(umpi_dtype_t *dt, struct umpi__acc *a, umpi_dtype_t *t, MPI_Aint disp,
                        MPI_Count bl, MPI_Count count, MPI_Aint stride)
{
    if (bl <= 0 || count <= 0)
        return;
    MPI_Aint lo = umpi__min0((bl - 1) * t->extent) + umpi__min0((count - 1) * stride);
    MPI_Aint hi = umpi__max0((bl - 1) * t->extent) + umpi__max0((count - 1) * stride);
    MPI_Aint lb = disp + t->lb + lo, ub = disp + t->lb + t->extent + hi;
    MPI_Aint tlb = disp + t->true_lb + lo, tub = disp + t->true_lb + t->true_extent + hi;
    if (!a->any || lb < a->lb)
        a->lb = lb;
    if (!a->any || ub > a->ub)
        a->ub = ub;
    if (!a->any || tlb < a->tlb)
        a->tlb = tlb;
    if (!a->any || tub > a->tub)
        a->tub = tub;
    a->any = 1;
    dt->size += bl * count * t->size;
    dt->n_basic += bl * count * t->n_basic;
    if (t->align > dt->align)
        dt->align = t->align;
    if (dt->nkids > 0 && dt->kids[dt->nkids - 1].type == t)
        dt->kids[dt->nkids - 1].reps += bl * count;
    else
        dt->kids[dt->nkids++] = (umpi_dt_kid_t) {t, bl * count};
}

/* Size, bounds and constituents from the contents (MPI 4.1 sec. 5.1, the type-map rules). */
static void umpi__bounds(umpi_dtype_t *dt)
{
    struct umpi__acc a = {0};
    const MPI_Count *c = dt->counts;
    umpi_dtype_t *old = dt->types[0];
    MPI_Count n = dt->n_counts ? c[0] : 0;

    dt->align = 1;
    switch (dt->combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
        umpi__place(dt, &a, old, 0, 1, 1, 0);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        umpi__place(dt, &a, old, 0, c[0], 1, 0);
        break;
    case MPI_COMBINER_VECTOR:
        umpi__place(dt, &a, old, 0, c[1], c[0], c[2] * old->extent);
        break;
    case MPI_COMBINER_HVECTOR:
        umpi__place(dt, &a, old, 0, c[1], c[0], c[2]);
        break;
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
        for (MPI_Count i = 0; i < n; i++)
            umpi__place(dt, &a, old, c[1 + n + i] * (dt->combiner == MPI_COMBINER_INDEXED ? old->extent : 1),
                        c[1 + i], 1, 0);
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
        for (MPI_Count i = 0; i < n; i++)
            umpi__place(dt, &a, old, c[2 + i] * (dt->combiner == MPI_COMBINER_INDEXED_BLOCK ? old->extent : 1),
                        c[1], 1, 0);
        break;
    case MPI_COMBINER_STRUCT:
        for (MPI_Count i = 0; i < n; i++)
            umpi__place(dt, &a, dt->types[i], c[1 + n + i], c[1 + i], 1, 0);
        break;
    case MPI_COMBINER_DARRAY: {
        /* the data: the shadow's; the extent: the whole array, as for a subarray */
        int nd = dt->ints[2];
        MPI_Count total = 1;
        for (int d = 0; d < nd; d++)
            total *= c[d];
        umpi__place(dt, &a, dt->shadow, 0, 1, 1, 0);
        a.lb = old->lb;
        a.ub = old->lb + total * old->extent;
        a.any = 1;
        break;
    }
    case MPI_COMBINER_SUBARRAY: {
        /* the data: subsizes from starts; the extent: the whole array */
        int nd = dt->ints[0], order = dt->ints[1];
        MPI_Aint stride = old->extent, base = 0, span = 0;
        MPI_Count total = 1, sub = 1;
        for (int i = 0; i < nd; i++) {
            int d = order == MPI_ORDER_C ? nd - 1 - i : i;
            base += c[2 * nd + d] * stride;
            span += (c[nd + d] - 1) * stride;
            stride *= c[d];
            total *= c[d];
            sub *= c[nd + d];
        }
        umpi__place(dt, &a, old, base, 1, 1, 0);
        dt->size = sub * old->size;
        dt->n_basic = sub * old->n_basic;
        dt->kids[0].reps = sub;
        a.tub += span;
        a.lb = old->lb;
        a.ub = old->lb + total * old->extent;
        break;
    }
    }
    if (!a.any)
        a = (struct umpi__acc) {0};
    if (dt->combiner == MPI_COMBINER_RESIZED) {
        a.lb = c[0];
        a.ub = c[0] + c[1];
    }
    if (dt->combiner == MPI_COMBINER_STRUCT && (a.ub - a.lb) % dt->align != 0)
        a.ub += dt->align - (a.ub - a.lb) % dt->align; /* padding as the C compiler would add */
    dt->lb = a.lb;
    dt->extent = a.ub - a.lb;
    dt->true_lb = a.tlb;
    dt->true_extent = a.tub - a.tlb;
    dt->contig = 0;
}

int umpi_dtype_create(int combiner, const MPI_Count *counts, MPI_Count n_counts, const int *ints,
                      int n_ints, umpi_dtype_t *const *types, int n_types, umpi_dtype_t **out)
{
    return umpi_dtype_create_shadowed(combiner, counts, n_counts, ints, n_ints, types, n_types, NULL, out);
}

int umpi_dtype_create_shadowed(int combiner, const MPI_Count *counts, MPI_Count n_counts, const int *ints,
                               int n_ints, umpi_dtype_t *const *types, int n_types, umpi_dtype_t *shadow,
                               umpi_dtype_t **out)
{
    umpi_dtype_t *dt = calloc(1, sizeof(*dt));
    int nkids = combiner == MPI_COMBINER_STRUCT ? (int) counts[0] : 1;
    if (dt == NULL)
        return UMPI_ERR_NOMEM;
    dt->counts = malloc((size_t) (n_counts ? n_counts : 1) * sizeof(MPI_Count));
    dt->ints = malloc((size_t) (n_ints ? n_ints : 1) * sizeof(int));
    dt->types = malloc((size_t) (n_types ? n_types : 1) * sizeof(*dt->types));
    dt->kids = malloc((size_t) (nkids ? nkids : 1) * sizeof(*dt->kids));
    if (!dt->counts || !dt->ints || !dt->types || !dt->kids)
        goto fail;
    if (n_counts)
        memcpy(dt->counts, counts, (size_t) n_counts * sizeof(MPI_Count));
    if (n_ints)
        memcpy(dt->ints, ints, (size_t) n_ints * sizeof(int));
    dt->n_counts = n_counts;
    dt->n_ints = n_ints;
    dt->n_types = n_types;
    dt->combiner = combiner;
    dt->refcount = 1;
    dt->name = dt->user_name;
    for (int i = 0; i < n_types; i++)
        dt->types[i] = types[i];
    dt->shadow = shadow;
    umpi__bounds(dt);
    /* some integer of the classic layout would not fit an int: only the large layout can say it */
    for (MPI_Count i = 0; i < n_counts; i++)
        if (!umpi_dtype_is_address(combiner, counts, i) && (counts[i] > INT32_MAX || counts[i] < INT32_MIN))
            dt->large = 1;
    int idx = umpi_ht_insert(&umpi_dtype_table, dt);
    if (idx < 0)
        goto fail;
    dt->handle = UMPI_HANDLE_MAKE(UMPI_KIND_DIRECT, UMPI_OBJ_DATATYPE, idx);
    for (int i = 0; i < n_types; i++)
        umpi_dtype_retain(types[i]);
    *out = dt;
    return UMPI_OK;
fail:
    free(dt->counts);
    free(dt->ints);
    free(dt->types);
    free(dt->kids);
    free(dt);
    return UMPI_ERR_NOMEM;
}

void (*umpi_dtype_cuda_forget)(umpi_dtype_t *dt);

void umpi_dtype_release_slow(umpi_dtype_t *dt)
{
    if (__atomic_sub_fetch(&dt->refcount, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    if (dt->cuda_desc != NULL && umpi_dtype_cuda_forget != NULL)
        umpi_dtype_cuda_forget(dt);
    umpi_ht_remove(&umpi_dtype_table, UMPI_HANDLE_INDEX(dt->handle));
    for (MPI_Count i = 0; i < dt->n_types; i++)
        umpi_dtype_release(dt->types[i]);
    if (dt->shadow != NULL)
        umpi_dtype_release(dt->shadow);
    free(dt->counts);
    free(dt->ints);
    free(dt->types);
    free(dt->kids);
    free(dt->ops);
    free(dt->op_off);
    free(dt);
}
