/*
 * Point-to-point on device buffers over a UCX that cannot touch GPU memory (Debian's). Interface:
 * umpi_cuda_p2p.h. The rule that shapes everything: a device pointer never reaches UCX or a CPU
 * copy; UCX only ever sees host memory.
 *
 * Which path a message takes is decided by the sender from its own buffer; the receiver learns it
 * from what matches its receive:
 *
 *   sender buffer       size                    on the wire (user context, user tag)
 *   host                any                     the data, as always (device code never runs)
 *   device, contiguous  <= UMPI_CUDA_STAGE_THRESH  the data, copied to a host bounce first
 *   device, derived     any                     the packed data (packed through host memory)
 *   device, contiguous  larger than both ends'  an ENVELOPE: the tag with UMPI_CUDA_ENVELOPE_BIT,
 *                       thresholds (below), to  136 bytes describing the transfer
 *                       a process using CUDA
 *
 * So a receive sees either the message's bytes or an envelope, whatever its own buffer is. A
 * receive on host memory gets the bytes straight from UCX (no cost added); one on device memory
 * receives into a host bounce and copies to the device. An envelope starts the device protocol
 * at the receiver, which then moves the data itself into the receive buffer (device or host):
 *
 *   envelope kind  condition (sender)                     receiver                        reply
 *   SELF           the receiver is this process           copies from the sender's pointer DONE
 *   IPC            same node, UMPI_CUDA_IPC=1, the buffer opens the CUDA IPC handle (cached,  DONE
 *                  exportable (cuMemAlloc memory)          ipc_cache.c), copies from it
 *   PIPE           otherwise (reason counted: pipe_fallback) CTS: then receives chunks      CTS
 *
 *   sender                                              receiver
 *   post reply receive (ctrl, me<-R, id)
 *   send envelope (user tag | ENVELOPE_BIT) ----------> matched by a receive (any buffer kind)
 *                                                       IPC/SELF: copy (event), then
 *   request complete <--------------------------------- DONE
 *                                                       PIPE (or IPC refused by the driver):
 *   <-------------------------------------------------- CTS (bytes it will take: truncation)
 *   pipeline.c: D2H chunks --- (ctrl, S, id) --------->  device buffer: pipeline.c H2D; host: into place
 *
 * Why the handle travels in the envelope, a tagged message, and not in a UCX active message: the
 * envelope has to be MATCHED like the message it stands for (source, tag, wildcards, order with
 * the sender's other messages, MPI_Probe), and UCX's tag matching does exactly that when the
 * envelope goes on the message's own tag. The replies and chunks go on a control context of their
 * own, each transfer on its own tag, with the receive posted before the message that answers it
 * can arrive, so they never wait in UCX's unexpected queue.
 *
 * Control context (context id 2^20 - 1, above every communicator's):
 *    63                  44 43              24  23   22                    0
 *   +----------------------+------------------+-----+-----------------------+
 *   |   0xFFFFF (ctrl)     | sender's world   | R   |   transfer id (23)    |
 *   +----------------------+------------------+-----+-----------------------+
 *   R = 1: a reply (DONE, CTS) of the receiver, whose world rank is in the source field;
 *   R = 0: a chunk of the sender's pipeline. Ids are per sender (mod 2^23), never 2^23 - 1:
 *   R = 1 with id 2^23 - 1 is a sender's NUDGE (p2p_late.c), whose source field holds the world
 *   rank of the receiver it goes to, so that the receiver's one receive for nudges is hashed.
 *
 * Which receives see envelopes. UCX hashes a posted receive by its tag only when its mask compares
 * every bit; a receive that ignores the envelope bit goes to UCX's wildcard list, which every
 * incoming message then searches. So only receives that can hold an envelope's message ignore the
 * bit: on a process that uses CUDA, those whose buffer is longer than its envelope threshold T =
 * max(UMPI_CUDA_STAGE_THRESH, 136 bytes), which every process publishes at MPI_Init (PMI key
 * umpi.cuda.env; 0 when it does not use CUDA), and every receive into device memory (its host
 * bounce holds an envelope whatever the buffer's size). A sender sends an envelope only for a
 * message longer than the receiver's T: a receive that can hold the message ignores the bit and
 * matches it. A shorter receive on host memory stays hashed and does not see the envelope, though
 * in MPI's terms it matches the message (and fails with MPI_ERR_TRUNCATE): p2p_late.c finds such a
 * receive when the envelope's sender, unanswered for milliseconds, nudges the receiver, and hands
 * it the envelope, which the device protocol then truncates. To a process without CUDA the
 * message goes whole through a host buffer as an ordinary message. Receives of T bytes or less on
 * host memory, and every receive on a process without CUDA, stay hashed: host messaging pays
 * nothing for this but a branch or two (measured: README.md, "GPU buffers").
 *
 * Truncation. A receive shorter than the message (longer than T, into device memory, or given the
 * envelope by p2p_late.c) reports MPI_ERR_TRUNCATE with the message's length in its status and
 * takes what fits; the sender completes.
 *
 * Progress: UCX callbacks only record what happened; a progress hook, registered while any
 * transfer is active, moves the state machines (copies watched with events, pipelines).
 */
#include "cuda/umpi_cuda_p2p.h"
#include "core/umpi_err.h"
#include "core/umpi_progress.h"
#include "cuda/umpi_cuda_copy.h"
#include "cuda/umpi_cuda_ipc.h"
#include "cuda/umpi_cuda_p2p_wire.h"
#include "cuda/umpi_cuda_pipe.h"
#include "pmi/umpi_pmi.h"
#include "pt2pt/umpi_p2p.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- envelope thresholds ---------------------------------------------------------------------- */

