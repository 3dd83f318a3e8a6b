/*
 * The UCX network module: one UCP context and worker per process, endpoints created lazily on
 * first use from the worker addresses every rank published through PMI.
 *
 * UCX does the tag matching; MPI matching semantics come from the tag layout below. Receives
 * with MPI_ANY_SOURCE / MPI_ANY_TAG clear the source / tag bits of the mask; the context id
 * separates communicators (and point-to-point from collective traffic on one communicator).
 * UCX matches in posting order per (tag, mask) and delivers from one sender in order, which gives
 * MPI's non-overtaking rule.
 *
 *    63                  44 43                  24  23  22                             0
 *   +----------------------+----------------------+----+--------------------------------+
 *   |   context id (20)    |   source rank (20)   | I  |           MPI tag (23)         |
 *   +----------------------+----------------------+----+--------------------------------+
 *   I: internal bit, set only by umpi's own protocols. On a collective context (odd id) it marks
 *      internal traffic, which MPI receives never see. On a point-to-point context (even id) it
 *      marks the envelope of a large device-buffer message (src/pt2pt/umpi_p2p_gpu.h): on a
 *      process that uses CUDA, receives longer than the envelope threshold (and probes) clear it
 *      from their mask, so that an envelope matches what its message would; all other receives
 *      compare it (UCX hashes only receives whose mask is full).
 *   MPI_TAG_UB = 2^23 - 1. Source is the sender's rank in the communicator.
 */
#ifndef UMPI_UCX_H
#define UMPI_UCX_H

#include "core/umpi.h"
#include "core/umpi_progress.h"
#include "core/umpi_request.h"
#include "pmi/umpi_pmi.h"

#include <ucp/api/ucp.h>

#define UMPI_UCX_CONTEXT_BITS 20
#define UMPI_UCX_SOURCE_BITS  20
#define UMPI_UCX_TAG_BITS     23
#define UMPI_UCX_SOURCE_SHIFT (UMPI_UCX_TAG_BITS + 1)
#define UMPI_UCX_CONTEXT_SHIFT (UMPI_UCX_SOURCE_SHIFT + UMPI_UCX_SOURCE_BITS)
#define UMPI_UCX_INTERNAL_BIT ((ucp_tag_t) 1 << UMPI_UCX_TAG_BITS)
#define UMPI_UCX_TAG_MASK     (((ucp_tag_t) 1 << UMPI_UCX_TAG_BITS) - 1)
#define UMPI_UCX_SOURCE_MASK  ((((ucp_tag_t) 1 << UMPI_UCX_SOURCE_BITS) - 1) << UMPI_UCX_SOURCE_SHIFT)
#define UMPI_UCX_MAX_RANKS    (1 << UMPI_UCX_SOURCE_BITS)

_Static_assert(UMPI_UCX_CONTEXT_SHIFT + UMPI_UCX_CONTEXT_BITS == 64, "tag layout must fill 64 bits");
_Static_assert(UMPI_UCX_TAG_BITS <= 31, "MPI tags are C ints");

/* UCX's datatypes as the layers above name them: contiguous bytes, and an iov list (the generic
 * datatype of umpi's engine is umpi_ucx.dt_generic). */
#define UMPI_UCX_DT_BYTES ucp_dt_make_contig(1)
#define UMPI_UCX_DT_IOV   ucp_dt_make_iov()

struct umpi_ucx {
    ucp_context_h context;
    ucp_worker_h worker;
    ucp_ep_h *eps;            /* by world rank; NULL until first used */
    int nranks;
    size_t request_size;      /* UCX's request size (for the leak check) */
    ucp_datatype_t dt_generic; /* umpi datatypes packed by our engine (ucx_dtype.c); 0 until init */
};
extern struct umpi_ucx umpi_ucx;

/* Creates the context and worker and publishes the worker address under the PMI key; the caller
 * fences before the first endpoint is needed. */
umpi_status_t umpi_ucx_init(int thread_level, int world_size);
/* Flushes and closes every endpoint, then destroys worker and context. */
void umpi_ucx_finalize(void);
/* Calls changed(start, len) for every range of the address space mapped or unmapped from now on,
 * in the thread that does it (vm_events.c); UMPI_OK when UCX's memory hooks deliver such events.
 * umpi_ucx_vm_unwatch stops it. */
