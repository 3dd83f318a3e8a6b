/* The origin side of one-sided communication: MPI_Put, MPI_Get, the accumulates, their
 * request-based forms (umpi_rma.h has the wire format). */
#include "rma/umpi_rma.h"
#include "core/umpi_err.h"
#include "core/umpi_op.h"
#include "core/umpi_progress.h"
#include "core/umpi_request.h"
#include "mpi/gen/umpi_impl.h"
#include "netmod/ucx/umpi_ucx_rma.h"

#include <stdlib.h>
#include <string.h>

int umpi_rma_request(umpi_win_t *w, int target, umpi_rma_hdr_t *h, const umpi_rma_block_t *blocks,
                     const void *payload, void *reply, size_t reply_len)
{
    size_t blen = (size_t) h->nblocks * sizeof(umpi_rma_block_t);
    size_t len = sizeof(*h) + blen + (size_t) h->bytes;
    char *msg = malloc(len);
    if (msg == NULL)
        return umpi_err_create(MPI_ERR_NO_MEM, "out of memory for a one-sided request of %zu bytes", len);
    umpi_comm_t *c = w->comm;
    struct umpi_ucx_recv_wait rw = { .done = 1 };
    umpi_status_t st = UMPI_OK;
    h->origin = c->rank;
    h->reply_tag = 0;
    if (reply != NULL) {
        h->reply_tag = UMPI_RMA_TAG_REPLY + (w->seq++ % UMPI_RMA_SEQ_SPAN);
        st = umpi_ucx_recv_blocking(reply, reply_len + sizeof(umpi_rma_status_t),
                                    umpi_ucx_send_tag(c->context_id, target, (int) h->reply_tag), ~(ucp_tag_t) 0, &rw);
    }
    memcpy(msg, h, sizeof(*h));
    if (blen)
        memcpy(msg + sizeof(*h), blocks, blen);
    if (h->bytes)
        memcpy(msg + sizeof(*h) + blen, payload, (size_t) h->bytes);
    ucp_ep_h ep;
    void *ucx_req = NULL;
    if (st == UMPI_OK)
        st = umpi_ucx_ep(umpi_comm_to_world(c, target), &ep);
    if (st == UMPI_OK)
        st = umpi_ucx_send(ep, msg, len, umpi_ucx_send_tag(c->context_id, c->rank, UMPI_RMA_TAG_REQ), 0, NULL,
                           &ucx_req);
    if (st == UMPI_OK) {
        ucs_status_t s = umpi_ucx_wait(ucx_req);
        if (s != UCS_OK)
            st = umpi_ucx_status(s, "one-sided request");
    }
    free(msg);
    if (st != UMPI_OK && reply != NULL && !rw.done && rw.ucx_req != NULL)
        umpi_ucx_cancel(rw.ucx_req);
    umpi_waiter_t waiter = {0};
    while (!rw.done)
        umpi_progress_step(&waiter);
    if (st == UMPI_OK && rw.status != UCS_OK)
        st = umpi_ucx_status(rw.status, "one-sided reply");
    if (st != UMPI_OK)
        return umpi_err_from_status(st, "one-sided communication");
    if (reply == NULL) {
        w->dirty[target] = 1;
        return MPI_SUCCESS;
    }
    umpi_rma_status_t rs;
    memcpy(&rs, (char *) reply + reply_len, sizeof(rs));
    if (rs.code == MPI_SUCCESS)
        return MPI_SUCCESS;
    return umpi_err_create(MPI_ERR_RMA_RANGE, "%sbytes [%p, %p) at target rank %d are not in memory attached to "
                           "dynamic window 0x%x", rs.earlier ? "an operation since the last flush accessed " : "",
                           (void *) (intptr_t) rs.lo, (void *) (intptr_t) rs.hi, target, (unsigned) w->handle);
}

int umpi_rma_drain(umpi_win_t *w)
{
    umpi_status_t st = UMPI_OK;
    for (int i = 0; i < w->ninflight; i++) {
        ucs_status_t s = umpi_ucx_wait(w->inflight[i]);
        if (s != UCS_OK && st == UMPI_OK)
            st = umpi_ucx_status(s, "a one-sided put or get");
    }
    w->ninflight = 0;
    return st == UMPI_OK ? MPI_SUCCESS : umpi_err_from_status(st, "one-sided communication");
}

