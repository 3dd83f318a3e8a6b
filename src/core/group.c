/*
 * Groups (MPI 4.1 sec. 7.3): ordered sets of processes stored as world ranks.
 *
 * Set operations use a scratch array indexed by world rank (4 bytes a process of the job), which
 * makes each of them linear in the sizes of the groups.
 */
#include "core/umpi_err.h"
#include "core/umpi_obj.h"

#include <stdlib.h>
#include <string.h>

#if __has_include("mpi/gen/umpi_impl.h")
#include "mpi/gen/umpi_impl.h"
#endif

struct umpi_handle_table umpi_group_table = {.lock = PTHREAD_MUTEX_INITIALIZER, .first_dynamic = 1};
umpi_group_t umpi_group_empty = {.handle = MPI_GROUP_EMPTY, .refcount = 1, .size = 0, .rank = MPI_UNDEFINED};

umpi_group_t *umpi_group_new(int n, const int *world)
{
    if (n == 0) {
        umpi_group_retain(&umpi_group_empty);
        return &umpi_group_empty;
    }
    umpi_group_t *g = malloc(sizeof(*g) + (size_t) n * sizeof(int));
    if (g == NULL)
        return NULL;
    g->refcount = 1;
    g->size = n;
    g->rank = MPI_UNDEFINED;
    for (int i = 0; i < n; i++) {
        g->world[i] = world[i];
        if (world[i] == umpi_global.rank)
            g->rank = i;
    }
    int idx = umpi_ht_insert(&umpi_group_table, g);
    if (idx < 0) {
        free(g);
        return NULL;
    }
    g->handle = UMPI_HANDLE_MAKE(UMPI_KIND_DIRECT, UMPI_OBJ_GROUP, idx);
    umpi_debug(2, "group 0x%x of %d processes created", (unsigned) g->handle, n);
    return g;
}

void umpi_group_retain(umpi_group_t *g)
{
    __atomic_add_fetch(&g->refcount, 1, __ATOMIC_RELAXED);
}

void umpi_group_release(umpi_group_t *g)
{
    if (__atomic_sub_fetch(&g->refcount, 1, __ATOMIC_ACQ_REL) != 0 || g == &umpi_group_empty)
        return;
    umpi_debug(2, "group 0x%x freed", (unsigned) g->handle);
    umpi_ht_remove(&umpi_group_table, UMPI_HANDLE_INDEX(g->handle));
    free(g);
}

int umpi_group_rank_of(const umpi_group_t *g, int world_rank)
{
    for (int i = 0; i < g->size; i++)
        if (g->world[i] == world_rank)
            return i;
    return MPI_UNDEFINED;
}

int umpi_group_check(MPI_Group h, umpi_group_t **g, const char *arg)
{
    *g = umpi_group_get(h);
    if (umpi_likely(*g != NULL))
        return MPI_SUCCESS;
    if (h == MPI_GROUP_NULL)
        return umpi_err_create(MPI_ERR_GROUP, "MPI_GROUP_NULL in argument '%s'", arg);
    return umpi_err_create(MPI_ERR_GROUP, "invalid group 0x%x in argument '%s'", (unsigned) h, arg);
}

static int umpi__nomem(const char *what)
{
    return umpi_err_create(MPI_ERR_NO_MEM, "out of memory %s", what);
}

/* Hands a new group to the user (the reference of umpi_group_new becomes theirs). */
static int umpi__group_out(int n, const int *world, MPI_Group *newgroup)
{
    umpi_group_t *g = umpi_group_new(n, world);
    if (g == NULL)
        return umpi__nomem("creating a group");
    *newgroup = g->handle;
    return MPI_SUCCESS;
}

/* A scratch array indexed by world rank, every entry `fill`. */
static int *umpi__world_map(int fill)
{
    int n = umpi_global.size > 0 ? umpi_global.size : 1;
    int *m = malloc((size_t) n * sizeof(int));
    if (m != NULL)
        for (int i = 0; i < n; i++)
            m[i] = fill;
    return m;
}

int umpi_impl_comm_group(umpi_comm_t *comm_ptr, MPI_Group *group)
{
    umpi_group_retain(comm_ptr->group);
    *group = comm_ptr->group->handle;
    return MPI_SUCCESS;
}

