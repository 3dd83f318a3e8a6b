/*
 * The receiver of the device protocol (umpi_p2p_gpu.h; the wire: gpu_wire.h). A receive into device
 * memory takes whatever matches into a host bounce; a receive that met an envelope (into device
 * memory, on host memory through the netmod's upcall, or after a matched probe) moves the data
 * itself: a copy from the sender's buffer (SELF, IPC) then DONE, or CTS then the pipeline's chunks,
 * into device memory through pinned buffers or straight into place in host memory.
 */
#include "pt2pt/gpu_xfer.h"
#include "cuda/umpi_cuda_bounce.h"
#include "cuda/umpi_cuda_copy.h"
#include "pt2pt/umpi_p2p.h"

#include <stdlib.h>
#include <string.h>

static void umpi__cb_reply_sent(umpi_ucx_op_t *op, ucs_status_t st, const ucp_tag_recv_info_t *info)
{
    umpi_p2p_gpu_xfer_t *x = op->user;
    (void) info;
    if (st != UCS_OK)
        umpi_p2p_gpu_fail(x, UMPI_ERR_TRANSPORT, "a control message failed: %s", ucs_status_string(st));
    x->inflight--;
}

/* Receiver: the reply to the sender (DONE, or CTS with the bytes wanted), fire and forget (x lives
 * until it has gone). */
static void umpi__reply(umpi_p2p_gpu_xfer_t *x, uint32_t kind, uint64_t bytes)
{
    ucp_ep_h ep;
    x->reply.kind = kind;
    x->reply.bytes = bytes;
    x->replied = 1;
    x->reply_out = (umpi_ucx_op_t){ umpi__cb_reply_sent, x, NULL };
    x->inflight++;
    umpi_status_t st = umpi_ucx_ep(x->peer, &ep);
    if (st == UMPI_OK)
        st = umpi_ucx_send_op(ep, &x->reply, sizeof(x->reply), umpi_p2p_gpu_ctrl_tag(umpi_global.rank, 1, x->id),
                              &x->reply_out);
    if (st != UMPI_OK) {
        x->inflight--;
        umpi_p2p_gpu_fail(x, st, "replying to the sender: %s", umpi_status_last_msg());
    }
}

/* Host receive buffer, pipelined sender: the chunks land in place. */
static umpi_status_t umpi__chunks_in_place(umpi_p2p_gpu_xfer_t *x, size_t n, size_t chunk)
{
    x->in_place_done.counter = &x->in_place;
    for (size_t off = 0; off < n; off += chunk) {
        size_t len = n - off < chunk ? n - off : chunk;
        umpi_status_t st = umpi_ucx_recv_light(x->dst + off, len, UMPI_UCX_DT_BYTES,
                                               umpi_p2p_gpu_ctrl_tag(x->peer, 0, x->id), &x->in_place_done);
        if (st != UMPI_OK)
            return st;
    }
    return UMPI_OK;
}

static int umpi__advance_recv(umpi_p2p_gpu_xfer_t *x);

static umpi_p2p_gpu_xfer_t *umpi__recv_new(umpi_request_t *r, size_t cap, int udev, int device)
{
    umpi_p2p_gpu_xfer_t *x = umpi_p2p_gpu_xfer_new(X_RECV, umpi__advance_recv);
    if (x == NULL)
        return NULL;
    x->req = r;
    x->ubuf = (void *) r->buf;
    x->ucount = r->count;
    x->udt = r->dt;
    x->udev = udev;
    x->device = device;
    x->cap = cap;
    r->error = MPI_SUCCESS;
    return x;
}

static void umpi__cb_device_recv(umpi_ucx_op_t *op, ucs_status_t st, const ucp_tag_recv_info_t *info)
{
    umpi_p2p_gpu_xfer_t *x = op->user;
    x->match_status = st;
    if (info != NULL && (st == UCS_OK || st == UCS_ERR_MESSAGE_TRUNCATED))
        x->info = *info;
    if (x->req != NULL)
        x->req->ucx_req = NULL;
    x->inflight--;
    x->state = R_MATCHED;
}

