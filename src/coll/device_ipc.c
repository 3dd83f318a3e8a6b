/*
 * Collectives on device buffers within one node through CUDA IPC (umpi_coll_device.h, "IPC"): the
 * members read (and, for reduce, write) each other's GPU buffers directly; no byte of the data
 * goes through host memory or the network.
 *
 *   umpi_coll_post -> umpi_coll_ipc_try (one call, before the algorithm is chosen)
 *     uniform test, no communication: CUDA active, UMPI_CUDA_COLL_IPC not 0, an intracommunicator
 *       on one node, blocking, a kind served here, at least UMPI_CUDA_COLL_IPC_MIN bytes (auto)
 *     agreement: every member exports the buffers the others will touch and allgathers
 *       {ok / why not, IPC descriptors}; any "not ok" -> everyone takes the staged schedule
 *     open: every member maps the peers' buffers it needs (the IPC cache: opened once, kept);
 *       flag sync (an allreduce of "all opened") -> if one failed, everyone takes the staged path
 *     phases, each ending with the copy stream synchronized and a flag sync (a barrier that also
 *       carries failures, so every member returns the same verdict):
 *       allreduce  1 reduce-scatter: member i reduces slice i of every member's input into slice i
 *                    of its own recvbuf (GPU kernel; CPU through host copies where none serves)
 *                  2 allgather: member i copies slice j of member j's recvbuf into its own
 *                  (in place works: the slices one member writes are never the ones others read
 *                  in the same phase)
 *       bcast      every member copies the root's buffer
 *       reduce     member i reduces slice i of every input straight into slice i of the root's
 *                  recvbuf
 *       allgather(v) every member copies block j of member j's input into its own recvbuf
 *       alltoall   every member copies block i of member j's sendbuf into its block j
 *     the last sync keeps every buffer alive until no one reads it; the mappings stay cached
 *     (invalidated by the cache when the peer frees and reuses the memory).
 *
 * Counted: coll_ipc (taken), coll_ipc_fallback (agreed against, reason at UMPI_DEBUG=1).
 */
#include "coll/umpi_coll.h"
#include "coll/umpi_coll_device.h"
#include "coll/umpi_coll_internal.h"
#include "core/umpi_err.h"
#include "cuda/umpi_cuda.h"
#include "cuda/umpi_cuda_copy.h"
#include "cuda/umpi_cuda_ipc.h"
#include "cuda/umpi_cuda_kern.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Why a member cannot take the IPC path (what the agreement carries). */
#define UMPI__WHYS(X)                                                                                  \
    X(OK, "")                                                                                         \
    X(HOST, "a buffer in host (or managed) memory")                                                  \
    X(EXPORT, "a device buffer CUDA IPC cannot export (pool or VMM allocation, or the driver refused)") \
    X(DTYPE, "a non-contiguous datatype")                                                             \
    X(OP, "an operation that is not commutative")                                                     \
    X(INPLACE, "MPI_IN_PLACE (alltoall)")                                                            \
    X(CLASSIFY, "a buffer the driver could not classify")

enum {
#define UMPI__WHY_ENUM(name, text) UMPI__WHY_##name,
    UMPI__WHYS(UMPI__WHY_ENUM)
#undef UMPI__WHY_ENUM
};
static const char *const umpi__why_text[] = {
#define UMPI__WHY_TEXT(name, text) text,
    UMPI__WHYS(UMPI__WHY_TEXT)
#undef UMPI__WHY_TEXT
};

enum { UMPI__IN, UMPI__OUT, UMPI__NBUF }; /* the data the peers read from me; my recvbuf */
#define UMPI__IN_PLACE 0x100                 /* my input is my recvbuf (MPI_IN_PLACE) */

/* One member's part of the agreement (the same build at every member: host byte order). */
struct umpi__rec {
    int32_t why;                                /* UMPI__WHY_* */
    int32_t has;                                /* bit b: desc[b] is exported; UMPI__IN_PLACE */
    struct umpi_cuda_ipc_desc desc[UMPI__NBUF];
};