int umpi_impl_group_size(MPI_Group group, int *size)
{
    umpi_group_t *g;
    int err = umpi_group_check(group, &g, "group");
    if (err == MPI_SUCCESS)
        *size = g->size;
    return err;
}

int umpi_impl_group_rank(MPI_Group group, int *rank)
{
    umpi_group_t *g;
    int err = umpi_group_check(group, &g, "group");
    if (err == MPI_SUCCESS)
        *rank = g->rank;
    return err;
}

int umpi_impl_group_free(MPI_Group *group)
{
    umpi_group_t *g;
    int err = umpi_group_check(*group, &g, "group");
    if (err != MPI_SUCCESS)
        return err;
    umpi_group_release(g);
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}

int umpi_impl_group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                                    int ranks2[])
{
    umpi_group_t *g1, *g2;
    int err = umpi_group_check(group1, &g1, "group1");
    if (err == MPI_SUCCESS)
        err = umpi_group_check(group2, &g2, "group2");
    if (err != MPI_SUCCESS)
        return err;
    for (int i = 0; i < n; i++)
        if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= g1->size))
            return umpi_err_create(MPI_ERR_RANK, "invalid rank %d in argument 'ranks1[%d]' (group size %d)",
                                   ranks1[i], i, g1->size);
    int *pos = umpi__world_map(MPI_UNDEFINED);
    if (pos == NULL)
        return umpi__nomem("translating ranks");
    for (int i = 0; i < g2->size; i++)
        pos[g2->world[i]] = i;
    for (int i = 0; i < n; i++)
        ranks2[i] = ranks1[i] == MPI_PROC_NULL ? MPI_PROC_NULL : pos[g1->world[ranks1[i]]];
    free(pos);
    return MPI_SUCCESS;
}

int umpi_impl_group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    umpi_group_t *g1, *g2;
    int err = umpi_group_check(group1, &g1, "group1");
    if (err == MPI_SUCCESS)
        err = umpi_group_check(group2, &g2, "group2");
    if (err != MPI_SUCCESS)
        return err;
    if (g1->size != g2->size) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    if (memcmp(g1->world, g2->world, (size_t) g1->size * sizeof(int)) == 0) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    int *in1 = umpi__world_map(0);
    if (in1 == NULL)
        return umpi__nomem("comparing groups");
    for (int i = 0; i < g1->size; i++)
        in1[g1->world[i]] = 1;
    *result = MPI_SIMILAR;
    for (int i = 0; i < g2->size; i++)
        if (!in1[g2->world[i]])
            *result = MPI_UNEQUAL;
    free(in1);
    return MPI_SUCCESS;
}

typedef enum { UMPI__UNION, UMPI__INTERSECTION, UMPI__DIFFERENCE } umpi__setop_t;

static int umpi__group_setop(MPI_Group group1, MPI_Group group2, umpi__setop_t op, MPI_Group *newgroup)
{
    umpi_group_t *g1, *g2;
    int err = umpi_group_check(group1, &g1, "group1");
    if (err == MPI_SUCCESS)
        err = umpi_group_check(group2, &g2, "group2");
    if (err != MPI_SUCCESS)
        return err;
    int *in2 = umpi__world_map(0);
    int *out = malloc(((size_t) g1->size + g2->size + 1) * sizeof(int));
    if (in2 == NULL || out == NULL) {
        free(in2);
        free(out);
        return umpi__nomem("combining groups");
    }
    for (int i = 0; i < g2->size; i++)
        in2[g2->world[i]] = 1;
    int n = 0;
    for (int i = 0; i < g1->size; i++) {
        int both = in2[g1->world[i]];
        if (op == UMPI__UNION || (op == UMPI__INTERSECTION) == both)
            out[n++] = g1->world[i];
        in2[g1->world[i]] = 2; /* seen in group1 */
    }
    if (op == UMPI__UNION)
        for (int i = 0; i < g2->size; i++)
            if (in2[g2->world[i]] == 1)
                out[n++] = g2->world[i];
    err = umpi__group_out(n, out, newgroup);
    free(in2);
    free(out);
    return err;
}

int umpi_impl_group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return umpi__group_setop(group1, group2, UMPI__UNION, newgroup);
}

int umpi_impl_group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return umpi__group_setop(group1, group2, UMPI__INTERSECTION, newgroup);
}

int umpi_impl_group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return umpi__group_setop(group1, group2, UMPI__DIFFERENCE, newgroup);
}