umpi_status_t umpi_ucx_vm_watch(void (*changed)(uintptr_t start, size_t len));
void umpi_ucx_vm_unwatch(void);

/* UCX's version at run time (umpi_info). */
const char *umpi_ucx_version(void) UMPI_EXPORT;

/* Translates a UCX status into ours, recording "<what>: <UCX's text>" as the cause. */
umpi_status_t umpi_ucx_status(ucs_status_t st, const char *what);

umpi_status_t umpi_ucx_ep_create(int world_rank, ucp_ep_h *ep);

/* UCX's own estimate (ucp_ep_evaluate_perf: its transports' latency and bandwidth, no message
 * sent) of the time one message of each size in sizes[0..n-1] takes to world_rank, in us; the
 * endpoint is created if it was not. */
umpi_status_t umpi_ucx_estimate(int world_rank, const size_t *sizes, double *us, int n);
/* A tag no communicator uses (the internal bit under the last context id), for one empty message
 * each way that wires up both ends of an endpoint (coll/select.c says when that is needed). */
static inline ucp_tag_t umpi_ucx_wireup_tag(void)
{
    return ((ucp_tag_t) ((1u << UMPI_UCX_CONTEXT_BITS) - 1) << UMPI_UCX_CONTEXT_SHIFT) | UMPI_UCX_INTERNAL_BIT;
}
/* Starts making sure that everything this process sent has reached its destination (MPI_Finalize,
 * before its fence): *ucx_req to wait for (umpi_ucx_test_send), NULL when nothing is in flight. */
umpi_status_t umpi_ucx_flush_start(void **ucx_req);

/* The endpoint to a world rank, created on first use. */
static inline umpi_status_t umpi_ucx_ep(int world_rank, ucp_ep_h *ep)
{
    ucp_ep_h e = umpi_ucx.eps[world_rank];
    if (umpi_likely(e != NULL)) {
        *ep = e;
        return UMPI_OK;
    }
    return umpi_ucx_ep_create(world_rank, ep);
}

static inline ucp_tag_t umpi_ucx_send_tag(uint32_t context_id, int source, int tag)
{
    return ((ucp_tag_t) context_id << UMPI_UCX_CONTEXT_SHIFT) |
           ((ucp_tag_t) (uint32_t) source << UMPI_UCX_SOURCE_SHIFT) | (ucp_tag_t) (uint32_t) tag;
}

static inline void umpi_ucx_recv_tag(uint32_t context_id, int source, int tag, ucp_tag_t *ucp_tag,
                                     ucp_tag_t *mask)
{
    ucp_tag_t t = (ucp_tag_t) context_id << UMPI_UCX_CONTEXT_SHIFT;
    ucp_tag_t m = ~(ucp_tag_t) 0;
    if (source == MPI_ANY_SOURCE)
        m &= ~UMPI_UCX_SOURCE_MASK;
    else
        t |= (ucp_tag_t) (uint32_t) source << UMPI_UCX_SOURCE_SHIFT;
    if (tag == MPI_ANY_TAG)
        m &= ~UMPI_UCX_TAG_MASK;
    else
        t |= (ucp_tag_t) (uint32_t) tag;
    *ucp_tag = t;
    *mask = m;
}

static inline int umpi_ucx_tag_source(ucp_tag_t t)
{
    return (int) ((t & UMPI_UCX_SOURCE_MASK) >> UMPI_UCX_SOURCE_SHIFT);
}
static inline int umpi_ucx_tag_tag(ucp_tag_t t)
{
    return (int) (t & UMPI_UCX_TAG_MASK);
}

/*
 * Calls back up, into point-to-point: arrows that run back up only where a callback table makes
 * the direction explicit. pt2pt fills it at MPI_Init (umpi_p2p_init), before any operation. The
 * host fast path makes no indirect call: both are off its way.
 *   complete_slow  a request completed whose completion needs more than its done flag
 *                  (r->slow_done: a buffered send's segment, a request the user freed)
 *   envelope       a receive with a request matched a message with the internal bit on a
 *                  point-to-point context: a device message's envelope, whose protocol takes r
 *                  over and completes it (src/pt2pt/umpi_p2p_gpu.h); st UCS_OK, or
 *                  UCS_ERR_MESSAGE_TRUNCATED when the envelope itself did not fit. UCX's request
 *                  is freed already; info is a copy.
 * Both run inside umpi_progress(), or inside the call that started the operation.
 */