/* A call on its way through this path. */
typedef struct {
    const umpi_coll_args_t *a;
    int p, me;
    umpi_coll_grp_t g;
    const char *in;        /* my data start (true_lb applied) of what peers read; NULL: nothing */
    char *out;             /* my recvbuf's data start; NULL where insignificant */
    size_t in_len, out_len;
    struct umpi__rec *recs;
    char *(*peer)[UMPI__NBUF];           /* mapped data starts, [member][buf] */
    umpi_cuda_ipc_ref_t *(*ref)[UMPI__NBUF];
    CUstream stream;
    MPI_Count *disp;       /* slices (reductions): element displacements, p + 1 */
    int failed_peer;       /* the member whose buffer could not be mapped, -1 */
} umpi__call_t;

static int umpi__mode(void)
{
    static int mode = -1;
    const char *s = umpi_config.cuda_coll_ipc;
    if (mode >= 0)
        return mode;
    mode = umpi_cuda_mode_parse(s);
    if (mode < 0) {
        umpi_log("warning", "UMPI_CUDA_COLL_IPC=\"%s\": not auto, 0 or 1; using auto", s);
        mode = 2;
    }
    return mode;
}

/* Bytes of the call that the size threshold compares: what lands in each member's recvbuf. */
static size_t umpi__call_bytes(const umpi_coll_args_t *a, int p)
{
    switch (a->kind) {
    case UMPI_COLL_ALLGATHER:
    case UMPI_COLL_ALLGATHERV:
    case UMPI_COLL_ALLTOALL:
        return a->bytes * (size_t) p; /* bytes is one member's block (the mean for allgatherv) */
    default:
        return a->bytes;
    }
}

static int umpi__served(umpi_coll_kind_t k)
{
    return k == UMPI_COLL_ALLREDUCE || k == UMPI_COLL_BCAST || k == UMPI_COLL_REDUCE || k == UMPI_COLL_ALLGATHER ||
           k == UMPI_COLL_ALLGATHERV || k == UMPI_COLL_ALLTOALL;
}

/* A datatype the slices and blocks can be cut from as bytes. */
static int umpi__flat(const umpi_dtype_t *dt)
{
    return dt != NULL && dt->contig && dt->extent == (MPI_Aint) dt->size;
}

static MPI_Count umpi__rcount(const umpi_coll_args_t *a, int j)
{
    return a->rcounts ? a->rcounts[j] : a->rcount;
}

static MPI_Aint umpi__rdispl(const umpi_coll_args_t *a, int j)
{
    return a->rdispls ? a->rdispls[j] : (MPI_Aint) j * (MPI_Aint) a->rcount;
}

