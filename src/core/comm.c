/*
 * Communicator storage: the predefined communicators, a new communicator on an agreed context
 * pair, and its release when the last reference goes. The MPI calls on communicators and their
 * constructors build on collectives and live above them (src/api/comm*.c, intercomm*.c).
 */
#include "core/umpi_context.h"
#include "core/umpi_err.h"
#include "core/umpi_obj.h"
#include "core/umpi_topo.h"

#include <stdlib.h>
#include <string.h>

struct umpi_handle_table umpi_comm_table = {.lock = PTHREAD_MUTEX_INITIALIZER, .first_dynamic = 2};
umpi_comm_t umpi_comm_world, umpi_comm_self;
umpi_context_mask_t umpi_context_free;
void (*umpi_comm_free_above)(umpi_comm_t *c);

static void umpi__comm_builtin(umpi_comm_t *c, MPI_Comm handle, int rank, int size, uint32_t context,
                               const char *name)
{
    memset(c, 0, sizeof(*c));
    c->handle = handle;
    c->rank = rank;
    c->size = size;
    c->remote_size = size;
    c->context_id = context;
    c->errhandler = MPI_ERRORS_ARE_FATAL;
    c->refcount = 1;
    umpi_strlcpy(c->name, name, sizeof(c->name));
    umpi_ht_set(&umpi_comm_table, UMPI_HANDLE_INDEX(handle), c);
}

/* Called by umpi_objects_init(), before the launcher told us who we are: a world of one. */
int umpi_comm_builtin_init(void)
{
    umpi_context_mask_init(&umpi_context_free);
    umpi_ht_set(&umpi_group_table, UMPI_HANDLE_INDEX(MPI_GROUP_EMPTY), &umpi_group_empty);
    umpi__comm_builtin(&umpi_comm_world, MPI_COMM_WORLD, 0, 1, UMPI_CONTEXT_WORLD, "MPI_COMM_WORLD");
    umpi__comm_builtin(&umpi_comm_self, MPI_COMM_SELF, 0, 1, UMPI_CONTEXT_SELF, "MPI_COMM_SELF");
    return MPI_SUCCESS;
}

/* Once the job is known: world is every rank, self maps its rank 0 to our world rank. */
void umpi_comm_builtin_setup(int rank, int size)
{
    umpi_comm_world.rank = rank;
    umpi_comm_world.size = size;
    umpi_comm_world.remote_size = size;
    int *all = malloc((size_t) size * sizeof(int));
    if (all == NULL)
        umpi_die(1, "out of memory creating the group of MPI_COMM_WORLD");
    for (int i = 0; i < size; i++)
        all[i] = i;
    umpi_comm_world.group = umpi_group_new(size, all);
    umpi_comm_self.group = umpi_group_new(1, &rank);
    free(all);
    if (umpi_comm_world.group == NULL || umpi_comm_self.group == NULL)
        umpi_die(1, "out of memory creating the groups of MPI_COMM_WORLD and MPI_COMM_SELF");
    umpi_comm_self.world_rank = umpi_comm_self.group->world;
}

/* ---- life cycle ---------------------------------------------------------------------------------- */

int umpi_comm_new(const umpi_comm_t *parent, umpi_group_t *group, umpi_group_t *remote, uint32_t context,
                  MPI_Comm *newcomm)
{
    umpi_comm_t *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return umpi_err_create(MPI_ERR_NO_MEM, "out of memory creating a communicator");
    c->rank = group->rank;
    c->size = group->size;
    c->is_inter = remote != NULL;
    c->remote_size = remote ? remote->size : group->size;
    c->world_rank = remote ? remote->world : group->world;
    c->context_id = context;
    c->refcount = 1;
    c->group = group;
    c->remote_group = remote;
    /* MPI 4.1 sec. 9.3: a new communicator inherits its parent's error handler. */
    c->errhandler = parent->errhandler;
    int idx = umpi_ht_insert(&umpi_comm_table, c);
    if (idx < 0) {
        free(c);
        return umpi_err_create(MPI_ERR_NO_MEM, "out of memory registering a communicator");
    }
    umpi_group_retain(group);
    if (remote)
        umpi_group_retain(remote);
    umpi_errhandler_t *eh = umpi_errhandler_get(c->errhandler);
    if (eh != NULL)
        umpi_errhandler_retain(eh);
    if (context != UMPI_CONTEXT_NONE) /* MPI_Comm_idup sets it when its agreement ends */
        umpi_context_take(&umpi_context_free, context);
    c->handle = UMPI_HANDLE_MAKE(UMPI_KIND_DIRECT, UMPI_OBJ_COMM, idx);
    *newcomm = c->handle;
    umpi_debug(2, "communicator 0x%x created: rank %d of %d%s, context %u", (unsigned) c->handle, c->rank,
               c->size, remote ? " (inter)" : "", (unsigned) context);
    return MPI_SUCCESS;
}

void umpi_comm_release_slow(umpi_comm_t *c)
{
    if (UMPI_HANDLE_KIND(c->handle) == UMPI_KIND_BUILTIN)
        return;
    umpi_debug(2, "communicator 0x%x freed, context %u", (unsigned) c->handle, (unsigned) c->context_id);
    if (c->context_id != UMPI_CONTEXT_NONE)
        umpi_context_give(&umpi_context_free, c->context_id);
    umpi_group_release(c->group);
    if (c->remote_group)
        umpi_group_release(c->remote_group);
    umpi_errhandler_t *eh = umpi_errhandler_get(c->errhandler);
    if (eh != NULL)
        umpi_errhandler_release(eh);
    if (umpi_comm_free_above != NULL)
        umpi_comm_free_above(c);
    umpi_ht_remove(&umpi_comm_table, UMPI_HANDLE_INDEX(c->handle));
    free(c);
}


/* The degrees the neighborhood collectives read (umpi_topo.h). */
int umpi_topo_degree(const umpi_comm_t *c, int out)
{
    const umpi_topo_t *t = c->is_inter ? NULL : c->topo;
    if (t == NULL)
        return 0;
    switch (t->kind) {
    case MPI_CART: return 2 * t->ndims;
    case MPI_GRAPH: return t->index[c->rank] - (c->rank > 0 ? t->index[c->rank - 1] : 0);
    case MPI_DIST_GRAPH: return out ? t->outdegree : t->indegree;
    }
    return 0;
}
