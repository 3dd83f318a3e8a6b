/*
 * Communicator objects: the predefined ones, life cycle of user communicators, context-id
 * agreement, and the local queries (compare, names, intercommunicator queries). Constructors are
 * in comm_create.c (intracommunicators) and intercomm.c.
 */
#include "coll/umpi_coll.h"
#include "core/umpi_attr.h"
#include "core/umpi_comm.h"
#include "core/umpi_topo.h"

#include <stdlib.h>
#include <string.h>

struct umpi_handle_table umpi_comm_table = {.lock = PTHREAD_MUTEX_INITIALIZER, .first_dynamic = 2};
umpi_comm_t umpi_comm_world, umpi_comm_self;
umpi_context_mask_t umpi_context_free;

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
    umpi_topo_free(c->topo);
    umpi_coll_comm_free(c->coll);
    umpi_ht_remove(&umpi_comm_table, UMPI_HANDLE_INDEX(c->handle));
    free(c);
}

/* The communicator a Comm_free-like call releases: MPI_ERR_COMM for null and predefined ones. */
static int umpi__comm_user(MPI_Comm h, umpi_comm_t **c)
{
    *c = umpi_comm_get(h);
    if (h == MPI_COMM_NULL)
        return umpi_err_create(MPI_ERR_COMM, "MPI_COMM_NULL in argument 'comm'");
    if (*c == NULL)
        return umpi_err_create(MPI_ERR_COMM, "invalid communicator 0x%x in argument 'comm'", (unsigned) h);
    if (UMPI_HANDLE_KIND(h) == UMPI_KIND_BUILTIN)
        return umpi_err_create_comm(h, MPI_ERR_COMM, "predefined communicator %s in argument 'comm' cannot be freed",
                                    (*c)->name);
    return MPI_SUCCESS;
}

/* The attributes go first, delete callbacks in the standard's order; a failing callback fails the
 * free and leaves the communicator as it was. Callbacks are user code: no big lock held. */
static int umpi__comm_delete_attrs(umpi_comm_t *c)
{
    return umpi_attr_list_delete(UMPI_OBJ_COMM, c->handle, &c->attrs);
}