/* Where my buffers are and which the peers need, from the arguments (sets c->in/out). */
static int umpi__my_buffers(umpi__call_t *c)
{
    const umpi_coll_args_t *a = c->a;
    int root = a->root == c->me;
    switch (a->kind) {
    case UMPI_COLL_ALLREDUCE:
        if (!umpi__flat(a->rdt))
            return UMPI__WHY_DTYPE;
        if (!umpi_op_is_commutative(a->op))
            return UMPI__WHY_OP;
        c->out = (char *) a->rbuf + a->rdt->true_lb;
        c->out_len = c->in_len = a->bytes;
        c->in = a->sbuf == MPI_IN_PLACE ? c->out : (const char *) a->sbuf + a->sdt->true_lb;
        return UMPI__WHY_OK;
    case UMPI_COLL_REDUCE:
        if (!umpi__flat(a->sdt ? a->sdt : a->rdt) || (root && !umpi__flat(a->rdt)))
            return UMPI__WHY_DTYPE;
        if (!umpi_op_is_commutative(a->op))
            return UMPI__WHY_OP;
        c->in_len = a->bytes;
        if (root) {
            c->out = (char *) a->rbuf + a->rdt->true_lb;
            c->out_len = a->bytes;
        }
        c->in = a->sbuf == MPI_IN_PLACE ? c->out : (const char *) a->sbuf + a->sdt->true_lb;
        return UMPI__WHY_OK;
    case UMPI_COLL_BCAST:
        if (!umpi__flat(a->rdt))
            return UMPI__WHY_DTYPE;
        if (root) {
            c->in = (const char *) a->rbuf + a->rdt->true_lb;
            c->in_len = a->bytes;
        } else {
            c->out = (char *) a->rbuf + a->rdt->true_lb;
            c->out_len = a->bytes;
        }
        return UMPI__WHY_OK;
    case UMPI_COLL_ALLGATHER:
    case UMPI_COLL_ALLGATHERV: {
        if (!umpi__flat(a->rdt) || (a->sbuf != MPI_IN_PLACE && !umpi__flat(a->sdt)))
            return UMPI__WHY_DTYPE;
        MPI_Aint end = 0;
        for (int j = 0; j < c->p; j++) {
            MPI_Aint e = umpi__rdispl(a, j) + (MPI_Aint) umpi__rcount(a, j);
            if (umpi__rcount(a, j) > 0 && e > end)
                end = e;
        }
        c->out = (char *) a->rbuf + a->rdt->true_lb;
        c->out_len = (size_t) end * (size_t) a->rdt->size;
        c->in_len = (size_t) (umpi__rcount(a, c->me) * a->rdt->size);
        c->in = a->sbuf == MPI_IN_PLACE ? c->out + umpi__rdispl(a, c->me) * a->rdt->size
                                        : (const char *) a->sbuf + a->sdt->true_lb;
        return UMPI__WHY_OK;
    }
    case UMPI_COLL_ALLTOALL:
        if (a->sbuf == MPI_IN_PLACE)
            return UMPI__WHY_INPLACE;
        if (!umpi__flat(a->sdt) || !umpi__flat(a->rdt))
            return UMPI__WHY_DTYPE;
        c->in = (const char *) a->sbuf + a->sdt->true_lb;
        c->in_len = a->bytes * (size_t) c->p;
        c->out = (char *) a->rbuf + a->rdt->true_lb;
        c->out_len = a->bytes * (size_t) c->p;
        return UMPI__WHY_OK;
    default:
        return UMPI__WHY_DTYPE; /* not reached: umpi__served */
    }
}

/* My part of the agreement: why not, or the descriptors of what the peers will touch. */
static void umpi__prepare(umpi__call_t *c, struct umpi__rec *rec)
{
    memset(rec, 0, sizeof(*rec));
    rec->why = umpi__my_buffers(c);
    if (rec->why != UMPI__WHY_OK)
        return;
    if (c->in != NULL && c->in == c->out)
        rec->has |= UMPI__IN_PLACE;
    const void *buf[UMPI__NBUF] = {c->in, c->out};
    size_t len[UMPI__NBUF] = {c->in_len, c->out_len};
    for (int b = 0; b < UMPI__NBUF; b++) {
        if (buf[b] == NULL || len[b] == 0)
            continue;
        int dev, usable;
        umpi_status_t st;
        if (!umpi_cuda_is_device_buf(buf[b], len[b], &dev, &st)) {
            rec->why = st == UMPI_OK ? UMPI__WHY_HOST : UMPI__WHY_CLASSIFY;
            return;
        }
        st = umpi_cuda_ctx_ensure(dev);
        if (st == UMPI_OK)
            st = umpi_cuda_ipc_export(buf[b], len[b], &rec->desc[b], &usable);
        if (st != UMPI_OK || !usable) {
            rec->why = st == UMPI_OK ? UMPI__WHY_EXPORT : UMPI__WHY_CLASSIFY;
            if (st != UMPI_OK)
                umpi_debug(1, "cuda: a collective's device buffer %p: %s", buf[b], umpi_status_last_msg());
            return;
        }
        rec->has |= 1 << b;
    }
}

/* Everyone's record at everyone (an allgather schedule over host memory). */
static int umpi__agree(umpi__call_t *c, const struct umpi__rec *mine)
{
    umpi_dtype_t *byte = umpi_dtype_get(MPI_BYTE);
    umpi_coll_view_t v;
    umpi_coll_view_local(&v, c->a->comm);
    umpi_coll_args_t ga = {.kind = UMPI_COLL_ALLGATHER, .comm = c->a->comm, .sbuf = mine, .rbuf = c->recs,
                           .scount = sizeof(*mine), .rcount = sizeof(*mine), .sdt = byte, .rdt = byte,
                           .bytes = sizeof(*mine)};
    umpi_sched_t *s = umpi_sched_new(c->a->comm);
    if (s == NULL)
        return umpi_err_create(MPI_ERR_NO_MEM, "out of memory starting a collective");
    int err = umpi_allgather_bruck(s, &v, &ga);
    if (err != MPI_SUCCESS) {
        umpi_sched_free(s);
        return err;
    }
    return umpi_sched_run(s);
}