/* Where a message for a receive on device memory lands: a host bounce that also holds an envelope. */
static umpi_status_t umpi__bounce(umpi_p2p_gpu_xfer_t *x, size_t bytes)
{
    x->bounce_size = bytes > sizeof(struct umpi_p2p_gpu_envelope) ? bytes : sizeof(struct umpi_p2p_gpu_envelope);
    void *p = NULL;
    /* pinned when small: the copy into the device buffer reads it directly */
    umpi_status_t st = umpi_cuda_ctx_ensure(x->device);
    if (st == UMPI_OK)
        st = umpi_cuda_bounce_get(x->bounce_size, &p);
    x->bounce = p;
    return st;
}

int umpi_p2p_gpu_irecv(umpi_request_t *r, size_t bytes, int device)
{
    umpi_p2p_gpu_xfer_t *x = umpi__recv_new(r, bytes, 1, device);
    if (x == NULL)
        return umpi_err_create(MPI_ERR_NO_MEM, "out of memory starting a receive into device memory");
    umpi_status_t st = umpi__bounce(x, bytes);
    if (st != UMPI_OK) {
        free(x);
        return umpi_err_from_status(st, "receiving into device memory");
    }
    ucp_tag_t tag, mask;
    umpi_ucx_recv_tag(r->comm->context_id, r->peer, r->tag, &tag, &mask);
    /* every receive into device memory matches envelopes: its bounce holds one (a message longer
     * than the buffer is truncated by the device protocol) */
    mask &= ~UMPI_P2P_GPU_ENVELOPE_BIT;
    x->match_in = (umpi_ucx_op_t){ umpi__cb_device_recv, x, NULL };
    x->state = R_POSTED;
    x->inflight++;
    st = umpi_ucx_recv_op(x->bounce, x->bounce_size, tag, mask, &x->match_in);
    if (st != UMPI_OK) {
        umpi_cuda_bounce_put(x->bounce, x->bounce_size);
        free(x);
        return umpi_err_from_status(st, "receiving into device memory");
    }
    r->ucx_req = x->match_in.ucx_req; /* for MPI_Cancel; NULL when it matched at once */
    st = umpi_p2p_gpu_activate(x);
    return st == UMPI_OK ? MPI_SUCCESS : umpi_err_from_status(st, "receiving into device memory");
}

void umpi_p2p_gpu_envelope_matched(umpi_request_t *r, ucs_status_t st, const ucp_tag_recv_info_t *info)
{
    size_t cap = (size_t) (r->count * r->dt->size);
    umpi_p2p_gpu_xfer_t *x = umpi__recv_new(r, cap, 0, -1);
    if (x == NULL) {
        /* no memory: the receive fails; the sender is never answered (as if it hung) */
        r->error = umpi_err_create(MPI_ERR_NO_MEM, "out of memory receiving a device message");
        r->done = 1;
        if (r->slow_done)
            umpi_p2p_complete_slow(r);
        return;
    }
    x->match_status = st;
    x->info = *info;
    if (st == UCS_OK && info->length >= sizeof(x->env)) {
        /* the envelope landed in the user's buffer (it is overwritten by the data later) */
        if (r->dt->contig)
            memcpy(&x->env, (const char *) r->buf + r->dt->true_lb, sizeof(x->env));
        else
            umpi_dtype_pack_range(r->dt, r->buf, r->count, 0, &x->env, (MPI_Count) sizeof(x->env));
    } else {
        x->env_unreadable = 1;
    }
    x->state = R_MATCHED;
    if (umpi_p2p_gpu_activate(x) != UMPI_OK)
        umpi_p2p_gpu_fail(x, UMPI_ERR_INTERN, "%s", umpi_status_last_msg());
}

/* Data in place (in dst): the final unpack when the user's type is not contiguous. */
static void umpi__recv_finish(umpi_p2p_gpu_xfer_t *x)
{
    if (x->err == UMPI_OK && x->staging != NULL && x->n > 0) {
        if (x->udev) {
            umpi_status_t st = umpi_cuda_unpack(x->udt, x->ubuf, x->ucount, x->staging, x->n);
            if (st != UMPI_OK)
                umpi_p2p_gpu_fail(x, st, "%s", umpi_status_last_msg());
        } else {
            umpi_dtype_unpack_range(x->udt, x->ubuf, x->ucount, 0, x->staging, (MPI_Count) x->n);
        }
    }
    umpi_p2p_gpu_recv_status(x, x->env_tag, x->msg_len);
    umpi_p2p_gpu_complete(x, x->msg_len > x->cap ? UCS_ERR_MESSAGE_TRUNCATED : UCS_OK);
}