#define UMPI__ENV_KEY "umpi.cuda.env"

/* This process's T (see above); SIZE_MAX without CUDA, so that no receive ignores the bit. */
size_t umpi_cuda_envelope_min = SIZE_MAX;
/* Other processes' T, read from PMI on first use: 0 unknown, SIZE_MAX without CUDA. */
static size_t *umpi__peer_min;
static int umpi__npeers;

umpi_status_t umpi_cuda_p2p_init(int world_size)
{
    uint64_t t = 0;
    umpi_cuda_envelope_min = SIZE_MAX;
    if (umpi_cuda_active) {
        size_t thresh = umpi_config.cuda_stage_thresh;
        umpi_cuda_envelope_min = thresh > sizeof(struct umpi_cuda_rts) ? thresh : sizeof(struct umpi_cuda_rts);
        t = umpi_cuda_envelope_min;
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

/* The envelope threshold of world rank w (SIZE_MAX: it does not use CUDA, send it no envelope). */
static size_t umpi__peer_envelope_min(int w)
{
    if (w == umpi_global.rank)
        return umpi_cuda_envelope_min;
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

typedef struct umpi__xfer umpi__xfer_t;

/* A pipeline chunk's send or receive. */
struct umpi__chunk_op {
    umpi_ucx_op_t op;          /* op.user: this */
    umpi__xfer_t *x;
    unsigned chunk;
    int used;
};

enum { X_SEND = 1, X_RECV };
enum {
    S_FENCE = 1,      /* IPC: waiting for the application's legacy-stream work on the buffer */
    S_WAIT_REPLY,     /* envelope sent, reply receive posted */
    S_PIPE,           /* CTS came: the pipeline runs */
    S_FINISH,         /* the data has gone: waits for the envelope's send to complete */
    R_POSTED,         /* device receive posted into the bounce */
    R_MATCHED,        /* a message or an envelope arrived: the hook decides */
    R_COPY,           /* a copy into the receive buffer in flight (event) */
    R_PIPE,           /* device receive buffer: the pipeline runs */
    R_CHUNKS,         /* host receive buffer: chunks land in place */
    R_FINISH,         /* the data is in place */
    X_DONE,           /* completed: freed once nothing of it is in flight */
};

struct umpi__xfer {
    umpi__xfer_t *next, *prev;
    int dir, state;
    unsigned long seq;         /* creation order */
    int peer;                  /* world rank at the other end */
    uint32_t id;               /* the sender's transfer id */
    umpi_request_t *req;       /* completed by this transfer; NULL once done */
    umpi_status_t err;         /* first error, its cause in why */
    char why[256];
    unsigned inflight;         /* UCX operations of this transfer not completed */
    umpi_ucx_op_t match_in;    /* receiver: the receive of the message or envelope (device buffers) */
    umpi_ucx_op_t reply_in;    /* sender: the reply's receive */
    umpi_ucx_op_t env_out;     /* sender: the envelope's send */
    umpi_ucx_op_t nudge_out;   /* sender: a nudge's send */
    umpi_ucx_op_t reply_out;   /* receiver: the reply's send */
    ucp_tag_t env_tag;         /* the envelope's tag (sent, or matched) */
    struct umpi_cuda_rts rts;
    struct umpi_cuda_reply reply;  /* sender: the one received; receiver: the one sent */
    int replied;               /* receiver: the first reply has gone */
    CUevent ev;
    /* sender */
    const char *src;
    size_t bytes;
    int device;
    int reply_arrived, env_done;
    ucs_status_t reply_status, env_status;
    double nudge_at, nudge_wait; /* when to nudge the receiver next, and the wait after that (s) */
    int nudging;                 /* a nudge is on its way (its buffer in use) */
    struct umpi_cuda_nudge nudge;
    /* pipeline (either side) */
    int piping;
    struct umpi_cuda_pipe pipe;
    struct umpi__chunk_op ops[UMPI_CUDA_PIPE_MAX_BUFS];
    /* receiver: the user's buffer, and where the data goes */
    void *ubuf;
    MPI_Count ucount;
    umpi_dtype_t *udt;
    int udev;                  /* the user's buffer is device memory (of device `device`) */
    size_t cap;                /* its capacity in bytes */
    char *dst;                 /* contiguous destination: the user's buffer, or staging */
    char *staging;             /* malloc'ed when the user's type is not contiguous */
    char *bounce;              /* device receive: where UCX put the message */
    size_t bounce_size;
    ucs_status_t match_status;
    ucp_tag_recv_info_t info;
    int env_unreadable;        /* the envelope did not fit (a protocol error) */
    size_t n, msg_len;         /* bytes moved, message length */
    umpi_cuda_ipc_ref_t *ref;
    /* host receive buffer, pipelined sender: the chunks' receives, one record for all (only how
     * many are left and whether one failed matter) */
    umpi_ucx_counter_t in_place;
    umpi_ucx_done_t in_place_done;
    /* a copy into host memory: its first bytes, put in place by the CPU when the copy is done */
    char head[sizeof(struct umpi_cuda_rts)];
    size_t head_len;
};

/* Active transfers, oldest first: the hook handles them in the order they started. */
static umpi__xfer_t *umpi__active, *umpi__tail;
static size_t umpi__nactive;
static int umpi__hooked;
static unsigned long umpi__seq;
static uint32_t umpi__next_id;

/* Events for copies, kept for reuse. */
#define UMPI__EVENTS_KEEP 64
static CUevent umpi__events[UMPI__EVENTS_KEEP];
static int umpi__nevents;

static unsigned umpi__hook(void);

static umpi_status_t umpi__event_get(CUevent *ev)
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

static umpi__xfer_t *umpi__xfer_new(int dir)
{
    umpi__xfer_t *x = calloc(1, sizeof(*x));
    if (x == NULL)
        return NULL;
    x->dir = dir;
    x->seq = ++umpi__seq;
    x->device = -1;
    return x;
}

static umpi_status_t umpi__activate(umpi__xfer_t *x)
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

static void umpi__xfer_free(umpi__xfer_t *x)
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
    free(x->bounce);
    free(x->staging);
    free(x);
}

/* Records the first failure: "<fmt>: <umpi's last cause>" goes to the MPI error at completion. */
static void umpi__fail(umpi__xfer_t *x, umpi_status_t st, const char *fmt, ...) UMPI_PRINTF(3, 4);
static void umpi__fail(umpi__xfer_t *x, umpi_status_t st, const char *fmt, ...)
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

/* Hands the outcome to the request (its status already filled for receives). */
static void umpi__complete(umpi__xfer_t *x, ucs_status_t net)
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

static void umpi__recv_status(umpi__xfer_t *x, ucp_tag_t tag, size_t len)
{
    umpi_request_t *r = x->req;
    if (r == NULL)
        return;
    r->status.MPI_SOURCE = umpi_ucx_tag_source(tag);
    r->status.MPI_TAG = umpi_ucx_tag_tag(tag);
    umpi_status_set_bytes(&r->status, (MPI_Count) len);
}

/* ---- UCX operations of transfers ------------------------------------------------------------ */

static void umpi__cb_reply_sent(umpi_ucx_op_t *op, ucs_status_t st, const ucp_tag_recv_info_t *info)
{
    umpi__xfer_t *x = op->user;
    (void) info;
    if (st != UCS_OK)
        umpi__fail(x, UMPI_ERR_TRANSPORT, "a control message failed: %s", ucs_status_string(st));
    x->inflight--;
}

/* Receiver: the reply to the sender (DONE, or CTS with the bytes wanted), fire and forget (x lives
 * until it has gone). */
static void umpi__reply(umpi__xfer_t *x, uint32_t kind, uint64_t bytes)
{
    ucp_ep_h ep;
    x->reply.kind = kind;
    x->reply.bytes = bytes;
    x->replied = 1;
    x->reply_out = (umpi_ucx_op_t){ umpi__cb_reply_sent, x, NULL };
    x->inflight++;
    umpi_status_t st = umpi_ucx_ep(x->peer, &ep);
    if (st == UMPI_OK)
        st = umpi_ucx_send_op(ep, &x->reply, sizeof(x->reply), umpi_cuda_ctrl_tag(umpi_global.rank, 1, x->id),
                              &x->reply_out);
    if (st != UMPI_OK) {
        x->inflight--;
        umpi__fail(x, st, "replying to the sender: %s", umpi_status_last_msg());
    }
}

static void umpi__cb_reply(umpi_ucx_op_t *op, ucs_status_t st, const ucp_tag_recv_info_t *info)
{
    umpi__xfer_t *x = op->user;
    (void) info;
    x->reply_status = st;
    x->reply_arrived = 1;
    x->inflight--;
}

static void umpi__cb_envelope_sent(umpi_ucx_op_t *op, ucs_status_t st, const ucp_tag_recv_info_t *info)
{
    umpi__xfer_t *x = op->user;
    (void) info;
    x->env_status = st;
    x->env_done = 1;
    x->inflight--;
}

/* Pipeline network: chunk sends and receives on (ctrl, sender, id). */
static void umpi__cb_chunk(umpi_ucx_op_t *o, ucs_status_t st, const ucp_tag_recv_info_t *info)
{
    struct umpi__chunk_op *op = o->user;
    umpi__xfer_t *x = op->x;
    (void) info;
    op->used = 0;
    x->inflight--;
    umpi_cuda_pipe_net_done(&x->pipe, op->chunk,
                            st == UCS_OK ? UMPI_OK
                                         : umpi_ucx_status(st, x->pipe.dir == UMPI_CUDA_PIPE_SEND ? "pipeline chunk send"
                                                                                                 : "pipeline chunk receive"));
}

static umpi_status_t umpi__pipe_start_net(void *ctx, struct umpi_cuda_pipe *p, unsigned chunk, void *host, size_t len)
{
    umpi__xfer_t *x = ctx;
    struct umpi__chunk_op *op = NULL;
    for (unsigned i = 0; i < UMPI_CUDA_PIPE_MAX_BUFS && op == NULL; i++)
        if (!x->ops[i].used)
            op = &x->ops[i];
    if (op == NULL) {
        umpi_status_msg("more pipeline chunks in flight than staging buffers");
        return UMPI_ERR_INTERN;
    }
    *op = (struct umpi__chunk_op){ { umpi__cb_chunk, op, NULL }, x, chunk, 1 };
    umpi_status_t st;
    x->inflight++;
    if (p->dir == UMPI_CUDA_PIPE_SEND) {
        ucp_ep_h ep;
        st = umpi_ucx_ep(x->peer, &ep);
        if (st == UMPI_OK)
            st = umpi_ucx_send_op(ep, host, len, umpi_cuda_ctrl_tag(umpi_global.rank, 0, x->id), &op->op);
    } else {
        st = umpi_ucx_recv_op(host, len, umpi_cuda_ctrl_tag(x->peer, 0, x->id), ~(ucp_tag_t) 0, &op->op);
    }
    if (st != UMPI_OK) {
        op->used = 0;
        x->inflight--;
    }
    return st;
}

static const struct umpi_cuda_pipe_net umpi__pipe_net = { umpi__pipe_start_net };

/* Host receive buffer, pipelined sender: the chunks land in place. */
static umpi_status_t umpi__chunks_in_place(umpi__xfer_t *x, size_t n, size_t chunk)
{
    x->in_place_done.counter = &x->in_place;
    for (size_t off = 0; off < n; off += chunk) {
        size_t len = n - off < chunk ? n - off : chunk;
        umpi_status_t st = umpi_ucx_recv_light(x->dst + off, len, ucp_dt_make_contig(1),
                                               umpi_cuda_ctrl_tag(x->peer, 0, x->id), &x->in_place_done);
        if (st != UMPI_OK)
            return st;
    }
    return UMPI_OK;
}

/* ---- sender --------------------------------------------------------------------------------- */

/* Nudges (p2p_late.c): an envelope unanswered this long makes the receiver look for a small
 * receive that it passed by; then again after twice the wait, up to UMPI__NUDGE_MAX apart. */
#define UMPI__NUDGE_FIRST 0.002
#define UMPI__NUDGE_MAX   0.05

/* The time, read at most once per progress pass (0: not yet in this pass), from the coarse clock
 * (a few ns; its ms resolution is plenty here): a window of 64 envelopes waiting must not cost 64
 * clock reads per poll. */
static double umpi__pass_now;

static double umpi__now(void)
{
    if (umpi__pass_now == 0.0) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
        umpi__pass_now = (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
    }
    return umpi__pass_now;
}

static void umpi__cb_nudge_sent(umpi_ucx_op_t *op, ucs_status_t st, const ucp_tag_recv_info_t *info)
{
    umpi__xfer_t *x = op->user;
    (void) st, (void) info; /* a lost nudge is sent again later */
    x->nudging = 0;
    x->inflight--;
}

static void umpi__maybe_nudge(umpi__xfer_t *x)
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
    x->nudge = (struct umpi_cuda_nudge){ x->env_tag, x->id, umpi_global.rank };
    x->nudge_out = (umpi_ucx_op_t){ umpi__cb_nudge_sent, x, NULL };
    x->nudging = 1;
    x->inflight++;
    if (umpi_ucx_send_op(ep, &x->nudge, sizeof(x->nudge), umpi_cuda_ctrl_tag(x->peer, 1, UMPI_CUDA_NUDGE_ID),
                         &x->nudge_out) != UMPI_OK) {
        x->nudging = 0;
        x->inflight--;
        return;
    }
    umpi_debug(3, "cuda: transfer %u: the envelope to world rank %d is unanswered: nudged", x->id, x->peer);
}

/* Small or non-contiguous: the bytes go through host memory as an ordinary message. */
static int umpi__send_staged(const void *buf, MPI_Count count, umpi_dtype_t *dt, size_t bytes, int world,
                             ucp_tag_t utag, umpi_send_mode_t mode, umpi_request_t *req)
{
    char *host = malloc(bytes ? bytes : 1);
    if (host == NULL)
        return umpi_err_create(MPI_ERR_NO_MEM, "out of memory staging a %zu-byte device buffer", bytes);
    umpi_status_t st = umpi_cuda_pack(dt, buf, count, host, bytes);
    if (st != UMPI_OK) {
        free(host);
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
        free(host);
        return umpi_err_from_status(st, "sending a staged device buffer");
    }
    if (req != NULL) {
        free(req->tmp); /* a persistent request's bounce from its previous start */
        req->tmp = host; /* freed with the request */
        return MPI_SUCCESS;
    }
    int err = MPI_SUCCESS;
    if (ucx_req != NULL) {
        umpi_waiter_t w = {0};
        ucs_status_t s;
        while ((s = umpi_ucx_test_send(ucx_req)) == UCS_INPROGRESS)
            umpi_progress_step(&w);
        if (s != UCS_OK)
            err = umpi_err_from_status(umpi_ucx_status(s, "send completion"), "sending a staged device buffer");
    }
    free(host);
    return err;
}

static int umpi__same_node(int world)
{
    int a = umpi_pmi_node_of(world), b = umpi_pmi_node_of(umpi_global.rank);
    return a >= 0 && a == b;
}

/* Sends x's envelope on ep; the sender then waits for the reply. */
static void umpi__send_rts(umpi__xfer_t *x, ucp_ep_h ep)
{
    x->state = S_WAIT_REPLY;
    x->nudge_wait = UMPI__NUDGE_FIRST;
    umpi__pass_now = 0.0; /* a fresh reading: the last pass may be long ago */
    x->nudge_at = umpi__now() + x->nudge_wait;
    x->env_out = (umpi_ucx_op_t){ umpi__cb_envelope_sent, x, NULL };
    x->inflight++;
    umpi_status_t st = umpi_ucx_send_op(ep, &x->rts, sizeof(x->rts), x->env_tag, &x->env_out);
    if (st != UMPI_OK) {
        x->inflight--;
        x->env_done = 1;
        umpi__fail(x, st, "sending the envelope: %s", umpi_status_last_msg());
        umpi_ucx_cancel_op(&x->reply_in);
    }
}

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
    umpi__xfer_t *x = umpi__xfer_new(X_SEND);
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
    x->id = umpi__next_id++ & UMPI_CUDA_ID_MASK;
    if (x->id == UMPI_CUDA_NUDGE_ID) /* reserved for nudges' tag */
        x->id = umpi__next_id++ & UMPI_CUDA_ID_MASK;
    x->rts.magic = UMPI_CUDA_RTS_MAGIC;
    x->rts.id = x->id;
    x->rts.sender = umpi_global.rank;
    x->rts.bytes = bytes;
    x->rts.chunk = umpi_config.cuda_pipeline_chunk > 0 ? umpi_config.cuda_pipeline_chunk : 524288;
    x->env_tag = utag | UMPI_CUDA_ENVELOPE_BIT;

    umpi_status_t st = UMPI_OK;
    int usable = 0;
    if (world == umpi_global.rank) {
        x->rts.kind = UMPI_CUDA_RTS_SELF;
        x->rts.desc.base = (uint64_t) (uintptr_t) src;
        x->rts.desc.size = bytes;
    } else if (!umpi_config.cuda_ipc) {
        umpi_cuda_slow_path(UMPI_CUDA_STAT_pipe_fallback, "cuda: %zu bytes to world rank %d through the pipeline: "
                            "UMPI_CUDA_IPC=0", bytes, world);
    } else if (!umpi__same_node(world)) {
        umpi_cuda_slow_path(UMPI_CUDA_STAT_pipe_fallback, "cuda: %zu bytes to world rank %d through the pipeline: "
                            "it is on another node (no CUDA IPC)", bytes, world);
    } else {
        st = umpi_cuda_ipc_export(src, bytes, &x->rts.desc, &usable);
        if (st == UMPI_OK && usable)
            x->rts.kind = UMPI_CUDA_RTS_IPC;
        else if (st == UMPI_OK)
            umpi_cuda_slow_path(UMPI_CUDA_STAT_pipe_fallback, "cuda: %zu bytes to world rank %d through the pipeline: "
                                "CUDA IPC cannot carry the buffer (ipc_fallback says why)", bytes, world);
    }
    if (x->rts.kind == 0)
        x->rts.kind = UMPI_CUDA_RTS_PIPE;
    umpi_debug(3, "cuda: %zu bytes from device memory to world rank %d: envelope %s, transfer %u", bytes, world,
               x->rts.kind == UMPI_CUDA_RTS_SELF ? "SELF" : x->rts.kind == UMPI_CUDA_RTS_IPC ? "IPC" : "PIPE", x->id);

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
    st = umpi_ucx_recv_op(&x->reply, sizeof(x->reply), umpi_cuda_ctrl_tag(world, 1, x->id), ~(ucp_tag_t) 0,
                          &x->reply_in);
    if (st != UMPI_OK) {
        free(x);
        if (blocking)
            umpi_request_release(req);
        return umpi_err_from_status(st, "posting the reply receive of a device transfer");
    }
    /* Through CUDA IPC the receiver's streams read the buffer, and they are not ordered after this
     * process's legacy stream: the envelope goes once the application's work queued there before
     * this send is done (the other kinds copy on this process's own blocking streams). */
    if (x->rts.kind == UMPI_CUDA_RTS_IPC) {
        st = umpi__event_get(&x->ev);
        if (st == UMPI_OK)
            st = umpi_cuda_fence_start(x->ev);
        if (st != UMPI_OK)
            umpi__fail(x, st, "fencing the send buffer: %s", umpi_status_last_msg());
        x->state = S_FENCE;
    } else {
        umpi__send_rts(x, ep);
    }
    st = umpi__activate(x);
    if (st != UMPI_OK)
        umpi__fail(x, st, "%s", umpi_status_last_msg());
    if (!blocking)
        return MPI_SUCCESS;
    umpi_progress_wait(&req->done);
    MPI_Request h = req->handle;
    return umpi_p2p_request_complete(req, &h, MPI_STATUS_IGNORE);
}

