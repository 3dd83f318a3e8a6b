/*
 * Communicator constructors over one communicator's members: MPI_Comm_dup, MPI_Comm_create,
 * MPI_Comm_create_group, MPI_Comm_split, MPI_Comm_split_type. Each agrees on a context pair
 * (comm.c) and then builds the object locally; processes outside the new group get MPI_COMM_NULL.
 */
#include "api/umpi_comm.h"
#include "api/umpi_hw.h"
#include "core/umpi_attr.h"
#include "core/umpi_topo.h"
#include "pmi/umpi_pmi.h"

#include <stdlib.h>
#include <string.h>

int umpi_impl_comm_dup(umpi_comm_t *comm_ptr, MPI_Comm *newcomm)
{
    uint32_t context;
    umpi_lock();
    int err = umpi_comm_context_agree(comm_ptr, NULL, &context);
    if (err == MPI_SUCCESS)
        err = umpi_comm_new(comm_ptr, comm_ptr->group, comm_ptr->remote_group, context, newcomm);
    if (err == MPI_SUCCESS) /* MPI 4.1 sec. 7.4.2: the hints are duplicated too */
        umpi_comm_get(*newcomm)->hints = comm_ptr->hints;
    umpi_unlock();
    if (err != MPI_SUCCESS)
        return err;
    /* Copy callbacks are user code that may call MPI: run them outside the big lock. A failing
     * one fails the dup (the standard's rule) and the new communicator goes again. */
    umpi_comm_t *c = umpi_comm_get(*newcomm);
    /* MPI 4.1 sec. 7.4.2: the duplicate has the same topology. */
    int nomem;
    c->topo = umpi_topo_dup(comm_ptr->topo, &nomem);
    err = nomem ? umpi_err_create(MPI_ERR_NO_MEM, "out of memory copying the topology of a communicator")
                : umpi_attr_list_copy(UMPI_OBJ_COMM, comm_ptr->handle, comm_ptr->attrs, c->handle, &c->attrs);
    if (err != MPI_SUCCESS) {
        umpi_lock();
        umpi_comm_release(c);
        umpi_unlock();
        *newcomm = MPI_COMM_NULL;
    }
    return err;
}

static int umpi__intra_only(const umpi_comm_t *c)
{
    return umpi_err_create(MPI_ERR_COMM, "intercommunicator 0x%x in argument 'comm' (MPI_Comm_split_type "
                           "needs an intracommunicator)", (unsigned) c->handle);
}

/* MPI_ERR_GROUP unless every member of g belongs to the local group of c. */
static int umpi__check_subset(const umpi_comm_t *c, const umpi_group_t *g)
{
    int r;
    MPI_Group inter;
    int err = umpi_impl_group_intersection(g->handle, c->group->handle, &inter);
    if (err != MPI_SUCCESS)
        return err;
    umpi_group_t *i = umpi_group_get(inter);
    r = i->size;
    umpi_group_release(i);
    if (r != g->size)
        return umpi_err_create(MPI_ERR_GROUP, "group 0x%x in argument 'group' has %d processes outside the "
                               "communicator", (unsigned) g->handle, g->size - r);
    return MPI_SUCCESS;
}

int umpi_impl_comm_create(umpi_comm_t *comm_ptr, MPI_Group group, MPI_Comm *newcomm)
{
    umpi_group_t *g;
    uint32_t context;
    int err = umpi_group_check(group, &g, "group");
    if (err != MPI_SUCCESS)
        return err;
    err = umpi__check_subset(comm_ptr, g);
    if (err != MPI_SUCCESS)
        return err;
    if (comm_ptr->is_inter)
        return umpi_intercomm_create_sub(comm_ptr, g, newcomm);
    umpi_lock();
    /* Every member of comm takes part, also those outside group. */
    err = umpi_comm_context_agree(comm_ptr, NULL, &context);
    *newcomm = MPI_COMM_NULL;
    if (err == MPI_SUCCESS && g->rank != MPI_UNDEFINED)
        err = umpi_comm_new(comm_ptr, g, NULL, context, newcomm);
    umpi_unlock();
    return err;
}

/*
 * Only the members of group call, so the agreement runs over them alone, on comm's collective
 * context; their messages carry their ranks in comm (distinct even when several groups of comm
 * agree at once). The tag is not needed for matching: a process takes part in such calls in the
 * order its program makes them, and receives only from the members it expects.
 */
