/* The target side: the progress hook that applies one-sided requests (umpi_rma.h). */
#include "rma/umpi_rma.h"
#include "core/umpi_op.h"
#include "core/umpi_progress.h"

#include <stdlib.h>
#include <string.h>

/* Replies whose send UCX has not finished: their buffers live until it has. */
struct umpi__reply {
    void *ucx_req;
    void *buf;
    struct umpi__reply *next;
};
static struct umpi__reply *umpi__replies;

/* Answers origin on tag with len bytes of data in buf (NULL when len is 0; malloc'ed with room for
 * a umpi_rma_status_t after the data, given up to this function) followed by *rs (NULL: success). */
static void umpi__reply(umpi_win_t *w, int origin, uint32_t tag, void *buf, size_t len, const umpi_rma_status_t *rs)
{
    static const umpi_rma_status_t ok = { MPI_SUCCESS, 0, 0, 0 };
    if (buf == NULL && (buf = malloc(sizeof(umpi_rma_status_t))) == NULL)
        umpi_die(1, "out of memory answering a one-sided request on window 0x%x", (unsigned) w->handle);
    memcpy((char *) buf + len, rs != NULL ? rs : &ok, sizeof(*rs));
    len += sizeof(*rs);
    ucp_ep_h ep;
    void *ucx_req = NULL;
    umpi_status_t st = umpi_ucx_ep(umpi_comm_to_world(w->comm, origin), &ep);
    if (st == UMPI_OK)
        st = umpi_ucx_send(ep, buf, len, umpi_ucx_send_tag(w->comm->context_id, w->comm->rank, (int) tag), 0, NULL,
                           &ucx_req);
    if (st != UMPI_OK)
        umpi_die(1, "one-sided reply to rank %d of window 0x%x failed: %s", origin, (unsigned) w->handle,
                 umpi_status_string(st));
    struct umpi__reply *r = ucx_req ? malloc(sizeof(*r)) : NULL;
    if (r == NULL) {
        if (ucx_req != NULL) /* no memory to remember it: finish it here */
            while (umpi_ucx_test_send(ucx_req) == UCS_INPROGRESS)
                umpi_progress_net();
        free(buf);
        return;
    }
    *r = (struct umpi__reply){ ucx_req, buf, umpi__replies };
    umpi__replies = r;
}

static unsigned umpi__reap_replies(void)
{
    unsigned n = 0;
    for (struct umpi__reply **p = &umpi__replies; *p != NULL;) {
        struct umpi__reply *r = *p;
        if (umpi_ucx_test_send(r->ucx_req) == UCS_INPROGRESS) {
            p = &r->next;
            continue;
        }
        *p = r->next;
        free(r->buf);
        free(r);
        n++;
    }
    return n;
}

/* The region of a dynamic window that holds [addr, addr + len), or NULL. */
static const umpi_rma_region_t *umpi__attached(const umpi_win_t *w, MPI_Aint addr, MPI_Aint len)
{
    for (int i = 0; i < w->nregions; i++) {
        MPI_Aint b = (MPI_Aint) w->regions[i].base;
        if (addr >= b && addr + len <= b + w->regions[i].size)
            return &w->regions[i];
    }
    return NULL;
}

static void umpi__grant(umpi_win_t *w, int origin, int lock_type, uint32_t tag)
{
    if (lock_type == MPI_LOCK_EXCLUSIVE)
        w->lock_excl = 1;
    else
        w->lock_shared++;
    umpi__reply(w, origin, tag, NULL, 0, NULL);
}

static int umpi__grantable(const umpi_win_t *w, int lock_type)
{
    if (lock_type == MPI_LOCK_EXCLUSIVE)
        return !w->lock_excl && w->lock_shared == 0;
    return !w->lock_excl;
}

/* Grants the waiting lock requests that fit now, in arrival order (no overtaking: a waiting
 * exclusive request holds back shared ones behind it, so it cannot starve). */
static void umpi__grant_waiting(umpi_win_t *w)
{
    int i = 0;
    while (i < w->nwaiting && umpi__grantable(w, w->waiting[i].lock_type)) {
        umpi__grant(w, w->waiting[i].origin, w->waiting[i].lock_type, w->waiting[i].reply_tag);
        i++;
    }
    memmove(w->waiting, w->waiting + i, (size_t) (w->nwaiting - i) * sizeof(*w->waiting));
    w->nwaiting -= i;
}

