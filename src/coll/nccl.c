/*
 * Blocking collectives on device buffers run by NCCL: MPI_Allreduce, MPI_Bcast,
 * MPI_Reduce, MPI_Allgather and MPI_Reduce_scatter_block, when NCCL is there (src/cuda/nccl.c)
 * and the cost model says it wins. Everything else keeps the staged path (umpi_coll_device.h).
 *
 *   umpi_coll_post -> umpi_coll_dev_offload -> umpi_coll_nccl_run:
 *     1. considered?   kind routed, intracommunicator of 2+, blocking, no UMPI_<COLL>_ALGORITHM
 *                      forced, bytes >= UMPI_NCCL_THRESH, communicator's NCCL not off. Every
 *                      process decides this the same way from the call's arguments and the job's
 *                      settings (the bytes are the same everywhere: MPI makes the type signatures
 *                      match), so from here on all of them take part in what follows.
 *     2. qualifies?    here: the significant buffers are device memory of one GPU, the one of
 *                      the current context (and of this communicator's NCCL, if made); a type
 *                      and op NCCL has (any contiguous type for bcast and allgather, as bytes);
 *                      NCCL loaded. Buffers may be device memory at some processes and host at
 *                      others (MPI allows it), so:
 *     3. agree         one host allreduce (band) of two ints: {NCCL usable here, call qualifies
 *                      here}. NCCL unusable anywhere: off for this communicator for good (no
 *                      agreement ever again); the call does not qualify somewhere: staged path.
 *     4. NCCL comm     made on first use: rank 0's ncclGetUniqueId by a host broadcast,
 *                      ncclCommInitRank everywhere, success agreed by a host allreduce (a failure
 *                      anywhere turns NCCL off for the communicator); freed with the MPI
 *                      communicator, or at MPI_Finalize before the CUDA contexts.
 *     5. launch        on our stream, wait for it (src/cuda/nccl.c), NCCL's errors as MPI errors.
 *
 * A communicator from MPI_Comm_dup/split gets an NCCL communicator of its own (the state hangs off
 * umpi_coll_comm_t, which every MPI communicator has for itself).
 *
 * What step 1 relies on: UMPI_NCCL, UMPI_NCCL_THRESH, UMPI_<COLL>_ALGORITHM and whether CUDA is
 * in use are the same at every process, as for the other collective knobs. A job mixing processes
 * with and without CUDA must set UMPI_NCCL=0.
 *
 * Nonblocking and persistent collectives keep the staged path (an NCCL launch would need its own
 * completion in the progress engine; counted as nccl_declined when their buffers are device).
 */
#include "coll/umpi_coll.h"
#include "coll/umpi_coll_device.h"
#include "coll/umpi_coll_internal.h"
#include "core/umpi_op_enum.h"
#include "cuda/umpi_cuda.h"
#include "cuda/umpi_cuda_copy.h"
#include "cuda/umpi_cuda_nccl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The NCCL side of an MPI communicator (umpi_coll_comm_t.nccl). */
struct umpi_coll_nccl {
    int off;               /* decided at every process alike: never again on this communicator */
    char why[256];         /* why off */
    umpi_nccl_comm_t *nc;  /* made on first use */
};

void umpi_coll_nccl_free(struct umpi_coll_nccl *n)
{
    if (n == NULL)
        return;
    umpi_nccl_comm_destroy(n->nc, 0);
    free(n);
}

/*
 * The cost model's part (select.c prices the host algorithms; this one the choice between staging
 * device buffers through host memory and NCCL). Staged, a device collective pays two driver
 * copies over PCIe (each about 10 us to start, 1/25000 us/B) around the host algorithm; NCCL
 * pays its launch and completion (about 15 us on one node, its kernels moving the data over
 * NVLink or the network) plus our agreement (a small host allreduce, log2 p x alpha). From some
 * kilobytes NCCL wins; below, the copies and one kernel launch cost about the same, and the
 * agreement tips it. The crossover is a knob (UMPI_NCCL_THRESH, default 32 KiB: estimated from the
 * figures above, which are NVIDIA's published orders of magnitude, not a measurement here: no GPU
 * and no NCCL on the development machines). The bytes are args.bytes, as the cost model defines them:
 * the vector for reductions and broadcast, one process's block for allgather, the whole vector
 * for reduce_scatter_block.
 */