int umpi_impl_comm_create_group(umpi_comm_t *comm_ptr, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    umpi_group_t *g;
    uint32_t context;
    int err = umpi_group_check(group, &g, "group");
    if (err != MPI_SUCCESS)
        return err;
    *newcomm = MPI_COMM_NULL;
    if (g->rank == MPI_UNDEFINED)
        return MPI_SUCCESS;
    err = umpi__check_subset(comm_ptr, g);
    if (err != MPI_SUCCESS)
        return err;
    int *src = malloc((size_t) g->size * sizeof(int));
    if (src == NULL)
        return umpi_err_create(MPI_ERR_NO_MEM, "out of memory creating a communicator");
    for (int i = 0; i < g->size; i++)
        src[i] = umpi_group_rank_of(comm_ptr->group, g->world[i]);
    umpi_coll_grp_t cg;
    umpi_coll_grp_of_comm(&cg, comm_ptr);
    cg.rank = g->rank;
    cg.size = g->size;
    cg.world = g->world;
    cg.src = src;
    umpi_lock();
    err = umpi_comm_context_agree(comm_ptr, &cg, &context);
    if (err == MPI_SUCCESS)
        err = umpi_comm_new(comm_ptr, g, NULL, context, newcomm);
    umpi_unlock();
    free(src);
    return err;
}

struct umpi__member {
    int color, key, rank;
};

static int umpi__member_cmp(const void *a, const void *b)
{
    const struct umpi__member *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank - y->rank;
}

/* Marks, in the color slot, a process that asked for MPI_COMM_TYPE_HW_UNGUIDED. */
#define UMPI__COLOR_UNGUIDED (-2)
#define UMPI__STRIDE (2 + UMPI_HW_NLEVELS)

/* MPI_COMM_TYPE_HW_UNGUIDED: the first level of umpi_hw_level_names at which every process that
 * asked is held by one instance and no instance holds all of comm; sets those processes' colors
 * to their instance there (MPI_UNDEFINED when there is no such level). */
static void umpi__unguided(int *all, int n)
{
    int level = -1;
    for (int l = 0; l < UMPI_HW_NLEVELS && level < 0; l++) {
        int ok = 1, any = 0;
        for (int r = 0; r < n && ok; r++) {
            if (all[UMPI__STRIDE * r] != UMPI__COLOR_UNGUIDED)
                continue;
            int v = all[UMPI__STRIDE * r + 2 + l], same = 0;
            any = 1;
            if (v == 0)
                ok = 0;
            for (int q = 0; q < n && ok; q++)
                same += all[UMPI__STRIDE * q] == UMPI__COLOR_UNGUIDED && all[UMPI__STRIDE * q + 2 + l] == v;
            if (same == n)
                ok = 0; /* not a strict subset of comm */
        }
        if (ok && any)
            level = l;
    }
    for (int r = 0; r < n; r++)
        if (all[UMPI__STRIDE * r] == UMPI__COLOR_UNGUIDED)
            all[UMPI__STRIDE * r] = level < 0 ? MPI_UNDEFINED : all[UMPI__STRIDE * r + 2 + level] - 1;
}

/* Split by (color, key): an allgather of both (an OR of zero-filled arrays), then every process
 * picks out its color. The allgather also carries the hardware resources of processes that asked
 * for MPI_COMM_TYPE_HW_UNGUIDED (lev: instance + 1 per level, else NULL), so that every kind of
 * split type (MPI_UNDEFINED included) makes the same exchange. */