int umpi_rma_flush_ucx(umpi_win_t *w, int target)
{
    int err = umpi_rma_drain(w);
    if (err != MPI_SUCCESS || !w->rma_dirty[target])
        return err;
    void *ucx_req;
    umpi_status_t st = umpi_ucx_ep_flush(umpi_comm_to_world(w->comm, target), &ucx_req);
    if (st == UMPI_OK) {
        ucs_status_t s = umpi_ucx_wait(ucx_req);
        if (s != UCS_OK)
            st = umpi_ucx_status(s, "flushing one-sided puts");
    }
    if (st != UMPI_OK)
        return umpi_err_from_status(st, "one-sided communication");
    w->rma_dirty[target] = 0;
    return MPI_SUCCESS;
}

int umpi_rma_flush_target(umpi_win_t *w, int target)
{
    int err = umpi_rma_flush_ucx(w, target);
    if (err != MPI_SUCCESS || !w->dirty[target])
        return err;
    umpi_rma_hdr_t h = { .kind = UMPI_RMA_FLUSH };
    umpi_rma_status_t rs;
    err = umpi_rma_request(w, target, &h, NULL, NULL, &rs, 0);
    w->dirty[target] = 0; /* an error was reported: flushed all the same */
    return err;
}

/* ---- the target's layout ------------------------------------------------------------------------ */

typedef struct {
    umpi_rma_block_t *b; /* inl, or malloc'ed once the blocks outgrow it */
    uint64_t n, cap;
    MPI_Aint lo, hi;     /* the bytes the layout touches, relative to the target address */
    umpi_rma_block_t inl[4]; /* most layouts are one block: no malloc per operation */
} umpi__layout_t;

static void umpi__layout_free(umpi__layout_t *L)
{
    if (L->b != L->inl)
        free(L->b);
}

static int umpi__add(umpi__layout_t *L, MPI_Aint off, MPI_Aint len)
{
    if (len == 0)
        return 0;
    if (L->n > 0 && L->b[L->n - 1].off + L->b[L->n - 1].len == off) {
        L->b[L->n - 1].len += len; /* adjacent: one block */
    } else {
        if (L->n == L->cap) {
            uint64_t cap = 2 * L->cap;
            void *p = L->b == L->inl ? malloc(cap * sizeof(*L->b)) : realloc(L->b, cap * sizeof(*L->b));
            if (p == NULL)
                return -1;
            if (L->b == L->inl)
                memcpy(p, L->inl, sizeof(L->inl));
            L->b = p;
            L->cap = cap;
        }
        L->b[L->n++] = (umpi_rma_block_t){ off, len };
    }
    if (off < L->lo)
        L->lo = off;
    if (off + len > L->hi)
        L->hi = off + len;
    return 0;
}

/* count elements of dt as (offset, length) blocks in type-map order. */
static int umpi__layout(const umpi_dtype_t *dt, MPI_Count count, umpi__layout_t *L)
{
    L->b = L->inl;
    L->n = 0;
    L->cap = sizeof(L->inl) / sizeof(L->inl[0]);
    L->lo = INT64_MAX;
    L->hi = INT64_MIN;
    int bad = 0;
    if (dt->contig) {
        bad = umpi__add(L, dt->true_lb, (MPI_Aint) (count * dt->size));
    } else if (dt->builtin) {
        for (MPI_Count i = 0; i < count && !bad; i++)
            for (int k = 0; k < dt->nblocks && !bad; k++)
                bad = umpi__add(L, (MPI_Aint) i * dt->extent + dt->blocks[k].disp, dt->blocks[k].len);
    } else {
        for (MPI_Count i = 0; i < count && !bad; i++)
            for (MPI_Count l = 0; l < dt->loop_count && !bad; l++)
                for (MPI_Count k = 0; k < dt->nops && !bad; k++) {
                    const umpi_dt_op_t *op = &dt->ops[k];
                    for (MPI_Count j = 0; j < op->count && !bad; j++)
                        bad = umpi__add(L, (MPI_Aint) i * dt->extent + (MPI_Aint) l * dt->loop_stride + op->disp +
                                               (MPI_Aint) j * op->stride, op->len);
                }
    }
    if (L->n == 0)
        L->lo = L->hi = 0;
    return bad ? umpi_err_create(MPI_ERR_NO_MEM, "out of memory describing a target datatype") : MPI_SUCCESS;
}

/* ---- one operation ------------------------------------------------------------------------------ */

