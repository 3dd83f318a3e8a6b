/*
 * Transfers of the device protocol (umpi_p2p_gpu.h; the state in gpu_xfer.h): the envelope
 * thresholds, the list of active transfers and what becomes of them (failure, completion, free),
 * the pipeline's network, and the progress hook that runs the sender's and the receiver's state
 * machines (gpu_send.c, gpu_recv.c) while any transfer is active.
 */
#include "pt2pt/gpu_xfer.h"
#include "core/umpi_progress.h"
#include "cuda/umpi_cuda_bounce.h"
#include "cuda/umpi_cuda_copy.h"
#include "pmi/umpi_pmi.h"
#include "pt2pt/umpi_p2p.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- envelope thresholds ---------------------------------------------------------------------- */

#define UMPI__ENV_KEY "umpi.cuda.env"

/* This process's T (umpi_p2p_gpu.h); SIZE_MAX without CUDA, so that no receive ignores the bit. */
size_t umpi_p2p_gpu_envelope_min = SIZE_MAX;
/* Other processes' T, read from PMI on first use: 0 unknown, SIZE_MAX without CUDA. */
static size_t *umpi__peer_min;
static int umpi__npeers;

umpi_status_t umpi_p2p_gpu_init(int world_size)
{
    uint64_t t = 0;
    umpi_p2p_gpu_envelope_min = SIZE_MAX;
    if (umpi_cuda_active) {
        size_t thresh = umpi_config.cuda_stage_thresh, env = sizeof(struct umpi_p2p_gpu_envelope);
        umpi_p2p_gpu_envelope_min = thresh > env ? thresh : env;
        t = umpi_p2p_gpu_envelope_min;
    }
    free(umpi__peer_min);
    umpi__peer_min = calloc((size_t) world_size, sizeof(*umpi__peer_min));
    if (umpi__peer_min == NULL) {
        umpi_status_msg("out of memory for %d envelope thresholds", world_size);
        return UMPI_ERR_NOMEM;
    }
    umpi__npeers = world_size;
    return umpi_pmi_put(UMPI__ENV_KEY, &t, sizeof(t));
}

size_t umpi_p2p_gpu_peer_envelope_min(int w)
{
    if (w == umpi_global.rank)
        return umpi_p2p_gpu_envelope_min;
    if (w < 0 || w >= umpi__npeers)
        return SIZE_MAX;
    if (umpi__peer_min[w] == 0) {
        void *v = NULL;
        size_t len = 0;
        uint64_t t = 0;
        if (umpi_pmi_get(w, UMPI__ENV_KEY, &v, &len) == UMPI_OK && len == sizeof(t))
            memcpy(&t, v, sizeof(t));
        free(v);
        umpi__peer_min[w] = t == 0 ? SIZE_MAX : (size_t) t;
    }
    return umpi__peer_min[w];
}

/* ---- transfers -------------------------------------------------------------------------------- */

/* Active transfers, oldest first: the hook handles them in the order they started. */
static umpi_p2p_gpu_xfer_t *umpi__active, *umpi__tail;
static size_t umpi__nactive;
static int umpi__hooked;
static unsigned long umpi__seq;

/* Events for copies, kept for reuse. */
#define UMPI__EVENTS_KEEP 64
static CUevent umpi__events[UMPI__EVENTS_KEEP];
static int umpi__nevents;

static unsigned umpi__hook(void);

umpi_status_t umpi_p2p_gpu_event_get(CUevent *ev)
{
    if (umpi__nevents > 0) {
        *ev = umpi__events[--umpi__nevents];
        return UMPI_OK;
    }
    CUresult r = umpi_cuda_drv.cuEventCreate(ev, UMPI_CU_EVENT_DISABLE_TIMING);
    return r == UMPI_CUDA_SUCCESS ? UMPI_OK : umpi_cuda_fail("cuEventCreate", r);
}

static void umpi__event_put(CUevent ev)
{
    if (umpi__nevents < UMPI__EVENTS_KEEP)
        umpi__events[umpi__nevents++] = ev;
    else
        umpi_cuda_drv.cuEventDestroy(ev);
}