/* Starts moving the data an envelope announced. */
static void umpi__recv_protocol(umpi_p2p_gpu_xfer_t *x)
{
    const struct umpi_p2p_gpu_envelope *e = &x->env;
    if (e->magic != UMPI_P2P_GPU_ENV_MAGIC || e->kind < UMPI_P2P_GPU_ENV_SELF || e->kind > UMPI_P2P_GPU_ENV_PIPE) {
        umpi_p2p_gpu_fail(x, UMPI_ERR_INTERN, "a device-message envelope with magic %#x kind %u: not from this umpi",
                          e->magic, e->kind);
        umpi_p2p_gpu_recv_status(x, x->env_tag, 0);
        umpi_p2p_gpu_complete(x, UCS_OK);
        return;
    }
    x->peer = e->sender;
    x->id = e->id;
    x->msg_len = (size_t) e->bytes;
    x->n = x->msg_len < x->cap ? x->msg_len : x->cap;
    int contig = x->udt->contig;
    if (contig) {
        x->dst = (char *) x->ubuf + x->udt->true_lb;
    } else {
        x->staging = malloc(x->n ? x->n : 1);
        if (x->staging == NULL) {
            umpi_p2p_gpu_fail(x, UMPI_ERR_NOMEM, "out of memory staging a %zu-byte receive", x->n);
            x->n = 0;
        }
        x->dst = x->staging;
    }
    int dst_dev = contig && x->udev;
    umpi_status_t st = UMPI_OK;
    if (umpi_cuda_active)
        st = umpi_cuda_ctx_ensure(x->udev ? x->device : (int) e->desc.device);
    if (st != UMPI_OK) {
        umpi_p2p_gpu_fail(x, st, "%s", umpi_status_last_msg());
        x->n = 0;
    }
    if (x->n == 0 && e->kind != UMPI_P2P_GPU_ENV_PIPE) {
        umpi__reply(x, UMPI_P2P_GPU_REPLY_DONE, 0);
        x->state = R_FINISH;
        return;
    }
    const char *from = NULL;
    if (e->kind == UMPI_P2P_GPU_ENV_SELF) {
        from = (const char *) (uintptr_t) (e->desc.base + e->desc.offset);
        umpi_cuda_stat_add(UMPI_CUDA_STAT_self_copies);
    } else if (e->kind == UMPI_P2P_GPU_ENV_IPC && !umpi_cuda_active) {
        /* this process does not use CUDA (UMPI_CUDA=0, no driver): the pipeline into host memory */
        umpi_debug(1, "cuda: a device message from world rank %d comes through the pipeline: CUDA is not in "
                      "use here", x->peer);
    } else if (e->kind == UMPI_P2P_GPU_ENV_IPC) {
        void *p = NULL;
        st = umpi_cuda_ipc_open(x->peer, &e->desc, x->n, &p, &x->ref);
        if (st != UMPI_OK) {
            umpi_p2p_gpu_fail(x, st, "%s", umpi_status_last_msg());
            umpi__reply(x, UMPI_P2P_GPU_REPLY_DONE, 0);
            x->state = R_FINISH;
            return;
        }
        from = p; /* NULL: the driver refused the handle (counted): the pipeline instead */
        if (p != NULL)
            umpi_cuda_stat_add(UMPI_CUDA_STAT_ipc_transfers);
    }
    if (from != NULL) {
        /* A host buffer may be the buffer of other receives as well (OSU's bandwidth tests post a
         * window of receives into one buffer): their envelopes land in its first bytes, written by
         * UCX while this copy may still be running on the GPU. So the GPU writes all but those
         * bytes, and the CPU puts them in place when the copy is done, in the progress engine,
         * where UCX writes too (an envelope is read in the callback that tells of its arrival). */
        x->head_len = !dst_dev && contig ? (x->n < sizeof(x->head) ? x->n : sizeof(x->head)) : 0;
        st = umpi_p2p_gpu_event_get(&x->ev);
        if (st == UMPI_OK && x->head_len > 0)
            st = umpi_cuda_copy_start(x->head, from, x->head_len, x->ev);
        if (st == UMPI_OK && x->n > x->head_len)
            st = umpi_cuda_copy_start(x->dst + x->head_len, from + x->head_len, x->n - x->head_len, x->ev);
        if (st != UMPI_OK) {
            umpi_p2p_gpu_fail(x, st, "%s", umpi_status_last_msg());
            umpi__reply(x, UMPI_P2P_GPU_REPLY_DONE, 0);
            x->state = R_FINISH;
            return;
        }
        umpi_debug(3, "cuda: %zu bytes from world rank %d copied %s (transfer %u)", x->n, x->peer,
                   e->kind == UMPI_P2P_GPU_ENV_SELF ? "within this process" : "through CUDA IPC", x->id);
        x->state = R_COPY;
        return;
    }
    /* PIPE (or IPC refused): ask for what fits, then take the chunks */
    umpi__reply(x, UMPI_P2P_GPU_REPLY_CTS, x->n);
    x->state = R_FINISH;
    if (x->n == 0 || x->err != UMPI_OK)
        return;
    if (dst_dev) {
        st = umpi_cuda_pipe_start_chunk(&x->pipe, UMPI_CUDA_PIPE_RECV, (CUdeviceptr) (uintptr_t) x->dst, x->n,
                                        (size_t) e->chunk, &umpi_p2p_gpu_pipe_net, x);
        if (st == UMPI_OK) {
            x->piping = 1;
            x->state = R_PIPE;
        }
    } else {
        st = umpi__chunks_in_place(x, x->n, (size_t) e->chunk);
        x->state = R_CHUNKS;
    }
    if (st != UMPI_OK)
        umpi_p2p_gpu_fail(x, st, "receiving pipeline chunks: %s", umpi_status_last_msg());
}