static int umpi__nccl_wins(const umpi_coll_args_t *a)
{
    return a->bytes > 0 && a->bytes >= umpi_config.nccl_thresh;
}

/* ---- step 2: what NCCL takes --------------------------------------------------------------------- */

/* ncclDataType_t of a predefined type's kernel type (umpi_op_enum.h); -1: NCCL has none. One
 * entry per kernel type, so that a kernel type added there without one here does not compile. */
#define UMPI__NCCL_i8 UMPI_NCCL_INT8
#define UMPI__NCCL_u8 UMPI_NCCL_UINT8
#define UMPI__NCCL_i16 (-1)
#define UMPI__NCCL_u16 (-1)
#define UMPI__NCCL_i32 UMPI_NCCL_INT32
#define UMPI__NCCL_u32 UMPI_NCCL_UINT32
#define UMPI__NCCL_i64 UMPI_NCCL_INT64
#define UMPI__NCCL_u64 UMPI_NCCL_UINT64
#define UMPI__NCCL_f32 UMPI_NCCL_FLOAT32
#define UMPI__NCCL_f64 UMPI_NCCL_FLOAT64
#define UMPI__NCCL_f80 (-1)
#define UMPI__NCCL_c32 (-1)
#define UMPI__NCCL_c64 (-1)
#define UMPI__NCCL_c80 (-1)
#define UMPI__NCCL_b8 (-1)
#define UMPI__NCCL_b32 (-1)
#define UMPI__NCCL_float_int (-1)
#define UMPI__NCCL_double_int (-1)
#define UMPI__NCCL_long_int (-1)
#define UMPI__NCCL_short_int (-1)
#define UMPI__NCCL_ldouble_int (-1)
#define UMPI__NCCL_int_int (-1)
#define UMPI__NCCL_float_float (-1)
#define UMPI__NCCL_double_double (-1)

static int umpi__nccl_type(const umpi_dtype_t *dt)
{
    if (!dt->builtin)
        return -1;
    static const struct {
        MPI_Datatype h;
        int t;
    } map[] = {
#define UMPI__NCCL_TYPE(handle, cls, kt) {handle, UMPI__NCCL_##kt},
        UMPI_OP_TYPES(UMPI__NCCL_TYPE)
#undef UMPI__NCCL_TYPE
    };
    for (size_t i = 0; i < UMPI_ARRAY_SIZE(map); i++)
        if (map[i].h == dt->handle)
            return map[i].t;
    return -1;
}

static int umpi__nccl_op(const umpi_op_t *op)
{
    switch (op->kind) {
    case UMPI_OP_SUM: return UMPI_NCCL_SUM;
    case UMPI_OP_PROD: return UMPI_NCCL_PROD;
    case UMPI_OP_MAX: return UMPI_NCCL_MAX;
    case UMPI_OP_MIN: return UMPI_NCCL_MIN;
    default: return -1;
    }
}

/* One call as NCCL sees it. */
typedef struct {
    const char *name;      /* "allreduce" */
    const void *sbuf;      /* NCCL's send buffer (MPI_IN_PLACE resolved) */
    void *rbuf;            /* NCCL's receive buffer (NULL where not significant) */
    size_t count;          /* elements of type: the vector, a process's block (allgather,
                            * reduce_scatter_block) */
    int type, op;
    size_t block_bytes;    /* reduce_scatter_block: one block, for the in-place move */
    int in_place;
    int device;            /* of the buffers, -1 until one is seen */
} umpi__call_t;

/* Whether [buf, buf + len) is device memory of the call's one device: 1 yes, 0 no (*why says). */
static int umpi__dev(umpi__call_t *c, const void *buf, size_t len, const char **why)
{
    int dev = -1;
    umpi_status_t st = UMPI_OK;
    if (!umpi_cuda_is_device_buf(buf, len, &dev, &st)) {
        *why = st != UMPI_OK ? "a buffer could not be classified" : "a buffer is host memory here";
        return 0;
    }
    if (c->device >= 0 && dev != c->device) {
        *why = "the buffers are on different GPUs";
        return 0;
    }
    c->device = dev;
    return 1;
}

