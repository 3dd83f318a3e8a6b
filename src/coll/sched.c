/* Collective schedules (umpi_sched.h): building, running on the progress engine, requests. */
#include "coll/umpi_sched.h"
#include "coll/umpi_coll_device.h"
#include "core/umpi_err.h"
#include "core/umpi_progress.h"
#include "pt2pt/umpi_p2p.h"

#include <stdlib.h>
#include <string.h>

typedef enum { STEP_SEND = 1, STEP_RECV, STEP_REDUCE, STEP_COPY, STEP_FENCE } umpi_step_kind_t;

typedef struct umpi_step {
    uint8_t kind;
    int world;              /* send: destination world rank */
    int src;                /* send: my source id; receive: the peer's */
    uint32_t tag_bits;
    const void *in;         /* send, reduce, copy: data read */
    void *out;              /* receive, reduce, copy: data written */
    MPI_Count count, rcount;
    umpi_dtype_t *dt, *rdt;
    umpi_op_t *op;
    umpi_op_kernel_t *kernel; /* reduce: the predefined op's kernel on a predefined type, else NULL */
    umpi_request_t *req;    /* send, receive of a non-contiguous type: describes the data to UCX */
    umpi_ucx_done_t done;   /* send, receive: completion (counted in the schedule's counter) */
    uint8_t dev;            /* UMPI_COLL_DEV_IN/OUT: operands in device memory (umpi_coll_device.h) */
    void *bounce;           /* send, receive of device memory: the host copy that travels */
} umpi_step_t;

typedef struct umpi_scratch {
    struct umpi_scratch *next;
    size_t size;
    max_align_t data[];
} umpi_scratch_t;

struct umpi_sched {
    umpi_comm_t *comm;
    uint32_t tag;           /* the collective's sequence number (UMPI_COLL_SEQ_MASK) */
    umpi_step_t *steps;
    int nsteps, cap;
    int pos;                /* the next step to start */
    int phase_begin;        /* the running phase: steps [phase_begin, pos) */
    umpi_ucx_counter_t cnt; /* its sends and receives in flight, and how many of them failed */
    int nreqs;              /* its steps holding a request (non-contiguous types) */
    int refs;               /* some step holds a derived datatype or a user op */
    int error;              /* first error (MPI code); no new phase starts after one */
    int done;
    int abandoned;          /* ended by an error with messages in flight: never freed or reused */
    int parked;             /* kept by its communicator, holding no reference on it (post.c) */
    umpi_scratch_t *scratch;
    umpi_scratch_t *spare;  /* a cached schedule's kept scratch block */
    umpi_request_t *req;    /* nonblocking / persistent: the user's request */
    struct umpi_sched *next_active, *prev_active;
};

/* ---- views ------------------------------------------------------------------------------------- */

void umpi_coll_view_local(umpi_coll_view_t *v, const umpi_comm_t *c)
{
    v->rank = c->rank;
    v->size = c->size;
    v->my_src = c->rank;
    v->tag_bits = c->is_inter ? UMPI_COLL_TAG_LOCAL : 0;
    v->world = c->is_inter ? c->group->world : c->world_rank;
    v->src = NULL;
}

void umpi_coll_view_remote(umpi_coll_view_t *v, const umpi_comm_t *c)
{
    v->rank = -1;
    v->size = c->remote_size;
    v->my_src = c->rank;
    v->tag_bits = 0;
    v->world = c->world_rank;
    v->src = NULL;
}

/* ---- building ---------------------------------------------------------------------------------- */

/*
 * Freed schedules are kept (with their step arrays and one scratch block) for the next call: a
 * small blocking collective then allocates nothing. Under the big lock like everything here.
 */
#define UMPI_SCHED_CACHE 4
#define UMPI_SCRATCH_KEEP 65536 /* largest scratch block kept with a cached schedule */
static umpi_sched_t *umpi__cache[UMPI_SCHED_CACHE];
static int umpi__ncached;

