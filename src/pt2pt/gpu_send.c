/*
 * The sender of the device protocol (umpi_p2p_gpu.h; the wire: gpu_wire.h). A device buffer goes
 * out whole through a host bounce when it is small or not contiguous (or the receiver does not use
 * CUDA); otherwise as an envelope, after which the sender's state machine waits for the reply,
 * nudging a receiver that leaves it unanswered, runs the pipeline when asked to, and completes.
 */
#include "pt2pt/gpu_xfer.h"
#include "core/umpi_progress.h"
#include "cuda/umpi_cuda_bounce.h"
#include "cuda/umpi_cuda_copy.h"
#include "pmi/umpi_pmi.h"
#include "pt2pt/umpi_p2p.h"

#include <stdlib.h>
#include <time.h>

/* The next transfer id of this process (gpu_wire.h: ids are per sender). */
static uint32_t umpi__next_id;

/* Nudges (gpu_late.c): an envelope unanswered this long makes the receiver look for a small
 * receive that it passed by; then again after twice the wait, up to UMPI__NUDGE_MAX apart. */
#define UMPI__NUDGE_FIRST 0.002
#define UMPI__NUDGE_MAX   0.05

/* The time, read at most once per progress pass (umpi_p2p_gpu_pass_now), from the coarse clock (a
 * few ns; its ms resolution is plenty here): a window of 64 envelopes waiting must not cost 64
 * clock reads per poll. */
static double umpi__now(void)
{
    if (umpi_p2p_gpu_pass_now == 0.0) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
        umpi_p2p_gpu_pass_now = (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
    }
    return umpi_p2p_gpu_pass_now;
}

static void umpi__cb_nudge_sent(umpi_ucx_op_t *op, ucs_status_t st, const ucp_tag_recv_info_t *info)
{
    umpi_p2p_gpu_xfer_t *x = op->user;
    (void) st, (void) info; /* a lost nudge is sent again later */
    x->nudging = 0;
    x->inflight--;
}

static void umpi__maybe_nudge(umpi_p2p_gpu_xfer_t *x)
{
    if (x->nudging)
        return;
    double now = umpi__now();
    if (now < x->nudge_at)
        return;
    x->nudge_wait = x->nudge_wait * 2 < UMPI__NUDGE_MAX ? x->nudge_wait * 2 : UMPI__NUDGE_MAX;
    x->nudge_at = now + x->nudge_wait;
    ucp_ep_h ep;
    if (umpi_ucx_ep(x->peer, &ep) != UMPI_OK)
        return;
    x->nudge = (struct umpi_p2p_gpu_nudge){ x->env_tag, x->id, umpi_global.rank };
    x->nudge_out = (umpi_ucx_op_t){ umpi__cb_nudge_sent, x, NULL };
    x->nudging = 1;
    x->inflight++;
    if (umpi_ucx_send_op(ep, &x->nudge, sizeof(x->nudge), umpi_p2p_gpu_ctrl_tag(x->peer, 1, UMPI_P2P_GPU_NUDGE_ID),
                         &x->nudge_out) != UMPI_OK) {
        x->nudging = 0;
        x->inflight--;
        return;
    }
    umpi_debug(3, "cuda: transfer %u: the envelope to world rank %d is unanswered: nudged", x->id, x->peer);
}

static void umpi__cb_reply(umpi_ucx_op_t *op, ucs_status_t st, const ucp_tag_recv_info_t *info)
{
    umpi_p2p_gpu_xfer_t *x = op->user;
    (void) info;
    x->reply_status = st;
    x->reply_arrived = 1;
    x->inflight--;
}

static void umpi__cb_envelope_sent(umpi_ucx_op_t *op, ucs_status_t st, const ucp_tag_recv_info_t *info)
{
    umpi_p2p_gpu_xfer_t *x = op->user;
    (void) info;
    x->env_status = st;
    x->env_done = 1;
    x->inflight--;
}