/* A barrier that also says whether every member's *ok is 1 (then *ok stays 1). */
static int umpi__sync(umpi__call_t *c, int *ok)
{
    int flag = *ok;
    umpi_status_t st = umpi_coll_allreduce_int(&c->g, &flag, 1, UMPI_COLL_BAND);
    if (st != UMPI_OK)
        return umpi_err_from_status(st, "synchronizing a collective on device buffers");
    *ok = flag;
    return MPI_SUCCESS;
}

static int umpi__world(const umpi__call_t *c, int j)
{
    return c->a->comm->world_rank ? c->a->comm->world_rank[j] : j;
}

/* Maps buffer b of member j (len bytes) unless it is mine; 0 when it could not be opened. */
static int umpi__open(umpi__call_t *c, int j, int b, size_t len, umpi_status_t *st)
{
    if (j == c->me || c->peer[j][b] != NULL || len == 0)
        return 1;
    if (!(c->recs[j].has & (1 << b))) /* the peer agreed, so this is a protocol error */
        return 0;
    void *p;
    *st = umpi_cuda_ipc_open(umpi__world(c, j), &c->recs[j].desc[b], len, &p, &c->ref[j][b]);
    c->peer[j][b] = p;
    if (*st == UMPI_OK && p != NULL)
        return 1;
    c->failed_peer = j;
    return 0;
}

/* Member j's buffer b: mine, or the mapping of the peer's. */
static char *umpi__buf(const umpi__call_t *c, int j, int b)
{
    if (j == c->me)
        return b == UMPI__IN ? (char *) c->in : c->out;
    return c->peer[j][b];
}

/* Opens what this member reads or writes of the others' buffers; 1 when all of it opened. */
static int umpi__open_all(umpi__call_t *c, umpi_status_t *st)
{
    const umpi_coll_args_t *a = c->a;
    int ok = 1;
    for (int j = 0; j < c->p && ok; j++) {
        switch (a->kind) {
        case UMPI_COLL_ALLREDUCE:
            ok = umpi__open(c, j, UMPI__IN, a->bytes, st) && umpi__open(c, j, UMPI__OUT, a->bytes, st);
            break;
        case UMPI_COLL_REDUCE:
            ok = umpi__open(c, j, UMPI__IN, a->bytes, st) &&
                 (j != a->root || umpi__open(c, j, UMPI__OUT, a->bytes, st));
            break;
        case UMPI_COLL_BCAST:
            ok = j != a->root || umpi__open(c, j, UMPI__IN, a->bytes, st);
            break;
        case UMPI_COLL_ALLGATHER:
        case UMPI_COLL_ALLGATHERV:
            ok = umpi__open(c, j, UMPI__IN, (size_t) (umpi__rcount(a, j) * a->rdt->size), st);
            break;
        case UMPI_COLL_ALLTOALL:
            ok = umpi__open(c, j, UMPI__IN, a->bytes * (size_t) c->p, st);
            break;
        default:
            break;
        }
    }
    return ok;
}

static umpi_status_t umpi__copy(umpi__call_t *c, void *dst, const void *src, size_t n)
{
    if (n == 0 || dst == src)
        return UMPI_OK;
    CUresult r = umpi_cuda_drv.cuMemcpyAsync((CUdeviceptr) (uintptr_t) dst, (CUdeviceptr) (uintptr_t) src, n,
                                             c->stream);
    return r == UMPI_CUDA_SUCCESS ? UMPI_OK : umpi_cuda_fail("cuMemcpyAsync in a collective through CUDA IPC", r);
}

static umpi_status_t umpi__wait(umpi__call_t *c)
{
    CUresult r = umpi_cuda_drv.cuStreamSynchronize(c->stream);
    return r == UMPI_CUDA_SUCCESS ? UMPI_OK : umpi_cuda_fail("cuStreamSynchronize in a collective through CUDA IPC", r);
}

