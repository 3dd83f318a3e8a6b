/*
 * MPI_Comm_idup (MPI 4.1 sec. 7.4.2): the context-id agreement of MPI_Comm_dup run in the
 * background.
 *
 * At the call the new communicator is built at once (groups, error handler, hints, topology,
 * attributes through their copy callbacks) with no context yet (UMPI_CONTEXT_NONE), and its
 * handle is returned, as MPICH does. The agreement is the blocking one's (umpi_context_round_* of
 * src/core/context_round.c: window round, then fallback rounds with an owner), with the members'
 * proposals combined by a nonblocking allreduce: a fixed list of steps (recursive doubling over
 * the local group; on an intercommunicator, then an exchange between the leaders and a binomial
 * broadcast from the local leader), each step a posted receive and a send, advanced by a progress
 * hook that is registered while some idup is in flight. When a round finds a pair the communicator
 * takes it, and the request completes through the ordinary Wait/Test paths (kind UMPI_REQ_IDUP).
 *
 * Messages travel on the parent's collective context with the internal bit and the tag
 * IDUP | sequence number of this idup on the parent (umpi_coll_internal.h): they meet neither the
 * blocking internal collectives nor another idup on the same parent. Rounds and steps of one
 * idup between two processes follow each other in the same order at both, and UCX keeps the
 * order of one sender's messages with one tag, so the same tag serves every step.
 *
 * Thread contract: everything here runs with the big lock held (the hook inside umpi_progress);
 * copy callbacks (user code) run at the call, outside the lock.
 */
#include "api/umpi_comm.h"
#include "core/umpi_attr.h"
#include "core/umpi_request.h"
#include "core/umpi_topo.h"
#include "netmod/ucx/umpi_ucx.h"

#include <stdlib.h>
#include <string.h>

/* One step: an optional receive (posted first) and an optional send of the proposal. */
typedef struct {
    int send_world;   /* world rank to send the proposal to; -1: no send */
    int recv_src;     /* source id to receive from; -1: no receive */
    int my_src;       /* the source id my message carries */
    int tag;          /* the tag field, internal bit included */
    int combine;      /* 1: receive into tmp and AND it into the proposal; 0: receive the result */
} umpi__step_t;

typedef struct umpi__idup {
    umpi_request_t *req;
    umpi_comm_t *comm;            /* the new communicator (this agreement holds a reference) */
    uint32_t context;             /* the parent's collective context */
    int drop;                     /* the call failed after starting: release comm at the end */
    int ended;                    /* the agreement ended; completion waits for older idups */
    umpi_context_round_t round;
    umpi_context_mask_t m, tmp;   /* this round's proposal, a member's proposal received */
    int nsteps, cur, posted;
    void *send;                   /* UCX send in flight */
    struct umpi_ucx_recv_wait rw; /* the step's receive */
    int recv_pending;
    umpi_status_t st;             /* first failure of this step */
    struct umpi__idup *next;
    umpi__step_t steps[];
} umpi__idup_t;

static umpi__idup_t *umpi__active; /* idups in flight, oldest first, advanced by umpi__idup_poll */

/* ---- the step list ----------------------------------------------------------------------------- */

static void umpi__add(umpi__idup_t *d, int send_world, int recv_src, int my_src, int tag, int combine)
{
    umpi__step_t *s = &d->steps[d->nsteps++];
    s->send_world = send_world;
    s->recv_src = recv_src;
    s->my_src = my_src;
    s->tag = tag;
    s->combine = combine;
}

/* The most steps a local group of n members needs (see umpi__plan). */
static int umpi__max_steps(int n)
{
    int lg = 0;
    while ((1 << lg) < n)
        lg++;
    return 2 * lg + 4;
}

/*
 * The allreduce of the blocking agreement (coll/internal.c, comm.c) as a list of steps: recursive
 * doubling over the largest power of two p2 <= n, members above it folding into a partner below
 * and getting the result back; on an intercommunicator the two leaders then combine their groups'
 * results and each broadcasts to its group along a binomial tree.
 */
