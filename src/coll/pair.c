/*
 * Blocking collectives over two members, run without a schedule.
 *
 * Between two members the small-message algorithms are one exchange (or one message): building
 * steps, starting a phase and walking them back cost more than the messages themselves (callgrind,
 * 2 ranks, one 8-byte MPI_Allreduce: 1916 instructions, 390 of them building the schedule and 300
 * running it; bench/NOTES.md, "two-member collectives without a schedule"). Each function here is
 * the ALGORITHM it is listed with in algos.def (its pair column), run for p == 2 straight
 * from the call: the same messages with the same tag (the communicator's next collective sequence
 * number), so a member that runs the schedule instead (a device buffer at one member, a
 * non-contiguous type) still matches.
 *
 * Each returns 0 when it cannot take the call (a non-contiguous datatype: the schedule's requests
 * describe those to UCX), else 1 with the MPI error code in *err. Sends are posted before receives:
 * a receive that cannot be posted then leaves nothing of this call in flight once the send is
 * complete, and a send that cannot be posted leaves nothing at all (the order does not change
 * matching: messages reach the receive queue only while the progress engine polls).
 */
#include "coll/umpi_coll.h"
#include "core/umpi_progress.h"
#include "netmod/ucx/umpi_ucx.h"

#include <stdlib.h>
#include <string.h>

/* Reduction scratch up to this size lives on the stack (in place or a non-commutative op). */
#define UMPI__PAIR_STACK 2048

typedef struct {
    umpi_comm_t *comm;
    ucp_tag_t tag;
    int peer_world;
    umpi_ucx_counter_t cnt;
    umpi_ucx_done_t sdone, rdone;
    int err, send;       /* a post's error; whether a send was posted */
    size_t slen, rlen;
    void *rreq;          /* the receive while in flight (to cancel it) */
} umpi__pair_t;

/* The call's tag (consumes the sequence number, as umpi_sched_new does) and the peer. */
static inline void umpi__pair_init(umpi__pair_t *x, const umpi_coll_view_t *v, umpi_comm_t *comm)
{
    uint32_t seq = comm->coll_seq++ & UMPI_COLL_SEQ_MASK;
    int peer = v->rank ^ 1;
    x->comm = comm;
    x->peer_world = v->world ? v->world[peer] : peer;
    /* both members carry the same tag; only the source id differs (mine on sends, the peer's on receives) */
    x->tag = umpi_ucx_send_tag(comm->context_id + 1, 0, (int) (seq | v->tag_bits));
    x->cnt.pending = x->cnt.failed = 0;
    x->sdone.counter = x->rdone.counter = &x->cnt;
}

static inline ucp_tag_t umpi__pair_src(const umpi__pair_t *x, int src)
{
    return x->tag | umpi_ucx_send_tag(0, src, 0);
}

static int umpi__pair_msg_error(const umpi_ucx_done_t *d, int send, int peer, size_t len)
{
    if (d->status == UCS_ERR_MESSAGE_TRUNCATED)
        return umpi_err_create(MPI_ERR_TRUNCATE,
                               "collective message truncated: a process sent more data than this one "
                               "expects (%zu bytes): the processes' counts or datatypes do not match", len);
    return umpi_err_create(MPI_ERR_OTHER, "collective %s world rank %d failed: %s", send ? "send to" : "receive from",
                           peer, ucs_status_string((ucs_status_t) d->status));
}

/*
 * The exchange, posted: slen bytes at sbuf to the peer (when send) and rlen bytes from it into
 * rbuf (when recv). umpi__pair_wait completes it; local work in between overlaps the messages.
 */