int umpi_cuda_p2p_send(const void *buf, MPI_Count count, umpi_dtype_t *dt, size_t bytes, int device, int dest,
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
     * it are the ones that match envelopes (see the top of this file). */
    size_t peer = umpi__peer_envelope_min(world);
    if (!dt->contig || bytes <= umpi_cuda_envelope_min || bytes <= peer) {
        if (peer == SIZE_MAX && dt->contig && bytes > umpi_cuda_envelope_min)
            umpi_cuda_slow_path(UMPI_CUDA_STAT_pipe_fallback, "cuda: %zu bytes to world rank %d whole through host "
                                "memory: that process does not use CUDA", bytes, world);
        return umpi__send_staged(buf, count, dt, bytes, world, utag, mode, req);
    }
    return umpi__send_envelope((const char *) buf + dt->true_lb, bytes, device, world, utag, comm, req);
}

/* Sender's state machine; returns nonzero when something changed. */
static int umpi__advance_send(umpi__xfer_t *x)
{
    switch (x->state) {
    case S_FENCE: {
        CUresult r = x->err == UMPI_OK ? umpi_cuda_drv.cuEventQuery(x->ev) : UMPI_CUDA_SUCCESS;
        if (r == UMPI_CUDA_ERROR_NOT_READY)
            return 0;
        ucp_ep_h ep;
        umpi_status_t st = umpi_ucx_ep(x->peer, &ep);
        if (r != UMPI_CUDA_SUCCESS)
            st = umpi_cuda_fail("the fence on the send buffer", r);
        if (x->err == UMPI_OK && st == UMPI_OK) {
            umpi__send_rts(x, ep);
            return 1;
        }
        /* nothing was sent: the reply receive goes, the send fails */
        if (st != UMPI_OK)
            umpi__fail(x, st, "%s", umpi_status_last_msg());
        x->env_done = 1;
        x->env_status = UCS_OK;
        x->nudge_at = 1e300; /* no envelope to nudge about */
        umpi_ucx_cancel_op(&x->reply_in);
        x->state = S_WAIT_REPLY;
        return 1;
    }
    case S_WAIT_REPLY:
        if (!x->reply_arrived) {
            umpi__maybe_nudge(x);
            return 0;
        }
        if (x->reply_status == UCS_ERR_CANCELED) {
            x->state = S_FINISH; /* cancelled after the envelope could not be sent */
        } else if (x->reply_status != UCS_OK) {
            umpi__fail(x, UMPI_ERR_TRANSPORT, "waiting for the receiver's reply: %s",
                       ucs_status_string(x->reply_status));
            x->state = S_FINISH;
        } else if (x->reply.kind == UMPI_CUDA_REPLY_CTS) {
            size_t n = x->reply.bytes < x->bytes ? (size_t) x->reply.bytes : x->bytes;
            x->state = S_FINISH;
            if (n > 0) {
                umpi_status_t st = umpi_cuda_ctx_ensure(x->device);
                if (st == UMPI_OK)
                    st = umpi_cuda_pipe_start_chunk(&x->pipe, UMPI_CUDA_PIPE_SEND, (CUdeviceptr) (uintptr_t) x->src, n,
                                                    (size_t) x->rts.chunk, &umpi__pipe_net, x);
                if (st != UMPI_OK) {
                    umpi__fail(x, st, "starting the pipeline: %s", umpi_status_last_msg());
                } else {
                    x->piping = 1;
                    x->state = S_PIPE;
                }
            }
        } else if (x->reply.kind != UMPI_CUDA_REPLY_DONE) {
            umpi__fail(x, UMPI_ERR_INTERN, "a reply of unknown kind %u", x->reply.kind);
            x->state = S_FINISH;
        } else {
            x->state = S_FINISH;
        }
        return 1;
    case S_PIPE:
        if (!umpi_cuda_pipe_progress(&x->pipe))
            return 0;
        x->piping = 0;
        if (x->pipe.status != UMPI_OK)
            umpi__fail(x, x->pipe.status, "%s", x->pipe.why);
        x->state = S_FINISH;
        return 1;
    case S_FINISH:
        if (!x->env_done)
            return 0;
        if (x->env_status != UCS_OK)
            umpi__fail(x, UMPI_ERR_TRANSPORT, "sending the envelope: %s", ucs_status_string(x->env_status));
        umpi__complete(x, UCS_OK);
        return 1;
    }
    return 0;
}