static void umpi__plan(umpi__idup_t *d, const umpi_comm_t *p, int seq)
{
    int n = p->size, r = p->rank;
    int base = (int) UMPI_UCX_INTERNAL_BIT | UMPI_COLL_TAG_IDUP | (seq & UMPI_COLL_TAG_IDUP_SEQ);
    int tag = base | (p->is_inter ? UMPI_COLL_TAG_LOCAL : 0);
    const int *wm = p->is_inter ? p->group->world : p->world_rank;
#define UMPI__W(i) (wm ? wm[i] : (i))
    int p2 = 1;
    while (p2 * 2 <= n)
        p2 *= 2;
    if (r >= p2) {
        umpi__add(d, UMPI__W(r - p2), -1, r, tag, 0);
        umpi__add(d, -1, r - p2, r, tag, 0);
    } else {
        if (r + p2 < n)
            umpi__add(d, -1, r + p2, r, tag, 1);
        for (int mask = 1; mask < p2; mask <<= 1)
            umpi__add(d, UMPI__W(r ^ mask), r ^ mask, r, tag, 1);
        if (r + p2 < n)
            umpi__add(d, UMPI__W(r + p2), -1, r, tag, 0);
    }
    if (!p->is_inter)
        return;
    if (r == 0) /* the leaders: rank 0 of each group, no LOCAL flag */
        umpi__add(d, umpi_comm_to_world(p, 0), 0, 0, base, 1);
    int mask = 1;
    for (; mask < n; mask <<= 1) {
        if (r & mask) {
            umpi__add(d, -1, r - mask, r, tag, 0);
            break;
        }
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (r + mask < n)
            umpi__add(d, UMPI__W(r + mask), -1, r, tag, 0);
#undef UMPI__W
}

/* ---- the state machine -------------------------------------------------------------------------- */

static void umpi__post(umpi__idup_t *d)
{
    const umpi__step_t *s = &d->steps[d->cur];
    d->st = UMPI_OK;
    d->posted = 1;
    if (s->recv_src >= 0) {
        void *buf = s->combine ? (void *) &d->tmp : (void *) &d->m;
        d->st = umpi_ucx_recv_blocking(buf, sizeof(d->m), umpi_ucx_send_tag(d->context, s->recv_src, s->tag),
                                       ~(ucp_tag_t) 0, &d->rw);
        d->recv_pending = d->st == UMPI_OK;
    }
    if (s->send_world >= 0 && d->st == UMPI_OK) {
        ucp_ep_h ep;
        d->st = umpi_ucx_ep(s->send_world, &ep);
        if (d->st == UMPI_OK)
            d->st = umpi_ucx_send(ep, &d->m, sizeof(d->m), umpi_ucx_send_tag(d->context, s->my_src, s->tag), 0,
                                  NULL, &d->send);
    }
}

/* 1 when the current step's operations are complete. */
static int umpi__step_done(umpi__idup_t *d)
{
    if (d->send != NULL) {
        ucs_status_t s = umpi_ucx_test_send(d->send);
        if (s == UCS_INPROGRESS)
            return 0;
        d->send = NULL;
        if (s != UCS_OK && d->st == UMPI_OK)
            d->st = umpi_ucx_status(s, "idup: internal send");
    }
    if (d->recv_pending) {
        if (!d->rw.done)
            return 0;
        d->recv_pending = 0;
        if (d->rw.status != UCS_OK && d->st == UMPI_OK)
            d->st = umpi_ucx_status(d->rw.status, "idup: internal receive");
    }
    return 1;
}

/* Advances d as far as it goes without waiting. 1 when the agreement ended (req->error says how);
 * *events counts the steps completed. */
static int umpi__advance(umpi__idup_t *d, unsigned *events)
{
    for (;;) {
        if (d->cur == d->nsteps) {
            uint32_t context;
            int res = umpi_context_round_result(&d->round, &d->m, &context);
            if (res > 0) {
                d->comm->context_id = context;
                umpi_context_take(&umpi_context_free, context);
                umpi_debug(2, "communicator 0x%x (idup): context %u", (unsigned) d->comm->handle,
                           (unsigned) context);
                return 1;
            }
            if (res < 0) {
                d->req->error = umpi_err_create(MPI_ERR_OTHER, "no context id is free at every member: each "
                                                "process can hold at most %d communicators at a time",
                                                UMPI_CONTEXT_PAIRS - 2);
                return 1;
            }
            /* an empty round (umpi_context_round_result gave the reservation back): again */
            umpi_context_round_propose(&d->round, &d->m);
            d->cur = 0;
            if (d->nsteps == 0) /* a lone member: other agreements hold the free pairs; next pass */
                return 0;
        }
        if (!d->posted)
            umpi__post(d);
        if (!umpi__step_done(d))
            return 0;
        (*events)++;
        if (d->st != UMPI_OK) {
            d->req->error = umpi_err_from_status(d->st, "agreeing on a context id (MPI_Comm_idup)");
            return 1;
        }
        if (d->steps[d->cur].combine)
            umpi_context_and(&d->m, &d->tmp);
        d->cur++;
        d->posted = 0;
    }
}

/* Advances d; 1 once its agreement ended (the reservation is given back at once). */
static int umpi__run(umpi__idup_t *d, unsigned *events)
{
    if (!d->ended && umpi__advance(d, events)) {
        umpi_context_round_end(&d->round);
        d->ended = 1;
    }
    return d->ended;
}

/* Whether an idup of d's parent started before d is still in flight. The idups of one parent
 * complete in the order they started, so that the completion of one (even a freed one's) follows
 * from the completion of a later one. */
static int umpi__older_pending(const umpi__idup_t *d)
{
    for (const umpi__idup_t *q = umpi__active; q != NULL && q != d; q = q->next)
        if (q->req->comm == d->req->comm)
            return 1;
    return 0;
}

/* The agreement ended: the request completes (and goes back to the pool if the user freed it). */
static void umpi__finish(umpi__idup_t *d)
{
    umpi_request_t *req = d->req;
    if (req->error != MPI_SUCCESS)
        req->net_status = UCS_ERR_IO_ERROR; /* takes umpi__completion_error_slow to req->error */
    if (d->drop)
        umpi_comm_release(d->comm); /* the user's reference: the call failed */
    umpi_comm_release(d->comm);
    free(d);
    umpi_status_set_empty(&req->status);
    req->done = 1;
    if (req->user_freed)
        umpi_request_release(req);
}

static unsigned umpi__idup_poll(void)
{
    unsigned events = 0;
    umpi__idup_t **p = &umpi__active;
    while (*p != NULL) {
        umpi__idup_t *d = *p;
        if (umpi__run(d, &events) && !umpi__older_pending(d)) {
            *p = d->next;
            umpi__finish(d);
        } else {
            p = &d->next;
        }
    }
    if (umpi__active == NULL)
        umpi_progress_unregister(umpi__idup_poll);
    return events;
}

/* ---- the calls ------------------------------------------------------------------------------------ */

int umpi_comm_idup_start(umpi_comm_t *parent, unsigned hints, MPI_Comm *newcomm, MPI_Request *request)
{
    int nmax = umpi__max_steps(parent->size);
    umpi__idup_t *d = calloc(1, sizeof(*d) + (size_t) nmax * sizeof(umpi__step_t));
    if (d == NULL)
        return umpi_err_create(MPI_ERR_NO_MEM, "out of memory starting MPI_Comm_idup");
    umpi_lock();
    d->req = umpi_request_alloc(UMPI_REQ_IDUP, parent);
    int err = d->req == NULL ? umpi_err_create(MPI_ERR_NO_MEM, "out of memory allocating a request")
                             : umpi_comm_new(parent, parent->group, parent->remote_group, UMPI_CONTEXT_NONE, newcomm);
    if (err != MPI_SUCCESS) {
        if (d->req != NULL)
            umpi_request_release(d->req);
        umpi_unlock();
        free(d);
        return err;
    }
    umpi_comm_t *c = umpi_comm_get(*newcomm);
    c->hints = hints;  /* MPI 4.1 sec. 7.4.2: hints duplicated (or given, by idup_with_info) */
    c->refcount++;     /* the agreement's reference */
    d->comm = c;
    d->context = parent->context_id + 1;
    umpi__plan(d, parent, (int) (parent->idup_seq++ & UMPI_COLL_TAG_IDUP_SEQ));
    umpi_context_round_begin(&d->round, parent->context_id);
    umpi_context_round_propose(&d->round, &d->m);
    unsigned events = 0;
    MPI_Request handle = d->req->handle;
    umpi_request_t *req = d->req;
    if (umpi__run(d, &events) && !umpi__older_pending(d)) {
        umpi__finish(d);
    } else {
        if (umpi__active == NULL && umpi_progress_register(umpi__idup_poll) != 0)
            umpi_die(1, "no room for the MPI_Comm_idup progress hook");
        umpi__idup_t **p = &umpi__active;
        while (*p != NULL)
            p = &(*p)->next;
        *p = d;
    }
    /* The same topology (sec. 7.4.2), then the attributes: copy callbacks are user code that may
     * call MPI, so they run outside the big lock (the agreement goes on meanwhile). */
    int nomem;
    c->topo = umpi_topo_dup(parent->topo, &nomem);
    umpi_unlock();
    err = nomem ? umpi_err_create(MPI_ERR_NO_MEM, "out of memory copying the topology of a communicator")
                : umpi_attr_list_copy(UMPI_OBJ_COMM, parent->handle, parent->attrs, c->handle, &c->attrs);
    if (err != MPI_SUCCESS) {
        /* The other members go on with the agreement: this one takes part to the end, then drops
         * the communicator, as if the user had freed both handles. */
        umpi_lock();
        if (req->done) {
            umpi_request_release(req);
            umpi_comm_release(c);
        } else {
            req->user_freed = 1;
            req->slow_done = 1;
            d->drop = 1;
        }
        umpi_unlock();
        *newcomm = MPI_COMM_NULL;
        *request = MPI_REQUEST_NULL;
        return err;
    }
    *request = handle;
    return MPI_SUCCESS;
}

int umpi_impl_comm_idup(umpi_comm_t *comm_ptr, MPI_Comm *newcomm, MPI_Request *request)
{
    return umpi_comm_idup_start(comm_ptr, comm_ptr->hints, newcomm, request);
}
