/*
 * Requests: one pooled object for every nonblocking operation, persistent request and matched
 * message (MPI_Message handles are requests too, as in MPICH's ABI: MPI_MESSAGE_NULL ==
 * MPI_REQUEST_NULL's object kind).
 *
 * The pool hands out objects from a free list (no malloc on the hot path); the handle is
 * DIRECT|REQUEST|index, decoded by two loads. All request state is protected by the big lock
 * (umpi_lock) under MPI_THREAD_MULTIPLE; UCX completion callbacks run inside umpi_progress(),
 * i.e. with that lock held.
 */
#ifndef UMPI_REQUEST_H
#define UMPI_REQUEST_H

#include "core/umpi_obj.h"

typedef enum {
    UMPI_REQ_SEND = 1,
    UMPI_REQ_RECV,
    UMPI_REQ_DONE,      /* complete at creation: MPI_PROC_NULL peers, Ibsend (data copied) */
    UMPI_REQ_MESSAGE,   /* a message matched by MPI_Mprobe/Improbe, waiting for MPI_Mrecv */
    UMPI_REQ_IDUP,      /* MPI_Comm_idup: completed by the agreement's progress hook (comm_idup.c) */
    UMPI_REQ_COLL,      /* a nonblocking or persistent collective: its schedule runs in progress */
} umpi_req_kind_t;

/* Send modes, also the persistent send's kind. */
typedef enum {
    UMPI_SEND_STANDARD = 0,
    UMPI_SEND_SYNC,
    UMPI_SEND_READY,
    UMPI_SEND_BUFFERED,
} umpi_send_mode_t;

typedef struct umpi_request {
    MPI_Request handle;
    uint8_t kind;          /* umpi_req_kind_t */
    uint8_t persistent;    /* made by *_init: survives completion, restarted by MPI_Start */
    uint8_t active;        /* persistent: started and not yet completed by a Wait/Test */
    uint8_t user_freed;    /* MPI_Request_free while in flight: return to the pool at completion */
    volatile int done;     /* set when the operation completed (UCX callback or immediately) */
    int error;             /* MPI error code of the completion (collectives: the schedule's first error) */
    int net_status;        /* the netmod's completion status (ucs_status_t), turned into error at Wait */
    uint8_t slow_done;     /* completion needs work beyond the flag: unpack, bsend segment, freed */
    void *ucx_req;         /* UCX request in flight (for cancel), NULL otherwise */
    void *ucx_msg;         /* UMPI_REQ_MESSAGE: the UCX message handle */
    MPI_Status status;     /* filled at completion: SOURCE, TAG, byte count, cancelled */
    umpi_comm_t *comm;

    /* What the operation was started with (persistent requests restart from here; for
     * non-contiguous types, UCX's generic datatype packs and unpacks through buf, count, dt). */
    const void *buf;
    MPI_Count count;
    umpi_dtype_t *dt;
    int peer;              /* rank in comm, MPI_ANY_SOURCE or MPI_PROC_NULL */
    int tag;
    uint8_t mode;          /* umpi_send_mode_t */
    void *tmp;             /* memory the operation owns until it ends: the UCX iov list of a
                            * non-contiguous datatype (pt2pt/p2p_dtype.c), a device send's host bounce */
    size_t tmp_len;
    void (*tmp_put)(void *tmp, size_t len); /* gives tmp back (a pinned pool's buffer); NULL: free() */
    void *bsend_seg;       /* the attached-buffer segment of a buffered send */
    void *sched;              /* UMPI_REQ_COLL: the collective's schedule (coll/umpi_sched.h) */

    struct umpi_request *next_free;
} umpi_request_t;

/* ---- MPI_Status byte count (MPICH layout: count_lo | count_hi_and_cancelled = hi << 1 | cancelled) -- */

static inline void umpi_status_set_bytes(MPI_Status *s, MPI_Count bytes)
{
    s->count_lo = (int) (bytes & 0xffffffff);
    s->count_hi_and_cancelled = (s->count_hi_and_cancelled & 1) | (int) ((bytes >> 32) << 1);
}
static inline MPI_Count umpi_status_get_bytes(const MPI_Status *s)
{
    return (MPI_Count) (unsigned) s->count_lo | ((MPI_Count) ((unsigned) s->count_hi_and_cancelled >> 1) << 32);
}
static inline void umpi_status_set_cancelled(MPI_Status *s, int flag)
{
    s->count_hi_and_cancelled = (s->count_hi_and_cancelled & ~1) | (flag ? 1 : 0);
}
static inline int umpi_status_get_cancelled(const MPI_Status *s)
{
    return s->count_hi_and_cancelled & 1;
}
/* The status of an empty request (MPI_REQUEST_NULL, inactive persistent, MPI_PROC_NULL peer). */
static inline void umpi_status_set_empty(MPI_Status *s)
{
    if (s == MPI_STATUS_IGNORE)
        return;
    s->MPI_SOURCE = MPI_ANY_SOURCE;
    s->MPI_TAG = MPI_ANY_TAG;
    s->count_lo = 0;
    s->count_hi_and_cancelled = 0;
}