static void umpi__pair_post(umpi__pair_t *x, const umpi_coll_view_t *v, const void *sbuf, size_t slen, void *rbuf,
                            size_t rlen, int send, int recv)
{
    ucp_datatype_t bytes = UMPI_UCX_DT_BYTES;
    umpi_status_t us;
    x->err = MPI_SUCCESS;
    x->send = send;
    x->slen = slen;
    x->rlen = rlen;
    x->rreq = NULL;
    if (send) {
        ucp_ep_h ep;
        us = umpi_ucx_ep(x->peer_world, &ep);
        if (us == UMPI_OK)
            us = umpi_ucx_send_light(ep, sbuf, slen, bytes, umpi__pair_src(x, v->my_src), &x->sdone);
        if (umpi_unlikely(us != UMPI_OK)) {
            x->err = umpi_err_from_status(us, "collective send");
            return; /* nothing in flight */
        }
    }
    if (recv) {
        int src = v->src ? v->src[v->rank ^ 1] : v->rank ^ 1;
        us = umpi_ucx_recv_light_req(rbuf, rlen, bytes, umpi__pair_src(x, src), &x->rdone, &x->rreq);
        if (umpi_unlikely(us != UMPI_OK))
            x->err = umpi_err_from_status(us, "collective receive");
    }
}

/* Waits for what umpi__pair_post started; an MPI error code. */
static int umpi__pair_wait(umpi__pair_t *x)
{
    /* Everything completes into x, on the caller's stack: nothing may stay in flight when this
     * returns. A send that failed (the peer cannot be reached) leaves a receive that would never
     * complete: it is cancelled. A failed receive leaves the send to UCX, which completes it
     * either way. */
    umpi_waiter_t w = {0};
    while (x->cnt.pending > 0) {
        umpi_progress_step(&w);
        if (umpi_unlikely(x->cnt.failed > 0) && x->send && x->sdone.status != UCS_OK &&
            x->sdone.status != UCS_ERR_MESSAGE_TRUNCATED && x->rreq != NULL && x->cnt.pending > 0) {
            umpi_ucx_cancel(x->rreq);
            x->rreq = NULL;
        }
    }
    if (umpi_unlikely(x->cnt.failed > 0) && x->err == MPI_SUCCESS) {
        if (x->send && x->sdone.status != UCS_OK)
            return umpi__pair_msg_error(&x->sdone, 1, x->peer_world, x->slen);
        return umpi__pair_msg_error(&x->rdone, 0, x->peer_world, x->rlen);
    }
    return x->err;
}

static int umpi__pair_xchg(umpi__pair_t *x, const umpi_coll_view_t *v, const void *sbuf, size_t slen, void *rbuf,
                           size_t rlen, int send, int recv)
{
    umpi__pair_post(x, v, sbuf, slen, rbuf, rlen, send, recv);
    return umpi__pair_wait(x);
}

/* The bytes of count elements of a contiguous dt at buf. */
static inline char *umpi__pair_data(const void *buf, const umpi_dtype_t *dt)
{
    return (char *) buf + dt->true_lb;
}

/* ---- allreduce: recursive doubling's one exchange ---------------------------------------------- */

int umpi_allreduce_pair(const umpi_coll_view_t *v, const umpi_coll_args_t *a, int *err)
{
    umpi_dtype_t *dt = a->rdt;
    if (!dt->contig)
        return 0;
    MPI_Count n = a->rcount;
    size_t len = (size_t) (n * dt->size);
    int r = v->rank, commute = umpi_op_is_commutative(a->op);
    umpi__pair_t x;
    umpi__pair_init(&x, v, a->comm);
    if (a->sbuf != MPI_IN_PLACE && (commute || r == 0)) {
        /* the partner's data straight into rbuf, then rbuf = mine op partner's */
        *err = umpi__pair_xchg(&x, v, umpi__pair_data(a->sbuf, dt), len, umpi__pair_data(a->rbuf, dt), len, 1, 1);
        if (*err == MPI_SUCCESS)
            umpi_op_apply(a->op, a->sbuf, a->rbuf, n, dt);
        return 1;
    }
    /* in place, or the higher member of a non-commutative op: the partner's data into scratch */
    char stack[UMPI__PAIR_STACK];
    char *tmp = len <= sizeof(stack) ? stack : malloc(len);
    if (tmp == NULL) {
        *err = umpi_err_create(MPI_ERR_OTHER, "out of memory for a %lld-element allreduce buffer", (long long) n);
        return 1;
    }
    void *tmp_buf = tmp - dt->true_lb; /* laid out as a buffer of dt */
    const void *mine = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
    *err = umpi__pair_xchg(&x, v, umpi__pair_data(mine, dt), len, tmp, len, 1, 1);
    if (*err == MPI_SUCCESS) {
        if (r == 1 || commute) {
            /* rbuf = partner's op mine: the lower member's data first (or the op commutes) */
            if (mine != a->rbuf)
                memcpy(umpi__pair_data(a->rbuf, dt), umpi__pair_data(mine, dt), len);
            umpi_op_apply(a->op, tmp_buf, a->rbuf, n, dt);
        } else {
            /* (in place) rbuf = mine op partner's, computed in the scratch */
            umpi_op_apply(a->op, a->rbuf, tmp_buf, n, dt);
            memcpy(umpi__pair_data(a->rbuf, dt), tmp, len);
        }
    }
    if (tmp != stack)
        free(tmp);
    return 1;
}