struct umpi_ucx_upcalls {
    void (*complete_slow)(umpi_request_t *r);
    void (*envelope)(umpi_request_t *r, ucs_status_t st, const ucp_tag_recv_info_t *info);
};
void umpi_ucx_set_upcalls(const struct umpi_ucx_upcalls *up);

/*
 * Operations. Each either completes at once (req->done = 1, status filled for receives) or leaves
 * a UCX request in flight (*ucx_req) that completes into req (req->done, req->status,
 * req->net_status) from inside umpi_progress(). Sends take req == NULL for blocking calls: the
 * caller then waits on *ucx_req with umpi_ucx_test_send.
 */
umpi_status_t umpi_ucx_send_dt(ucp_ep_h ep, const void *buf, size_t len, ucp_datatype_t dt, ucp_tag_t tag,
                               int sync, umpi_request_t *req, void **ucx_req);
umpi_status_t umpi_ucx_recv_dt(void *buf, size_t len, ucp_datatype_t dt, ucp_tag_t tag, ucp_tag_t mask,
                               umpi_request_t *req, void **ucx_req);
/* Contiguous bytes: len bytes at buf. */
static inline umpi_status_t umpi_ucx_send(ucp_ep_h ep, const void *buf, size_t len, ucp_tag_t tag, int sync,
                                          umpi_request_t *req, void **ucx_req)
{
    return umpi_ucx_send_dt(ep, buf, len, UMPI_UCX_DT_BYTES, tag, sync, req, ucx_req);
}
static inline umpi_status_t umpi_ucx_recv(void *buf, size_t len, ucp_tag_t tag, ucp_tag_t mask,
                                          umpi_request_t *req, void **ucx_req)
{
    return umpi_ucx_recv_dt(buf, len, UMPI_UCX_DT_BYTES, tag, mask, req, ucx_req);
}

/*
 * Non-contiguous datatypes (ucx_dtype.c). With umpi_ucx.dt_generic, the "buffer" handed to UCX is
 * a umpi_request_t whose dt, buf and count describe the data, and the count is 1: UCX asks our
 * engine for the packed bytes piece by piece at any offset (eager fragments, rendezvous), so no
 * packed copy of the whole message is ever made.
 */
umpi_status_t umpi_ucx_dtype_init(void);
void umpi_ucx_dtype_finalize(void);

/* A blocking receive without an MPI request: completion lands in this struct on the caller's
 * stack (done, status, info), from UCX's callback. */
struct umpi_ucx_recv_wait {
    volatile int done;
    ucs_status_t status;
    ucp_tag_recv_info_t info;
    void *ucx_req;        /* the receive while not done, for umpi_ucx_cancel */
};
umpi_status_t umpi_ucx_recv_blocking(void *buf, size_t len, ucp_tag_t tag, ucp_tag_t mask,
                                     struct umpi_ucx_recv_wait *w);
umpi_status_t umpi_ucx_msg_recv_dt(void *buf, size_t len, ucp_datatype_t dt, ucp_tag_message_h msg,
                                   umpi_request_t *req, void **ucx_req, ucp_tag_recv_info_t *info);
static inline umpi_status_t umpi_ucx_msg_recv(void *buf, size_t len, ucp_tag_message_h msg, umpi_request_t *req,
                                              void **ucx_req, ucp_tag_recv_info_t *info)
{
    return umpi_ucx_msg_recv_dt(buf, len, UMPI_UCX_DT_BYTES, msg, req, ucx_req, info);
}

/* The same for a matched message (umpi_ucx_probe with remove), whose length the probe told. */
umpi_status_t umpi_ucx_msg_recv_blocking(void *buf, size_t len, ucp_tag_message_h msg,
                                         struct umpi_ucx_recv_wait *w);

/* UCX's probe of its unexpected queue: the first message matching (tag, mask), NULL when none;
 * info: its sender tag and length. With remove the message leaves the queue, to be received
 * with umpi_ucx_msg_recv*. */
static inline ucp_tag_message_h umpi_ucx_probe(ucp_tag_t tag, ucp_tag_t mask, int remove, ucp_tag_recv_info_t *info)
{
    return ucp_tag_probe_nb(umpi_ucx.worker, tag, mask, remove, info);
}