/* Marks the communicator for deallocation: it goes once its pending operations complete. */
int umpi_impl_comm_free(MPI_Comm *comm)
{
    umpi_comm_t *c;
    int err = umpi__comm_user(*comm, &c);
    if (err == MPI_SUCCESS)
        err = umpi__comm_delete_attrs(c);
    if (err != MPI_SUCCESS)
        return err;
    umpi_lock();
    umpi_comm_release(c);
    umpi_unlock();
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

/* Unlike MPI_Comm_free, waits for the pending operations and for the other members. */
int umpi_impl_comm_disconnect(MPI_Comm *comm)
{
    umpi_comm_t *c;
    int err = umpi__comm_user(*comm, &c);
    if (err == MPI_SUCCESS)
        err = umpi__comm_delete_attrs(c);
    if (err != MPI_SUCCESS)
        return err;
    umpi_lock();
    umpi_waiter_t w = {0};
    while (c->refcount > 1)
        umpi_progress_step(&w);
    int one = 1;
    umpi_status_t st = umpi_comm_allreduce_int(c, &one, 1, UMPI_COLL_BAND);
    umpi_comm_release(c);
    umpi_unlock();
    *comm = MPI_COMM_NULL;
    return st == UMPI_OK ? MPI_SUCCESS : umpi_err_from_status(st, "synchronising the members failed");
}

/* ---- agreement among the members ---------------------------------------------------------------- */

umpi_status_t umpi_comm_allreduce_int(const umpi_comm_t *c, int *buf, int n, umpi_coll_op_t op)
{
    umpi_coll_grp_t g;
    umpi_coll_grp_of_comm(&g, c);
    umpi_status_t st = umpi_coll_allreduce_int(&g, buf, n, op);
    if (st != UMPI_OK || !c->is_inter)
        return st;
    /* Intercommunicator: the two local results meet between the leaders (rank 0 of each group),
     * and each leader hands the combined one to its group. */
    if (c->rank == 0) {
        int *remote = malloc((size_t) n * sizeof(int) + 1);
        if (remote == NULL)
            return UMPI_ERR_NOMEM;
        st = umpi_coll_exchange(c->context_id + 1, UMPI_COLL_TAG_EXCHANGE, 0, umpi_comm_to_world(c, 0), buf,
                                (size_t) n * sizeof(int), 0, remote, (size_t) n * sizeof(int));
        if (st == UMPI_OK)
            for (int i = 0; i < n; i++)
                buf[i] = op == UMPI_COLL_BAND ? buf[i] & remote[i]
                       : op == UMPI_COLL_BOR ? buf[i] | remote[i] : (buf[i] > remote[i] ? buf[i] : remote[i]);
        free(remote);
        if (st != UMPI_OK)
            return st;
    }
    return umpi_coll_bcast(&g, buf, (size_t) n * sizeof(int), 0);
}

/* ---- concurrent agreements in one process (umpi_context.h) --------------------------------------- */

static umpi_context_round_t *umpi__rounds;  /* registered agreements, by key (ties: first come) */
static umpi_context_round_t *umpi__owner;   /* the one proposing the whole bitmap, or NULL */
static umpi_context_mask_t umpi__reserved;  /* pairs proposed by agreements in flight (bit set) */
static int umpi__nreserved;                 /* agreements holding a reservation */

void umpi_context_round_begin(umpi_context_round_t *r, uint32_t key)
{
    umpi_context_round_t **p = &umpi__rounds;
    while (*p != NULL && (*p)->key <= key)
        p = &(*p)->next;
    r->key = key;
    r->owner = 0;
    r->attempt = 0;
    r->holds = 0;
    r->next = *p;
    *p = r;
}

/* Gives back the pairs r reserved. */
static void umpi__round_unreserve(umpi_context_round_t *r)
{
    if (!r->holds)
        return;
    for (int i = 0; i < UMPI_CONTEXT_WORDS; i++)
        umpi__reserved.word[i] &= ~r->held.word[i];
    r->holds = 0;
    umpi__nreserved--;
}

/* The lowest-keyed agreement past its first round: the one ownership may go to. */
static umpi_context_round_t *umpi__round_first_fallback(void)
{
    umpi_context_round_t *q = umpi__rounds;
    while (q != NULL && q->attempt == 0)
        q = q->next;
    return q;
}

void umpi_context_round_propose(umpi_context_round_t *r, umpi_context_mask_t *m)
{
    int others = umpi__nreserved != 0; /* r holds nothing here */
    memset(m, 0, sizeof(*m));
    if (r->attempt == 0) {
        /* a window: the UMPI_CONTEXT_WINDOW lowest pairs free and not reserved */
        int k = 0;
        for (int i = 0; i < UMPI_CONTEXT_WORDS && k < UMPI_CONTEXT_WINDOW; i++) {
            uint64_t w = umpi_context_free.word[i] & ~umpi__reserved.word[i];
            while (w != 0 && k < UMPI_CONTEXT_WINDOW) {
                uint64_t bit = w & -w;
                m->word[i] |= bit;
                w &= ~bit;
                k++;
            }
        }
        /* complete when it holds every free pair and nothing else was reserved */
        m->owner = k < UMPI_CONTEXT_WINDOW && !others;
    } else {
        if (umpi__owner == NULL && umpi__round_first_fallback() == r)
            umpi__owner = r;
        r->owner = umpi__owner == r;
        if (r->owner) {
            for (int i = 0; i < UMPI_CONTEXT_WORDS; i++)
                m->word[i] = umpi_context_free.word[i] & ~umpi__reserved.word[i];
            m->owner = !others;
        }
    }
    r->held = *m;
    r->holds = 1;
    umpi__nreserved++;
    for (int i = 0; i < UMPI_CONTEXT_WORDS; i++)
        umpi__reserved.word[i] |= m->word[i];
}

int umpi_context_round_result(umpi_context_round_t *r, const umpi_context_mask_t *m, uint32_t *context)
{
    int id = umpi_context_lowest(m);
    if (id >= 0) {
        *context = (uint32_t) id;
        return 1;
    }
    if (m->owner)
        return -1;
    umpi_context_round_retry(r);
    return 0;
}

void umpi_context_round_retry(umpi_context_round_t *r)
{
    /* No pair was chosen: the reservation and ownership go back (keeping ownership could
     * livelock two agreements that each own the bitmap at a different process). */
    umpi_debug(3, "context-id agreement (key %u): round %d found no common pair, retrying", (unsigned) r->key,
               r->attempt);
    umpi__round_unreserve(r);
    if (umpi__owner == r)
        umpi__owner = NULL;
    r->attempt++;
}

void umpi_context_round_end(umpi_context_round_t *r)
{
    umpi_context_round_t **p = &umpi__rounds;
    while (*p != r)
        p = &(*p)->next;
    *p = r->next;
    umpi__round_unreserve(r);
    if (umpi__owner == r)
        umpi__owner = NULL;
}

int umpi_comm_context_agree(const umpi_comm_t *c, const umpi_coll_grp_t *g, uint32_t *context)
{
    return umpi_comm_context_agree_key(c, g, c->context_id, context);
}

int umpi_comm_context_agree_key(const umpi_comm_t *c, const umpi_coll_grp_t *g, uint32_t key, uint32_t *context)
{
    umpi_context_round_t r;
    umpi_context_mask_t m;
    int n = (int) (sizeof(m) / sizeof(int)), done = 0;
    umpi_context_round_begin(&r, key);
    while (done == 0) {
        umpi_context_round_propose(&r, &m);
        umpi_status_t st = g ? umpi_coll_allreduce_int(g, (int *) &m, n, UMPI_COLL_BAND)
                             : umpi_comm_allreduce_int(c, (int *) &m, n, UMPI_COLL_BAND);
        if (st != UMPI_OK) {
            umpi_context_round_end(&r);
            return umpi_err_from_status(st, "agreeing on a context id");
        }
        done = umpi_context_round_result(&r, &m, context);
    }
    /* The caller takes the pair in this same hold of the big lock (umpi_comm_new), or does not
     * need it (a process outside the new group): giving back the reservation now is safe. */
    umpi_context_round_end(&r);
    if (done < 0)
        return umpi_err_create(MPI_ERR_OTHER, "no context id is free at every member: each process can hold at most %d "
                               "communicators at a time", UMPI_CONTEXT_PAIRS - 2);
    return MPI_SUCCESS;
}

/* ---- local queries -------------------------------------------------------------------------------- */

static int umpi__group_cmp(const umpi_group_t *a, const umpi_group_t *b)
{
    int r;
    umpi_impl_group_compare(a->handle, b->handle, &r);
    return r;
}

int umpi_impl_comm_compare(umpi_comm_t *comm1_ptr, umpi_comm_t *comm2_ptr, int *result)
{
    if (comm1_ptr == comm2_ptr) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    if (comm1_ptr->is_inter != comm2_ptr->is_inter) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    int r = umpi__group_cmp(comm1_ptr->group, comm2_ptr->group);
    if (comm1_ptr->is_inter) {
        int r2 = umpi__group_cmp(comm1_ptr->remote_group, comm2_ptr->remote_group);
        r = r2 > r ? r2 : r; /* MPI_IDENT < MPI_SIMILAR < MPI_UNEQUAL */
    }
    *result = r == MPI_IDENT ? MPI_CONGRUENT : r;
    return MPI_SUCCESS;
}

int umpi_impl_comm_set_name(umpi_comm_t *comm_ptr, const char *comm_name)
{
    umpi_lock();
    umpi_strlcpy(comm_ptr->name, comm_name, sizeof(comm_ptr->name));
    umpi_unlock();
    return MPI_SUCCESS;
}

int umpi_impl_comm_get_name(umpi_comm_t *comm_ptr, char *comm_name, int *resultlen)
{
    umpi_lock();
    umpi_strlcpy(comm_name, comm_ptr->name, MPI_MAX_OBJECT_NAME);
    umpi_unlock();
    *resultlen = (int) strlen(comm_name);
    return MPI_SUCCESS;
}

int umpi_impl_comm_test_inter(umpi_comm_t *comm_ptr, int *flag)
{
    *flag = comm_ptr->is_inter;
    return MPI_SUCCESS;
}

static int umpi__need_inter(const umpi_comm_t *c)
{
    return umpi_err_create(MPI_ERR_COMM, "communicator %s%s0x%x in argument 'comm' is not an intercommunicator",
                           c->name, c->name[0] ? " " : "", (unsigned) c->handle);
}

int umpi_impl_comm_remote_size(umpi_comm_t *comm_ptr, int *size)
{
    if (!comm_ptr->is_inter)
        return umpi__need_inter(comm_ptr);
    *size = comm_ptr->remote_size;
    return MPI_SUCCESS;
}

int umpi_impl_comm_remote_group(umpi_comm_t *comm_ptr, MPI_Group *group)
{
    if (!comm_ptr->is_inter)
        return umpi__need_inter(comm_ptr);
    umpi_group_retain(comm_ptr->remote_group);
    *group = comm_ptr->remote_group->handle;
    return MPI_SUCCESS;
}