umpi_sched_t *umpi_sched_new(umpi_comm_t *comm)
{
    umpi_sched_t *s;
    if (umpi__ncached > 0) {
        s = umpi__cache[--umpi__ncached];
    } else {
        s = calloc(1, sizeof(*s));
        if (s == NULL)
            return NULL;
    }
    s->comm = comm;
    comm->refcount++;
    s->tag = comm->coll_seq++ & UMPI_COLL_SEQ_MASK;
    return s;
}

void *umpi_sched_buf(umpi_sched_t *s, size_t bytes)
{
    umpi_scratch_t *b;
    if (s->spare != NULL && s->spare->size >= bytes) {
        b = s->spare;
        s->spare = NULL;
    } else {
        b = malloc(sizeof(*b) + (bytes ? bytes : 1));
        if (b == NULL)
            return NULL;
        b->size = bytes;
    }
    b->next = s->scratch;
    s->scratch = b;
    return b->data;
}

void *umpi_sched_buf_dt(umpi_sched_t *s, MPI_Count count, const umpi_dtype_t *dt)
{
    if (count == 0)
        return umpi_sched_buf(s, 0);
    /* The span count elements touch: true_extent of one plus count - 1 strides of extent. */
    MPI_Aint span = dt->true_extent + (MPI_Aint) (count - 1) * (dt->extent < 0 ? -dt->extent : dt->extent);
    char *b = umpi_sched_buf(s, (size_t) span);
    if (b == NULL)
        return NULL;
    MPI_Aint shift = dt->true_lb;
    if (dt->extent < 0)
        shift += (MPI_Aint) (count - 1) * dt->extent;
    return b - shift;
}

static umpi_step_t *umpi__step(umpi_sched_t *s, umpi_step_kind_t kind)
{
    if (s->nsteps == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        umpi_step_t *n = realloc(s->steps, (size_t) cap * sizeof(*n));
        if (n == NULL)
            return NULL;
        s->steps = n;
        s->cap = cap;
    }
    umpi_step_t *st = &s->steps[s->nsteps++];
    /* the fields the running code reads for any kind; builders set the rest for theirs */
    st->kind = (uint8_t) kind;
    st->dt = st->rdt = NULL;
    st->op = NULL;
    st->req = NULL;
    st->dev = 0;
    return st;
}

/* Predefined types need no reference: the schedule's release then skips its steps. */
static inline void umpi__retain_dt(umpi_sched_t *s, umpi_dtype_t *dt)
{
    if (umpi_unlikely(!dt->builtin)) {
        umpi_dtype_retain(dt);
        s->refs = 1;
    }
}

static int umpi__nomem(void)
{
    return umpi_err_create(MPI_ERR_OTHER, "out of memory building a collective schedule");
}

/* On a GPU machine: a send or receive step on device memory gets a host bounce (umpi_coll_device.h). */
static int umpi__dev_msg(umpi_sched_t *s, umpi_step_t *st, const void *buf, int flag)
{
    int err;
    st->dev = (uint8_t) umpi_coll_dev_flag(buf, st->count, st->dt, flag, &err);
    if (st->dev) {
        st->bounce = umpi_sched_buf(s, (size_t) (st->count * st->dt->size));
        if (st->bounce == NULL)
            return umpi__nomem();
    }
    return err;
}

int umpi_sched_send(umpi_sched_t *s, const umpi_coll_view_t *v, int member, const void *buf, MPI_Count count,
                    umpi_dtype_t *dt)
{
    umpi_step_t *st = umpi__step(s, STEP_SEND);
    if (st == NULL)
        return umpi__nomem();
    st->world = v->world ? v->world[member] : member;
    st->src = v->my_src;
    st->tag_bits = v->tag_bits;
    st->in = buf;
    st->count = count;
    st->dt = dt;
    umpi__retain_dt(s, dt);
    if (umpi_unlikely(umpi_cuda_active))
        return umpi__dev_msg(s, st, buf, UMPI_COLL_DEV_IN);
    return MPI_SUCCESS;
}