/* ---- receiver ------------------------------------------------------------------------------- */

static umpi__xfer_t *umpi__recv_new(umpi_request_t *r, size_t cap, int udev, int device)
{
    umpi__xfer_t *x = umpi__xfer_new(X_RECV);
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
    umpi__xfer_t *x = op->user;
    x->match_status = st;
    if (info != NULL && (st == UCS_OK || st == UCS_ERR_MESSAGE_TRUNCATED))
        x->info = *info;
    if (x->req != NULL)
        x->req->ucx_req = NULL;
    x->inflight--;
    x->state = R_MATCHED;
}

/* Where a message for a receive on device memory lands: a host bounce that also holds an envelope. */
static umpi_status_t umpi__bounce(umpi__xfer_t *x, size_t bytes)
{
    x->bounce_size = bytes > sizeof(struct umpi_cuda_rts) ? bytes : sizeof(struct umpi_cuda_rts);
    x->bounce = malloc(x->bounce_size);
    if (x->bounce == NULL) {
        umpi_status_msg("out of memory for a %zu-byte receive bounce", x->bounce_size);
        return UMPI_ERR_NOMEM;
    }
    return UMPI_OK;
}

int umpi_cuda_p2p_irecv(umpi_request_t *r, size_t bytes, int device)
{
    umpi__xfer_t *x = umpi__recv_new(r, bytes, 1, device);
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
    mask &= ~UMPI_CUDA_ENVELOPE_BIT;
    x->match_in = (umpi_ucx_op_t){ umpi__cb_device_recv, x, NULL };
    x->state = R_POSTED;
    x->inflight++;
    st = umpi_ucx_recv_op(x->bounce, x->bounce_size, tag, mask, &x->match_in);
    if (st != UMPI_OK) {
        free(x->bounce);
        free(x);
        return umpi_err_from_status(st, "receiving into device memory");
    }
    r->ucx_req = x->match_in.ucx_req; /* for MPI_Cancel; NULL when it matched at once */
    st = umpi__activate(x);
    return st == UMPI_OK ? MPI_SUCCESS : umpi_err_from_status(st, "receiving into device memory");
}