/* Completion test of a request returned to a blocking caller; frees it when complete. */
static inline ucs_status_t umpi_ucx_test_send(void *ucx_req)
{
    ucs_status_t st = ucp_request_check_status(ucx_req);
    if (st != UCS_INPROGRESS)
        ucp_request_free(ucx_req);
    return st;
}

/* Blocks on the progress engine until ucx_req, a UCX request handed to a blocking caller (NULL:
 * complete already), completes, and frees it: its status. */
static inline ucs_status_t umpi_ucx_wait(void *ucx_req)
{
    umpi_waiter_t w = {0};
    ucs_status_t s = UCS_OK;
    if (ucx_req != NULL)
        while ((s = umpi_ucx_test_send(ucx_req)) == UCS_INPROGRESS)
            umpi_progress_step(&w);
    return s;
}

void umpi_ucx_cancel(void *ucx_req);

/*
 * Operations with a completion callback, for a protocol that keeps state of its own (the device
 * protocol, src/pt2pt/gpu_*.c). The caller owns the record, one per operation in flight, and sets
 * done and user; the netmod calls done exactly once, inside the call when the operation completes
 * at once, else from umpi_progress() (under the big lock), and frees UCX's request itself. info:
 * a receive's sender tag and length (NULL for sends). An error returned: the operation did not
 * start and done is not called. done may start other operations, but not on its own record.
 */
typedef struct umpi_ucx_op umpi_ucx_op_t;
struct umpi_ucx_op {
    void (*done)(umpi_ucx_op_t *op, ucs_status_t st, const ucp_tag_recv_info_t *info);
    void *user;
    void *ucx_req;            /* UCX's request while in flight (umpi_ucx_cancel_op), else NULL */
};
umpi_status_t umpi_ucx_send_op(ucp_ep_h ep, const void *buf, size_t len, ucp_tag_t tag, umpi_ucx_op_t *op);
/* Receives deny immediate completion (as umpi_ucx_recv_dt does): info always comes from UCX. */
umpi_status_t umpi_ucx_recv_op(void *buf, size_t len, ucp_tag_t tag, ucp_tag_t mask, umpi_ucx_op_t *op);
/* A matched message; probed: what the probe told of it (sender tag, length), which done gets when
 * the receive completes at once (UCX reports nothing then). */
umpi_status_t umpi_ucx_msg_recv_op(void *buf, size_t len, ucp_tag_message_h msg, const ucp_tag_recv_info_t *probed,
                                   umpi_ucx_op_t *op);
/* Cancels op if it is in flight: done then reports UCS_ERR_CANCELED (or the completion that
 * came first). */
static inline void umpi_ucx_cancel_op(umpi_ucx_op_t *op)
{
    if (op->ucx_req != NULL)
        umpi_ucx_cancel(op->ucx_req);
}

/*
 * Light operations for collective schedules: no umpi_request_t, no status. Each completion
 * decrements the shared counter (counter->pending, incremented here while the operation is in
 * flight) and, on failure, records the UCX status in the record and counts it in counter->failed.
 * Operations that complete inside the call leave pending unchanged. Cancelled only by coll/pair.c.
 * Several operations may share one record where only how many are left and whether one failed
 * matter (the device protocol's chunks landing in place): status is then one failure's.
 */
typedef struct umpi_ucx_counter {
    int pending;
    int failed;
} umpi_ucx_counter_t;
typedef struct umpi_ucx_done {
    umpi_ucx_counter_t *counter;
    int status;               /* ucs_status_t of the completion; UCS_OK until a failure */
} umpi_ucx_done_t;
umpi_status_t umpi_ucx_send_light(ucp_ep_h ep, const void *buf, size_t len, ucp_datatype_t dt, ucp_tag_t tag,
                                  umpi_ucx_done_t *d);
umpi_status_t umpi_ucx_recv_light(void *buf, size_t len, ucp_datatype_t dt, ucp_tag_t tag, umpi_ucx_done_t *d);
/* The same, with the UCX request while the receive is in flight (NULL when it completed at once):
 * umpi_ucx_cancel on it, while not complete, completes it with UCS_ERR_CANCELED (coll/pair.c). */
umpi_status_t umpi_ucx_recv_light_req(void *buf, size_t len, ucp_datatype_t dt, ucp_tag_t tag, umpi_ucx_done_t *d,
                                      void **ucx_req);

#endif