/* Marks ranks[0..n) of g in `picked` (size g->size): MPI_ERR_RANK when one is out of range or
 * named twice, as incl and excl require. */
static int umpi__pick(const umpi_group_t *g, int n, const int ranks[], char *picked)
{
    if (n > g->size)
        return umpi_err_create(MPI_ERR_ARG, "n=%d is larger than the group (size %d)", n, g->size);
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size)
            return umpi_err_create(MPI_ERR_RANK, "invalid rank %d in argument 'ranks[%d]' (group size %d)",
                                   ranks[i], i, g->size);
        if (picked[ranks[i]])
            return umpi_err_create(MPI_ERR_RANK, "rank %d appears twice in argument 'ranks' (at %d)",
                                   ranks[i], i);
        picked[ranks[i]] = 1;
    }
    return MPI_SUCCESS;
}

static int umpi__incl_excl(MPI_Group group, int n, const int ranks[], int excl, MPI_Group *newgroup)
{
    umpi_group_t *g;
    int err = umpi_group_check(group, &g, "group");
    if (err != MPI_SUCCESS)
        return err;
    char *picked = calloc((size_t) g->size + 1, 1);
    int *out = malloc(((size_t) g->size + 1) * sizeof(int));
    if (picked == NULL || out == NULL) {
        err = umpi__nomem("creating a group");
        goto out;
    }
    err = umpi__pick(g, n, ranks, picked);
    if (err != MPI_SUCCESS)
        goto out;
    int m = 0;
    if (excl) {
        for (int i = 0; i < g->size; i++)
            if (!picked[i])
                out[m++] = g->world[i];
    } else {
        for (int i = 0; i < n; i++)
            out[m++] = g->world[ranks[i]];
    }
    err = umpi__group_out(m, out, newgroup);
out:
    free(picked);
    free(out);
    return err;
}

int umpi_impl_group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return umpi__incl_excl(group, n, ranks, 0, newgroup);
}

int umpi_impl_group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    return umpi__incl_excl(group, n, ranks, 1, newgroup);
}

/* Expands ranges (first, last, stride) into the rank list they name, checked as incl/excl do. */
static int umpi__expand_ranges(const umpi_group_t *g, int n, int ranges[][3], int **list, int *count)
{
    long total = 0;
    *list = NULL;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0)
            return umpi_err_create(MPI_ERR_ARG, "stride 0 in argument 'ranges[%d]'", i);
        if (first < 0 || first >= g->size || last < 0 || last >= g->size)
            return umpi_err_create(MPI_ERR_RANK, "range %d (%d, %d, %d) in argument 'ranges' leaves the group "
                                   "(size %d)", i, first, last, stride, g->size);
        if ((stride > 0 && first > last) || (stride < 0 && first < last))
            return umpi_err_create(MPI_ERR_RANK, "range %d (%d, %d, %d) in argument 'ranges' is empty", i,
                                   first, last, stride);
        total += ((long) last - first) / stride + 1;
        if (total > g->size)
            return umpi_err_create(MPI_ERR_RANK, "the ranges in argument 'ranges' name more ranks than the "
                                   "group has (%d): a rank appears twice", g->size);
    }
    int *l = malloc(((size_t) total + 1) * sizeof(int));
    if (l == NULL)
        return umpi__nomem("expanding ranges");
    int m = 0;
    for (int i = 0; i < n; i++)
        for (long r = ranges[i][0]; ranges[i][2] > 0 ? r <= ranges[i][1] : r >= ranges[i][1]; r += ranges[i][2])
            l[m++] = (int) r;
    *list = l;
    *count = m;
    return MPI_SUCCESS;
}

static int umpi__range_incl_excl(MPI_Group group, int n, int ranges[][3], int excl, MPI_Group *newgroup)
{
    umpi_group_t *g;
    int *list, count;
    int err = umpi_group_check(group, &g, "group");
    if (err != MPI_SUCCESS)
        return err;
    err = umpi__expand_ranges(g, n, ranges, &list, &count);
    if (err != MPI_SUCCESS)
        return err;
    err = umpi__incl_excl(group, count, list, excl, newgroup);
    free(list);
    return err;
}

int umpi_impl_group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return umpi__range_incl_excl(group, n, ranges, 0, newgroup);
}

int umpi_impl_group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    return umpi__range_incl_excl(group, n, ranges, 1, newgroup);
}