/* An access epoch must be open towards target (MPI 4.1 sec. 12.5). */
static int umpi__check_epoch(umpi_win_t *w, int target)
{
    if (w->fence_epoch || w->lock_all || w->locked[target] || (w->started && w->start_ranks[target]))
        return MPI_SUCCESS;
    return umpi_err_create(MPI_ERR_RMA_SYNC, "no access epoch is open on window 0x%x towards rank %d in "
                           "argument 'target_rank' (call MPI_Win_fence, MPI_Win_lock, MPI_Win_lock_all or "
                           "MPI_Win_start first)", (unsigned) w->handle, target);
}

typedef struct {
    umpi_rma_kind_t kind;
    const void *obuf;            /* origin data (put, accumulates, CAS) */
    MPI_Count ocount;
    umpi_dtype_t *odt;
    void *rbuf;                  /* where fetched data goes (get, get_accumulate, FOP, CAS) */
    MPI_Count rcount;
    umpi_dtype_t *rdt;
    const void *cmp;             /* CAS */
    int target;
    MPI_Aint disp;
    MPI_Count tcount;
    umpi_dtype_t *tdt;
    MPI_Op op;
} umpi__op_t;

/* A contiguous put or get straight to the target's memory: nothing runs at the target. Its UCX
 * request, when it has one, is kept in flight: the operation completes at the origin at the next
 * flush, unlock, fence or MPI_Win_complete (umpi_rma_drain), so that a window of operations
 * overlaps on the network (64 gets of 8 B: 28 MB/s waiting for each, bench/NOTES.md). */
static int umpi__rma_ucx(umpi_win_t *w, const umpi__op_t *o, MPI_Aint addr, size_t len)
{
    int world = umpi_comm_to_world(w->comm, o->target);
    umpi_status_t st = UMPI_OK;
    if (w->rkeys[o->target] == NULL)
        st = umpi_ucx_rkey_unpack(world, w->rkey_all + w->rkey_off[o->target], &w->rkeys[o->target]);
    void *ucx_req = NULL;
    uint64_t raddr = w->rma_base[o->target] + (uint64_t) addr;
    if (st == UMPI_OK && o->kind == UMPI_RMA_PUT)
        st = umpi_ucx_put(world, (const char *) o->obuf + o->odt->true_lb, len, raddr, w->rkeys[o->target],
                          &ucx_req);
    else if (st == UMPI_OK)
        st = umpi_ucx_get(world, (char *) o->rbuf + o->rdt->true_lb, len, raddr, w->rkeys[o->target], &ucx_req);
    if (st == UMPI_OK && ucx_req != NULL) {
        if (w->ninflight == w->capinflight) {
            int cap = w->capinflight ? 2 * w->capinflight : 64;
            void **p = realloc(w->inflight, (size_t) cap * sizeof(*p));
            if (p != NULL) {
                w->inflight = p;
                w->capinflight = cap;
            }
        }
        if (w->ninflight < w->capinflight) {
            w->inflight[w->ninflight++] = ucx_req;
        } else { /* no room to remember it: complete it now */
            ucs_status_t s = umpi_ucx_wait(ucx_req);
            if (s != UCS_OK)
                st = umpi_ucx_status(s, o->kind == UMPI_RMA_PUT ? "ucp_put_nbx" : "ucp_get_nbx");
        }
    }
    if (st != UMPI_OK)
        return umpi_err_from_status(st, "one-sided communication");
    if (o->kind == UMPI_RMA_PUT)
        w->rma_dirty[o->target] = 1;
    return MPI_SUCCESS;
}

