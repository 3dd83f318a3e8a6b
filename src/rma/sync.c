/* Synchronization: fence, passive target (lock, flush) and PSCW (umpi_rma.h). */
#include "rma/umpi_rma.h"
#include "core/umpi_err.h"
#include "core/umpi_progress.h"
#include "mpi/gen/umpi_impl.h"

#include <stdlib.h>
#include <string.h>

static int umpi__window(MPI_Win win, umpi_win_t **w)
{
    return umpi_rma_win_check(win, w, "win");
}

static int umpi__check_assert(int assert, int allowed)
{
    if ((assert & ~allowed) == 0)
        return MPI_SUCCESS;
    return umpi_err_create(MPI_ERR_ASSERT, "assert 0x%x in argument 'assert' has bits this call does not know "
                           "(0x%x)", (unsigned) assert, (unsigned) (assert & ~allowed));
}

static int umpi__check_rank(const umpi_win_t *w, int rank)
{
    if (rank >= 0 && rank < w->comm->size)
        return MPI_SUCCESS;
    return umpi_err_create(MPI_ERR_RANK, "invalid rank %d in argument 'rank' (window of %d ranks)", rank,
                           w->comm->size);
}

/* A range error reported by one target (an access outside its dynamic window's attached memory)
 * leaves the flush whole: the others are flushed too, and the first error comes back. */
static int umpi__flush_all(umpi_win_t *w)
{
    int err = MPI_SUCCESS;
    for (int r = 0; r < w->comm->size && (err == MPI_SUCCESS || umpi_err_class(err) == MPI_ERR_RMA_RANGE); r++) {
        int e = umpi_rma_flush_target(w, r);
        if (err == MPI_SUCCESS)
            err = e;
    }
    return err;
}

/* ---- fence ------------------------------------------------------------------------------------- */

int umpi_impl_win_fence(int assert, MPI_Win win)
{
    umpi_win_t *w;
    int err = umpi__window(win, &w);
    if (err == MPI_SUCCESS)
        err = umpi__check_assert(assert, MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED);
    if (err != MPI_SUCCESS)
        return err;
    if (w->lock_all || w->started || w->posted)
        return umpi_err_create(MPI_ERR_RMA_SYNC, "window 0x%x is in a %s epoch: no fence inside it",
                               (unsigned) win, w->lock_all ? "passive-target" : "PSCW");
    /* My operations are applied at their targets once flushed; the barrier then tells every rank
     * that all operations of the epoch are done (it serves requests while it waits). */
    umpi_lock();
    err = umpi__flush_all(w);
    /* CUDA IPC (ipc.c): my copies into others' device windows are done before the barrier, and my
     * own device window's earlier writes on the legacy stream before anyone copies after it */
    int ierr = umpi_rma_ipc_wait(w);
    if (ierr == MPI_SUCCESS)
        ierr = umpi_rma_ipc_expose(w);
    if (err == MPI_SUCCESS)
        err = ierr;
    umpi_unlock();
    if (err == MPI_SUCCESS || umpi_err_class(err) == MPI_ERR_RMA_RANGE) { /* the others wait for me */
        int berr = umpi_impl_barrier(w->comm, UMPI_COLL_BLOCKING, NULL);
        if (berr == MPI_SUCCESS)
            w->fence_epoch = !(assert & MPI_MODE_NOSUCCEED);
        if (err == MPI_SUCCESS)
            err = berr;
    }
    return err;
}

/* ---- passive target ----------------------------------------------------------------------------- */

#define UMPI__NOCHECK 0x100 /* in locked[]: a lock taken with MPI_MODE_NOCHECK, none held at the target */

static int umpi__lock(umpi_win_t *w, int lock_type, int rank, int assert)
{
    if (assert & MPI_MODE_NOCHECK) {
        w->locked[rank] = lock_type | UMPI__NOCHECK;
        return MPI_SUCCESS;
    }
    umpi_rma_hdr_t h = { .kind = UMPI_RMA_LOCK, .lock_type = lock_type };
    umpi_rma_status_t rs;
    int err = umpi_rma_request(w, rank, &h, NULL, NULL, &rs, 0);
    if (err == MPI_SUCCESS)
        w->locked[rank] = lock_type;
    return err;
}

static int umpi__unlock(umpi_win_t *w, int rank)
{
    int err;
    if (w->locked[rank] & UMPI__NOCHECK) {
        err = umpi_rma_flush_target(w, rank);
    } else {
        /* the puts land before the lock goes; the unlock's answer covers the requests */
        umpi_rma_hdr_t h = { .kind = UMPI_RMA_UNLOCK, .lock_type = w->locked[rank] };
        umpi_rma_status_t rs;
        err = umpi_rma_flush_ucx(w, rank);
        if (err == MPI_SUCCESS)
            err = umpi_rma_request(w, rank, &h, NULL, NULL, &rs, 0);
    }
    /* a range error of an earlier operation: the unlock is done all the same, the error reported */
    if (err == MPI_SUCCESS || umpi_err_class(err) == MPI_ERR_RMA_RANGE) {
        w->locked[rank] = 0;
        w->dirty[rank] = 0;
    }
    return err;
}