umpi_p2p_gpu_xfer_t *umpi_p2p_gpu_xfer_new(int dir, int (*advance)(umpi_p2p_gpu_xfer_t *x))
{
    umpi_p2p_gpu_xfer_t *x = calloc(1, sizeof(*x));
    if (x == NULL)
        return NULL;
    x->dir = dir;
    x->advance = advance;
    x->seq = ++umpi__seq;
    x->device = -1;
    return x;
}

umpi_status_t umpi_p2p_gpu_activate(umpi_p2p_gpu_xfer_t *x)
{
    x->next = NULL;
    x->prev = umpi__tail;
    if (umpi__tail != NULL)
        umpi__tail->next = x;
    else
        umpi__active = x;
    umpi__tail = x;
    umpi__nactive++;
    if (!umpi__hooked) {
        if (umpi_progress_register(umpi__hook) != 0) {
            umpi_status_msg("no room for the device-transfer progress hook");
            return UMPI_ERR_INTERN;
        }
        umpi__hooked = 1;
    }
    return UMPI_OK;
}

static void umpi__xfer_free(umpi_p2p_gpu_xfer_t *x)
{
    if (x->prev != NULL)
        x->prev->next = x->next;
    else
        umpi__active = x->next;
    if (x->next != NULL)
        x->next->prev = x->prev;
    else
        umpi__tail = x->prev;
    umpi__nactive--;
    if (x->ev != NULL)
        umpi__event_put(x->ev);
    if (x->ref != NULL)
        umpi_cuda_ipc_release(x->ref);
    umpi_cuda_bounce_put(x->bounce, x->bounce_size);
    free(x->staging);
    free(x);
}

void umpi_p2p_gpu_fail(umpi_p2p_gpu_xfer_t *x, umpi_status_t st, const char *fmt, ...)
{
    if (x->err != UMPI_OK)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->why, sizeof(x->why), fmt, ap);
    va_end(ap);
    x->err = st != UMPI_OK ? st : UMPI_ERR_OTHER;
    umpi_debug(1, "cuda: %s of a device message with world rank %d failed: %s",
               x->dir == X_SEND ? "send" : "receive", x->peer, x->why);
}

void umpi_p2p_gpu_complete(umpi_p2p_gpu_xfer_t *x, ucs_status_t net)
{
    umpi_request_t *r = x->req;
    x->state = X_DONE;
    if (r == NULL)
        return;
    x->req = NULL;
    r->net_status = net;
    if (x->err != UMPI_OK)
        r->error = umpi_err_create_comm(r->comm->handle, MPI_ERR_OTHER, "%s with world rank %d failed: %s",
                                        x->dir == X_SEND ? "send of a device buffer" : "receive of a device message",
                                        x->peer, x->why);
    r->ucx_req = NULL;
    r->done = 1;
    if (r->slow_done)
        umpi_p2p_complete_slow(r);
}

void umpi_p2p_gpu_recv_status(umpi_p2p_gpu_xfer_t *x, ucp_tag_t tag, size_t len)
{
    umpi_request_t *r = x->req;
    if (r == NULL)
        return;
    r->status.MPI_SOURCE = umpi_ucx_tag_source(tag);
    r->status.MPI_TAG = umpi_ucx_tag_tag(tag);
    umpi_status_set_bytes(&r->status, (MPI_Count) len);
}

/* ---- the pipeline's network: chunk sends and receives on (ctrl, sender, id) ------------------- */

static void umpi__chunk_done(umpi_ucx_op_t *o, ucs_status_t st, const ucp_tag_recv_info_t *info)
{
    struct umpi_p2p_gpu_chunk_op *op = o->user;
    umpi_p2p_gpu_xfer_t *x = op->x;
    int send = x->pipe.dir == UMPI_CUDA_PIPE_SEND;
    (void) info;
    op->used = 0;
    x->inflight--;
    umpi_cuda_pipe_net_done(&x->pipe, op->chunk,
                            st == UCS_OK ? UMPI_OK : umpi_ucx_status(st, send ? "pipeline chunk send"
                                                                              : "pipeline chunk receive"));
}