/*
 * acc (n elements of dt, a data start) = the reduction of acc and ins[0..k-1] (data starts), on the
 * GPU by umpi's kernel; where no kernel serves the op and type (no image, a user op, the fake
 * driver) the slices are copied to host memory, reduced by the CPU and the result copied back.
 */
static umpi_status_t umpi__reduce_into(umpi__call_t *c, char *acc, char *const *ins, int k, MPI_Count n)
{
    const umpi_coll_args_t *a = c->a;
    umpi_dtype_t *dt = a->rdt ? a->rdt : a->sdt;
    MPI_Aint lb = dt->true_lb;
    if (n == 0 || k == 0)
        return UMPI_OK;
    umpi_status_t st = UMPI_OK;
    for (int i = 0; i < k && st == UMPI_OK; i++)
        st = umpi_cuda_kern_reduce(a->op, dt, ins[i] - lb, acc - lb, n, c->stream);
    if (st != UMPI_ERR_NOT_FOUND)
        return st;
    if (umpi__wait(c) != UMPI_OK) /* kernels launched before the refusal (none: the refusal is per op x type) */
        return UMPI_ERR_OTHER;
    umpi_cuda_slow_path(UMPI_CUDA_STAT_reduce_staged, "cuda: a slice of %lld x %s reduced through CUDA IPC is "
                        "computed by the CPU through host copies: %s", (long long) n,
                        dt->builtin ? dt->name : "a derived datatype", umpi_status_last_msg());
    size_t bytes = (size_t) (n * dt->size);
    char *hacc = malloc(bytes), *hin = malloc(bytes);
    if (hacc == NULL || hin == NULL) {
        free(hacc);
        free(hin);
        umpi_status_msg("out of memory reducing %zu bytes through host memory", bytes);
        return UMPI_ERR_NOMEM;
    }
    st = umpi_cuda_copy(hacc, acc, bytes);
    for (int i = 0; i < k && st == UMPI_OK; i++) {
        st = umpi_cuda_copy(hin, ins[i], bytes);
        if (st == UMPI_OK)
            umpi_op_apply(a->op, hin - lb, hacc - lb, n, dt);
    }
    if (st == UMPI_OK)
        st = umpi_cuda_copy(acc, hacc, bytes);
    free(hacc);
    free(hin);
    return st;
}

/* The slice of member i in the reductions: elements [disp[i], disp[i+1]). */
static char *umpi__slice(const umpi__call_t *c, char *buf, int i)
{
    umpi_dtype_t *dt = c->a->rdt ? c->a->rdt : c->a->sdt;
    return buf + c->disp[i] * dt->size;
}

/* My slice of the reduction into acc_buf: owner's contribution first (copied there, unless
 * owner's data is in acc_buf already: MPI_IN_PLACE), then the others' reduced into it. */
static umpi_status_t umpi__reduce_slice(umpi__call_t *c, char *acc_buf, int owner, int in_place)
{
    int p = c->p, me = c->me, k = 0;
    MPI_Count n = c->disp[me + 1] - c->disp[me];
    char *acc = umpi__slice(c, acc_buf, me), **ins = malloc((size_t) p * sizeof(*ins));
    if (ins == NULL)
        return UMPI_ERR_NOMEM;
    umpi_status_t st = in_place ? UMPI_OK
                                : umpi__copy(c, acc, umpi__slice(c, umpi__buf(c, owner, UMPI__IN), me),
                                             (size_t) (n * c->a->rdt->size));
    /* start past myself so that the members do not all read member 0 first */
    for (int s = 1; s <= p; s++) {
        int j = (me + s) % p;
        if (j != owner)
            ins[k++] = umpi__slice(c, umpi__buf(c, j, UMPI__IN), me);
    }
    if (st == UMPI_OK)
        st = umpi__reduce_into(c, acc, ins, k, n);
    free(ins);
    return st;
}