/* ---- the pool -------------------------------------------------------------------------------- */

#define UMPI_REQ_CHUNK_BITS 10
#define UMPI_REQ_CHUNK      (1u << UMPI_REQ_CHUNK_BITS)
#define UMPI_REQ_MAX_CHUNKS 16384

struct umpi_request_pool {
    umpi_request_t *chunks[UMPI_REQ_MAX_CHUNKS];
    uint32_t nchunks;
    umpi_request_t *free_list;
    long in_use;            /* for the leak check at MPI_Finalize */
};
extern struct umpi_request_pool umpi_request_pool;

umpi_request_t *umpi_request_alloc_grow(void);

/* A cleared request of the given kind with a fresh handle, or NULL when out of memory. */
static inline umpi_request_t *umpi_request_alloc(umpi_req_kind_t kind, umpi_comm_t *comm)
{
    umpi_request_t *r = umpi_request_pool.free_list;
    if (umpi_unlikely(r == NULL)) {
        r = umpi_request_alloc_grow();
        if (r == NULL)
            return NULL;
    }
    umpi_request_pool.free_list = r->next_free;
    umpi_request_pool.in_use++;
    /* Field by field rather than memset: a memset of the whole object costs more than the
     * receive it serves (measured: 13% of a receiver's time at 8-byte message rate).
     * tmp (and tmp_put), bsend_seg and sched are NULL already: release and the completion path
     * clear them. */
    r->kind = (uint8_t) kind;
    r->persistent = 0;
    r->active = 0;
    r->user_freed = 0;
    r->slow_done = 0;
    r->mode = 0;
    r->done = 0;
    r->error = MPI_SUCCESS;
    r->net_status = 0;
    r->ucx_req = NULL;
    r->ucx_msg = NULL;
    r->status.MPI_SOURCE = 0;
    r->status.MPI_TAG = 0;
    r->status.MPI_ERROR = MPI_SUCCESS;
    r->status.count_lo = 0;
    r->status.count_hi_and_cancelled = 0;
    r->comm = comm;
    comm->refcount++; /* a freed communicator lives until its pending operations complete */
    r->buf = NULL;
    r->count = 0;
    r->dt = NULL;
    r->peer = MPI_PROC_NULL;
    r->tag = 0;
    return r;
}

void umpi_request_free_tmp(umpi_request_t *r);
/* Frees a collective's schedule (umpi_sched_free_opaque of src/coll/sched.c, set at MPI_Init by
 * src/api/init.c): core knows a schedule only as a pointer, and reaches coll only through this. */
extern void (*umpi_request_sched_free)(void *sched);

/* Back to the pool; the handle stops naming a request (kind 0). */
static inline void umpi_request_release(umpi_request_t *r)
{
    if (umpi_unlikely(r->tmp != NULL))
        umpi_request_free_tmp(r);
    if (r->dt != NULL)
        umpi_dtype_release(r->dt); /* the reference the operation held (derived types only) */
    if (umpi_unlikely(r->sched != NULL)) {
        umpi_request_sched_free(r->sched);
        r->sched = NULL;
    }
    r->bsend_seg = NULL;
    r->kind = 0;
    umpi_comm_release(r->comm);
    r->next_free = umpi_request_pool.free_list;
    umpi_request_pool.free_list = r;
    umpi_request_pool.in_use--;
}

/* NULL when h does not name a request of ours that is in use. */
static inline umpi_request_t *umpi_request_get(MPI_Request h)
{
    if (umpi_unlikely(UMPI_HANDLE_KIND(h) != UMPI_KIND_DIRECT || UMPI_HANDLE_OBJ(h) != UMPI_OBJ_REQUEST))
        return NULL;
    uint32_t idx = UMPI_HANDLE_INDEX(h);
    if (umpi_unlikely((idx >> UMPI_REQ_CHUNK_BITS) >= umpi_request_pool.nchunks))
        return NULL;
    umpi_request_t *r = &umpi_request_pool.chunks[idx >> UMPI_REQ_CHUNK_BITS][idx & (UMPI_REQ_CHUNK - 1)];
    return r->kind ? r : NULL;
}

void umpi_request_pool_finalize(void);

#endif