int umpi_sched_recv(umpi_sched_t *s, const umpi_coll_view_t *v, int member, void *buf, MPI_Count count,
                    umpi_dtype_t *dt)
{
    umpi_step_t *st = umpi__step(s, STEP_RECV);
    if (st == NULL)
        return umpi__nomem();
    st->world = v->world ? v->world[member] : member;
    st->src = v->src ? v->src[member] : member;
    st->tag_bits = v->tag_bits;
    st->out = buf;
    st->count = count;
    st->dt = dt;
    umpi__retain_dt(s, dt);
    if (umpi_unlikely(umpi_cuda_active))
        return umpi__dev_msg(s, st, buf, UMPI_COLL_DEV_OUT);
    return MPI_SUCCESS;
}

int umpi_sched_reduce(umpi_sched_t *s, const void *in, void *inout, MPI_Count count, umpi_dtype_t *dt,
                      umpi_op_t *op)
{
    umpi_step_t *st = umpi__step(s, STEP_REDUCE);
    if (st == NULL)
        return umpi__nomem();
    st->in = in;
    st->out = inout;
    st->count = count;
    st->dt = dt;
    umpi__retain_dt(s, dt);
    st->op = op;
    st->kernel = NULL;
    if (umpi_likely(dt->builtin && op->kind < UMPI_OP_NBUILTIN)) {
        st->kernel = umpi_op_kernel(op->kind, dt); /* NULL: MPI_REPLACE, MPI_NO_OP (umpi_op_apply) */
    } else if (op->kind == UMPI_OP_USER) {
        umpi_op_retain(op);
        s->refs = 1;
    }
    if (umpi_unlikely(umpi_cuda_active)) {
        int e1, e2;
        st->dev = (uint8_t) (umpi_coll_dev_flag(in, count, dt, UMPI_COLL_DEV_IN, &e1) |
                             umpi_coll_dev_flag(inout, count, dt, UMPI_COLL_DEV_OUT, &e2));
        return e1 != MPI_SUCCESS ? e1 : e2;
    }
    return MPI_SUCCESS;
}

int umpi_sched_copy(umpi_sched_t *s, const void *src, MPI_Count scount, umpi_dtype_t *sdt, void *dst,
                    MPI_Count rcount, umpi_dtype_t *rdt)
{
    umpi_step_t *st = umpi__step(s, STEP_COPY);
    if (st == NULL)
        return umpi__nomem();
    st->in = src;
    st->count = scount;
    st->dt = sdt;
    st->out = dst;
    st->rcount = rcount;
    st->rdt = rdt;
    umpi__retain_dt(s, sdt);
    umpi__retain_dt(s, rdt);
    if (umpi_unlikely(umpi_cuda_active)) {
        int e1, e2;
        st->dev = (uint8_t) (umpi_coll_dev_flag(src, scount, sdt, UMPI_COLL_DEV_IN, &e1) |
                             umpi_coll_dev_flag(dst, rcount, rdt, UMPI_COLL_DEV_OUT, &e2));
        return e1 != MPI_SUCCESS ? e1 : e2;
    }
    return MPI_SUCCESS;
}

int umpi_sched_fence(umpi_sched_t *s)
{
    if (s->nsteps > 0 && s->steps[s->nsteps - 1].kind == STEP_FENCE)
        return MPI_SUCCESS;
    return umpi__step(s, STEP_FENCE) ? MPI_SUCCESS : umpi__nomem();
}

/* ---- typed copy ---------------------------------------------------------------------------------- */

