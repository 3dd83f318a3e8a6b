/*
 * MPI_Comm_create and MPI_Comm_split on an intercommunicator (MPI 4.1 sec. 7.4.2): the result is
 * again an intercommunicator, whose local group comes from this side's arguments and whose remote
 * group from the other side's.
 *
 * Both sides need the other side's choice, so every process of both groups takes part in one
 * allreduce over the intercommunicator (an OR of zero-filled tables that each process fills in for
 * itself) and in one context-id agreement. The tables are indexed by "first group, then second
 * group", the first being the group whose rank 0 has the lower world rank, which both sides
 * compute alike. New intercommunicators of different colors are disjoint, so they may share the
 * agreed pair (umpi_context.h).
 */
#include "api/umpi_comm.h"

#include <stdlib.h>

/* Offset of my group's entries in the shared tables, and of the remote group's. */
static void umpi__offsets(const umpi_comm_t *ic, int *mine, int *theirs)
{
    int first = ic->group->world[0] < ic->remote_group->world[0];
    *mine = first ? 0 : ic->remote_size;
    *theirs = first ? ic->size : 0;
}

/*
 * Comm_create: every process of a side passes the same group (a subset of its local group, in the
 * order of the new local group). The table holds, for each process of either side, its position
 * in its side's group + 1, or 0 outside it. The call returns MPI_COMM_NULL to a process outside
 * its group, and to every process when either group is empty.
 */
int umpi_intercomm_create_sub(umpi_comm_t *ic, umpi_group_t *g, MPI_Comm *newcomm)
{
    int mine, theirs, n = ic->size + ic->remote_size, err = MPI_SUCCESS;
    umpi__offsets(ic, &mine, &theirs);
    int *map = calloc((size_t) n, sizeof(int));
    int *world = malloc(((size_t) ic->remote_size + 1) * sizeof(int));
    if (map == NULL || world == NULL) {
        err = umpi_err_create(MPI_ERR_NO_MEM, "out of memory creating a communicator");
        goto out;
    }
    for (int i = 0; i < g->size; i++)
        map[mine + umpi_group_rank_of(ic->group, g->world[i])] = i + 1;
    *newcomm = MPI_COMM_NULL;
    umpi_lock();
    uint32_t context;
    umpi_status_t st = umpi_comm_allreduce_int(ic, map, n, UMPI_COLL_BOR);
    if (st != UMPI_OK)
        err = umpi_err_from_status(st, "exchanging the groups of the two sides");
    else
        err = umpi_comm_context_agree(ic, NULL, &context);
    /* The remote group in the order the other side gave it. The checks guard against a side whose
     * processes passed different groups (erroneous): no slot is written twice or out of range. */
    int k = 0;
    for (int j = 0; err == MPI_SUCCESS && j < ic->remote_size; j++)
        k += map[theirs + j] != 0;
    for (int i = 0; i < k; i++)
        world[i] = -1;
    for (int j = 0; err == MPI_SUCCESS && j < ic->remote_size; j++) {
        int v = map[theirs + j];
        if (v == 0)
            continue;
        if (v < 0 || v > k || world[v - 1] != -1)
            err = umpi_err_create(MPI_ERR_GROUP, "the processes of the remote group passed different groups");
        else
            world[v - 1] = ic->remote_group->world[j];
    }
    if (err == MPI_SUCCESS && g->rank != MPI_UNDEFINED && k > 0) {
        umpi_group_t *remote = umpi_group_new(k, world);
        if (remote == NULL) {
            err = umpi_err_create(MPI_ERR_NO_MEM, "out of memory creating a communicator");
        } else {
            err = umpi_comm_new(ic, g, remote, context, newcomm);
            umpi_group_release(remote);
        }
    }
    umpi_unlock();
out:
    free(map);
    free(world);
    return err;
}

struct umpi__member {
    int key, rank;
};

static int umpi__member_cmp(const void *a, const void *b)
{
    const struct umpi__member *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank - y->rank;
}

/* The world ranks of the processes of group grp (table entries tab[2 * j] = color, tab[2 * j + 1]
 * = key) with color, ordered by key then rank; their number. */
static int umpi__pick(const umpi_group_t *grp, const int *tab, int color, struct umpi__member *m, int *world)
{
    int k = 0;
    for (int j = 0; j < grp->size; j++)
        if (tab[2 * j] == color)
            m[k++] = (struct umpi__member){tab[2 * j + 1], j};
    qsort(m, (size_t) k, sizeof(*m), umpi__member_cmp);
    for (int i = 0; i < k; i++)
        world[i] = grp->world[m[i].rank];
    return k;
}

/*
 * Comm_split: the processes of each side with one color, ordered by key (then by rank in their
 * group), form the local group; those of the other side with the same color the remote group.
 * MPI_UNDEFINED, or a color nobody on the other side chose, gives MPI_COMM_NULL.
 */
int umpi_intercomm_split(umpi_comm_t *ic, int color, int key, MPI_Comm *newcomm)
{
    int mine, theirs, n = ic->size + ic->remote_size, err = MPI_SUCCESS;
    umpi__offsets(ic, &mine, &theirs);
    int *tab = calloc(2 * (size_t) n, sizeof(int));
    struct umpi__member *m = malloc((size_t) n * sizeof(*m));
    int *lw = malloc((size_t) n * sizeof(int)), *rw = malloc((size_t) n * sizeof(int));
    if (tab == NULL || m == NULL || lw == NULL || rw == NULL) {
        err = umpi_err_create(MPI_ERR_NO_MEM, "out of memory splitting a communicator");
        goto out;
    }
    tab[2 * (mine + ic->rank)] = color;
    tab[2 * (mine + ic->rank) + 1] = key;
    *newcomm = MPI_COMM_NULL;
    umpi_lock();
    uint32_t context;
    umpi_status_t st = umpi_comm_allreduce_int(ic, tab, 2 * n, UMPI_COLL_BOR);
    if (st != UMPI_OK)
        err = umpi_err_from_status(st, "exchanging colors and keys");
    else
        err = umpi_comm_context_agree(ic, NULL, &context);
    if (err == MPI_SUCCESS && color != MPI_UNDEFINED) {
        int nl = umpi__pick(ic->group, tab + 2 * mine, color, m, lw);
        int nr = umpi__pick(ic->remote_group, tab + 2 * theirs, color, m, rw);
        umpi_group_t *lg = nr > 0 ? umpi_group_new(nl, lw) : NULL;
        umpi_group_t *rg = nr > 0 ? umpi_group_new(nr, rw) : NULL;
        if (nr > 0 && (lg == NULL || rg == NULL))
            err = umpi_err_create(MPI_ERR_NO_MEM, "out of memory splitting a communicator");
        else if (nr > 0)
            err = umpi_comm_new(ic, lg, rg, context, newcomm);
        if (lg != NULL)
            umpi_group_release(lg);
        if (rg != NULL)
            umpi_group_release(rg);
    }
    umpi_unlock();
out:
    free(tab);
    free(m);
    free(lw);
    free(rw);
    return err;
}