static int umpi__rma(const char *call, MPI_Win win, umpi__op_t *o)
{
    umpi_win_t *w;
    int err = umpi_rma_win_check(win, &w, "win");
    if (err != MPI_SUCCESS)
        return err;
    if (o->target == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (o->target < 0 || o->target >= w->comm->size)
        return umpi_err_create(MPI_ERR_RANK, "invalid rank %d in argument 'target_rank' (window of %d ranks)",
                               o->target, w->comm->size);
    if (o->disp < 0)
        return umpi_err_create(MPI_ERR_DISP, "negative displacement %ld in argument 'target_disp'", (long) o->disp);
    if (!o->tdt->committed)
        return umpi_err_create(MPI_ERR_TYPE, "datatype 0x%x in argument 'target_datatype' is not committed",
                               (unsigned) o->tdt->handle);
    umpi_dtype_t *elem = umpi_dtype_get(MPI_BYTE);
    int fetch = o->kind == UMPI_RMA_GET || o->kind == UMPI_RMA_GACC || o->kind == UMPI_RMA_CAS;
    MPI_Count tbytes = o->tcount * o->tdt->size;
    int no_op = 0;
    if (o->kind == UMPI_RMA_ACC || o->kind == UMPI_RMA_GACC) {
        umpi_op_t *op = umpi_op_get(o->op);
        if (op == NULL || UMPI_HANDLE_KIND(o->op) != UMPI_KIND_BUILTIN)
            return umpi_err_create(MPI_ERR_OP, "op 0x%x in argument 'op' is not a predefined operation (the "
                                   "only kind one-sided accumulates take)", (unsigned) o->op);
        err = umpi_op_check_accumulate(op, o->tdt, call);
        if (err != MPI_SUCCESS)
            return err;
        no_op = o->op == MPI_NO_OP;
        const umpi_dtype_t *leaf = umpi_op_leaf(o->tdt);
        if (leaf != NULL)
            elem = (umpi_dtype_t *) leaf;
        else if (o->op != MPI_REPLACE && !no_op)
            return umpi_err_create(MPI_ERR_TYPE, "target datatype 0x%x mixes predefined types (accumulate "
                                   "needs one)", (unsigned) o->tdt->handle);
    }
    if (o->kind == UMPI_RMA_CAS)
        elem = o->tdt;
    if (o->obuf != NULL && !no_op && o->kind != UMPI_RMA_GET && o->kind != UMPI_RMA_CAS &&
        o->ocount * o->odt->size != tbytes)
        return umpi_err_create(MPI_ERR_TYPE, "origin data of %ld bytes does not match target data of %ld bytes",
                               (long) (o->ocount * o->odt->size), (long) tbytes);
    if (fetch && o->rcount * o->rdt->size != tbytes)
        return umpi_err_create(MPI_ERR_TYPE, "%s buffer of %ld bytes does not match target data of %ld bytes",
                               o->kind == UMPI_RMA_GET ? "origin" : "result", (long) (o->rcount * o->rdt->size),
                               (long) tbytes);
    /* Device buffers are packed and unpacked through host memory here, never handed to UCX
     * (umpi_rma.h, "Device memory"). */
    int odev = 0, rdev = 0, cdev = 0;
    if (o->kind == UMPI_RMA_CAS) {
        err = umpi_rma_classify_dt(o->obuf, 1, o->tdt, "origin_addr", &odev);
        if (err == MPI_SUCCESS)
            err = umpi_rma_classify_dt(o->cmp, 1, o->tdt, "compare_addr", &cdev);
    } else if (o->obuf != NULL && !no_op && o->kind != UMPI_RMA_GET) {
        err = umpi_rma_classify_dt(o->obuf, o->ocount, o->odt, "origin_addr", &odev);
    }
    if (err == MPI_SUCCESS && fetch)
        err = umpi_rma_classify_dt(o->rbuf, o->rcount, o->rdt, o->kind == UMPI_RMA_GET ? "origin_addr" : "result_addr",
                                   &rdev);
    if (err != MPI_SUCCESS)
        return err;

    umpi__layout_t L;
    L.b = L.inl;
    umpi_lock();
    err = umpi__check_epoch(w, o->target);
    if (err == MPI_SUCCESS)
        err = umpi__layout(o->tdt, o->tcount, &L);
    if (err != MPI_SUCCESS) {
        umpi_unlock();
        umpi__layout_free(&L);
        return err;
    }
    MPI_Aint addr = w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? o->disp : o->disp * w->disp_units[o->target];
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC && tbytes > 0 &&
        (addr + L.lo < 0 || addr + L.hi > w->sizes[o->target])) {
        err = umpi_err_create(MPI_ERR_RMA_RANGE, "bytes [%ld, %ld) at target rank %d are outside its window of "
                              "%ld bytes (target_disp %ld, disp_unit %d)", (long) (addr + L.lo),
                              (long) (addr + L.hi), o->target, (long) w->sizes[o->target], (long) o->disp,
                              w->disp_units[o->target]);
        goto out;
    }
    if (tbytes == 0)
        goto out;
    if ((o->kind == UMPI_RMA_PUT || o->kind == UMPI_RMA_GET) && L.n == 1 && w->rkey_len != NULL &&
        !(w->shared_bases != NULL && w->shared_bases[o->target] != NULL) &&
        w->rkey_len[o->target] > 0 && (o->kind == UMPI_RMA_PUT ? o->odt : o->rdt)->contig &&
        !(o->kind == UMPI_RMA_PUT ? odev : rdev)) {
        err = umpi__rma_ucx(w, o, addr + L.b[0].off, (size_t) tbytes);
        goto out;
    }
    /* A device window on my node, in an epoch the target synchronizes (fence, PSCW; never a lock,
     * umpi_rma.h): copied straight through its CUDA IPC mapping (ipc.c). */
    if ((o->kind == UMPI_RMA_PUT || o->kind == UMPI_RMA_GET) && L.n == 1 && w->ipc != NULL &&
        !w->lock_all && !w->locked[o->target] && (w->fence_epoch || (w->started && w->start_ranks[o->target])) &&
        (o->kind == UMPI_RMA_PUT ? o->odt : o->rdt)->contig) {
        int done;
        void *local = o->kind == UMPI_RMA_PUT ? (char *) o->obuf + o->odt->true_lb : (char *) o->rbuf + o->rdt->true_lb;
        err = umpi_rma_ipc_copy(w, o->target, o->kind == UMPI_RMA_PUT, local, addr + L.b[0].off, (size_t) tbytes,
                                &done);
        if (err != MPI_SUCCESS || done)
            goto out;
    }
    umpi_rma_hdr_t h = { .kind = o->kind, .op = o->op, .elem = elem->handle, .addr = addr, .nblocks = L.n };
    /* The target's window memory is mapped here (a shared window, or MPI_Win_allocate's segment of
     * this node): with host buffers the operation is applied straight into it (umpi_rma.h), from and
     * into the origin's own buffers where they are contiguous, after anything this process still has
     * on its way there as a message (accumulates keep their order). */
    int local = w->shared_bases != NULL && w->shared_bases[o->target] != NULL && !odev && !rdev && !cdev;
    void *payload = NULL, *reply = NULL;
    const void *data = NULL; /* the packed origin data: payload, or the origin buffer itself */
    void *into = NULL;       /* where fetched data goes: reply, or the result buffer itself */
    if (o->kind == UMPI_RMA_CAS)
        h.bytes = 2 * (uint64_t) tbytes;
    else if (o->kind != UMPI_RMA_GET && !no_op)
        h.bytes = (uint64_t) tbytes;
    if (local && h.bytes && o->kind != UMPI_RMA_CAS && o->odt->contig)
        data = (const char *) o->obuf + o->odt->true_lb;
    else if (h.bytes)
        data = payload = malloc((size_t) h.bytes);
    if (local && fetch && o->kind != UMPI_RMA_CAS && o->rdt->contig)
        into = (char *) o->rbuf + o->rdt->true_lb;
    else if (fetch)
        into = reply = malloc((size_t) tbytes + sizeof(umpi_rma_status_t));
    if ((h.bytes && data == NULL) || (fetch && into == NULL)) {
        err = umpi_err_create(MPI_ERR_NO_MEM, "out of memory for %ld bytes of one-sided data", (long) tbytes);
        goto done;
    }
    if (o->kind == UMPI_RMA_CAS) {
        err = umpi_rma_pack(o->tdt, o->obuf, 1, odev, payload, (size_t) tbytes);
        if (err == MPI_SUCCESS)
            err = umpi_rma_pack(o->tdt, o->cmp, 1, cdev, (char *) payload + tbytes, (size_t) tbytes);
    } else if (payload != NULL) {
        err = umpi_rma_pack(o->odt, o->obuf, o->ocount, odev, payload, (size_t) tbytes);
    }
    if (err == MPI_SUCCESS && local && w->dirty[o->target])
        err = umpi_rma_flush_target(w, o->target);
    if (err == MPI_SUCCESS && local)
        umpi_rma_apply_shared(w, o->target, &h, L.b, data, into);
    else if (err == MPI_SUCCESS)
        err = umpi_rma_request(w, o->target, &h, L.b, payload, reply, fetch ? (size_t) tbytes : 0);
    if (err == MPI_SUCCESS && reply != NULL)
        err = umpi_rma_unpack(o->rdt, o->rbuf, o->rcount, rdev, reply, (size_t) tbytes);
done:
    free(payload);
    free(reply);
out:
    umpi_unlock();
    umpi__layout_free(&L);
    return err;
}