void umpi_coll_copy(const void *src, MPI_Count scount, umpi_dtype_t *sdt, void *dst, MPI_Count rcount,
                    umpi_dtype_t *rdt)
{
    MPI_Count bytes = scount * sdt->size;
    MPI_Count room = rcount * rdt->size;
    if (bytes > room)
        bytes = room; /* a schedule never asks for this; a truncated copy beats an overrun */
    if (bytes == 0)
        return;
    if (sdt->contig && rdt->contig) {
        memmove((char *) dst + rdt->true_lb, (const char *) src + sdt->true_lb, (size_t) bytes);
    } else if (sdt->contig) {
        umpi_dtype_unpack_range(rdt, dst, rcount, 0, (const char *) src + sdt->true_lb, bytes);
    } else if (rdt->contig) {
        umpi_dtype_pack_range(sdt, src, scount, 0, (char *) dst + rdt->true_lb, bytes);
    } else {
        /* Both non-contiguous: through a bounce buffer, a piece at a time. */
        char tmp[16384];
        for (MPI_Count off = 0; off < bytes; off += (MPI_Count) sizeof(tmp)) {
            MPI_Count n = bytes - off < (MPI_Count) sizeof(tmp) ? bytes - off : (MPI_Count) sizeof(tmp);
            umpi_dtype_pack_range(sdt, src, scount, off, tmp, n);
            umpi_dtype_unpack_range(rdt, dst, rcount, off, tmp, n);
        }
    }
}

/* ---- running ------------------------------------------------------------------------------------- */

/*
 * Posts a send or receive step. Contiguous data goes to UCX as it is; a non-contiguous type needs
 * a request describing it (buf, count, dt: the pack engine's view, umpi_p2p_dt_target), kept until
 * the step completes. Completion is counted in s->cnt either way (umpi_ucx_send_light).
 */
static int umpi__post(umpi_sched_t *s, umpi_step_t *st)
{
    int send = st->kind == STEP_SEND;
    size_t bytes = (size_t) (st->count * st->dt->size), len;
    void *data;
    ucp_datatype_t udt;
    st->done.counter = &s->cnt;
    if (umpi_unlikely(st->dev)) {
        /* device memory: the bounce travels; packed now (send) or unpacked at the phase's end */
        data = st->bounce;
        len = bytes;
        udt = UMPI_UCX_DT_BYTES;
        if (send) {
            int err = umpi_coll_dev_pack(st->in, st->count, st->dt, st->bounce);
            if (err != MPI_SUCCESS)
                return err;
        } else {
            s->nreqs++;
        }
    } else if (umpi_likely(st->dt->contig)) {
        data = (char *) (send ? (void *) st->in : st->out) + st->dt->true_lb;
        len = bytes;
        udt = UMPI_UCX_DT_BYTES;
    } else {
        umpi_request_t *r = umpi_request_alloc(send ? UMPI_REQ_SEND : UMPI_REQ_RECV, s->comm);
        if (umpi_unlikely(r == NULL))
            return umpi_err_create(MPI_ERR_OTHER, "out of memory allocating a request");
        r->buf = send ? st->in : st->out;
        r->count = st->count;
        r->dt = st->dt;
        umpi_dtype_retain(st->dt);
        r->peer = st->world;
        st->req = r;
        s->nreqs++;
        int err = umpi_p2p_dt_target(r, bytes, &data, &len, &udt);
        if (err != MPI_SUCCESS)
            return err;
    }
    ucp_tag_t tag = umpi_ucx_send_tag(s->comm->context_id + 1, st->src, (int) (s->tag | st->tag_bits));
    umpi_status_t us;
    if (send) {
        ucp_ep_h ep;
        us = umpi_ucx_ep(st->world, &ep);
        if (us == UMPI_OK)
            us = umpi_ucx_send_light(ep, data, len, udt, tag, &st->done);
    } else {
        us = umpi_ucx_recv_light(data, len, udt, tag, &st->done);
    }
    if (umpi_unlikely(us != UMPI_OK))
        return umpi_err_from_status(us, send ? "collective send" : "collective receive");
    return MPI_SUCCESS;
}