static void umpi__lock(umpi_win_t *w, const umpi_rma_hdr_t *h)
{
    if (w->nwaiting == 0 && umpi__grantable(w, h->lock_type)) {
        umpi__grant(w, h->origin, h->lock_type, h->reply_tag);
        return;
    }
    if (w->nwaiting == w->capwaiting) {
        int cap = w->capwaiting ? 2 * w->capwaiting : 8;
        void *p = realloc(w->waiting, (size_t) cap * sizeof(*w->waiting));
        if (p == NULL)
            umpi_die(1, "out of memory queueing a lock request on window 0x%x", (unsigned) w->handle);
        w->waiting = p;
        w->capwaiting = cap;
    }
    w->waiting[w->nwaiting++] = (umpi_rma_waiter_t){ h->origin, h->lock_type, h->reply_tag };
}

/* Copies the blocks' bytes at mem into out, in order. */
static void umpi__gather(char *mem, const umpi_rma_block_t *b, uint64_t n, char *out)
{
    for (uint64_t i = 0; i < n; i++) {
        memcpy(out, mem + b[i].off, (size_t) b[i].len);
        out += b[i].len;
    }
}

static void umpi__scatter(char *mem, const umpi_rma_block_t *b, uint64_t n, const char *in)
{
    for (uint64_t i = 0; i < n; i++) {
        memcpy(mem + b[i].off, in, (size_t) b[i].len);
        in += b[i].len;
    }
}

/* in (packed) op= the blocks' data. A basic type with gaps (MPI_DOUBLE_INT) has elements that
 * blocks may cut anywhere: both sides are then laid out as elements, combined, and put back. */
static void umpi__accumulate(char *mem, const umpi_rma_block_t *b, uint64_t n, const char *in, size_t len,
                             MPI_Op oph, umpi_dtype_t *elem)
{
    umpi_op_t *op = umpi_op_get(oph);
    if (oph == MPI_REPLACE || oph == MPI_NO_OP) {
        if (oph == MPI_REPLACE)
            umpi__scatter(mem, b, n, in);
        return;
    }
    if (elem->contig) {
        for (uint64_t i = 0; i < n; i++) {
            umpi_op_apply(op, in, mem + b[i].off, b[i].len / elem->size, elem);
            in += b[i].len;
        }
        return;
    }
    MPI_Count count = (MPI_Count) len / elem->size;
    char *packed = malloc(len ? len : 1);
    char *tin = malloc((size_t) (count * elem->extent) + 1), *tout = malloc((size_t) (count * elem->extent) + 1);
    if (packed == NULL || tin == NULL || tout == NULL)
        umpi_die(1, "out of memory applying an accumulate of %zu bytes", len);
    umpi__gather(mem, b, n, packed);
    umpi_dtype_unpack(elem, in, (MPI_Count) len, tin);
    umpi_dtype_unpack(elem, packed, (MPI_Count) len, tout);
    umpi_op_apply(op, tin, tout, count, elem);
    umpi_dtype_pack(elem, tout, count, packed);
    umpi__scatter(mem, b, n, packed);
    free(packed);
    free(tin);
    free(tout);
}

/* The answer to a flush or an unlock: every earlier request of the origin is applied, and the first
 * of them that touched memory not attached (a dynamic window) is reported now. */
static void umpi__answer_flush(umpi_win_t *w, const umpi_rma_hdr_t *h)
{
    const umpi_rma_status_t *rs = NULL;
    umpi_rma_status_t bad;
    if (w->unattached != NULL && w->unattached[h->origin].code != MPI_SUCCESS) {
        bad = w->unattached[h->origin];
        w->unattached[h->origin].code = MPI_SUCCESS;
        rs = &bad;
    }
    umpi__reply(w, h->origin, h->reply_tag, NULL, 0, rs);
}

/*
 * Device window memory: the blocks are read into host memory, the request applied there as to
 * host window memory laid out packed (one block), and what changed written back, all inside this
 * one request, so accumulates stay atomic with respect to each other. old (GACC) receives the
 * target data as it was.
 */