/* The request-based forms: the operation is complete at the origin when the call returns (data
 * fetched, origin buffer free: what is in flight is waited for), so the request is born complete. */
static int umpi__done_request(int err, umpi_win_t *w, MPI_Request *request)
{
    if (err != MPI_SUCCESS)
        return err;
    umpi_lock();
    if (w != NULL && (err = umpi_rma_drain(w)) != MPI_SUCCESS) {
        umpi_unlock();
        return err;
    }
    umpi_request_t *r = umpi_request_alloc(UMPI_REQ_DONE, w ? w->comm : &umpi_comm_self);
    if (r == NULL) {
        umpi_unlock();
        return umpi_err_create(MPI_ERR_NO_MEM, "out of memory allocating a request");
    }
    umpi_status_set_empty(&r->status);
    r->done = 1;
    *request = r->handle;
    umpi_unlock();
    return MPI_SUCCESS;
}

/* MPI 4.1 sec. 12.3.5: request-based operations only in a passive-target epoch. Other problems
 * (window, rank) are left to the operation, which names them. */
static int umpi__check_request_epoch(MPI_Win win, int target)
{
    umpi_win_t *w = umpi_win_get(win);
    if (w == NULL || target == MPI_PROC_NULL || target < 0 || target >= w->comm->size || w->lock_all ||
        w->locked[target])
        return MPI_SUCCESS;
    return umpi_err_create(MPI_ERR_RMA_SYNC, "no passive-target epoch is open on window 0x%x towards rank %d in "
                           "argument 'target_rank' (request-based operations need MPI_Win_lock or "
                           "MPI_Win_lock_all)", (unsigned) win, target);
}