/* The error of a completed send or receive step (MPI_SUCCESS when it succeeded). */
static int umpi__step_error(const umpi_step_t *st)
{
    if (umpi_likely(st->done.status == UCS_OK))
        return MPI_SUCCESS;
    if (st->done.status == UCS_ERR_MESSAGE_TRUNCATED)
        return umpi_err_create(MPI_ERR_TRUNCATE,
                               "collective message truncated: a process sent more data than this one "
                               "expects (%lld x %s): the processes' counts or datatypes do not match",
                               (long long) st->count, st->dt->name ? st->dt->name : "datatype");
    return umpi_err_create(MPI_ERR_OTHER, "collective %s world rank %d failed: %s",
                           st->kind == STEP_SEND ? "send to" : "receive from", st->world,
                           ucs_status_string((ucs_status_t) st->done.status));
}

static void umpi__fail(umpi_sched_t *s, int err)
{
    if (s->error == MPI_SUCCESS)
        s->error = err;
}

/* After the running phase completed with failures or requests: errors, and requests back to the pool. */
static void umpi__phase_finish(umpi_sched_t *s)
{
    for (int i = s->phase_begin; i < s->pos; i++) {
        umpi_step_t *st = &s->steps[i];
        if (st->kind != STEP_SEND && st->kind != STEP_RECV)
            continue;
        if (s->cnt.failed > 0) {
            int err = umpi__step_error(st);
            if (err != MPI_SUCCESS)
                umpi__fail(s, err);
        }
        if (umpi_unlikely(st->dev) && st->kind == STEP_RECV && st->done.status == UCS_OK && s->error == MPI_SUCCESS) {
            int err = umpi_coll_dev_unpack(st->out, st->count, st->dt, st->bounce, (size_t) (st->count * st->dt->size));
            if (err != MPI_SUCCESS)
                umpi__fail(s, err);
        }
        if (st->req != NULL) {
            umpi_request_release(st->req);
            st->req = NULL;
        }
    }
    s->cnt.failed = 0;
    s->nreqs = 0;
}

/*
 * A phase with messages in flight that may never complete: a send or receive could not be posted
 * (no transport reaches the peer: its own sends to us fail the same way), or one completed with a
 * transport error. A truncated receive is not such a case: the other messages still complete.
 */
static int umpi__phase_broken(umpi_sched_t *s)
{
    if (s->error != MPI_SUCCESS)
        return 1;
    for (int i = s->phase_begin; i < s->pos; i++) {
        const umpi_step_t *st = &s->steps[i];
        if ((st->kind == STEP_SEND || st->kind == STEP_RECV) && st->done.status != UCS_OK &&
            st->done.status != UCS_ERR_MESSAGE_TRUNCATED) {
            umpi__fail(s, umpi__step_error(st));
            return 1;
        }
    }
    return 0;
}

/* Phases started by umpi__advance: the progress hook reports them as progress (progress.c). */
static unsigned umpi__phases;

/*
 * Moves s forward as far as it can go; returns nonzero when it is complete. The running phase is
 * complete when its counter of messages in flight is 0 (UCX's callbacks count down): no pass over
 * its steps, except to collect failures and release the requests of non-contiguous types.
 */