void umpi_cuda_p2p_envelope(umpi_request_t *r, ucs_status_t st, const ucp_tag_recv_info_t *info)
{
    size_t cap = (size_t) (r->count * r->dt->size);
    umpi__xfer_t *x = umpi__recv_new(r, cap, 0, -1);
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
    if (st == UCS_OK && info->length >= sizeof(x->rts)) {
        /* the envelope landed in the user's buffer (it is overwritten by the data later) */
        if (r->dt->contig)
            memcpy(&x->rts, (const char *) r->buf + r->dt->true_lb, sizeof(x->rts));
        else
            umpi_dtype_pack_range(r->dt, r->buf, r->count, 0, &x->rts, (MPI_Count) sizeof(x->rts));
    } else {
        x->env_unreadable = 1;
    }
    x->state = R_MATCHED;
    if (umpi__activate(x) != UMPI_OK)
        umpi__fail(x, UMPI_ERR_INTERN, "%s", umpi_status_last_msg());
}

/* Data in place (in dst): the final unpack when the user's type is not contiguous. */
static void umpi__recv_finish(umpi__xfer_t *x)
{
    if (x->err == UMPI_OK && x->staging != NULL && x->n > 0) {
        if (x->udev) {
            umpi_status_t st = umpi_cuda_unpack(x->udt, x->ubuf, x->ucount, x->staging, x->n);
            if (st != UMPI_OK)
                umpi__fail(x, st, "%s", umpi_status_last_msg());
        } else {
            umpi_dtype_unpack_range(x->udt, x->ubuf, x->ucount, 0, x->staging, (MPI_Count) x->n);
        }
    }
    umpi__recv_status(x, x->env_tag, x->msg_len);
    umpi__complete(x, x->msg_len > x->cap ? UCS_ERR_MESSAGE_TRUNCATED : UCS_OK);
}

