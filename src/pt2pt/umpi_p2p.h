/*
 * Point-to-point: MPI send/receive semantics on top of the UCX netmod.
 *
 * Protocols: UCX chooses eager or rendezvous by size (UMPI_RNDV_THRESH); synchronous sends use
 * UCX's synchronous tagged send (completion after the receiver matched). Contiguous buffers go to
 * UCX as they are; non-contiguous predefined types (the pair types) are packed into a staging
 * buffer. Buffered sends copy into the attached buffer and send from there (bsend.c).
 */
#ifndef UMPI_P2P_H
#define UMPI_P2P_H

#include "core/umpi_err.h"
#include "core/umpi_progress.h"
#include "core/umpi_request.h"
#include "netmod/ucx/umpi_ucx.h"

/* Point-to-point's start and end (p2p_init.c). umpi_p2p_init, at MPI_Init before UCX starts: hands
 * the netmod its calls back up (completions that need point-to-point) and publishes what the device
 * protocol's peers must know. umpi_p2p_start, once UCX is up: the device protocol's standing
 * receive. umpi_p2p_finalize, at MPI_Finalize after the fence, before UCX goes. */
umpi_status_t umpi_p2p_init(int world_size);
void umpi_p2p_start(void);
void umpi_p2p_finalize(void);

/* Starts a send of any mode into req (req may be NULL for a blocking send, which then completes
 * before returning). Returns an MPI error code. */
int umpi_p2p_send(const void *buf, MPI_Count count, umpi_dtype_t *dt, int dest, int tag, umpi_comm_t *comm,
                  umpi_send_mode_t mode, umpi_request_t *req);

/* Posts a receive into req (req->buf/count/dt/peer/tag/comm already set). */
int umpi_p2p_irecv_start(umpi_request_t *req);
/* Starts an inactive persistent point-to-point request (MPI_Start, src/coll/start.c): its
 * receive, send, or buffered send (complete at once). An MPI error code. */
int umpi_p2p_persistent_start(umpi_request_t *r);

/* MPI_Recv's request-less waits on a process that uses CUDA, newest first (recv.c): gpu_late.c
 * hands one the envelope of a longer device message that passed it by, cancelling its UCX receive
 * and setting `redirected`: it then receives again, through a request. */
struct umpi_p2p_waiting_recv {
    struct umpi_p2p_waiting_recv *next;
    uint32_t context;
    int source, tag;
    struct umpi_ucx_recv_wait *wait;
    int redirected;
};
extern struct umpi_p2p_waiting_recv *umpi_p2p_recv_waiting;

/* A new receive request, posted. */
int umpi_p2p_irecv(void *buf, MPI_Count count, umpi_dtype_t *dt, int source, int tag, umpi_comm_t *comm,
                   umpi_request_t **out);

/* Called from the netmod's completion callback when req->slow_done is set: returns bsend segments
 * and releases requests freed by the user (bsend.c). */
void umpi_p2p_complete_slow(umpi_request_t *req);

/*
 * Completes a done request for Wait/Test: copies its status out (unless MPI_STATUS_IGNORE),
 * turns its netmod status into an MPI error code, and releases it (or makes a persistent one
 * inactive) and sets *handle to MPI_REQUEST_NULL where the standard says so. Returns the error.
 */
int umpi_p2p_request_complete(umpi_request_t *req, MPI_Request *handle, MPI_Status *status);

/* Empty-status rule: a request that is MPI_REQUEST_NULL or an inactive persistent request. */
static inline int umpi_p2p_request_inactive(umpi_request_t *req)
{
    return req == NULL || (req->persistent && !req->active);
}

int umpi_p2p_request_invalid(MPI_Request h, const char *argname, int index);

/* Decodes a request handle for the wait/test functions: *req NULL for MPI_REQUEST_NULL;
 * MPI_ERR_REQUEST for anything that is not a request of ours. */
static inline int umpi_p2p_request_lookup(MPI_Request h, const char *argname, int index, umpi_request_t **req)
{
    if (h == MPI_REQUEST_NULL) {
        *req = NULL;
        return MPI_SUCCESS;
    }
    umpi_request_t *r = umpi_request_get(h);
    *req = NULL;
    if (umpi_unlikely(r == NULL || r->kind == UMPI_REQ_MESSAGE))
        return umpi_p2p_request_invalid(h, argname, index);
    *req = r;
    return MPI_SUCCESS;
}

/* Buffered sends (bsend.c). */
/* How UCX gets the data of a non-contiguous datatype (p2p_dtype.c): an iov list of few large
 * blocks, or the generic datatype packed by the engine. req->buf, count and dt describe it; the
 * iov list goes to req->tmp (freed with the request). */
int umpi_p2p_dt_target(umpi_request_t *req, size_t bytes, void **data, size_t *len, ucp_datatype_t *udt);

int umpi_p2p_bsend(const void *buf, MPI_Count count, umpi_dtype_t *dt, int dest, int tag, umpi_comm_t *comm);
void umpi_p2p_bsend_segment_done(void *seg);
void umpi_p2p_bsend_finalize(void);

/* The byte length of count elements, or an error code when it overflows (no division: this runs
 * on every send and receive). */
static inline int umpi_p2p_bytes(MPI_Count count, const umpi_dtype_t *dt, size_t *bytes)
{
    MPI_Count b;
    *bytes = 0;
    if (umpi_unlikely(__builtin_mul_overflow(count, dt->size, &b)))
        return umpi_err_create(MPI_ERR_COUNT, "count %lld of %s is too large (overflows the byte count)",
                               (long long) count, dt->name ? dt->name : "datatype");
    *bytes = (size_t) b;
    return MPI_SUCCESS;
}

#endif