/* Small or non-contiguous: the bytes go through host memory as an ordinary message. */
static int umpi__send_staged(const void *buf, MPI_Count count, umpi_dtype_t *dt, size_t bytes, int world,
                             ucp_tag_t utag, umpi_send_mode_t mode, umpi_request_t *req)
{
    /* pinned (small messages): the copy engine writes it directly, a pack kernel too */
    void *host = NULL;
    umpi_status_t st = umpi_cuda_bounce_get(bytes ? bytes : 1, &host);
    if (st != UMPI_OK)
        return umpi_err_from_status(st, "staging a device send buffer");
    st = umpi_cuda_pack(dt, buf, count, host, bytes);
    if (st != UMPI_OK) {
        umpi_cuda_bounce_put(host, bytes ? bytes : 1);
        return umpi_err_from_status(st, "copying a device send buffer to host memory");
    }
    if (dt->contig) {
        umpi_cuda_stat_add(UMPI_CUDA_STAT_staged_copies);
        umpi_debug(3, "cuda: %zu bytes from device memory to world rank %d through a host bounce", bytes, world);
    }
    ucp_ep_h ep;
    void *ucx_req = NULL;
    st = umpi_ucx_ep(world, &ep);
    if (st == UMPI_OK)
        st = umpi_ucx_send(ep, host, bytes, utag, mode == UMPI_SEND_SYNC, req, &ucx_req);
    if (st != UMPI_OK) {
        umpi_cuda_bounce_put(host, bytes ? bytes : 1);
        return umpi_err_from_status(st, "sending a staged device buffer");
    }
    if (req != NULL) {
        if (req->tmp != NULL)
            umpi_request_free_tmp(req); /* a persistent request's bounce from its previous start */
        req->tmp = host; /* given back with the request */
        req->tmp_len = bytes ? bytes : 1;
        req->tmp_put = umpi_cuda_bounce_put;
        return MPI_SUCCESS;
    }
    int err = MPI_SUCCESS;
    ucs_status_t s = umpi_ucx_wait(ucx_req);
    if (s != UCS_OK)
        err = umpi_err_from_status(umpi_ucx_status(s, "send completion"), "sending a staged device buffer");
    umpi_cuda_bounce_put(host, bytes ? bytes : 1);
    return err;
}

static int umpi__same_node(int world)
{
    int a = umpi_pmi_node_of(world), b = umpi_pmi_node_of(umpi_global.rank);
    return a >= 0 && a == b;
}

/* Sends x's envelope on ep; the sender then waits for the reply. */
static void umpi__send_rts(umpi_p2p_gpu_xfer_t *x, ucp_ep_h ep)
{
    x->state = S_WAIT_REPLY;
    x->nudge_wait = UMPI__NUDGE_FIRST;
    umpi_p2p_gpu_pass_now = 0.0; /* a fresh reading: the last pass may be long ago */
    x->nudge_at = umpi__now() + x->nudge_wait;
    x->env_out = (umpi_ucx_op_t){ umpi__cb_envelope_sent, x, NULL };
    x->inflight++;
    umpi_status_t st = umpi_ucx_send_op(ep, &x->env, sizeof(x->env), x->env_tag, &x->env_out);
    if (st != UMPI_OK) {
        x->inflight--;
        x->env_done = 1;
        umpi_p2p_gpu_fail(x, st, "sending the envelope: %s", umpi_status_last_msg());
        umpi_ucx_cancel_op(&x->reply_in);
    }
}

static int umpi__advance_send(umpi_p2p_gpu_xfer_t *x);