static void umpi__apply_dev(umpi_win_t *w, const umpi_rma_hdr_t *h, char *mem, const umpi_rma_block_t *b,
                            const char *payload, size_t len, char *old)
{
    umpi_rma_block_t whole = { 0, (MPI_Aint) len };
    umpi_cuda_stat_add(UMPI_CUDA_STAT_rma_target);
    if (h->kind == UMPI_RMA_GET) {
        umpi_rma_dev_gather(w, mem, b, h->nblocks, old);
        return;
    }
    if (h->kind == UMPI_RMA_ACC && h->op == MPI_NO_OP)
        return;
    if (h->kind == UMPI_RMA_PUT || (h->kind == UMPI_RMA_ACC && h->op == MPI_REPLACE)) {
        umpi_rma_dev_scatter(w, mem, b, h->nblocks, payload);
        return;
    }
    char *cur = malloc(len ? len : 1);
    if (cur == NULL)
        umpi_die(1, "out of memory applying a one-sided request of %zu bytes to device memory", len);
    umpi_rma_dev_gather(w, mem, b, h->nblocks, cur);
    if (old != NULL)
        memcpy(old, cur, len);
    int changed = 0;
    if (h->kind == UMPI_RMA_CAS) {
        changed = memcmp(cur, payload + len, len) == 0;
        if (changed)
            memcpy(cur, payload, len);
    } else if ((h->kind == UMPI_RMA_ACC || h->kind == UMPI_RMA_GACC) && h->op != MPI_NO_OP) {
        umpi__accumulate(cur, &whole, 1, payload, len, h->op, umpi_dtype_get(h->elem));
        changed = 1;
    }
    if (changed)
        umpi_rma_dev_scatter(w, mem, b, h->nblocks, cur);
    free(cur);
}

/* Applies a request that moves data (put, get, the accumulates) to host memory at mem (the target
 * address; the blocks are offsets from it); out receives the len bytes a fetching kind returns. */
static void umpi__apply_host(const umpi_rma_hdr_t *h, char *mem, const umpi_rma_block_t *b, const char *payload,
                             size_t len, char *out)
{
    switch ((umpi_rma_kind_t) h->kind) {
    case UMPI_RMA_PUT:
        umpi__scatter(mem, b, h->nblocks, payload);
        break;
    case UMPI_RMA_GET:
    case UMPI_RMA_GACC:
        umpi__gather(mem, b, h->nblocks, out);
        if (h->kind == UMPI_RMA_GACC && h->op != MPI_NO_OP)
            umpi__accumulate(mem, b, h->nblocks, payload, len, h->op, umpi_dtype_get(h->elem));
        break;
    case UMPI_RMA_ACC:
        umpi__accumulate(mem, b, h->nblocks, payload, len, h->op, umpi_dtype_get(h->elem));
        break;
    case UMPI_RMA_CAS:
        umpi__gather(mem, b, h->nblocks, out);
        if (memcmp(out, payload + len, len) == 0)
            memcpy(mem + b[0].off, payload, len);
        break;
    default:
        break;
    }
}

void umpi_rma_apply_shared(umpi_win_t *w, int target, const umpi_rma_hdr_t *h, const umpi_rma_block_t *b,
                           const void *payload, void *out)
{
    size_t len = 0;
    for (uint64_t i = 0; i < h->nblocks; i++)
        len += (size_t) b[i].len;
    umpi_rma_shm_lock(w);
    umpi__apply_host(h, w->shared_bases[target] + h->addr, b, payload, len, out);
    umpi_rma_shm_unlock(w);
}

