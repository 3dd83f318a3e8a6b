/* Communicator objects. Issue 2 has the two predefined ones; the context ids of user
 * communicators (dup/split, issue 3) start after theirs. */
#include "core/umpi_obj.h"

#include <string.h>

/* Context ids: each communicator has two, point-to-point (even) and collective (odd). */
enum { UMPI_CONTEXT_WORLD = 0, UMPI_CONTEXT_SELF = 2, UMPI_CONTEXT_FIRST_FREE = 4 };

struct umpi_handle_table umpi_comm_table = {.lock = PTHREAD_MUTEX_INITIALIZER, .first_dynamic = 2};
umpi_comm_t umpi_comm_world, umpi_comm_self;
static int umpi__self_rank_storage;

static void umpi__comm_builtin(umpi_comm_t *c, MPI_Comm handle, int rank, int size, uint32_t context,
                               const char *name)
{
    memset(c, 0, sizeof(*c));
    c->handle = handle;
    c->rank = rank;
    c->size = size;
    c->context_id = context;
    c->errhandler = MPI_ERRORS_ARE_FATAL;
    c->refcount = 1;
    umpi_strlcpy(c->name, name, sizeof(c->name));
    umpi_ht_set(&umpi_comm_table, UMPI_HANDLE_INDEX(handle), c);
}

/* Called by umpi_objects_init(), before the launcher told us who we are: a world of one. */
int umpi_comm_builtin_init(void)
{
    umpi__comm_builtin(&umpi_comm_world, MPI_COMM_WORLD, 0, 1, UMPI_CONTEXT_WORLD, "MPI_COMM_WORLD");
    umpi__comm_builtin(&umpi_comm_self, MPI_COMM_SELF, 0, 1, UMPI_CONTEXT_SELF, "MPI_COMM_SELF");
    return MPI_SUCCESS;
}

/* Once the job is known: world is every rank, self maps its rank 0 to our world rank. */
void umpi_comm_builtin_setup(int rank, int size)
{
    umpi_comm_world.rank = rank;
    umpi_comm_world.size = size;
    umpi__self_rank_storage = rank;
    umpi_comm_self.world_rank = &umpi__self_rank_storage;
}
