/*
 * Small receives that a device message's envelope passed by (interface and protocol:
 * umpi_p2p_gpu.h). A receive of at most T bytes (this process's envelope threshold) on host
 * memory keeps UCX's hashed matching, so it does not see envelopes; were the message it should
 * match a longer device message (MPI_ERR_TRUNCATE in MPI's terms), the envelope would wait in
 * UCX's unexpected queue and the receive forever. Instead:
 *
 *   sender (gpu_send.c)                             receiver (here)
 *   envelope unanswered for UMPI__NUDGE_FIRST_MS
 *   NUDGE (ctrl, receiver, R, NUDGE_ID) ----------> its own hashed receive, always posted
 *     again after 2x the wait (at most 50 ms)       the envelope still unexpected?  no: nothing
 *                                                   a pending receive that matches it, of at
 *                                                   most T bytes on host memory?    no: nothing
 *                                                   yes: the envelope (and its sender's older
 *                                                   messages) goes to the held list (gpu_probe.c),
 *                                                   the receive is cancelled in UCX and started
 *                                                   again: it takes the held envelope, and the
 *                                                   device protocol truncates (status: the
 *                                                   message's length; the sender completes)
 *
 * Why this way: the nudge is addressed to the receiver (its world rank in the source field), so
 * its receive is hashed like any other and host messages never meet it; nothing is added to the
 * receive paths but a list push and pop around MPI_Recv's request-less wait on a process that uses
 * CUDA (the pending receives with requests are found in the request pool when a nudge comes,
 * which is rare: only when a device message is not answered within milliseconds).
 *
 * Limits (only erroneous programs meet them): when several pending small receives match the
 * envelope, one of them gets it, not necessarily the first posted; and a later message on the
 * same tag that arrives before the nudge takes the receive the envelope should have had (the
 * envelope then waits for the next receive).
 */
#include "pt2pt/gpu_xfer.h"
#include "core/umpi_progress.h"
#include "pt2pt/umpi_p2p.h"

#include <string.h>

static struct umpi_p2p_gpu_nudge umpi__nudge_in;  /* where a nudge lands */
static struct umpi_p2p_gpu_nudge umpi__nudge_got; /* the one being handled */
static umpi_ucx_op_t umpi__nudge_op;              /* the posted receive (ucx_req NULL when none) */
static int umpi__nudge_arrived, umpi__hooked;

static unsigned umpi__late_hook(void);
static void umpi__post_nudge_recv(void);

static void umpi__cb_nudge(umpi_ucx_op_t *op, ucs_status_t st, const ucp_tag_recv_info_t *info)
{
    (void) op, (void) info;
    if (st != UCS_OK)
        return; /* cancelled at MPI_Finalize */
    umpi__nudge_got = umpi__nudge_in;
    umpi__nudge_arrived = 1;
    if (!umpi__hooked && umpi_progress_register(umpi__late_hook) == 0)
        umpi__hooked = 1;
}

/* A nudge already waiting completes it inside the call. */
static void umpi__post_nudge_recv(void)
{
    umpi__nudge_op.done = umpi__cb_nudge;
    if (umpi_ucx_recv_op(&umpi__nudge_in, sizeof(umpi__nudge_in),
                         umpi_p2p_gpu_ctrl_tag(umpi_global.rank, 1, UMPI_P2P_GPU_NUDGE_ID), ~(ucp_tag_t) 0,
                         &umpi__nudge_op) != UMPI_OK)
        umpi_log("warning", "cuda: cannot post the receive for nudges (%s): a small receive that a longer device "
                            "message matches will wait instead of failing", umpi_status_last_msg());
}

void umpi_p2p_gpu_late_start(void)
{
    if (umpi_cuda_active)
        umpi__post_nudge_recv();
}

/* Senders nudge while an envelope waits for its answer, so nudges may still be on their way when
 * the last one was taken: after MPI_Finalize's fence (every peer's sends flushed) they are
 * received and dropped, so that none is left in UCX's unexpected queue (UCX warns of each at
 * exit). The receive for nudges is cancelled first, and waited for until its completion comes. */
static void umpi__drain_nudges(void)
{
    ucp_tag_t tag = umpi_p2p_gpu_ctrl_tag(umpi_global.rank, 1, UMPI_P2P_GPU_NUDGE_ID);
    struct umpi_p2p_gpu_nudge sink;
    umpi_waiter_t w = {0};
    umpi_ucx_cancel_op(&umpi__nudge_op);
    while (umpi__nudge_op.ucx_req != NULL)
        umpi_progress_step(&w);
    for (;;) {
        ucp_tag_recv_info_t info;
        ucp_tag_message_h msg = umpi_ucx_probe(tag, ~(ucp_tag_t) 0, 1, &info);
        if (msg != NULL) {
            if (umpi_p2p_gpu_recv_probed(&sink, sizeof(sink), msg) != UMPI_OK)
                break;
            continue;
        }
        if (umpi_progress() == 0)
            break; /* nothing more arrived: the flushed ones are all here */
    }
}