/* Starts moving the data an envelope announced. */
static void umpi__recv_protocol(umpi__xfer_t *x)
{
    const struct umpi_cuda_rts *e = &x->rts;
    if (e->magic != UMPI_CUDA_RTS_MAGIC || e->kind < UMPI_CUDA_RTS_SELF || e->kind > UMPI_CUDA_RTS_PIPE) {
        umpi__fail(x, UMPI_ERR_INTERN, "a device-message envelope with magic %#x kind %u: not from this umpi",
                   e->magic, e->kind);
        umpi__recv_status(x, x->env_tag, 0);
        umpi__complete(x, UCS_OK);
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
            umpi__fail(x, UMPI_ERR_NOMEM, "out of memory staging a %zu-byte receive", x->n);
            x->n = 0;
        }
        x->dst = x->staging;
    }
    int dst_dev = contig && x->udev;
    umpi_status_t st = UMPI_OK;
    if (umpi_cuda_active)
        st = umpi_cuda_ctx_ensure(x->udev ? x->device : (int) e->desc.device);
    if (st != UMPI_OK) {
        umpi__fail(x, st, "%s", umpi_status_last_msg());
        x->n = 0;
    }
    if (x->n == 0 && e->kind != UMPI_CUDA_RTS_PIPE) {
        umpi__reply(x, UMPI_CUDA_REPLY_DONE, 0);
        x->state = R_FINISH;
        return;
    }
    const char *from = NULL;
    if (e->kind == UMPI_CUDA_RTS_SELF) {
        from = (const char *) (uintptr_t) (e->desc.base + e->desc.offset);
        umpi_cuda_stat_add(UMPI_CUDA_STAT_self_copies);
    } else if (e->kind == UMPI_CUDA_RTS_IPC && !umpi_cuda_active) {
        /* this process does not use CUDA (UMPI_CUDA=0, no driver): the pipeline into host memory */
        umpi_debug(1, "cuda: a device message from world rank %d comes through the pipeline: CUDA is not in "
                      "use here", x->peer);
    } else if (e->kind == UMPI_CUDA_RTS_IPC) {
        void *p = NULL;
        st = umpi_cuda_ipc_open(x->peer, &e->desc, x->n, &p, &x->ref);
        if (st != UMPI_OK) {
            umpi__fail(x, st, "%s", umpi_status_last_msg());
            umpi__reply(x, UMPI_CUDA_REPLY_DONE, 0);
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
        st = umpi__event_get(&x->ev);
        if (st == UMPI_OK && x->head_len > 0)
            st = umpi_cuda_copy_start(x->head, from, x->head_len, x->ev);
        if (st == UMPI_OK && x->n > x->head_len)
            st = umpi_cuda_copy_start(x->dst + x->head_len, from + x->head_len, x->n - x->head_len, x->ev);
        if (st != UMPI_OK) {
            umpi__fail(x, st, "%s", umpi_status_last_msg());
            umpi__reply(x, UMPI_CUDA_REPLY_DONE, 0);
            x->state = R_FINISH;
            return;
        }
        umpi_debug(3, "cuda: %zu bytes from world rank %d copied %s (transfer %u)", x->n, x->peer,
                   e->kind == UMPI_CUDA_RTS_SELF ? "within this process" : "through CUDA IPC", x->id);
        x->state = R_COPY;
        return;
    }
    /* PIPE (or IPC refused): ask for what fits, then take the chunks */
    umpi__reply(x, UMPI_CUDA_REPLY_CTS, x->n);
    x->state = R_FINISH;
    if (x->n == 0 || x->err != UMPI_OK)
        return;
    if (dst_dev) {
        st = umpi_cuda_pipe_start_chunk(&x->pipe, UMPI_CUDA_PIPE_RECV, (CUdeviceptr) (uintptr_t) x->dst, x->n,
                                        (size_t) e->chunk, &umpi__pipe_net, x);
        if (st == UMPI_OK) {
            x->piping = 1;
            x->state = R_PIPE;
        }
    } else {
        st = umpi__chunks_in_place(x, x->n, (size_t) e->chunk);
        x->state = R_CHUNKS;
    }
    if (st != UMPI_OK)
        umpi__fail(x, st, "receiving pipeline chunks: %s", umpi_status_last_msg());
}