/* Fills c from a, classifying the significant buffers. 1 when NCCL can run it here; else 0 with
 * *why. *device_bufs: whether this process passed device memory at all (for the counters). */
static int umpi__qualifies(const umpi_coll_args_t *a, umpi__call_t *c, int *device_bufs, const char **why)
{
    const umpi_comm_t *comm = a->comm;
    const umpi_dtype_t *dt = a->rdt ? a->rdt : a->sdt;
    int reduction = a->op != NULL;
    memset(c, 0, sizeof(*c));
    c->device = -1;
    c->name = umpi_coll_kind_name(a->kind);
    c->in_place = a->sbuf == MPI_IN_PLACE;
    *device_bufs = 0;
    *why = NULL;

    /* the datatype: an exact NCCL type for reductions, any contiguous one (as bytes) otherwise */
    if (reduction) {
        c->type = umpi__nccl_type(dt);
        c->op = umpi__nccl_op(a->op);
        if (c->type < 0)
            *why = "NCCL has no such datatype";
        else if (c->op < 0)
            *why = "NCCL has no such op (it has sum, prod, max, min)";
    } else {
        c->type = UMPI_NCCL_UINT8;
        if (!dt->contig || (a->sdt != NULL && !c->in_place && !a->sdt->contig))
            *why = "a datatype is not contiguous";
    }
    size_t esize = reduction ? (size_t) dt->size : 1;
    switch (a->kind) {
    case UMPI_COLL_ALLREDUCE:
        c->count = (size_t) a->rcount;
        c->rbuf = a->rbuf;
        c->sbuf = c->in_place ? a->rbuf : a->sbuf;
        break;
    case UMPI_COLL_BCAST:
        c->count = (size_t) (a->rcount * a->rdt->size);
        c->rbuf = (char *) a->rbuf + a->rdt->true_lb;
        c->sbuf = c->rbuf;
        break;
    case UMPI_COLL_REDUCE:
        c->count = (size_t) a->scount;
        c->rbuf = comm->rank == a->root ? a->rbuf : NULL;
        c->sbuf = c->in_place ? a->rbuf : a->sbuf;
        break;
    case UMPI_COLL_ALLGATHER:
        c->count = (size_t) (a->rcount * a->rdt->size);
        c->rbuf = (char *) a->rbuf + a->rdt->true_lb;
        c->sbuf = c->in_place ? (char *) c->rbuf + (size_t) comm->rank * c->count
                              : (const char *) a->sbuf + a->sdt->true_lb;
        break;
    case UMPI_COLL_REDUCE_SCATTER_BLOCK:
        c->count = (size_t) a->rcount;
        c->block_bytes = c->count * esize;
        c->sbuf = c->in_place ? a->rbuf : a->sbuf;
        /* MPI's in-place result is the start of recvbuf; NCCL's is this process's block */
        c->rbuf = c->in_place ? (char *) a->rbuf + (size_t) comm->rank * c->block_bytes : a->rbuf;
        break;
    default:
        *why = "not a collective NCCL runs";
        return 0;
    }

    /* the buffers: every significant one device memory of one GPU */
    size_t total = a->kind == UMPI_COLL_ALLGATHER || a->kind == UMPI_COLL_REDUCE_SCATTER_BLOCK
                       ? c->count * esize * (size_t) comm->size : c->count * esize;
    size_t slen = a->kind == UMPI_COLL_ALLGATHER ? c->count : total;
    size_t rlen = a->kind == UMPI_COLL_REDUCE_SCATTER_BLOCK && !c->in_place ? c->block_bytes : total;
    const char *bwhy = NULL;
    int ok = 1;
    if (c->rbuf != NULL)
        ok = umpi__dev(c, c->in_place && a->kind == UMPI_COLL_REDUCE_SCATTER_BLOCK ? a->rbuf : c->rbuf, rlen, &bwhy);
    if (!c->in_place && a->kind != UMPI_COLL_BCAST && c->sbuf != NULL)
        ok = umpi__dev(c, c->sbuf, slen, &bwhy) && ok;
    *device_bufs = c->device >= 0;
    if (!ok && *why == NULL)
        *why = bwhy;
    if (*why != NULL)
        return 0;

    /* NCCL runs on the current context's device: it must be the buffers' */
    CUdevice cur = -1;
    if (umpi_cuda_ctx_ensure(c->device) != UMPI_OK || umpi_cuda_drv.cuCtxGetDevice(&cur) != UMPI_CUDA_SUCCESS) {
        *why = "no CUDA context could be made current";
        return 0;
    }
    if (cur != c->device) {
        *why = "the current CUDA context is on another GPU than the buffers";
        return 0;
    }
    return 1;
}