static int umpi__split(umpi_comm_t *comm, int color, int key, const int *lev, MPI_Comm *newcomm)
{
    if (comm->is_inter)
        return umpi__intra_only(comm);
    int n = comm->size, err = MPI_SUCCESS;
    int *all = calloc((size_t) UMPI__STRIDE * n, sizeof(int));
    struct umpi__member *m = malloc((size_t) n * sizeof(*m));
    int *world = malloc((size_t) n * sizeof(int));
    if (all == NULL || m == NULL || world == NULL) {
        err = umpi_err_create(MPI_ERR_NO_MEM, "out of memory splitting a communicator");
        goto out;
    }
    all[UMPI__STRIDE * comm->rank] = color;
    all[UMPI__STRIDE * comm->rank + 1] = key;
    for (int l = 0; lev != NULL && l < UMPI_HW_NLEVELS; l++)
        all[UMPI__STRIDE * comm->rank + 2 + l] = lev[l];
    *newcomm = MPI_COMM_NULL;
    umpi_lock();
    umpi_status_t st = umpi_comm_allreduce_int(comm, all, UMPI__STRIDE * n, UMPI_COLL_BOR);
    uint32_t context;
    if (st != UMPI_OK)
        err = umpi_err_from_status(st, "exchanging colors and keys");
    else
        err = umpi_comm_context_agree(comm, NULL, &context);
    if (err == MPI_SUCCESS) {
        umpi__unguided(all, n);
        color = all[UMPI__STRIDE * comm->rank];
    }
    if (err == MPI_SUCCESS && color != MPI_UNDEFINED) {
        int k = 0;
        for (int r = 0; r < n; r++)
            if (all[UMPI__STRIDE * r] == color)
                m[k++] = (struct umpi__member){color, all[UMPI__STRIDE * r + 1], r};
        qsort(m, (size_t) k, sizeof(*m), umpi__member_cmp);
        for (int i = 0; i < k; i++)
            world[i] = umpi_comm_to_world(comm, m[i].rank);
        umpi_group_t *g = umpi_group_new(k, world);
        if (g == NULL) {
            err = umpi_err_create(MPI_ERR_NO_MEM, "out of memory splitting a communicator");
        } else {
            err = umpi_comm_new(comm, g, NULL, context, newcomm);
            umpi_group_release(g);
        }
    }
    umpi_unlock();
out:
    free(all);
    free(m);
    free(world);
    return err;
}

int umpi_impl_comm_split(umpi_comm_t *comm_ptr, int color, int key, MPI_Comm *newcomm)
{
    if (color < 0 && color != MPI_UNDEFINED)
        return umpi_err_create(MPI_ERR_ARG, "invalid color %d in argument 'color' (must be >= 0 or MPI_UNDEFINED)",
                               color);
    if (comm_ptr->is_inter)
        return umpi_intercomm_split(comm_ptr, color, key, newcomm);
    return umpi__split(comm_ptr, color, key, NULL, newcomm);
}

/*
 * MPI_COMM_TYPE_SHARED: the processes of one node (as the launcher placed them) share memory.
 * MPI_COMM_TYPE_HW_GUIDED: those held by the same instance of the hwloc resource type named by
 * the info key "mpi_hw_resource_type" ("mpi_shared_memory" is MPI_COMM_TYPE_SHARED); a process
 * that gives no such key, names no known type, or is not held by a single instance gets
 * MPI_COMM_NULL. MPI_COMM_TYPE_HW_UNGUIDED: see umpi__unguided. Other info hints are ignored.
 */
int umpi_impl_comm_split_type(umpi_comm_t *comm_ptr, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    int color = MPI_UNDEFINED, lev[UMPI_HW_NLEVELS];
    const int *levp = NULL;
    char type[MPI_MAX_INFO_VAL + 1];
    if (comm_ptr->is_inter)
        return umpi__intra_only(comm_ptr);
    if (split_type == MPI_UNDEFINED) {
        color = MPI_UNDEFINED;
    } else if (split_type == MPI_COMM_TYPE_SHARED ||
               (split_type == MPI_COMM_TYPE_HW_GUIDED && umpi_info_hint(info, "mpi_hw_resource_type", type, sizeof(type)) &&
                strcmp(type, "mpi_shared_memory") == 0)) {
        color = umpi_pmi_node_of(umpi_global.rank);
        if (color < 0)
            color = 0; /* unknown placement (singleton): one node */
    } else if (split_type == MPI_COMM_TYPE_HW_GUIDED) {
        int id;
        if (umpi_info_hint(info, "mpi_hw_resource_type", type, sizeof(type)) && umpi_hw_resource(type, &id) == 0 &&
            id >= 0)
            color = id;
    } else if (split_type == MPI_COMM_TYPE_HW_UNGUIDED) {
        umpi_hw_levels(lev);
        for (int l = 0; l < UMPI_HW_NLEVELS; l++)
            lev[l] = lev[l] < 0 ? 0 : lev[l] + 1;
        levp = lev;
        color = UMPI__COLOR_UNGUIDED;
    } else {
        return umpi_err_create(MPI_ERR_ARG, "split_type %d in argument 'split_type' is not supported (umpi has "
                               "MPI_COMM_TYPE_SHARED, MPI_COMM_TYPE_HW_GUIDED, MPI_COMM_TYPE_HW_UNGUIDED and "
                               "MPI_UNDEFINED)", split_type);
    }
    return umpi__split(comm_ptr, color, key, levp, newcomm);
}