/* ---- reduce: the binomial tree of two ------------------------------------------------------------ */

int umpi_reduce_pair(const umpi_coll_view_t *v, const umpi_coll_args_t *a, int *err)
{
    umpi_dtype_t *dt = a->sdt;
    if (!dt->contig || !a->rdt->contig)
        return 0;
    MPI_Count n = a->scount;
    size_t len = (size_t) (n * dt->size);
    int r = v->rank, root = a->root, commute = umpi_op_is_commutative(a->op);
    const void *mine = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
    umpi__pair_t x;
    umpi__pair_init(&x, v, a->comm);
    /* The tree's top is the root for a commutative op, member 0 otherwise (which then sends the
     * result on to root 1: a second message on the same tag, matched in order). */
    int top = commute ? root : 0;
    if (r != top) {
        *err = umpi__pair_xchg(&x, v, umpi__pair_data(mine, dt), len, NULL, 0, 1, 0);
        if (*err == MPI_SUCCESS && r == root)
            *err = umpi__pair_xchg(&x, v, NULL, 0, umpi__pair_data(a->rbuf, a->rdt), len, 0, 1);
        return 1;
    }
    if (r == root && a->sbuf != MPI_IN_PLACE) {
        /* the partner's data straight into rbuf, then rbuf = mine op partner's (mine is the lower
         * member's, or the op commutes) */
        *err = umpi__pair_xchg(&x, v, NULL, 0, umpi__pair_data(a->rbuf, a->rdt), len, 0, 1);
        if (*err == MPI_SUCCESS)
            umpi_op_apply(a->op, a->sbuf, a->rbuf, n, dt);
        return 1;
    }
    char stack[UMPI__PAIR_STACK];
    char *tmp = len <= sizeof(stack) ? stack : malloc(len);
    if (tmp == NULL) {
        *err = umpi_err_create(MPI_ERR_OTHER, "out of memory for a %lld-element reduce", (long long) n);
        return 1;
    }
    void *tmp_buf = tmp - dt->true_lb;
    *err = umpi__pair_xchg(&x, v, NULL, 0, tmp, len, 0, 1);
    if (*err == MPI_SUCCESS) {
        if (r == root) {
            /* in place at the root (commutative, or root 0): rbuf = partner's op mine commutes, or
             * rbuf = mine op partner's computed in the scratch */
            if (commute) {
                umpi_op_apply(a->op, tmp_buf, a->rbuf, n, dt);
            } else {
                umpi_op_apply(a->op, a->rbuf, tmp_buf, n, dt);
                memcpy(umpi__pair_data(a->rbuf, a->rdt), tmp, len);
            }
        } else {
            /* member 0 of a non-commutative op, root 1: mine op partner's, sent to the root */
            umpi_op_apply(a->op, mine, tmp_buf, n, dt);
            *err = umpi__pair_xchg(&x, v, tmp, len, NULL, 0, 1, 0);
        }
    }
    if (tmp != stack)
        free(tmp);
    return 1;
}

/* ---- allgather (recursive doubling), alltoall (pairwise): blocks swapped ------------------------- */