int umpi_impl_put(const void *origin_addr, MPI_Count origin_count, umpi_dtype_t *origin_datatype_ptr,
                  int target_rank, MPI_Aint target_disp, MPI_Count target_count, umpi_dtype_t *target_datatype_ptr,
                  MPI_Win win)
{
    umpi__op_t o = { .kind = UMPI_RMA_PUT, .obuf = origin_addr, .ocount = origin_count,
                     .odt = origin_datatype_ptr, .target = target_rank, .disp = target_disp,
                     .tcount = target_count, .tdt = target_datatype_ptr };
    return umpi__rma("MPI_Put", win, &o);
}

int umpi_impl_get(void *origin_addr, MPI_Count origin_count, umpi_dtype_t *origin_datatype_ptr, int target_rank,
                  MPI_Aint target_disp, MPI_Count target_count, umpi_dtype_t *target_datatype_ptr, MPI_Win win)
{
    umpi__op_t o = { .kind = UMPI_RMA_GET, .rbuf = origin_addr, .rcount = origin_count,
                     .rdt = origin_datatype_ptr, .target = target_rank, .disp = target_disp,
                     .tcount = target_count, .tdt = target_datatype_ptr };
    return umpi__rma("MPI_Get", win, &o);
}

int umpi_impl_accumulate(const void *origin_addr, MPI_Count origin_count, umpi_dtype_t *origin_datatype_ptr,
                         int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                         umpi_dtype_t *target_datatype_ptr, MPI_Op op, MPI_Win win)
{
    umpi__op_t o = { .kind = UMPI_RMA_ACC, .obuf = origin_addr, .ocount = origin_count,
                     .odt = origin_datatype_ptr, .target = target_rank, .disp = target_disp,
                     .tcount = target_count, .tdt = target_datatype_ptr, .op = op };
    return umpi__rma("MPI_Accumulate", win, &o);
}

int umpi_impl_get_accumulate(const void *origin_addr, MPI_Count origin_count, umpi_dtype_t *origin_datatype_ptr,
                             void *result_addr, MPI_Count result_count, umpi_dtype_t *result_datatype_ptr,
                             int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                             umpi_dtype_t *target_datatype_ptr, MPI_Op op, MPI_Win win)
{
    umpi__op_t o = { .kind = UMPI_RMA_GACC, .obuf = origin_addr, .ocount = origin_count,
                     .odt = origin_datatype_ptr, .rbuf = result_addr, .rcount = result_count,
                     .rdt = result_datatype_ptr, .target = target_rank, .disp = target_disp,
                     .tcount = target_count, .tdt = target_datatype_ptr, .op = op };
    return umpi__rma("MPI_Get_accumulate", win, &o);
}