static int umpi__advance(umpi_sched_t *s)
{
    for (;;) {
        if (s->cnt.pending > 0) {
            if (umpi_likely(s->error == MPI_SUCCESS && s->cnt.failed == 0) || !umpi__phase_broken(s))
                return 0;
            /* Complete with the error now rather than wait forever. UCX may still complete the
             * messages in flight into this schedule's steps and counter, so it is abandoned: never
             * freed or reused (a small leak, after an error that leaves the job undefined). */
            s->abandoned = 1;
            s->done = 1;
            return 1;
        }
        if (umpi_unlikely(s->cnt.failed > 0 || s->nreqs > 0))
            umpi__phase_finish(s);
        if (s->pos == s->nsteps || s->error != MPI_SUCCESS) {
            s->done = 1;
            return 1;
        }
        if (s->steps[s->pos].kind == STEP_FENCE)
            s->pos++;
        s->phase_begin = s->pos;
        umpi__phases++;
        for (; s->pos < s->nsteps && s->steps[s->pos].kind != STEP_FENCE; s->pos++) {
            umpi_step_t *st = &s->steps[s->pos];
            switch (st->kind) {
            case STEP_SEND:
            case STEP_RECV: {
                int err = umpi__post(s, st);
                if (umpi_unlikely(err != MPI_SUCCESS)) {
                    umpi__fail(s, err);
                    st->done.status = UCS_OK; /* reported already */
                }
                break;
            }
            case STEP_REDUCE:
                if (umpi_unlikely(st->dev)) {
                    int err = umpi_coll_dev_reduce(st->op, st->in, st->out, st->count, st->dt, st->dev);
                    if (err != MPI_SUCCESS)
                        umpi__fail(s, err);
                } else if (umpi_likely(st->kernel != NULL)) {
                    st->kernel(st->in, st->out, (size_t) st->count);
                } else {
                    umpi_op_apply(st->op, st->in, st->out, st->count, st->dt);
                }
                break;
            case STEP_COPY:
                if (umpi_unlikely(st->dev)) {
                    int err = umpi_coll_dev_copy(st->in, st->count, st->dt, st->out, st->rcount, st->rdt, st->dev);
                    if (err != MPI_SUCCESS)
                        umpi__fail(s, err);
                } else {
                    umpi_coll_copy(st->in, st->count, st->dt, st->out, st->rcount, st->rdt);
                }
                break;
            }
        }
    }
}

static void umpi__rewind(umpi_sched_t *s)
{
    s->pos = 0;
    s->phase_begin = 0;
    s->cnt.pending = s->cnt.failed = 0;
    s->nreqs = 0;
    s->error = MPI_SUCCESS;
    s->done = 0;
}

void umpi_sched_free(umpi_sched_t *s)
{
    if (umpi_unlikely(s->abandoned))
        return;
    for (int i = 0; s->refs && i < s->nsteps; i++) {
        umpi_step_t *st = &s->steps[i];
        if (st->dt)
            umpi_dtype_release(st->dt);
        if (st->rdt)
            umpi_dtype_release(st->rdt);
        if (st->op)
            umpi_op_release(st->op);
    }
    umpi_comm_t *comm = s->comm;
    int keep = umpi__ncached < UMPI_SCHED_CACHE, parked = s->parked;
    while (s->scratch) {
        umpi_scratch_t *b = s->scratch;
        s->scratch = b->next;
        if (keep && b->size <= UMPI_SCRATCH_KEEP && (s->spare == NULL || s->spare->size < b->size)) {
            free(s->spare);
            s->spare = b;
        } else {
            free(b);
        }
    }
    if (keep) {
        /* field by field, not memset: GCC turns a memset (or a struct assignment) of this size
         * into `rep stos`, whose start-up was a quarter of a one-process barrier's time (measured
         * with perf). Kept: steps, cap, spare; scratch is NULL after the loop above. */
        s->comm = NULL;
        s->nsteps = s->pos = s->phase_begin = s->error = s->done = s->refs = s->nreqs = s->parked = 0;
        s->cnt.pending = s->cnt.failed = 0;
        s->req = NULL;
        s->next_active = s->prev_active = NULL;
        umpi__cache[umpi__ncached++] = s;
    } else {
        free(s->spare);
        free(s->steps);
        free(s);
    }
    if (!parked)
        umpi_comm_release(comm);
}

void umpi_sched_free_opaque(void *s)
{
    umpi_sched_free(s);
}

int umpi_sched_run_kept(umpi_sched_t *s)
{
    umpi_waiter_t w = {0};
    while (!umpi__advance(s))
        umpi_progress_step(&w);
    return s->error;
}

int umpi_sched_run(umpi_sched_t *s)
{
    int err = umpi_sched_run_kept(s);
    umpi_sched_free(s);
    return err;
}

/* What a communicator may keep per kind of collective: about 100 KiB of steps, UMPI_SCRATCH_KEEP
 * of scratch memory. */
#define UMPI__KEEP_STEPS 1024