int umpi_impl_win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    umpi_win_t *w;
    int err = umpi__window(win, &w);
    if (err == MPI_SUCCESS && lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
        err = umpi_err_create(MPI_ERR_LOCKTYPE, "lock_type %d in argument 'lock_type' is neither "
                              "MPI_LOCK_SHARED nor MPI_LOCK_EXCLUSIVE", lock_type);
    if (err == MPI_SUCCESS)
        err = umpi__check_assert(assert, MPI_MODE_NOCHECK);
    if (err == MPI_SUCCESS && rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (err == MPI_SUCCESS)
        err = umpi__check_rank(w, rank);
    if (err != MPI_SUCCESS)
        return err;
    umpi_lock();
    if (w->locked[rank] || w->lock_all)
        err = umpi_err_create(MPI_ERR_RMA_SYNC, "rank %d in argument 'rank' is locked already on window 0x%x",
                              rank, (unsigned) win);
    else
        err = umpi__lock(w, lock_type, rank, assert);
    umpi_unlock();
    return err;
}

int umpi_impl_win_unlock(int rank, MPI_Win win)
{
    umpi_win_t *w;
    int err = umpi__window(win, &w);
    if (err == MPI_SUCCESS && rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (err == MPI_SUCCESS)
        err = umpi__check_rank(w, rank);
    if (err != MPI_SUCCESS)
        return err;
    umpi_lock();
    if (!w->locked[rank] || w->lock_all)
        err = umpi_err_create(MPI_ERR_RMA_SYNC, "rank %d in argument 'rank' is not locked by MPI_Win_lock on "
                              "window 0x%x", rank, (unsigned) win);
    else
        err = umpi__unlock(w, rank);
    umpi_unlock();
    return err;
}

int umpi_impl_win_lock_all(int assert, MPI_Win win)
{
    umpi_win_t *w;
    int err = umpi__window(win, &w);
    if (err == MPI_SUCCESS)
        err = umpi__check_assert(assert, MPI_MODE_NOCHECK);
    if (err != MPI_SUCCESS)
        return err;
    umpi_lock();
    int busy = w->lock_all;
    for (int r = 0; r < w->comm->size && !busy; r++)
        busy = w->locked[r] != 0;
    if (busy)
        err = umpi_err_create(MPI_ERR_RMA_SYNC, "window 0x%x is locked already", (unsigned) win);
    for (int r = 0; r < w->comm->size && err == MPI_SUCCESS; r++)
        err = umpi__lock(w, MPI_LOCK_SHARED, r, assert);
    if (err == MPI_SUCCESS)
        w->lock_all = 1;
    umpi_unlock();
    return err;
}

int umpi_impl_win_unlock_all(MPI_Win win)
{
    umpi_win_t *w;
    int err = umpi__window(win, &w);
    if (err != MPI_SUCCESS)
        return err;
    umpi_lock();
    if (!w->lock_all)
        err = umpi_err_create(MPI_ERR_RMA_SYNC, "window 0x%x is not locked by MPI_Win_lock_all", (unsigned) win);
    for (int r = 0; r < w->comm->size && (err == MPI_SUCCESS || umpi_err_class(err) == MPI_ERR_RMA_RANGE); r++) {
        int e = umpi__unlock(w, r);
        if (err == MPI_SUCCESS)
            err = e;
    }
    if (err == MPI_SUCCESS || umpi_err_class(err) == MPI_ERR_RMA_RANGE)
        w->lock_all = 0;
    umpi_unlock();
    return err;
}

/* Flushes need a passive-target epoch towards the rank (rank < 0: towards all). */
static int umpi__check_passive(const umpi_win_t *w, int rank)
{
    if (w->lock_all || (rank >= 0 && w->locked[rank]))
        return MPI_SUCCESS;
    if (rank < 0)
        for (int r = 0; r < w->comm->size; r++)
            if (w->locked[r])
                return MPI_SUCCESS;
    if (rank >= 0)
        return umpi_err_create(MPI_ERR_RMA_SYNC, "no passive-target epoch is open on window 0x%x towards rank %d "
                               "in argument 'rank' (MPI_Win_lock or MPI_Win_lock_all first)",
                               (unsigned) w->handle, rank);
    return umpi_err_create(MPI_ERR_RMA_SYNC, "no passive-target epoch is open on window 0x%x (MPI_Win_lock or "
                           "MPI_Win_lock_all first)", (unsigned) w->handle);
}

/* rank < 0: every rank (the _all forms). */
static int umpi__flush(MPI_Win win, int rank, int all, int local)
{
    umpi_win_t *w;
    int err = umpi__window(win, &w);
    if (err == MPI_SUCCESS && !all && rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (err == MPI_SUCCESS && !all)
        err = umpi__check_rank(w, rank);
    if (err != MPI_SUCCESS)
        return err;
    umpi_lock();
    err = umpi__check_passive(w, all ? -1 : rank);
    /* A local flush waits for the UCX puts and gets in flight (the messages' operations are
     * complete at the origin when their call returns: their data is sent or fetched). */
    if (err == MPI_SUCCESS)
        err = local ? umpi_rma_drain(w) : all ? umpi__flush_all(w) : umpi_rma_flush_target(w, rank);
    umpi_unlock();
    return err;
}

int umpi_impl_win_flush(int rank, MPI_Win win)
{
    return umpi__flush(win, rank, 0, 0);
}

int umpi_impl_win_flush_all(MPI_Win win)
{
    return umpi__flush(win, -1, 1, 0);
}

int umpi_impl_win_flush_local(int rank, MPI_Win win)
{
    return umpi__flush(win, rank, 0, 1);
}

int umpi_impl_win_flush_local_all(MPI_Win win)
{
    return umpi__flush(win, -1, 1, 1);
}

/* The unified model: public and private copies are one memory; a full barrier orders this
 * process's loads and stores with the ones MPI made, and a pass of progress applies what has come.
 * Inside a passive-target epoch only, as MPICH checks too. */
int umpi_impl_win_sync(MPI_Win win)
{
    umpi_win_t *w;
    int err = umpi__window(win, &w);
    if (err != MPI_SUCCESS)
        return err;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    umpi_lock();
    err = umpi__check_passive(w, -1);
    if (err != MPI_SUCCESS) {
        umpi_unlock();
        return err;
    }
    umpi_progress();
    umpi_unlock();
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return MPI_SUCCESS;
}

/* ---- PSCW -------------------------------------------------------------------------------------- */

/* Marks in mark[] the window ranks of the processes of group (MPI_ERR_GROUP for a process that is
 * not in the window); returns their number in *n. */
static int umpi__group_ranks(umpi_win_t *w, MPI_Group group, int *mark, int *n)
{
    umpi_group_t *g;
    int err = umpi_group_check(group, &g, "group");
    if (err != MPI_SUCCESS)
        return err;
    memset(mark, 0, (size_t) w->comm->size * sizeof(int));
    *n = 0;
    for (int i = 0; i < g->size; i++) {
        int r = umpi_group_rank_of(w->comm->group, g->world[i]);
        if (r == MPI_UNDEFINED)
            return umpi_err_create(MPI_ERR_GROUP, "process %d of group 0x%x in argument 'group' is not in the "
                                   "window's group", i, (unsigned) group);
        if (!mark[r])
            (*n)++;
        mark[r] = 1;
    }
    return MPI_SUCCESS;
}

/* An empty message on one of the PSCW tags. */
static int umpi__notify(umpi_win_t *w, int rank, int tag)
{
    ucp_ep_h ep;
    void *ucx_req = NULL;
    umpi_status_t st = umpi_ucx_ep(umpi_comm_to_world(w->comm, rank), &ep);
    if (st == UMPI_OK)
        st = umpi_ucx_send(ep, NULL, 0, umpi_ucx_send_tag(w->comm->context_id, w->comm->rank, tag), 0, NULL,
                           &ucx_req);
    if (st == UMPI_OK && umpi_ucx_wait(ucx_req) != UCS_OK)
        st = UMPI_ERR_OTHER;
    return st == UMPI_OK ? MPI_SUCCESS : umpi_err_from_status(st, "PSCW synchronization");
}

/* Receives the notification of rank on tag if it has come; 1 when it has. */
static int umpi__notified(umpi_win_t *w, int rank, int tag)
{
    ucp_tag_recv_info_t info;
    ucp_tag_message_h m = umpi_ucx_probe(umpi_ucx_send_tag(w->comm->context_id, rank, tag), ~(ucp_tag_t) 0, 1,
                                         &info);
    if (m == NULL)
        return 0;
    struct umpi_ucx_recv_wait rw;
    if (umpi_ucx_msg_recv_blocking(NULL, 0, m, &rw) != UMPI_OK)
        return 0;
    umpi_waiter_t waiter = {0};
    while (!rw.done)
        umpi_progress_step(&waiter);
    return 1;
}

int umpi_impl_win_post(MPI_Group group, int assert, MPI_Win win)
{
    umpi_win_t *w;
    int err = umpi__window(win, &w), n;
    if (err == MPI_SUCCESS)
        err = umpi__check_assert(assert, MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT);
    if (err != MPI_SUCCESS)
        return err;
    umpi_lock();
    if (w->posted)
        err = umpi_err_create(MPI_ERR_RMA_SYNC, "window 0x%x is posted already (MPI_Win_wait first)",
                              (unsigned) win);
    if (err == MPI_SUCCESS)
        err = umpi__group_ranks(w, group, w->post_ranks, &n);
    if (err == MPI_SUCCESS) /* origins may copy into my device memory through CUDA IPC once posted */
        err = umpi_rma_ipc_expose(w);
    for (int r = 0; r < w->comm->size && err == MPI_SUCCESS; r++)
        if (w->post_ranks[r])
            err = umpi__notify(w, r, UMPI_RMA_TAG_POST);
    if (err == MPI_SUCCESS) {
        w->posted = 1;
        w->completes = n;
    }
    umpi_unlock();
    return err;
}

int umpi_impl_win_start(MPI_Group group, int assert, MPI_Win win)
{
    umpi_win_t *w;
    int err = umpi__window(win, &w), n;
    if (err == MPI_SUCCESS)
        err = umpi__check_assert(assert, MPI_MODE_NOCHECK);
    if (err != MPI_SUCCESS)
        return err;
    umpi_lock();
    if (w->started)
        err = umpi_err_create(MPI_ERR_RMA_SYNC, "window 0x%x is started already (MPI_Win_complete first)",
                              (unsigned) win);
    if (err == MPI_SUCCESS)
        err = umpi__group_ranks(w, group, w->start_ranks, &n);
    /* Wait for every target's post (even with NOCHECK: the post is sent anyway, and taking it here
     * keeps the next epoch's from being confused with this one's). */
    for (int r = 0; r < w->comm->size && err == MPI_SUCCESS; r++) {
        umpi_waiter_t waiter = {0};
        while (w->start_ranks[r] && !umpi__notified(w, r, UMPI_RMA_TAG_POST))
            umpi_progress_step(&waiter);
    }
    if (err == MPI_SUCCESS)
        w->started = 1;
    umpi_unlock();
    return err;
}

int umpi_impl_win_complete(MPI_Win win)
{
    umpi_win_t *w;
    int err = umpi__window(win, &w);
    if (err != MPI_SUCCESS)
        return err;
    umpi_lock();
    if (!w->started)
        err = umpi_err_create(MPI_ERR_RMA_SYNC, "window 0x%x has no access epoch of MPI_Win_start",
                              (unsigned) win);
    if (err == MPI_SUCCESS) /* copies through CUDA IPC are done before a target hears of completion */
        err = umpi_rma_ipc_wait(w);
    for (int r = 0; r < w->comm->size && err == MPI_SUCCESS; r++)
        if (w->start_ranks[r]) {
            err = umpi_rma_flush_target(w, r);
            if (err == MPI_SUCCESS)
                err = umpi__notify(w, r, UMPI_RMA_TAG_COMPLETE);
        }
    if (err == MPI_SUCCESS) {
        w->started = 0;
        memset(w->start_ranks, 0, (size_t) w->comm->size * sizeof(int));
    }
    umpi_unlock();
    return err;
}

/* Takes the completions that have come; 1 when all have. */
static int umpi__take_completes(umpi_win_t *w)
{
    for (int r = 0; r < w->comm->size; r++)
        if (w->post_ranks[r] && umpi__notified(w, r, UMPI_RMA_TAG_COMPLETE)) {
            w->post_ranks[r] = 0;
            w->completes--;
        }
    if (w->completes > 0)
        return 0;
    w->posted = 0;
    return 1;
}

int umpi_impl_win_wait(MPI_Win win)
{
    umpi_win_t *w;
    int err = umpi__window(win, &w);
    if (err != MPI_SUCCESS)
        return err;
    umpi_lock();
    if (!w->posted) {
        umpi_unlock();
        return umpi_err_create(MPI_ERR_RMA_SYNC, "window 0x%x has no exposure epoch of MPI_Win_post",
                               (unsigned) win);
    }
    umpi_waiter_t waiter = {0};
    while (!umpi__take_completes(w))
        umpi_progress_step(&waiter);
    umpi_unlock();
    return MPI_SUCCESS;
}

int umpi_impl_win_test(MPI_Win win, int *flag)
{
    umpi_win_t *w;
    int err = umpi__window(win, &w);
    if (err != MPI_SUCCESS)
        return err;
    umpi_lock();
    if (!w->posted) {
        umpi_unlock();
        return umpi_err_create(MPI_ERR_RMA_SYNC, "window 0x%x has no exposure epoch of MPI_Win_post",
                               (unsigned) win);
    }
    umpi_progress();
    *flag = umpi__take_completes(w);
    umpi_unlock();
    return MPI_SUCCESS;
}
