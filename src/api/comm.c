/*
 * The MPI calls on communicators that need no constructor: free and disconnect, agreement among
 * the members (an allreduce over both groups of an intercommunicator, the context-id rounds), and
 * the local queries (compare, names, intercommunicator queries). Constructors are in
 * comm_create.c (intracommunicators), comm_from_group.c, comm_idup.c and intercomm*.c; storage
 * in src/core/comm.c.
 */
#include "api/umpi_comm.h"
#include "coll/umpi_coll.h"
#include "core/umpi_attr.h"
#include "core/umpi_topo.h"

#include <stdlib.h>
#include <string.h>

void umpi_comm_free_layers(umpi_comm_t *c)
{
    umpi_topo_free(c->topo);
    umpi_coll_comm_free(c->coll);
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
