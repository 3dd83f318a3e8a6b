/*
 * Intercommunicators: MPI_Intercomm_create and MPI_Intercomm_merge.
 *
 * The two groups meet through their leaders. For Intercomm_create, each group first reduces its
 * free context ids; the leaders swap their group's world ranks and reduced bitmap over peer_comm
 * (with the user's tag, on its collective context) and both pick the lowest pair free in both
 * bitmaps; each leader then broadcasts the remote group and the pair to its own group.
 */
#include "api/umpi_comm.h"

#include <stdlib.h>
#include <string.h>

#define UMPI__MASK_INTS ((int) (sizeof(umpi_context_mask_t) / sizeof(int)))

/* The leader's part: validates peer_comm and remote_leader, swaps (size, world ranks + mask). */
static int umpi__leader_exchange(const umpi_comm_t *local, MPI_Comm peer_comm, int remote_leader, int tag,
                                 const umpi_context_mask_t *mask, int *remote_size, int **remote_world,
                                 int *context)
{
    umpi_comm_t *peer = umpi_comm_get(peer_comm);
    if (peer_comm == MPI_COMM_NULL || peer == NULL)
        return umpi_err_create(MPI_ERR_COMM, "invalid communicator 0x%x in argument 'peer_comm' (at the local "
                               "leader)", (unsigned) peer_comm);
    if (remote_leader < 0 || remote_leader >= peer->remote_size)
        return umpi_err_create(MPI_ERR_RANK, "invalid rank %d in argument 'remote_leader' (peer_comm size %d)",
                               remote_leader, peer->remote_size);
    uint32_t ctx = peer->context_id + 1;
    int peer_world = umpi_comm_to_world(peer, remote_leader);
    int n = local->size, rn = 0;
    umpi_status_t st = umpi_coll_exchange(ctx, tag, peer->rank, peer_world, &n, sizeof(int), remote_leader, &rn,
                                          sizeof(int));
    if (st != UMPI_OK)
        return umpi_err_from_status(st, "exchange between the leaders");
    int *out = malloc(((size_t) n + UMPI__MASK_INTS) * sizeof(int));
    int *in = malloc(((size_t) rn + UMPI__MASK_INTS) * sizeof(int));
    if (out == NULL || in == NULL) {
        free(out);
        free(in);
        return umpi_err_create(MPI_ERR_NO_MEM, "out of memory creating an intercommunicator");
    }
    memcpy(out, local->group->world, (size_t) n * sizeof(int));
    memcpy(out + n, mask, sizeof(*mask));
    st = umpi_coll_exchange(ctx, tag, peer->rank, peer_world, out, ((size_t) n + UMPI__MASK_INTS) * sizeof(int),
                            remote_leader, in, ((size_t) rn + UMPI__MASK_INTS) * sizeof(int));
    free(out);
    if (st != UMPI_OK) {
        free(in);
        return umpi_err_from_status(st, "exchange between the leaders");
    }
    umpi_context_mask_t both;
    memcpy(&both, in + rn, sizeof(both));
    umpi_context_and(&both, mask);
    int id = umpi_context_lowest(&both);
    if (id < 0 && both.owner) {
        free(in);
        return umpi_err_create(MPI_ERR_OTHER, "no context id is free at every member of both groups");
    }
    if (id < 0)
        id = -2; /* some member proposed an empty mask (another agreement owned its bitmap): retry */
    *remote_size = rn;
    *remote_world = in; /* the world ranks come first */
    *context = id;
    return MPI_SUCCESS;
}