/* ---- the path not taken, said ---------------------------------------------------------------- */

static void umpi__declined(const umpi_coll_args_t *a, const char *why)
{
    umpi_cuda_slow_path(UMPI_CUDA_STAT_nccl_declined, "cuda: %s of %zu bytes on device buffers not run by NCCL: %s",
                        umpi_coll_kind_name(a->kind), a->bytes, why);
}

static const char *umpi__forced(umpi_coll_kind_t kind)
{
    const char *k = NULL;
    switch (kind) {
    case UMPI_COLL_ALLREDUCE: k = umpi_config.allreduce_algorithm; break;
    case UMPI_COLL_BCAST: k = umpi_config.bcast_algorithm; break;
    case UMPI_COLL_REDUCE: k = umpi_config.reduce_algorithm; break;
    case UMPI_COLL_ALLGATHER: k = umpi_config.allgather_algorithm; break;
    case UMPI_COLL_REDUCE_SCATTER_BLOCK: k = umpi_config.reduce_scatter_block_algorithm; break;
    default: return NULL;
    }
    return k != NULL && strcmp(k, "auto") != 0 ? k : NULL;
}

/* ---- step 4: the NCCL communicator ---------------------------------------------------------------- */

static void umpi__off(struct umpi_coll_nccl *n, const char *fmt, ...) UMPI_PRINTF(2, 3);
static void umpi__off(struct umpi_coll_nccl *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(n->why, sizeof(n->why), fmt, ap);
    va_end(ap);
    n->off = 1;
    umpi_debug(1, "nccl: not used on this communicator from now on: %s", n->why);
}

/* Collective. MPI_SUCCESS with n->nc made, or with n->off (and the staged path to take); an MPI
 * error when the host messages failed. */
static int umpi__comm_make(struct umpi_coll_nccl *n, umpi_comm_t *comm, const umpi_coll_grp_t *g, int device)
{
    struct {
        int ok;
        ncclUniqueId id;
    } msg;
    memset(&msg, 0, sizeof(msg));
    char mine[256] = "";
    if (comm->rank == 0) {
        ncclResult_t r = umpi_nccl.ncclGetUniqueId(&msg.id);
        msg.ok = r == UMPI_NCCL_SUCCESS;
        if (!msg.ok)
            umpi_nccl_strerror(r, NULL, mine, sizeof(mine));
    }
    umpi_status_t st = umpi_coll_bcast(g, &msg, sizeof(msg), 0);
    if (st != UMPI_OK)
        return umpi_err_from_status(st, "sending the NCCL unique id");
    if (!msg.ok) {
        umpi__off(n, "ncclGetUniqueId failed at rank 0%s%s", mine[0] ? ": " : "", mine);
        return MPI_SUCCESS;
    }
    umpi_nccl_comm_t *nc = NULL;
    st = umpi_nccl_comm_create(&msg.id, comm->size, comm->rank, device, &nc);
    if (st != UMPI_OK)
        umpi_strlcpy(mine, umpi_status_last_msg(), sizeof(mine));
    int ok = st == UMPI_OK;
    st = umpi_coll_allreduce_int(g, &ok, 1, UMPI_COLL_BAND);
    if (st != UMPI_OK || !ok) {
        umpi_nccl_comm_destroy(nc, 1);
        if (st != UMPI_OK)
            return umpi_err_from_status(st, "agreeing on the NCCL communicator");
        umpi__off(n, "the NCCL communicator could not be made: %s", mine[0] ? mine : "failed at another process");
        return MPI_SUCCESS;
    }
    n->nc = nc;
    umpi_cuda_stat_add(UMPI_CUDA_STAT_nccl_comms);
    umpi_debug(1, "nccl: communicator of %d ranks made on GPU %d", comm->size, device);
    return MPI_SUCCESS;
}