void umpi_p2p_gpu_late_finalize(void)
{
    if (umpi_cuda_active)
        umpi__drain_nudges();
    if (umpi__hooked) {
        umpi_progress_unregister(umpi__late_hook);
        umpi__hooked = 0;
    }
    umpi__nudge_arrived = 0;
}

static int umpi__matches(uint32_t ctx, int src, int tag, uint32_t want_ctx, int want_src, int want_tag)
{
    return ctx == want_ctx && (want_src == MPI_ANY_SOURCE || want_src == src) &&
           (want_tag == MPI_ANY_TAG || want_tag == tag);
}

/* A pending small host receive with a request that the envelope (ctx, src, tag) should have met. */
static umpi_request_t *umpi__find_request(uint32_t ctx, int src, int tag)
{
    for (uint32_t c = 0; c < umpi_request_pool.nchunks; c++) {
        umpi_request_t *chunk = umpi_request_pool.chunks[c];
        for (uint32_t i = 0; i < UMPI_REQ_CHUNK; i++) {
            umpi_request_t *r = &chunk[i];
            size_t bytes;
            /* posted receives only: not a matched message being received (ucx_msg), nor one freed */
            if (r->kind != UMPI_REQ_RECV || r->done || r->ucx_req == NULL || r->ucx_msg != NULL || r->user_freed ||
                r->comm == NULL ||
                (r->persistent && !r->active) || !umpi__matches(ctx, src, tag, r->comm->context_id, r->peer, r->tag))
                continue;
            if (umpi_p2p_bytes(r->count, r->dt, &bytes) != MPI_SUCCESS || bytes > umpi_p2p_gpu_envelope_min)
                continue; /* receives longer than T (and device ones) see envelopes themselves */
            return r;
        }
    }
    return NULL;
}

/* The envelope of tag env_tag is in UCX's unexpected queue: is a receive waiting that it passed? */
static void umpi__handle_nudge(const struct umpi_p2p_gpu_nudge *n)
{
    ucp_tag_recv_info_t info;
    if (umpi_ucx_probe(n->env_tag, ~(ucp_tag_t) 0, 0, &info) == NULL)
        return; /* matched already (a receive that holds it is at work), or not here yet */
    uint32_t ctx = (uint32_t) (n->env_tag >> UMPI_UCX_CONTEXT_SHIFT);
    int src = umpi_ucx_tag_source(n->env_tag), tag = umpi_ucx_tag_tag(n->env_tag);
    struct umpi_p2p_waiting_recv *w = NULL;
    for (w = umpi_p2p_recv_waiting; w != NULL; w = w->next)
        if (!w->redirected && !w->wait->done && umpi__matches(ctx, src, tag, w->context, w->source, w->tag))
            break;
    umpi_request_t *r = w == NULL ? umpi__find_request(ctx, src, tag) : NULL;
    if (w == NULL && r == NULL)
        return; /* it waits for a receive still to come */
    /* the envelope, and its sender's older messages on ctx, to the held list: the restarted
     * receive (or, for MPI_Recv's wait, the one it restarts with) finds it there first */
    if (umpi_p2p_gpu_hold(ctx, src, tag, &info) != UMPI_OK) {
        umpi_debug(1, "cuda: a nudged envelope could not be taken: %s", umpi_status_last_msg());
        return;
    }
    umpi_cuda_slow_path(UMPI_CUDA_STAT_late_envelopes,
                        "cuda: a receive of at most %zu bytes from rank %d tag %d met a longer device message "
                        "of world rank %d (MPI_ERR_TRUNCATE)", umpi_p2p_gpu_envelope_min, src, tag, n->sender);
    if (w != NULL) {
        w->redirected = 1;
        umpi_ucx_cancel(w->wait->ucx_req);
        return;
    }
    umpi_ucx_cancel(r->ucx_req); /* completes r as cancelled, at once */
    if (!r->done) {
        umpi_debug(1, "cuda: a pending receive could not be cancelled to give it a device message");
        return;
    }
    r->done = 0;
    r->net_status = UCS_OK;
    r->ucx_req = NULL;
    umpi_status_set_cancelled(&r->status, 0);
    int err = umpi_p2p_irecv_start(r);
    if (err != MPI_SUCCESS) {
        r->error = err;
        r->done = 1;
    }
}

static unsigned umpi__late_hook(void)
{
    unsigned n = 0;
    while (umpi__nudge_arrived) {
        struct umpi_p2p_gpu_nudge got = umpi__nudge_got;
        umpi__nudge_arrived = 0;
        if (umpi__nudge_op.ucx_req == NULL)
            umpi__post_nudge_recv(); /* the next one (it may complete at once: the loop goes on) */
        umpi__handle_nudge(&got);
        n++;
    }
    if (umpi__hooked) {
        umpi_progress_unregister(umpi__late_hook);
        umpi__hooked = 0;
    }
    return n;
}