static umpi_status_t umpi__pipe_start_net(void *ctx, struct umpi_cuda_pipe *p, unsigned chunk, void *host, size_t len)
{
    umpi_p2p_gpu_xfer_t *x = ctx;
    struct umpi_p2p_gpu_chunk_op *op = NULL;
    for (unsigned i = 0; i < UMPI_CUDA_PIPE_MAX_BUFS && op == NULL; i++)
        if (!x->ops[i].used)
            op = &x->ops[i];
    if (op == NULL) {
        umpi_status_msg("more pipeline chunks in flight than staging buffers");
        return UMPI_ERR_INTERN;
    }
    *op = (struct umpi_p2p_gpu_chunk_op){ { umpi__chunk_done, op, NULL }, x, chunk, 1 };
    umpi_status_t st;
    x->inflight++;
    if (p->dir == UMPI_CUDA_PIPE_SEND) {
        ucp_ep_h ep;
        st = umpi_ucx_ep(x->peer, &ep);
        if (st == UMPI_OK)
            st = umpi_ucx_send_op(ep, host, len, umpi_p2p_gpu_ctrl_tag(umpi_global.rank, 0, x->id), &op->op);
    } else {
        st = umpi_ucx_recv_op(host, len, umpi_p2p_gpu_ctrl_tag(x->peer, 0, x->id), ~(ucp_tag_t) 0, &op->op);
    }
    if (st != UMPI_OK) {
        op->used = 0;
        x->inflight--;
    }
    return st;
}

const struct umpi_cuda_pipe_net umpi_p2p_gpu_pipe_net = { umpi__pipe_start_net };

int umpi_p2p_gpu_pipe_done(umpi_p2p_gpu_xfer_t *x)
{
    if (!umpi_cuda_pipe_progress(&x->pipe))
        return 0;
    x->piping = 0;
    if (x->pipe.status != UMPI_OK)
        umpi_p2p_gpu_fail(x, x->pipe.status, "%s", x->pipe.why);
    return 1;
}

/* ---- progress --------------------------------------------------------------------------------- */

double umpi_p2p_gpu_pass_now;

static unsigned umpi__hook(void)
{
    unsigned n = 0;
    umpi_p2p_gpu_pass_now = 0.0; /* read again when a waiting sender asks */
    /* copies and event queries need a context in this thread: under MPI_THREAD_MULTIPLE the
     * progress may run in a thread that never made one current */
    if (umpi_cuda_active && umpi_cuda_ctx_ensure(-1) != UMPI_OK)
        umpi_debug(1, "cuda: no context for the device transfers in this thread: %s", umpi_status_last_msg());
    for (umpi_p2p_gpu_xfer_t *x = umpi__active, *next; x != NULL; x = next) {
        next = x->next;
        int changed;
        do {
            changed = x->advance(x);
            n += (unsigned) changed;
        } while (changed && x->state != X_DONE);
        if (x->state == X_DONE && x->inflight == 0 && x->in_place.pending == 0 && !x->piping)
            umpi__xfer_free(x);
    }
    if (umpi__active == NULL && umpi__hooked) {
        umpi_progress_unregister(umpi__hook);
        umpi__hooked = 0;
    }
    return n;
}

void umpi_p2p_gpu_finalize(void)
{
    free(umpi__peer_min);
    umpi__peer_min = NULL;
    umpi__npeers = 0;
    umpi_p2p_gpu_envelope_min = SIZE_MAX;
    if (umpi__nactive != 0)
        umpi_debug(1, "cuda: %zu device transfer(s) still active at MPI_Finalize", umpi__nactive);
    size_t mappings = 0, in_use = 0, exports = 0, out = 0, pooled = 0;
    umpi_cuda_ipc_counts(&mappings, &in_use, &exports);
    umpi_cuda_stage_counts(&out, &pooled);
    if (in_use != 0 || out != 0)
        umpi_log("warning", "cuda: at MPI_Finalize %zu IPC mapping(s) and %zu staging buffer(s) are still in use",
                 in_use, out);
    if (umpi_cuda_active)
        umpi_debug(1, "cuda: at MPI_Finalize: %zu IPC mapping(s) cached, %zu in use; %zu pinned staging buffer(s) "
                      "pooled, %zu in use; %zu transfer(s) active", mappings, in_use, pooled, out, umpi__nactive);
    while (umpi__nevents > 0)
        umpi_cuda_drv.cuEventDestroy(umpi__events[--umpi__nevents]);
    if (umpi__hooked) {
        umpi_progress_unregister(umpi__hook);
        umpi__hooked = 0;
    }
    if (umpi_cuda_active)
        umpi_cuda_copy_finalize();
}
