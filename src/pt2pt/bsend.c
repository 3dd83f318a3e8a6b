/*
 * Buffered sends: MPI_Buffer_attach/detach and the copy into the attached buffer.
 *
 * The attached buffer holds segments, each a header followed by the message data, kept on a list
 * in address order. A new message takes the first gap that fits (first fit); a segment is given
 * back when UCX completes its send. The header and alignment padding stay within
 * MPI_BSEND_OVERHEAD, so a buffer sized by the standard's rule (sum of message sizes plus
 * MPI_BSEND_OVERHEAD each) always suffices.
 */
#include "pt2pt/umpi_p2p.h"
#include "cuda/umpi_cuda_copy.h"

#include <string.h>

#define UMPI_BSEND_ALIGN 16

struct umpi__bseg {
    struct umpi__bseg *next; /* next segment in use, in address order */
    size_t size;             /* header + padding + data */
    size_t bytes;            /* the message */
    char pad[UMPI_BSEND_ALIGN - (2 * sizeof(size_t) + sizeof(void *)) % UMPI_BSEND_ALIGN];
};
_Static_assert(sizeof(struct umpi__bseg) % UMPI_BSEND_ALIGN == 0, "segment data must stay aligned");
_Static_assert(sizeof(struct umpi__bseg) + 2 * UMPI_BSEND_ALIGN <= MPI_BSEND_OVERHEAD,
               "header and padding must fit in MPI_BSEND_OVERHEAD");

static struct {
    char *user_base;          /* as attached */
    MPI_Count user_size;
    char *base, *end;         /* aligned usable range */
    struct umpi__bseg *head;  /* segments in use */
} umpi__bsend;

static size_t umpi__align(size_t n)
{
    return (n + UMPI_BSEND_ALIGN - 1) & ~(size_t) (UMPI_BSEND_ALIGN - 1);
}

/* First fit; NULL when no gap is large enough. */
static struct umpi__bseg *umpi__bseg_alloc(size_t bytes)
{
    size_t need = sizeof(struct umpi__bseg) + umpi__align(bytes);
    char *cur = umpi__bsend.base;
    struct umpi__bseg **link = &umpi__bsend.head;
    for (struct umpi__bseg *s = umpi__bsend.head; s != NULL; link = &s->next, s = s->next) {
        if ((size_t) ((char *) s - cur) >= need)
            break;
        cur = (char *) s + s->size;
    }
    char *limit = *link ? (char *) *link : umpi__bsend.end;
    if (cur == NULL || (size_t) (limit - cur) < need)
        return NULL;
    struct umpi__bseg *seg = (struct umpi__bseg *) cur;
    seg->size = need;
    seg->bytes = bytes;
    seg->next = *link;
    *link = seg;
    return seg;
}

void umpi_p2p_bsend_segment_done(void *p)
{
    for (struct umpi__bseg **link = &umpi__bsend.head; *link != NULL; link = &(*link)->next) {
        if (*link == p) {
            *link = ((struct umpi__bseg *) p)->next;
            return;
        }
    }
}

/* A request that completes with nobody to wait for it: a buffered send's (its segment goes back),
 * or one the user freed while it was active (released now). */
void umpi_p2p_complete_slow(umpi_request_t *r)
{
    if (r->bsend_seg != NULL) {
        umpi_p2p_bsend_segment_done(r->bsend_seg);
        r->bsend_seg = NULL;
    }
    if (r->user_freed)
        umpi_request_release(r);
}

static size_t umpi__bsend_free_bytes(void)
{
    size_t used = 0;
    for (struct umpi__bseg *s = umpi__bsend.head; s != NULL; s = s->next)
        used += s->size;
    return (size_t) (umpi__bsend.end - umpi__bsend.base) - used;
}