/* ---- step 5: launch and wait ----------------------------------------------------------------------- */

static int umpi__launch(umpi_nccl_comm_t *nc, const umpi_coll_args_t *a, const umpi__call_t *c)
{
    ncclResult_t r;
    const char *fn;
    switch (a->kind) {
    case UMPI_COLL_ALLREDUCE:
        fn = "ncclAllReduce";
        r = umpi_nccl.ncclAllReduce(c->sbuf, c->rbuf, c->count, c->type, c->op, nc->comm, nc->stream);
        break;
    case UMPI_COLL_BCAST:
        fn = "ncclBroadcast";
        r = umpi_nccl.ncclBroadcast(c->sbuf, c->rbuf, c->count, c->type, a->root, nc->comm, nc->stream);
        break;
    case UMPI_COLL_REDUCE:
        fn = "ncclReduce";
        r = umpi_nccl.ncclReduce(c->sbuf, c->rbuf, c->count, c->type, c->op, a->root, nc->comm, nc->stream);
        break;
    case UMPI_COLL_ALLGATHER:
        fn = "ncclAllGather";
        r = umpi_nccl.ncclAllGather(c->sbuf, c->rbuf, c->count, c->type, nc->comm, nc->stream);
        break;
    default: /* UMPI_COLL_REDUCE_SCATTER_BLOCK */
        fn = "ncclReduceScatter";
        r = umpi_nccl.ncclReduceScatter(c->sbuf, c->rbuf, c->count, c->type, c->op, nc->comm, nc->stream);
        break;
    }
    if (r != UMPI_NCCL_SUCCESS && r != UMPI_NCCL_IN_PROGRESS) {
        char buf[512];
        int err = umpi_err_create(MPI_ERR_OTHER, "%s on device buffers: %s failed: %s", c->name, fn,
                                  umpi_nccl_strerror(r, nc->comm, buf, sizeof(buf)));
        return err;
    }
    /* MPI's in-place reduce_scatter_block leaves the result at the start of recvbuf */
    if (a->kind == UMPI_COLL_REDUCE_SCATTER_BLOCK && c->in_place && a->comm->rank != 0 && c->block_bytes > 0) {
        CUresult cr = umpi_cuda_drv.cuMemcpyDtoDAsync((CUdeviceptr) (uintptr_t) a->rbuf,
                                                      (CUdeviceptr) (uintptr_t) c->rbuf, c->block_bytes, nc->stream);
        if (cr != UMPI_CUDA_SUCCESS) {
            umpi_status_t st = umpi_cuda_fail("moving the in-place reduce_scatter_block result", cr);
            umpi_nccl_wait(nc, fn);
            return umpi_err_from_status(st, "reduce_scatter_block on device buffers");
        }
    }
    umpi_status_t st = umpi_nccl_wait(nc, fn);
    if (st != UMPI_OK) {
        char what[64];
        snprintf(what, sizeof(what), "%s on device buffers", c->name);
        return umpi_err_from_status(st, what);
    }
    return MPI_SUCCESS;
}

/* ---- the entry ------------------------------------------------------------------------------------ */