/* A receive matched: the message itself (device receive buffers only) or an envelope. */
static void umpi__recv_matched(umpi__xfer_t *x)
{
    ucs_status_t st = x->match_status;
    umpi_request_t *r = x->req;
    if (st == UCS_ERR_CANCELED) {
        if (r != NULL)
            umpi_status_set_cancelled(&r->status, 1);
        umpi__complete(x, UCS_ERR_CANCELED);
        return;
    }
    if (st != UCS_OK && st != UCS_ERR_MESSAGE_TRUNCATED) {
        umpi__fail(x, UMPI_ERR_TRANSPORT, "%s", ucs_status_string(st));
        umpi__complete(x, UCS_OK);
        return;
    }
    x->env_tag = x->info.sender_tag;
    if (umpi_cuda_is_envelope(x->info.sender_tag)) {
        if (x->env_unreadable || st != UCS_OK) {
            /* cannot happen: only receives that hold an envelope see envelopes (device bounces are
             * at least its size, host receives longer than the threshold) */
            umpi__fail(x, UMPI_ERR_INTERN, "an envelope did not fit a %zu-byte receive buffer", x->cap);
            umpi__recv_status(x, x->info.sender_tag, x->cap);
            umpi__complete(x, UCS_OK);
            return;
        }
        if (x->bounce != NULL)
            memcpy(&x->rts, x->bounce, sizeof(x->rts));
        umpi__recv_protocol(x);
        return;
    }
    /* An ordinary message into a device buffer: it is in the bounce. */
    size_t len = x->info.length;
    x->msg_len = len;
    if (st == UCS_ERR_MESSAGE_TRUNCATED || len > x->cap) {
        umpi__recv_status(x, x->info.sender_tag, len);
        umpi__complete(x, UCS_ERR_MESSAGE_TRUNCATED);
        return;
    }
    x->n = len;
    umpi_cuda_stat_add(UMPI_CUDA_STAT_staged_copies);
    umpi_status_t us = umpi_cuda_ctx_ensure(x->device);
    if (us == UMPI_OK && !x->udt->contig) {
        us = umpi_cuda_unpack(x->udt, x->ubuf, x->ucount, x->bounce, len);
    } else if (us == UMPI_OK && len > 0) {
        us = umpi__event_get(&x->ev);
        if (us == UMPI_OK)
            us = umpi_cuda_copy_start((char *) x->ubuf + x->udt->true_lb, x->bounce, len, x->ev);
        if (us == UMPI_OK) {
            x->state = R_COPY;
            return;
        }
    }
    if (us != UMPI_OK)
        umpi__fail(x, us, "%s", umpi_status_last_msg());
    umpi__recv_status(x, x->info.sender_tag, len);
    umpi__complete(x, UCS_OK);
}