/* Applies one request; msg is the whole message. */
static void umpi__apply(umpi_win_t *w, char *msg)
{
    umpi_rma_hdr_t *h = (umpi_rma_hdr_t *) msg;
    umpi_rma_block_t *b = (umpi_rma_block_t *) (msg + sizeof(*h));
    char *payload = (char *) (b + h->nblocks);
    char *mem = w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? (char *) h->addr : w->base + h->addr;
    size_t len = 0;
    int dev = w->dev;
    for (uint64_t i = 0; i < h->nblocks; i++)
        len += (size_t) b[i].len;
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC && h->nblocks > 0) {
        MPI_Aint lo = b[0].off, hi = b[0].off + b[0].len;
        for (uint64_t i = 1; i < h->nblocks; i++) {
            lo = b[i].off < lo ? b[i].off : lo;
            hi = b[i].off + b[i].len > hi ? b[i].off + b[i].len : hi;
        }
        const umpi_rma_region_t *g = umpi__attached(w, h->addr + lo, hi - lo);
        dev = g != NULL && g->dev;
        if (g == NULL) {
            /* Not attached here: nothing is touched, and the origin hears of it in this request's
             * answer (a get's data are zeros) or, for one without, in the answer to its next flush. */
            umpi_rma_status_t rs = { MPI_ERR_RMA_RANGE, h->addr + lo, h->addr + hi, 0 };
            umpi_debug(1, "window 0x%x: rank %d accessed [%p, %p), which is not attached",
                       (unsigned) w->handle, h->origin, (void *) (h->addr + lo), (void *) (h->addr + hi));
            if (h->reply_tag) {
                char *zeros = calloc(1, len + sizeof(rs));
                if (zeros == NULL)
                    umpi_die(1, "out of memory answering a one-sided request of %zu bytes", len);
                umpi__reply(w, h->origin, h->reply_tag, zeros, len, &rs);
            } else if (w->unattached[h->origin].code == MPI_SUCCESS) {
                rs.earlier = 1;
                w->unattached[h->origin] = rs;
            }
            return;
        }
    }
    int fetch = h->kind == UMPI_RMA_GET || h->kind == UMPI_RMA_GACC || h->kind == UMPI_RMA_CAS;
    if (fetch || h->kind == UMPI_RMA_PUT || h->kind == UMPI_RMA_ACC) {
        char *out = NULL;
        if (fetch && (out = malloc(len + sizeof(umpi_rma_status_t))) == NULL)
            umpi_die(1, "out of memory answering a one-sided request of %zu bytes", len);
        if (dev) {
            umpi__apply_dev(w, h, mem, b, payload, len, out);
        } else {
            umpi_rma_shm_lock(w);
            umpi__apply_host(h, mem, b, payload, len, out);
            umpi_rma_shm_unlock(w);
        }
        if (out != NULL)
            umpi__reply(w, h->origin, h->reply_tag, out, len, NULL);
        return;
    }
    switch ((umpi_rma_kind_t) h->kind) {
    case UMPI_RMA_PUT:
    case UMPI_RMA_GET:
    case UMPI_RMA_ACC:
    case UMPI_RMA_GACC:
    case UMPI_RMA_CAS:
        break; /* above */
    case UMPI_RMA_LOCK:
        umpi__lock(w, h);
        break;
    case UMPI_RMA_UNLOCK:
        if (h->lock_type == MPI_LOCK_EXCLUSIVE)
            w->lock_excl = 0;
        else if (h->lock_type == MPI_LOCK_SHARED && w->lock_shared > 0)
            w->lock_shared--;
        umpi__answer_flush(w, h);
        umpi__grant_waiting(w);
        break;
    case UMPI_RMA_FLUSH:
        umpi__answer_flush(w, h);
        break;
    }
}

unsigned umpi_rma_progress(void)
{
    unsigned n = umpi__replies ? umpi__reap_replies() : 0;
    for (umpi_win_t *w = umpi_rma_windows; w != NULL; w = w->next) {
        ucp_tag_t tag, mask;
        umpi_ucx_recv_tag(w->comm->context_id, MPI_ANY_SOURCE, UMPI_RMA_TAG_REQ, &tag, &mask);
        for (;;) {
            ucp_tag_recv_info_t info;
            ucp_tag_message_h m = umpi_ucx_probe(tag, mask, 1, &info);
            if (m == NULL)
                break;
            char *msg = malloc(info.length);
            struct umpi_ucx_recv_wait rw;
            if (msg == NULL || umpi_ucx_msg_recv_blocking(msg, info.length, m, &rw) != UMPI_OK)
                umpi_die(1, "cannot receive a one-sided request of %zu bytes on window 0x%x", info.length,
                         (unsigned) w->handle);
            while (!rw.done) /* a hook does not run hooks: UCX alone */
                umpi_progress_net();
            if (rw.status != UCS_OK)
                umpi_die(1, "one-sided request on window 0x%x failed: %s", (unsigned) w->handle,
                         ucs_status_string(rw.status));
            umpi__apply(w, msg);
            free(msg);
            n++;
        }
    }
    return n;
}