int umpi_coll_nccl_run(umpi_coll_args_t *a, int mode, int *err)
{
    umpi_comm_t *comm = a->comm;
    *err = MPI_SUCCESS;
    switch (a->kind) {
    case UMPI_COLL_ALLREDUCE:
    case UMPI_COLL_BCAST:
    case UMPI_COLL_REDUCE:
    case UMPI_COLL_ALLGATHER:
    case UMPI_COLL_REDUCE_SCATTER_BLOCK:
        break;
    default:
        return 0;
    }
    if (comm->is_inter || comm->size < 2 || umpi_nccl_mode() == 0 || !umpi__nccl_wins(a))
        return 0;
    umpi_coll_comm_t *cc = umpi_coll_comm(comm);
    if (cc == NULL)
        return 0;

    /* 1. considered at every process alike, or nowhere */
    umpi__call_t c;
    int device_bufs;
    const char *why;
    int here = umpi__qualifies(a, &c, &device_bufs, &why);
    const char *forced = umpi__forced(a->kind);
    if (mode != UMPI_COLL_BLOCKING || forced != NULL || (cc->nccl != NULL && cc->nccl->off)) {
        if (device_bufs) {
            char line[160] = "";
            if (forced != NULL) {
                snprintf(line, sizeof(line), "UMPI_%s_ALGORITHM=%s forces a host algorithm", c.name, forced);
                for (char *p = line + 5; *p && *p != '='; p++)
                    *p = (char) (*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
            }
            umpi__declined(a, mode != UMPI_COLL_BLOCKING ? "nonblocking and persistent collectives are staged"
                              : forced != NULL ? line : cc->nccl->why);
        }
        return 0;
    }
    if (cc->nccl == NULL) {
        cc->nccl = calloc(1, sizeof(*cc->nccl));
        if (cc->nccl == NULL) {
            *err = umpi_err_create(MPI_ERR_NO_MEM, "out of memory for a communicator's NCCL state");
            return 1;
        }
    }
    struct umpi_coll_nccl *n = cc->nccl;

    /* 2-3. agree. A process with host buffers does not load NCCL for it (it objects through
     * flags[1]); one with device buffers and no usable NCCL turns it off for the communicator. */
    const char *libwhy = "";
    int flags[2] = {device_bufs ? umpi_nccl_available(&libwhy) : 1, here};
    if (n->nc != NULL && here && n->nc->device != c.device) {
        flags[1] = 0;
        why = "the buffers are on another GPU than this communicator's NCCL";
    }
    umpi_coll_grp_t g;
    umpi_coll_grp_of_comm(&g, comm);
    int mine[2] = {flags[0], flags[1]};
    umpi_status_t st = umpi_coll_allreduce_int(&g, flags, 2, UMPI_COLL_BAND);
    if (st != UMPI_OK) {
        *err = umpi_err_from_status(st, "agreeing on NCCL for a collective");
        return 1;
    }
    if (!flags[0]) {
        umpi__off(n, "NCCL is not usable %s%s", mine[0] ? "at another process" : "here: ", mine[0] ? "" : libwhy);
        if (device_bufs)
            umpi__declined(a, n->why);
        return 0;
    }
    if (!flags[1]) {
        if (device_bufs)
            umpi__declined(a, mine[1] ? "another process's buffers or arguments do not qualify" : why);
        return 0;
    }

    /* 4. the NCCL communicator, on first use */
    if (n->nc == NULL) {
        *err = umpi__comm_make(n, comm, &g, c.device);
        if (*err != MPI_SUCCESS)
            return 1;
        if (n->off) {
            umpi__declined(a, n->why);
            return 0;
        }
    }

    /* 5. run it */
    umpi_debug(1, "%s on %s (size %d, %zu bytes): NCCL (device buffers, at least UMPI_NCCL_THRESH=%zu bytes)",
               c.name, comm->name[0] ? comm->name : "a communicator", comm->size, a->bytes, umpi_config.nccl_thresh);
    umpi_cuda_stat_add(UMPI_CUDA_STAT_nccl_colls);
    umpi_nccl_comm_t *nc = n->nc;
    *err = umpi__launch(nc, a, &c);
    if (*err != MPI_SUCCESS) {
        /* aborted (MPI's state after an error is undefined anyway: no further NCCL on it here) */
        umpi_nccl_comm_destroy(nc, 1);
        n->nc = NULL;
        umpi__off(n, "an NCCL call failed on this communicator");
    }
    return 1;
}