int umpi_sched_keepable(const umpi_sched_t *s)
{
    size_t scratch = 0;
    if (s->abandoned || s->error != MPI_SUCCESS || s->nsteps > UMPI__KEEP_STEPS)
        return 0;
    for (const umpi_scratch_t *b = s->scratch; b != NULL; b = b->next)
        scratch += b->size;
    return scratch <= UMPI_SCRATCH_KEEP;
}

void umpi_sched_park(umpi_sched_t *s)
{
    /* the caller of the collective holds the communicator, so this is never its last reference */
    s->comm->refcount--;
    s->parked = 1;
}

void umpi_sched_unpark(umpi_sched_t *s)
{
    s->comm->refcount++;
    s->parked = 0;
    s->tag = s->comm->coll_seq++ & UMPI_COLL_SEQ_MASK;
    umpi__rewind(s);
}

/* ---- nonblocking and persistent: the active list, advanced by a progress hook -------------------- */

/* The hook is registered only while some schedule is active: point-to-point progress pays nothing
 * for collectives that have finished. */
static umpi_sched_t *umpi__active;
static int umpi__hooked;

static void umpi__complete(umpi_sched_t *s)
{
    if (s->prev_active)
        s->prev_active->next_active = s->next_active;
    else
        umpi__active = s->next_active;
    if (s->next_active)
        s->next_active->prev_active = s->prev_active;
    s->next_active = s->prev_active = NULL;
    umpi_request_t *r = s->req;
    r->error = s->error;
    r->done = 1;
    if (r->user_freed)
        umpi_request_release(r);
}

static unsigned umpi__hook(void)
{
    unsigned n = 0, phases = umpi__phases;
    umpi_sched_t *s = umpi__active;
    while (s != NULL) {
        umpi_sched_t *next = s->next_active; /* s may leave the list */
        if (umpi__advance(s)) {
            umpi__complete(s);
            n++;
        }
        s = next;
    }
    if (umpi__active == NULL) {
        umpi_progress_unregister(umpi__hook);
        umpi__hooked = 0;
    }
    return n + (umpi__phases - phases);
}

static int umpi__activate(umpi_sched_t *s)
{
    if (umpi_unlikely(s->abandoned))
        return umpi_err_create(MPI_ERR_OTHER, "this persistent collective failed before with messages in "
                               "flight (a peer could not be reached); it cannot be started again");
    umpi__rewind(s);
    s->req->done = 0;
    s->req->error = MPI_SUCCESS;
    if (umpi__advance(s)) {
        /* all of it completed at once (a single process, data already there) */
        s->req->error = s->error;
        s->req->done = 1;
        return MPI_SUCCESS;
    }
    if (!umpi__hooked) {
        if (umpi_progress_register(umpi__hook) != 0)
            return umpi_err_create(MPI_ERR_INTERN, "no room for the collective progress hook");
        umpi__hooked = 1;
    }
    s->next_active = umpi__active;
    s->prev_active = NULL;
    if (umpi__active)
        umpi__active->prev_active = s;
    umpi__active = s;
    return MPI_SUCCESS;
}

int umpi_sched_request(umpi_sched_t *s, int persistent, MPI_Request *request)
{
    umpi_request_t *r = umpi_request_alloc(UMPI_REQ_COLL, s->comm);
    if (r == NULL) {
        umpi_sched_free(s);
        return umpi_err_create(MPI_ERR_OTHER, "out of memory allocating a request");
    }
    r->sched = s;
    s->req = r;
    r->persistent = (uint8_t) persistent;
    if (!persistent) {
        int err = umpi__activate(s);
        if (err != MPI_SUCCESS) {
            umpi_request_release(r);
            return err;
        }
    }
    umpi_status_set_empty(&r->status);
    *request = r->handle;
    return MPI_SUCCESS;
}

int umpi_sched_start_request(umpi_request_t *r)
{
    r->active = 1;
    return umpi__activate(r->sched);
}

void umpi_sched_finalize(void)
{
    while (umpi__ncached > 0) {
        umpi_sched_t *s = umpi__cache[--umpi__ncached];
        free(s->spare);
        free(s->steps);
        free(s);
    }
}