static int umpi__advance_recv(umpi__xfer_t *x)
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
            umpi__fail(x, UMPI_ERR_OTHER, "the copy into the receive buffer failed: %s",
                       umpi_cuda_strerror(r, buf, sizeof(buf)));
        }
        if (x->ref != NULL) {
            umpi_cuda_ipc_release(x->ref);
            x->ref = NULL;
        }
        if (x->head_len > 0 && r == UMPI_CUDA_SUCCESS)
            memcpy(x->dst, x->head, x->head_len);
        if (umpi_cuda_is_envelope(x->env_tag)) {
            umpi__reply(x, UMPI_CUDA_REPLY_DONE, 0); /* the sender's buffer is free again */
            x->state = R_FINISH;
        } else {
            umpi__recv_status(x, x->info.sender_tag, x->n);
            umpi__complete(x, UCS_OK);
        }
        return 1;
    }
    case R_PIPE:
        if (!umpi_cuda_pipe_progress(&x->pipe))
            return 0;
        x->piping = 0;
        if (x->pipe.status != UMPI_OK)
            umpi__fail(x, x->pipe.status, "%s", x->pipe.why);
        x->state = R_FINISH;
        return 1;
    case R_CHUNKS:
        if (x->in_place.pending > 0)
            return 0;
        if (x->in_place.failed)
            umpi__fail(x, UMPI_ERR_TRANSPORT, "receiving a pipeline chunk: %s",
                       ucs_status_string((ucs_status_t) x->in_place_done.status));
        x->state = R_FINISH;
        return 1;
    case R_FINISH:
        umpi__recv_finish(x);
        return 1;
    }
    return 0;
}

int umpi_cuda_p2p_mrecv(umpi_request_t *r, ucp_tag_message_h msg, size_t bytes, int dst_device, int dst_is_dev)
{
    umpi__xfer_t *x = umpi__recv_new(r, bytes, dst_is_dev, dst_device);
    if (x == NULL)
        return umpi_err_create(MPI_ERR_NO_MEM, "out of memory receiving a matched message");
    if (r->tmp != NULL) {
        /* the envelope was read at the probe */
        memcpy(&x->rts, r->tmp, sizeof(x->rts));
        free(r->tmp);
        r->tmp = NULL;
        x->match_status = UCS_OK;
        x->info.sender_tag = umpi_ucx_send_tag(r->comm->context_id, r->status.MPI_SOURCE, r->status.MPI_TAG) |
                             UMPI_CUDA_ENVELOPE_BIT;
        x->info.length = sizeof(x->rts);
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
            free(x->bounce);
            free(x);
            return umpi_err_from_status(st, "receiving a matched message into device memory");
        }
    }
    umpi_status_t st = umpi__activate(x);
    return st == UMPI_OK ? MPI_SUCCESS : umpi_err_from_status(st, "receiving a matched message");
}

/* ---- progress ------------------------------------------------------------------------------- */

static unsigned umpi__hook(void)
{
    unsigned n = 0;
    umpi__pass_now = 0.0; /* read again when a waiting sender asks */
    /* copies and event queries need a context in this thread: under MPI_THREAD_MULTIPLE the
     * progress may run in a thread that never made one current */
    if (umpi_cuda_active && umpi_cuda_ctx_ensure(-1) != UMPI_OK)
        umpi_debug(1, "cuda: no context for the device transfers in this thread: %s", umpi_status_last_msg());
    for (umpi__xfer_t *x = umpi__active, *next; x != NULL; x = next) {
        next = x->next;
        int changed;
        do {
            changed = x->dir == X_SEND ? umpi__advance_send(x) : x->dir == X_RECV ? umpi__advance_recv(x) : 0;
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

void umpi_cuda_p2p_counts(size_t *active)
{
    *active = umpi__nactive;
}

void umpi_cuda_p2p_finalize(void)
{
    umpi_cuda_late_finalize();
    free(umpi__peer_min);
    umpi__peer_min = NULL;
    umpi__npeers = 0;
    umpi_cuda_envelope_min = SIZE_MAX;
    umpi_cuda_p2p_held_finalize();
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