/* The phases of each kind, each ended by a flag sync: every member returns the same verdict. */
static int umpi__run(umpi__call_t *c)
{
    const umpi_coll_args_t *a = c->a;
    int p = c->p, me = c->me, ok = 1, err;
    umpi_status_t st = UMPI_OK;
    switch (a->kind) {
    case UMPI_COLL_ALLREDUCE:
        /* reduce-scatter: my own input's slice first (copied unless in place), then the others' */
        st = umpi__reduce_slice(c, c->out, me, a->sbuf == MPI_IN_PLACE);
        umpi_status_t w = umpi__wait(c); /* also after a failure: queued work uses the buffers */
        if (st == UMPI_OK)
            st = w;
        ok = st == UMPI_OK;
        if ((err = umpi__sync(c, &ok)) != MPI_SUCCESS)
            return err;
        if (!ok)
            break;
        /* allgather of the result slices */
        for (int s = 1; s < p && st == UMPI_OK; s++) {
            int j = (me + s) % p;
            st = umpi__copy(c, umpi__slice(c, c->out, j), umpi__slice(c, umpi__buf(c, j, UMPI__OUT), j),
                            (size_t) ((c->disp[j + 1] - c->disp[j]) * a->rdt->size));
        }
        break;
    case UMPI_COLL_REDUCE: {
        /* straight into the root's recvbuf; with MPI_IN_PLACE the root's data is there already */
        int in_place = (c->recs[a->root].has & UMPI__IN_PLACE) != 0;
        st = umpi__reduce_slice(c, umpi__buf(c, a->root, UMPI__OUT), in_place ? a->root : me, in_place);
        break;
    }
    case UMPI_COLL_BCAST:
        if (me != a->root)
            st = umpi__copy(c, c->out, umpi__buf(c, a->root, UMPI__IN), a->bytes);
        break;
    case UMPI_COLL_ALLGATHER:
    case UMPI_COLL_ALLGATHERV:
        for (int s = 0; s < p && st == UMPI_OK; s++) {
            int j = (me + s) % p;
            st = umpi__copy(c, c->out + umpi__rdispl(a, j) * a->rdt->size, umpi__buf(c, j, UMPI__IN),
                            (size_t) (umpi__rcount(a, j) * a->rdt->size));
        }
        break;
    case UMPI_COLL_ALLTOALL:
        for (int s = 0; s < p && st == UMPI_OK; s++) {
            int j = (me + s) % p;
            st = umpi__copy(c, c->out + (size_t) j * a->bytes, umpi__buf(c, j, UMPI__IN) + (size_t) me * a->bytes,
                            a->bytes);
        }
        break;
    default:
        break;
    }
    umpi_status_t w = umpi__wait(c); /* also after a failed copy: the queued ones use the buffers */
    if (st == UMPI_OK)
        st = w;
    /* the last sync: nobody returns (and frees a buffer) while another member may still read it */
    ok = ok && st == UMPI_OK;
    if ((err = umpi__sync(c, &ok)) != MPI_SUCCESS)
        return err;
    if (st != UMPI_OK)
        return umpi_err_from_status(st, "a collective on device buffers through CUDA IPC");
    if (!ok)
        return umpi_err_create(MPI_ERR_OTHER, "%s on device buffers through CUDA IPC failed at another member "
                               "(its error says why)", umpi_coll_kind_name(a->kind));
    return MPI_SUCCESS;
}

static void umpi__release(umpi__call_t *c)
{
    for (int j = 0; j < c->p; j++)
        for (int b = 0; b < UMPI__NBUF; b++)
            umpi_cuda_ipc_release(c->ref[j][b]);
}

int umpi_coll_ipc_enabled(void)
{
    return umpi__mode() != 0;
}