/* A receive matched: the message itself (device receive buffers only) or an envelope. */
static void umpi__recv_matched(umpi_p2p_gpu_xfer_t *x)
{
    ucs_status_t st = x->match_status;
    umpi_request_t *r = x->req;
    if (st == UCS_ERR_CANCELED) {
        if (r != NULL)
            umpi_status_set_cancelled(&r->status, 1);
        umpi_p2p_gpu_complete(x, UCS_ERR_CANCELED);
        return;
    }
    if (st != UCS_OK && st != UCS_ERR_MESSAGE_TRUNCATED) {
        umpi_p2p_gpu_fail(x, UMPI_ERR_TRANSPORT, "%s", ucs_status_string(st));
        umpi_p2p_gpu_complete(x, UCS_OK);
        return;
    }
    x->env_tag = x->info.sender_tag;
    if (umpi_p2p_gpu_is_envelope(x->info.sender_tag)) {
        if (x->env_unreadable || st != UCS_OK) {
            /* cannot happen: only receives that hold an envelope see envelopes (device bounces are
             * at least its size, host receives longer than the threshold) */
            umpi_p2p_gpu_fail(x, UMPI_ERR_INTERN, "an envelope did not fit a %zu-byte receive buffer", x->cap);
            umpi_p2p_gpu_recv_status(x, x->info.sender_tag, x->cap);
            umpi_p2p_gpu_complete(x, UCS_OK);
            return;
        }
        if (x->bounce != NULL)
            memcpy(&x->env, x->bounce, sizeof(x->env));
        umpi__recv_protocol(x);
        return;
    }
    /* An ordinary message into a device buffer: it is in the bounce. */
    size_t len = x->info.length;
    x->msg_len = len;
    if (st == UCS_ERR_MESSAGE_TRUNCATED || len > x->cap) {
        umpi_p2p_gpu_recv_status(x, x->info.sender_tag, len);
        umpi_p2p_gpu_complete(x, UCS_ERR_MESSAGE_TRUNCATED);
        return;
    }
    x->n = len;
    umpi_cuda_stat_add(UMPI_CUDA_STAT_staged_copies);
    umpi_status_t us = umpi_cuda_ctx_ensure(x->device);
    if (us == UMPI_OK && !x->udt->contig) {
        us = umpi_cuda_unpack(x->udt, x->ubuf, x->ucount, x->bounce, len);
    } else if (us == UMPI_OK && len > 0) {
        us = umpi_p2p_gpu_event_get(&x->ev);
        if (us == UMPI_OK)
            us = umpi_cuda_copy_start((char *) x->ubuf + x->udt->true_lb, x->bounce, len, x->ev);
        if (us == UMPI_OK) {
            x->state = R_COPY;
            return;
        }
    }
    if (us != UMPI_OK)
        umpi_p2p_gpu_fail(x, us, "%s", umpi_status_last_msg());
    umpi_p2p_gpu_recv_status(x, x->info.sender_tag, len);
    umpi_p2p_gpu_complete(x, UCS_OK);
}