int umpi_impl_fetch_and_op(const void *origin_addr, void *result_addr, umpi_dtype_t *datatype_ptr, int target_rank,
                           MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    umpi__op_t o = { .kind = UMPI_RMA_GACC, .obuf = origin_addr, .ocount = 1, .odt = datatype_ptr,
                     .rbuf = result_addr, .rcount = 1, .rdt = datatype_ptr, .target = target_rank,
                     .disp = target_disp, .tcount = 1, .tdt = datatype_ptr, .op = op };
    if (!datatype_ptr->builtin || datatype_ptr->nblocks > 1)
        return umpi_err_create(MPI_ERR_TYPE, "datatype 0x%x in argument 'datatype' is not a predefined "
                               "datatype of one element", (unsigned) datatype_ptr->handle);
    return umpi__rma("MPI_Fetch_and_op", win, &o);
}

int umpi_impl_compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                               umpi_dtype_t *datatype_ptr, int target_rank, MPI_Aint target_disp, MPI_Win win)
{
    umpi__op_t o = { .kind = UMPI_RMA_CAS, .obuf = origin_addr, .cmp = compare_addr, .rbuf = result_addr,
                     .rcount = 1, .rdt = datatype_ptr, .target = target_rank, .disp = target_disp,
                     .tcount = 1, .tdt = datatype_ptr };
    if (!datatype_ptr->builtin || datatype_ptr->nblocks > 1)
        return umpi_err_create(MPI_ERR_TYPE, "datatype 0x%x in argument 'datatype' is not a predefined "
                               "datatype of one element", (unsigned) datatype_ptr->handle);
    return umpi__rma("MPI_Compare_and_swap", win, &o);
}

int umpi_impl_rput(const void *origin_addr, MPI_Count origin_count, umpi_dtype_t *origin_datatype_ptr,
                   int target_rank, MPI_Aint target_disp, MPI_Count target_count, umpi_dtype_t *target_datatype_ptr,
                   MPI_Win win, MPI_Request *request)
{
    int err = umpi__check_request_epoch(win, target_rank);
    if (err == MPI_SUCCESS)
        err = umpi_impl_put(origin_addr, origin_count, origin_datatype_ptr, target_rank, target_disp, target_count,
                            target_datatype_ptr, win);
    return umpi__done_request(err, umpi_win_get(win), request);
}

int umpi_impl_rget(void *origin_addr, MPI_Count origin_count, umpi_dtype_t *origin_datatype_ptr, int target_rank,
                   MPI_Aint target_disp, MPI_Count target_count, umpi_dtype_t *target_datatype_ptr, MPI_Win win,
                   MPI_Request *request)
{
    int err = umpi__check_request_epoch(win, target_rank);
    if (err == MPI_SUCCESS)
        err = umpi_impl_get(origin_addr, origin_count, origin_datatype_ptr, target_rank, target_disp, target_count,
                            target_datatype_ptr, win);
    return umpi__done_request(err, umpi_win_get(win), request);
}

int umpi_impl_raccumulate(const void *origin_addr, MPI_Count origin_count, umpi_dtype_t *origin_datatype_ptr,
                          int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                          umpi_dtype_t *target_datatype_ptr, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    int err = umpi__check_request_epoch(win, target_rank);
    if (err == MPI_SUCCESS)
        err = umpi_impl_accumulate(origin_addr, origin_count, origin_datatype_ptr, target_rank, target_disp,
                                   target_count, target_datatype_ptr, op, win);
    return umpi__done_request(err, umpi_win_get(win), request);
}

int umpi_impl_rget_accumulate(const void *origin_addr, MPI_Count origin_count, umpi_dtype_t *origin_datatype_ptr,
                              void *result_addr, MPI_Count result_count, umpi_dtype_t *result_datatype_ptr,
                              int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                              umpi_dtype_t *target_datatype_ptr, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    int err = umpi__check_request_epoch(win, target_rank);
    if (err == MPI_SUCCESS)
        err = umpi_impl_get_accumulate(origin_addr, origin_count, origin_datatype_ptr, result_addr, result_count,
                                       result_datatype_ptr, target_rank, target_disp, target_count,
                                       target_datatype_ptr, op, win);
    return umpi__done_request(err, umpi_win_get(win), request);
}