/* Large and contiguous: the envelope protocol. */
static int umpi__send_envelope(const char *src, size_t bytes, int device, int world, ucp_tag_t utag,
                               umpi_comm_t *comm, umpi_request_t *req)
{
    int blocking = req == NULL;
    if (blocking) {
        req = umpi_request_alloc(UMPI_REQ_SEND, comm);
        if (req == NULL)
            return umpi_err_create(MPI_ERR_NO_MEM, "out of memory allocating a request");
    }
    umpi_p2p_gpu_xfer_t *x = umpi_p2p_gpu_xfer_new(X_SEND, umpi__advance_send);
    if (x == NULL) {
        if (blocking)
            umpi_request_release(req);
        return umpi_err_create(MPI_ERR_NO_MEM, "out of memory starting a device transfer");
    }
    x->req = req;
    x->peer = world;
    x->src = src;
    x->bytes = bytes;
    x->device = device;
    x->id = umpi__next_id++ & UMPI_P2P_GPU_ID_MASK;
    if (x->id == UMPI_P2P_GPU_NUDGE_ID) /* reserved for nudges' tag */
        x->id = umpi__next_id++ & UMPI_P2P_GPU_ID_MASK;
    x->env.magic = UMPI_P2P_GPU_ENV_MAGIC;
    x->env.id = x->id;
    x->env.sender = umpi_global.rank;
    x->env.bytes = bytes;
    x->env.chunk = umpi_config.cuda_pipeline_chunk > 0 ? umpi_config.cuda_pipeline_chunk : 524288;
    x->env_tag = utag | UMPI_P2P_GPU_ENVELOPE_BIT;

    umpi_status_t st = UMPI_OK;
    int usable = 0;
    if (world == umpi_global.rank) {
        x->env.kind = UMPI_P2P_GPU_ENV_SELF;
        x->env.desc.base = (uint64_t) (uintptr_t) src;
        x->env.desc.size = bytes;
    } else if (!umpi_config.cuda_ipc) {
        umpi_cuda_slow_path(UMPI_CUDA_STAT_pipe_fallback, "cuda: %zu bytes to world rank %d through the pipeline: "
                            "UMPI_CUDA_IPC=0", bytes, world);
    } else if (!umpi__same_node(world)) {
        umpi_cuda_slow_path(UMPI_CUDA_STAT_pipe_fallback, "cuda: %zu bytes to world rank %d through the pipeline: "
                            "it is on another node (no CUDA IPC)", bytes, world);
    } else {
        st = umpi_cuda_ipc_export(src, bytes, &x->env.desc, &usable);
        if (st == UMPI_OK && usable)
            x->env.kind = UMPI_P2P_GPU_ENV_IPC;
        else if (st == UMPI_OK)
            umpi_cuda_slow_path(UMPI_CUDA_STAT_pipe_fallback, "cuda: %zu bytes to world rank %d through the pipeline: "
                                "CUDA IPC cannot carry the buffer (ipc_fallback says why)", bytes, world);
    }
    if (x->env.kind == 0)
        x->env.kind = UMPI_P2P_GPU_ENV_PIPE;
    umpi_debug(3, "cuda: %zu bytes from device memory to world rank %d: envelope %s, transfer %u", bytes, world,
               x->env.kind == UMPI_P2P_GPU_ENV_SELF  ? "SELF"
               : x->env.kind == UMPI_P2P_GPU_ENV_IPC ? "IPC"
                                                     : "PIPE",
               x->id);

    ucp_ep_h ep;
    if (st == UMPI_OK)
        st = umpi_ucx_ep(world, &ep);
    if (st != UMPI_OK) {
        free(x);
        if (blocking)
            umpi_request_release(req);
        return umpi_err_from_status(st, "starting a device transfer");
    }
    /* The reply receive first: the answer may come before the envelope's send completes. */
    x->reply_in = (umpi_ucx_op_t){ umpi__cb_reply, x, NULL };
    x->inflight++;
    st = umpi_ucx_recv_op(&x->reply, sizeof(x->reply), umpi_p2p_gpu_ctrl_tag(world, 1, x->id), ~(ucp_tag_t) 0,
                          &x->reply_in);
    if (st != UMPI_OK) {
        free(x);
        if (blocking)
            umpi_request_release(req);
        return umpi_err_from_status(st, "posting the reply receive of a device transfer");
    }
    /* Through CUDA IPC the receiver's streams read the buffer, and they are not ordered after this
     * process's legacy stream: the envelope goes once the application's work queued there before
     * this send is done (the other kinds copy on this process's own blocking streams). Waited for
     * here, in the call: an envelope held back in progress until its fence passed was overtaken by
     * a later send's envelope to the same process (the strict fake driver, whose work completes in
     * any order, showed it), and messages from one sender must match in the order they were sent.
     * The wait is for work the application queued before the call; with none queued (the common
     * case: it synchronized first) it is one host-side query. */
    if (x->env.kind == UMPI_P2P_GPU_ENV_IPC && (st = umpi_cuda_fence()) != UMPI_OK) {
        umpi_p2p_gpu_fail(x, st, "fencing the send buffer: %s", umpi_status_last_msg());
        x->state = S_UNSENT;
    } else {
        umpi__send_rts(x, ep);
    }
    st = umpi_p2p_gpu_activate(x);
    if (st != UMPI_OK)
        umpi_p2p_gpu_fail(x, st, "%s", umpi_status_last_msg());
    if (!blocking)
        return MPI_SUCCESS;
    umpi_progress_wait(&req->done);
    MPI_Request h = req->handle;
    return umpi_p2p_request_complete(req, &h, MPI_STATUS_IGNORE);
}