int umpi_allgather_pair(const umpi_coll_view_t *v, const umpi_coll_args_t *a, int *err)
{
    if (!a->rdt->contig || (a->sbuf != MPI_IN_PLACE && !a->sdt->contig))
        return 0;
    int r = v->rank;
    size_t rlen = (size_t) (a->rcount * a->rdt->size);
    void *own = umpi_coll_at(a->rbuf, (MPI_Count) r * a->rcount, a->rdt);
    void *theirs = umpi_coll_at(a->rbuf, (MPI_Count) (r ^ 1) * a->rcount, a->rdt);
    umpi__pair_t x;
    umpi__pair_init(&x, v, a->comm);
    if (a->sbuf == MPI_IN_PLACE) {
        *err = umpi__pair_xchg(&x, v, umpi__pair_data(own, a->rdt), rlen, umpi__pair_data(theirs, a->rdt), rlen, 1, 1);
        return 1;
    }
    size_t slen = (size_t) (a->scount * a->sdt->size);
    umpi__pair_post(&x, v, umpi__pair_data(a->sbuf, a->sdt), slen, umpi__pair_data(theirs, a->rdt), rlen, 1, 1);
    umpi_coll_copy(a->sbuf, a->scount, a->sdt, own, a->rcount, a->rdt); /* while the peer's block travels */
    *err = umpi__pair_wait(&x);
    return 1;
}

int umpi_alltoall_pair(const umpi_coll_view_t *v, const umpi_coll_args_t *a, int *err)
{
    if (!a->rdt->contig || (a->sbuf != MPI_IN_PLACE && !a->sdt->contig))
        return 0;
    int r = v->rank, peer = r ^ 1;
    size_t rlen = (size_t) (a->rcount * a->rdt->size);
    void *rpeer = umpi_coll_at(a->rbuf, (MPI_Count) peer * a->rcount, a->rdt);
    umpi__pair_t x;
    umpi__pair_init(&x, v, a->comm);
    if (a->sbuf == MPI_IN_PLACE) {
        /* the block for the peer leaves before its block arrives in the same place */
        char stack[UMPI__PAIR_STACK];
        char *tmp = rlen <= sizeof(stack) ? stack : malloc(rlen ? rlen : 1);
        if (tmp == NULL) {
            *err = umpi_err_create(MPI_ERR_OTHER, "out of memory for an in-place alltoall");
            return 1;
        }
        memcpy(tmp, umpi__pair_data(rpeer, a->rdt), rlen);
        *err = umpi__pair_xchg(&x, v, tmp, rlen, umpi__pair_data(rpeer, a->rdt), rlen, 1, 1);
        if (tmp != stack)
            free(tmp);
        return 1;
    }
    size_t slen = (size_t) (a->scount * a->sdt->size);
    const void *speer = umpi_coll_at(a->sbuf, (MPI_Count) peer * a->scount, a->sdt);
    umpi__pair_post(&x, v, umpi__pair_data(speer, a->sdt), slen, umpi__pair_data(rpeer, a->rdt), rlen, 1, 1);
    /* my own block while the peer's travels */
    umpi_coll_copy(umpi_coll_at(a->sbuf, (MPI_Count) r * a->scount, a->sdt), a->scount, a->sdt,
                   umpi_coll_at(a->rbuf, (MPI_Count) r * a->rcount, a->rdt), a->rcount, a->rdt);
    *err = umpi__pair_wait(&x);
    return 1;
}

/* ---- barrier (dissemination), bcast (binomial) ----------------------------------------------------- */

int umpi_barrier_pair(const umpi_coll_view_t *v, const umpi_coll_args_t *a, int *err)
{
    umpi__pair_t x;
    umpi__pair_init(&x, v, a->comm);
    *err = umpi__pair_xchg(&x, v, NULL, 0, NULL, 0, 1, 1);
    return 1;
}

int umpi_bcast_pair(const umpi_coll_view_t *v, const umpi_coll_args_t *a, int *err)
{
    if (!a->rdt->contig)
        return 0;
    size_t len = (size_t) (a->rcount * a->rdt->size);
    int root = v->rank == a->root;
    umpi__pair_t x;
    umpi__pair_init(&x, v, a->comm);
    *err = umpi__pair_xchg(&x, v, umpi__pair_data(a->rbuf, a->rdt), len, umpi__pair_data(a->rbuf, a->rdt), len,
                           root, !root);
    return 1;
}