int umpi_impl_intercomm_create(umpi_comm_t *local_comm_ptr, int local_leader, MPI_Comm peer_comm,
                               int remote_leader, int tag, MPI_Comm *newintercomm)
{
    umpi_comm_t *local = local_comm_ptr;
    if (local->is_inter)
        return umpi_err_create(MPI_ERR_COMM, "intercommunicator 0x%x in argument 'local_comm' (must be an "
                               "intracommunicator)", (unsigned) local->handle);
    umpi_coll_grp_t g;
    umpi_coll_grp_of_comm(&g, local);
    umpi_context_mask_t mask;
    int *remote_world = NULL, err = MPI_SUCCESS;
    /* hdr: remote size and context id (or -1: the leader failed; -2: retry), broadcast by the leader */
    int hdr[2];
    int context = 0;
    umpi_group_t *remote = NULL;
    umpi_context_round_t round;
    umpi_status_t st;

    umpi_lock();
    /* Rounds as in umpi_comm_context_agree (umpi_context.h): both leaders see the same combined
     * mask, so both groups retry together. */
    umpi_context_round_begin(&round, local->context_id);
    do {
        hdr[0] = 0;
        hdr[1] = -1;
        free(remote_world);
        remote_world = NULL;
        umpi_context_round_propose(&round, &mask);
        st = umpi_coll_allreduce_int(&g, (int *) &mask, UMPI__MASK_INTS, UMPI_COLL_BAND);
        if (st != UMPI_OK) {
            err = umpi_err_from_status(st, "agreeing on a context id");
            goto out;
        }
        if (local->rank == local_leader) {
            err = umpi__leader_exchange(local, peer_comm, remote_leader, tag, &mask, &hdr[0], &remote_world,
                                        &context);
            if (err == MPI_SUCCESS)
                hdr[1] = context;
        }
        /* The leader always broadcasts, so that a failure there does not leave its group waiting. */
        st = umpi_coll_bcast(&g, hdr, sizeof(hdr), local_leader);
        if (hdr[1] == -2)
            umpi_context_round_retry(&round);
    } while (st == UMPI_OK && err == MPI_SUCCESS && hdr[1] == -2);
    if (st == UMPI_OK && hdr[1] >= 0) {
        if (remote_world == NULL)
            remote_world = malloc(((size_t) hdr[0] + 1) * sizeof(int));
        if (remote_world == NULL)
            umpi_die(1, "out of memory in MPI_Intercomm_create"); /* the group is mid-broadcast */
        st = umpi_coll_bcast(&g, remote_world, (size_t) hdr[0] * sizeof(int), local_leader);
    }
    if (err != MPI_SUCCESS)
        goto out;
    if (st != UMPI_OK) {
        err = umpi_err_from_status(st, "broadcasting the remote group");
        goto out;
    }
    if (hdr[1] < 0) {
        err = umpi_err_create(MPI_ERR_OTHER, "the local leader (rank %d) failed to reach the remote leader",
                              local_leader);
        goto out;
    }
    remote = umpi_group_new(hdr[0], remote_world);
    if (remote == NULL) {
        err = umpi_err_create(MPI_ERR_NO_MEM, "out of memory creating an intercommunicator");
        goto out;
    }
    err = umpi_comm_new(local, local->group, remote, (uint32_t) hdr[1], newintercomm);
    umpi_group_release(remote);
out:
    umpi_context_round_end(&round);
    umpi_unlock();
    free(remote_world);
    return err;
}

int umpi_impl_intercomm_merge(umpi_comm_t *intercomm_ptr, int high, MPI_Comm *newintracomm)
{
    umpi_comm_t *ic = intercomm_ptr;
    if (!ic->is_inter)
        return umpi_err_create(MPI_ERR_COMM, "communicator 0x%x in argument 'intercomm' is not an "
                               "intercommunicator", (unsigned) ic->handle);
    umpi_coll_grp_t g;
    umpi_coll_grp_of_comm(&g, ic);
    /* mine / the remote group's: (high, world rank of the leader) */
    int me[2] = {!!high, ic->group->world[0]}, other[2];
    int err = MPI_SUCCESS;
    uint32_t context;

    umpi_lock();
    umpi_status_t st = UMPI_OK;
    if (ic->rank == 0)
        st = umpi_coll_exchange(ic->context_id + 1, UMPI_COLL_TAG_EXCHANGE, 0, umpi_comm_to_world(ic, 0), me,
                                sizeof(me), 0, other, sizeof(other));
    if (st == UMPI_OK)
        st = umpi_coll_bcast(&g, other, sizeof(other), 0);
    if (st != UMPI_OK) {
        err = umpi_err_from_status(st, "exchange between the groups");
        goto out;
    }
    err = umpi_comm_context_agree(ic, NULL, &context);
    if (err != MPI_SUCCESS)
        goto out;
    /* Same high on both sides: the group whose leader has the lower world rank goes first. */
    int mine_first = me[0] != other[0] ? me[0] < other[0] : me[1] < other[1];
    const umpi_group_t *a = mine_first ? ic->group : ic->remote_group;
    const umpi_group_t *b = mine_first ? ic->remote_group : ic->group;
    int *world = malloc(((size_t) a->size + b->size) * sizeof(int));
    if (world == NULL) {
        err = umpi_err_create(MPI_ERR_NO_MEM, "out of memory merging an intercommunicator");
        goto out;
    }
    memcpy(world, a->world, (size_t) a->size * sizeof(int));
    memcpy(world + a->size, b->world, (size_t) b->size * sizeof(int));
    umpi_group_t *merged = umpi_group_new(a->size + b->size, world);
    free(world);
    if (merged == NULL) {
        err = umpi_err_create(MPI_ERR_NO_MEM, "out of memory merging an intercommunicator");
        goto out;
    }
    err = umpi_comm_new(ic, merged, NULL, context, newintracomm);
    umpi_group_release(merged);
out:
    umpi_unlock();
    return err;
}