int umpi_p2p_bsend(const void *buf, MPI_Count count, umpi_dtype_t *dt, int dest, int tag, umpi_comm_t *comm)
{
    size_t bytes;
    int err = umpi_p2p_bytes(count, dt, &bytes);
    if (err != MPI_SUCCESS)
        return err;
    if (dest == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (umpi__bsend.user_base == NULL)
        return umpi_err_create(MPI_ERR_BUFFER, "no buffer is attached for a buffered send of %zu bytes "
                               "(call MPI_Buffer_attach first)", bytes);

    struct umpi__bseg *seg = umpi__bseg_alloc(bytes);
    for (int tries = 0; seg == NULL && umpi__bsend.head != NULL && tries < 64; tries++) {
        /* Completed sends give their segments back from inside progress. */
        umpi_progress();
        seg = umpi__bseg_alloc(bytes);
    }
    if (seg == NULL)
        return umpi_err_create(MPI_ERR_BUFFER, "a buffered send of %zu bytes (+%d overhead) does not fit in the "
                               "attached buffer of %lld bytes (%zu bytes free)", bytes, MPI_BSEND_OVERHEAD,
                               (long long) umpi__bsend.user_size, umpi__bsend_free_bytes());

    char *data = (char *) (seg + 1);
    int dev;
    umpi_status_t cst = UMPI_OK;
    if (umpi_unlikely(umpi_cuda_active) &&
        umpi_cuda_is_device_buf((const char *) buf + dt->true_lb, dt->contig ? bytes : 1, &dev, &cst)) {
        /* a device buffer: copied (packed) into the attached host buffer by the driver */
        cst = umpi_cuda_ctx_ensure(dev);
        if (cst == UMPI_OK)
            cst = umpi_cuda_pack(dt, buf, count, data, bytes);
    } else if (dt->contig) {
        memcpy(data, (const char *) buf + dt->true_lb, bytes);
    } else {
        umpi_dtype_pack(dt, buf, count, data);
    }
    if (cst != UMPI_OK) {
        umpi_p2p_bsend_segment_done(seg);
        return umpi_err_from_status(cst, "copying a buffered send's data");
    }

    umpi_request_t *r = umpi_request_alloc(UMPI_REQ_SEND, comm);
    if (r == NULL) {
        umpi_p2p_bsend_segment_done(seg);
        return umpi_err_create(MPI_ERR_OTHER, "out of memory allocating a request");
    }
    /* Nobody waits for this request: its completion returns the segment and the request. */
    r->user_freed = 1;
    r->slow_done = 1;
    r->bsend_seg = seg;
    r->peer = dest;

    ucp_ep_h ep;
    void *ucx_req;
    umpi_status_t st = umpi_ucx_ep(umpi_comm_to_world(comm, dest), &ep);
    if (st == UMPI_OK)
        st = umpi_ucx_send(ep, data, bytes, umpi_ucx_send_tag(comm->context_id, comm->rank, tag), 0, r, &ucx_req);
    if (st != UMPI_OK) {
        umpi_p2p_bsend_segment_done(seg);
        umpi_request_release(r);
        return umpi_err_from_status(st, "buffered send failed");
    }
    if (r->done) /* completed at once: no callback will come */
        umpi_p2p_complete_slow(r);
    return MPI_SUCCESS;
}

int umpi_impl_buffer_attach(void *buffer, MPI_Count size)
{
    int err = MPI_SUCCESS;
    umpi_lock();
    if (umpi__bsend.user_base != NULL) {
        err = umpi_err_create(MPI_ERR_BUFFER, "a buffer (%p, %lld bytes) is already attached; detach it first",
                              (void *) umpi__bsend.user_base, (long long) umpi__bsend.user_size);
        goto out;
    }
    if (buffer == NULL && size > 0) {
        err = umpi_err_create(MPI_ERR_BUFFER, "NULL buffer of %lld bytes in argument 'buffer'", (long long) size);
        goto out;
    }
    umpi__bsend.user_base = buffer ? buffer : (char *) &umpi__bsend; /* a 0-byte buffer is still attached */
    umpi__bsend.user_size = size;
    uintptr_t b = ((uintptr_t) buffer + UMPI_BSEND_ALIGN - 1) & ~(uintptr_t) (UMPI_BSEND_ALIGN - 1);
    uintptr_t e = (uintptr_t) buffer + (uintptr_t) size;
    umpi__bsend.base = (char *) b;
    umpi__bsend.end = (char *) (e > b ? e : b);
    umpi__bsend.head = NULL;
out:
    umpi_unlock();
    return err;
}

static void umpi__bsend_drain(void)
{
    umpi_waiter_t w = {0};
    while (umpi__bsend.head != NULL)
        umpi_progress_step(&w);
}

/* buffer_addr is really a void **: the standard keeps void * for Fortran's sake. */
int umpi_impl_buffer_detach(void *buffer_addr, MPI_Count *size)
{
    umpi_lock();
    umpi__bsend_drain();
    if (umpi__bsend.user_base == NULL) {
        *(void **) buffer_addr = NULL;
        *size = 0;
    } else {
        *(void **) buffer_addr = umpi__bsend.user_base == (char *) &umpi__bsend ? NULL : umpi__bsend.user_base;
        *size = umpi__bsend.user_size;
    }
    memset(&umpi__bsend, 0, sizeof(umpi__bsend));
    umpi_unlock();
    return MPI_SUCCESS;
}

void umpi_p2p_bsend_finalize(void)
{
    umpi__bsend_drain();
}