/* Receiver's state machine; returns nonzero when something changed. */
static int umpi__advance_recv(umpi_p2p_gpu_xfer_t *x)
{
    switch (x->state) {
    case R_MATCHED:
        umpi__recv_matched(x);
        return 1;
    case R_COPY: {
        CUresult r = umpi_cuda_drv.cuEventQuery(x->ev);
        if (r == UMPI_CUDA_ERROR_NOT_READY)
            return 0;
        if (r != UMPI_CUDA_SUCCESS) {
            char buf[160];
            umpi_p2p_gpu_fail(x, UMPI_ERR_OTHER, "the copy into the receive buffer failed: %s",
                              umpi_cuda_strerror(r, buf, sizeof(buf)));
        }
        if (x->ref != NULL) {
            umpi_cuda_ipc_release(x->ref);
            x->ref = NULL;
        }
        if (x->head_len > 0 && r == UMPI_CUDA_SUCCESS)
            memcpy(x->dst, x->head, x->head_len);
        if (umpi_p2p_gpu_is_envelope(x->env_tag)) {
            umpi__reply(x, UMPI_P2P_GPU_REPLY_DONE, 0); /* the sender's buffer is free again */
            x->state = R_FINISH;
        } else {
            umpi_p2p_gpu_recv_status(x, x->info.sender_tag, x->n);
            umpi_p2p_gpu_complete(x, UCS_OK);
        }
        return 1;
    }
    case R_PIPE:
        if (!umpi_p2p_gpu_pipe_done(x))
            return 0;
        x->state = R_FINISH;
        return 1;
    case R_CHUNKS:
        if (x->in_place.pending > 0)
            return 0;
        if (x->in_place.failed)
            umpi_p2p_gpu_fail(x, UMPI_ERR_TRANSPORT, "receiving a pipeline chunk: %s",
                              ucs_status_string((ucs_status_t) x->in_place_done.status));
        x->state = R_FINISH;
        return 1;
    case R_FINISH:
        umpi__recv_finish(x);
        return 1;
    }
    return 0;
}

int umpi_p2p_gpu_mrecv(umpi_request_t *r, ucp_tag_message_h msg, size_t bytes, int dst_device, int dst_is_dev)
{
    umpi_p2p_gpu_xfer_t *x = umpi__recv_new(r, bytes, dst_is_dev, dst_device);
    if (x == NULL)
        return umpi_err_create(MPI_ERR_NO_MEM, "out of memory receiving a matched message");
    if (r->tmp != NULL) {
        /* the envelope was read at the probe */
        memcpy(&x->env, r->tmp, sizeof(x->env));
        free(r->tmp);
        r->tmp = NULL;
        x->match_status = UCS_OK;
        x->info.sender_tag = umpi_ucx_send_tag(r->comm->context_id, r->status.MPI_SOURCE, r->status.MPI_TAG) |
                             UMPI_P2P_GPU_ENVELOPE_BIT;
        x->info.length = sizeof(x->env);
        x->state = R_MATCHED;
    } else {
        /* UCX reports nothing for a matched message received at once: the probe's status stands for it */
        x->info.sender_tag = umpi_ucx_send_tag(r->comm->context_id, r->status.MPI_SOURCE, r->status.MPI_TAG);
        x->info.length = (size_t) umpi_status_get_bytes(&r->status);
        umpi_status_t st = umpi__bounce(x, bytes);
        if (st == UMPI_OK) {
            ucp_tag_recv_info_t probed = x->info;
            x->match_in = (umpi_ucx_op_t){ umpi__cb_device_recv, x, NULL };
            x->state = R_POSTED;
            x->inflight++;
            st = umpi_ucx_msg_recv_op(x->bounce, x->bounce_size, msg, &probed, &x->match_in);
        }
        if (st != UMPI_OK) {
            umpi_cuda_bounce_put(x->bounce, x->bounce_size);
            free(x);
            return umpi_err_from_status(st, "receiving a matched message into device memory");
        }
    }
    umpi_status_t st = umpi_p2p_gpu_activate(x);
    return st == UMPI_OK ? MPI_SUCCESS : umpi_err_from_status(st, "receiving a matched message");
}