int umpi_coll_ipc_try(const umpi_coll_args_t *a, umpi_coll_comm_t *cc, int mode, int *err)
{
    int p = a->comm->size;
    *err = MPI_SUCCESS;
    /* uniform at every member: no communication decides these */
    int knob = umpi__mode();
    if (knob == 0 || mode != UMPI_COLL_BLOCKING || a->comm->is_inter || p < 2 || cc->nnodes != 1 ||
        !umpi__served(a->kind))
        return 0;
    size_t bytes = umpi__call_bytes(a, p);
    if (bytes == 0)
        return 0;
    if (knob == 2 && bytes < (size_t) umpi_config.cuda_coll_ipc_min) {
        umpi_debug(2, "%s of %zu bytes: below UMPI_CUDA_COLL_IPC_MIN=%zu, device buffers (if any) go through "
                   "host memory", umpi_coll_kind_name(a->kind), bytes, (size_t) umpi_config.cuda_coll_ipc_min);
        return 0;
    }

    umpi__call_t c = {.a = a, .p = p, .me = a->comm->rank, .failed_peer = -1};
    struct umpi__rec mine;
    umpi_coll_grp_of_comm(&c.g, a->comm);
    /* one block: the records, the mappings and their references, the slices */
    size_t need = (size_t) p * (sizeof(*c.recs) + sizeof(*c.peer) + sizeof(*c.ref)) + ((size_t) p + 1) * sizeof(*c.disp);
    char *mem = calloc(1, need);
    if (mem == NULL) {
        /* the other members are in the agreement already and wait for this one: like a failed
         * message, a collective that cannot take place */
        *err = umpi_err_create(MPI_ERR_NO_MEM, "out of memory (%zu bytes) preparing %s through CUDA IPC", need,
                               umpi_coll_kind_name(a->kind));
        return 1;
    }
    c.recs = (struct umpi__rec *) mem;
    c.peer = (char *(*)[UMPI__NBUF]) (c.recs + p);
    c.ref = (umpi_cuda_ipc_ref_t *(*)[UMPI__NBUF]) (c.peer + p);
    c.disp = (MPI_Count *) (c.ref + p);
    int taken = 1;
    umpi__prepare(&c, &mine);
    *err = umpi__agree(&c, &mine);
    if (*err != MPI_SUCCESS)
        goto out;

    int who = -1;
    for (int j = 0; j < p && who < 0; j++)
        if (c.recs[j].why != UMPI__WHY_OK)
            who = j;
    if (who >= 0) {
        int w = c.recs[who].why;
        umpi_cuda_slow_path(UMPI_CUDA_STAT_coll_ipc_fallback,
                            "cuda: %s of %zu bytes: not through CUDA IPC, every member moves device data through "
                            "host memory: rank %d has %s", umpi_coll_kind_name(a->kind), bytes, who,
                            w >= 0 && w < (int) UMPI_ARRAY_SIZE(umpi__why_text) ? umpi__why_text[w] : "?");
        taken = 0;
        goto out;
    }

    umpi_status_t st = umpi_cuda_copy_stream(&c.stream);
    int ok = st == UMPI_OK;
    if (ok && (a->kind == UMPI_COLL_ALLREDUCE || a->kind == UMPI_COLL_REDUCE))
        umpi_coll_even_blocks(c.disp, p, (MPI_Count) (a->bytes / (size_t) (a->rdt ? a->rdt : a->sdt)->size));
    if (ok)
        ok = umpi__open_all(&c, &st);
    /* The peers' streams are not ordered after this process's legacy stream: what the application
     * queued there on these buffers (a cuMemcpy from pageable memory, a cuMemset) is done before
     * the sync below lets the others read or write them. */
    if (ok && (st = umpi_cuda_fence()) != UMPI_OK)
        ok = 0;
    int opened = ok;
    if ((*err = umpi__sync(&c, &ok)) != MPI_SUCCESS)
        goto out;
    if (!ok) {
        char why[320];
        if (opened)
            snprintf(why, sizeof(why), "another member could not map a peer's buffer");
        else if (c.failed_peer >= 0)
            snprintf(why, sizeof(why), "rank %d's buffer could not be mapped here (%s)", c.failed_peer,
                     st != UMPI_OK ? umpi_status_last_msg() : "the driver refused its IPC handle");
        else
            snprintf(why, sizeof(why), "%s", umpi_status_last_msg());
        umpi_cuda_slow_path(UMPI_CUDA_STAT_coll_ipc_fallback,
                            "cuda: %s of %zu bytes: not through CUDA IPC, every member moves device data through "
                            "host memory: %s", umpi_coll_kind_name(a->kind), bytes, why);
        taken = 0;
        goto out;
    }
    umpi_cuda_stat_add(UMPI_CUDA_STAT_coll_ipc);
    umpi_debug(1, "%s on %s (size %d, %zu bytes): device buffers through CUDA IPC", umpi_coll_kind_name(a->kind),
               a->comm->name[0] ? a->comm->name : "a communicator", p, bytes);
    *err = umpi__run(&c);
out:
    umpi__release(&c);
    free(mem);
    return *err != MPI_SUCCESS || taken;
}