int umpi_p2p_gpu_send(const void *buf, MPI_Count count, umpi_dtype_t *dt, size_t bytes, int device, int dest,
                      int tag, umpi_comm_t *comm, umpi_send_mode_t mode, umpi_request_t *req)
{
    int world = umpi_comm_to_world(comm, dest);
    ucp_tag_t utag = umpi_ucx_send_tag(comm->context_id, comm->rank, tag);
    umpi_status_t st = umpi_cuda_ctx_ensure(device);
    if (st != UMPI_OK)
        return umpi_err_from_status(st, "sending from device memory");
    if (req != NULL)
        req->error = MPI_SUCCESS;
    /* An envelope only for a message longer than both ends' thresholds: the receives that can hold
     * it are the ones that match envelopes (umpi_p2p_gpu.h). */
    size_t peer = umpi_p2p_gpu_peer_envelope_min(world);
    if (!dt->contig || bytes <= umpi_p2p_gpu_envelope_min || bytes <= peer) {
        if (peer == SIZE_MAX && dt->contig && bytes > umpi_p2p_gpu_envelope_min)
            umpi_cuda_slow_path(UMPI_CUDA_STAT_pipe_fallback, "cuda: %zu bytes to world rank %d whole through host "
                                "memory: that process does not use CUDA", bytes, world);
        return umpi__send_staged(buf, count, dt, bytes, world, utag, mode, req);
    }
    return umpi__send_envelope((const char *) buf + dt->true_lb, bytes, device, world, utag, comm, req);
}

/* Sender's state machine; returns nonzero when something changed. */
static int umpi__advance_send(umpi_p2p_gpu_xfer_t *x)
{
    switch (x->state) {
    case S_UNSENT:
        /* nothing was sent: the reply receive goes, the send fails */
        x->env_done = 1;
        x->env_status = UCS_OK;
        x->nudge_at = 1e300; /* no envelope to nudge about */
        umpi_ucx_cancel_op(&x->reply_in);
        x->state = S_WAIT_REPLY;
        return 1;
    case S_WAIT_REPLY:
        if (!x->reply_arrived) {
            umpi__maybe_nudge(x);
            return 0;
        }
        if (x->reply_status == UCS_ERR_CANCELED) {
            x->state = S_FINISH; /* cancelled after the envelope could not be sent */
        } else if (x->reply_status != UCS_OK) {
            umpi_p2p_gpu_fail(x, UMPI_ERR_TRANSPORT, "waiting for the receiver's reply: %s",
                              ucs_status_string(x->reply_status));
            x->state = S_FINISH;
        } else if (x->reply.kind == UMPI_P2P_GPU_REPLY_CTS) {
            size_t n = x->reply.bytes < x->bytes ? (size_t) x->reply.bytes : x->bytes;
            x->state = S_FINISH;
            if (n > 0) {
                umpi_status_t st = umpi_cuda_ctx_ensure(x->device);
                if (st == UMPI_OK)
                    st = umpi_cuda_pipe_start_chunk(&x->pipe, UMPI_CUDA_PIPE_SEND, (CUdeviceptr) (uintptr_t) x->src, n,
                                                    (size_t) x->env.chunk, &umpi_p2p_gpu_pipe_net, x);
                if (st != UMPI_OK) {
                    umpi_p2p_gpu_fail(x, st, "starting the pipeline: %s", umpi_status_last_msg());
                } else {
                    x->piping = 1;
                    x->state = S_PIPE;
                }
            }
        } else if (x->reply.kind != UMPI_P2P_GPU_REPLY_DONE) {
            umpi_p2p_gpu_fail(x, UMPI_ERR_INTERN, "a reply of unknown kind %u", x->reply.kind);
            x->state = S_FINISH;
        } else {
            x->state = S_FINISH;
        }
        return 1;
    case S_PIPE:
        if (!umpi_p2p_gpu_pipe_done(x))
            return 0;
        x->state = S_FINISH;
        return 1;
    case S_FINISH:
        if (!x->env_done)
            return 0;
        if (x->env_status != UCS_OK)
            umpi_p2p_gpu_fail(x, UMPI_ERR_TRANSPORT, "sending the envelope: %s", ucs_status_string(x->env_status));
        umpi_p2p_gpu_complete(x, UCS_OK);
        return 1;
    }
    return 0;
}

