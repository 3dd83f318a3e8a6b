/*
 * libnccl_fake.so: NCCL without a GPU, on the fake CUDA driver (libcuda_fake.so), for testing
 * umpi's NCCL path (src/coll/nccl.c) on any machine. `make check` builds it; UMPI_NCCL_LIBRARY
 * names it (the fakegpu suite does, test/runtests). Test-only; test/fakecuda/README.md.
 *
 * The functions umpi's table needs (src/cuda/umpi_nccl_api.h), across processes:
 *
 * - ncclGetUniqueId makes a name; ncclCommInitRank opens a POSIX shared memory segment of that
 *   name (a header with a barrier, then one slot per rank), which rank 0 unlinks once every rank
 *   has it open: nothing stays in /dev/shm, even after a crash.
 * - A collective: the stream's earlier work is waited for (stream order); each rank copies its
 *   input from device memory into its slot with the fake driver's cuMemcpyDtoH (device memory is
 *   PROT_NONE at its address: this library never touches it either); barrier; each rank computes
 *   its result from the slots into a pinned buffer of the communicator; barrier; the result goes
 *   to the device buffer by cuMemcpyHtoDAsync on the caller's stream. The fake driver runs such
 *   a copy only when the stream is waited for: a caller that returns without synchronizing its
 *   stream sees stale data, as it would with NCCL.
 * - Buffers must be device memory (cuPointerGetAttributes), as NCCL requires; reductions on
 *   int8/uint8/int32/uint32/int64/uint64/float32/float64 with sum, prod, max, min. Everything else
 *   (float16, bfloat16, other ops, group calls, point-to-point) is ncclInvalidArgument, with
 *   ncclGetLastError saying what.
 *
 * Environment:
 *   FAKENCCL_FAIL=fn[,fn...]   these functions (ncclAllReduce, ncclCommInitRank, ...) return
 *                              ncclInternalError; "async:fn": fn works but the communicator then
 *                              reports ncclRemoteError through ncclCommGetAsyncError
 *   FAKENCCL_VERSION=N         what ncclGetVersion reports (default 21903, NCCL 2.19.3)
 *   FAKENCCL_TIMEOUT=S         seconds a barrier waits for the other ranks (default 60)
 *   UMPI_CUDA_LIBRARY          the fake driver to use (the same one umpi loaded)
 *
 * fakenccl_counts() (not an NCCL function) says how many communicators are live and how many
 * collectives ran, for tests.
 */
#include "cuda/umpi_cuda_drv.h"
#include "cuda/umpi_nccl_api.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define HDR ((size_t) 4096)
#define MAGIC 0x6e63636cu /* "nccl" */

struct hdr {
    int nranks;        /* set by the first rank to join (compare and swap) */
    int arrived;       /* barrier: ranks in it */
    unsigned gen;      /* barrier: generation */
};

struct ncclComm {
    int rank, nranks, fd;
    char name[UMPI_NCCL_UNIQUE_ID_BYTES];
    char *base;        /* the segment: header, then nranks slots */
    size_t mapped;
    char *pinned;      /* results, before they go to the device */
    size_t pinned_size;
    ncclResult_t async;
    char last[256];
    CUstream stream;   /* of the last collective, whose result copy may still be queued */
    int used;
};

static struct {
    CUresult (*dtoh)(void *, CUdeviceptr, size_t);
    CUresult (*htod_async)(CUdeviceptr, const void *, size_t, CUstream);
    CUresult (*host_alloc)(void **, size_t, unsigned);
    CUresult (*free_host)(void *);
    CUresult (*sync)(CUstream);
    CUresult (*attrs)(unsigned, umpi_cu_pointer_attribute_t *, void **, CUdeviceptr);
} drv;
static char last_global[256];
static long live_comms, collectives;

EXPORT void fakenccl_counts(long *comms, long *colls);
void fakenccl_counts(long *comms, long *colls)
{
    *comms = live_comms;
    *colls = collectives;
}

static ncclResult_t fail(struct ncclComm *c, ncclResult_t r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static ncclResult_t fail(struct ncclComm *c, ncclResult_t r, const char *fmt, ...)
{
    char *dst = c != NULL ? c->last : last_global;
    va_list ap;
    va_start(ap, fmt);
    int n = snprintf(dst, 256, "fake NCCL: ");
    vsnprintf(dst + n, 256 - (size_t) n, fmt, ap);
    va_end(ap);
    if (c != NULL)
        memcpy(last_global, c->last, sizeof(last_global));
    return r;
}

static int load_driver(void)
{
    static int done;
    if (done)
        return drv.dtoh != NULL ? 0 : -1;
    done = 1;
    const char *lib = getenv("UMPI_CUDA_LIBRARY");
    void *h = dlopen(lib && *lib ? lib : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL)
        return -1;
    *(void **) &drv.dtoh = dlsym(h, "cuMemcpyDtoH_v2");
    *(void **) &drv.htod_async = dlsym(h, "cuMemcpyHtoDAsync_v2");
    *(void **) &drv.host_alloc = dlsym(h, "cuMemHostAlloc");
    *(void **) &drv.free_host = dlsym(h, "cuMemFreeHost");
    *(void **) &drv.sync = dlsym(h, "cuStreamSynchronize");
    *(void **) &drv.attrs = dlsym(h, "cuPointerGetAttributes");
    if (!drv.dtoh || !drv.htod_async || !drv.host_alloc || !drv.free_host || !drv.sync || !drv.attrs) {
        drv.dtoh = NULL;
        return -1;
    }
    return 0;
}

/* FAKENCCL_FAIL names fn: 1 plainly, 2 as async:fn; 0 not. */
static int injected(const char *fn)
{
    const char *v = getenv("FAKENCCL_FAIL");
    if (v == NULL)
        return 0;
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", v);
    for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        if (strcmp(w, fn) == 0)
            return 1;
        if (strncmp(w, "async:", 6) == 0 && strcmp(w + 6, fn) == 0)
            return 2;
    }
    return 0;
}

/* ---- version, errors, ids ---------------------------------------------------------------------- */

EXPORT ncclResult_t ncclGetVersion(int *v)
{
    const char *s = getenv("FAKENCCL_VERSION");
    *v = s && *s ? atoi(s) : 21903;
    return UMPI_NCCL_SUCCESS;
}

EXPORT const char *ncclGetErrorString(ncclResult_t r)
{
    switch (r) {
    case UMPI_NCCL_SUCCESS: return "success";
    case UMPI_NCCL_UNHANDLED_CUDA_ERROR: return "a CUDA call failed";
    case UMPI_NCCL_SYSTEM_ERROR: return "a system call failed";
    case UMPI_NCCL_INTERNAL_ERROR: return "internal error of the fake NCCL";
    case UMPI_NCCL_INVALID_ARGUMENT: return "invalid argument";
    case UMPI_NCCL_INVALID_USAGE: return "invalid usage";
    case UMPI_NCCL_REMOTE_ERROR: return "a remote rank failed";
    case UMPI_NCCL_IN_PROGRESS: return "in progress";
    default: return "unknown result";
    }
}

EXPORT const char *ncclGetLastError(ncclComm_t comm)
{
    return comm != NULL ? comm->last : last_global;
}

EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    static unsigned seq;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (injected("ncclGetUniqueId") == 1)
        return fail(NULL, UMPI_NCCL_INTERNAL_ERROR, "failure injected by FAKENCCL_FAIL=ncclGetUniqueId");
    memset(id, 0, sizeof(*id));
    snprintf(id->internal, sizeof(id->internal), "/fakenccl-%d-%u-%lx", (int) getpid(), ++seq,
             (unsigned long) ts.tv_nsec);
    return UMPI_NCCL_SUCCESS;
}

/* ---- the segment -------------------------------------------------------------------------------- */

static struct hdr *hdr(struct ncclComm *c)
{
    return (struct hdr *) c->base;
}

/* All ranks in; ncclSystemError after FAKENCCL_TIMEOUT seconds. */
static ncclResult_t barrier(struct ncclComm *c)
{
    struct hdr *h = hdr(c);
    unsigned gen = __atomic_load_n(&h->gen, __ATOMIC_ACQUIRE);
    if (__atomic_add_fetch(&h->arrived, 1, __ATOMIC_ACQ_REL) == c->nranks) {
        __atomic_store_n(&h->arrived, 0, __ATOMIC_RELAXED);
        __atomic_add_fetch(&h->gen, 1, __ATOMIC_RELEASE);
        return UMPI_NCCL_SUCCESS;
    }
    const char *t = getenv("FAKENCCL_TIMEOUT");
    time_t limit = time(NULL) + (t && *t ? atoi(t) : 60);
    while (__atomic_load_n(&h->gen, __ATOMIC_ACQUIRE) == gen) {
        sched_yield();
        if (time(NULL) > limit)
            return fail(c, UMPI_NCCL_SYSTEM_ERROR, "rank %d waited %s s for the other ranks", c->rank,
                        t && *t ? t : "60");
    }
    return UMPI_NCCL_SUCCESS;
}

/* Room for nranks slots of `slot` bytes; the segment only grows (every rank of a call asks the
 * same, and the barriers keep calls apart). */
static ncclResult_t room(struct ncclComm *c, size_t slot)
{
    size_t need = HDR + (size_t) c->nranks * slot;
    if (need <= c->mapped)
        return UMPI_NCCL_SUCCESS;
    struct stat st;
    if (fstat(c->fd, &st) != 0 || ((size_t) st.st_size < need && ftruncate(c->fd, (off_t) need) != 0))
        return fail(c, UMPI_NCCL_SYSTEM_ERROR, "cannot grow %s to %zu bytes", c->name, need);
    void *p = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
    if (p == MAP_FAILED)
        return fail(c, UMPI_NCCL_SYSTEM_ERROR, "cannot map %zu bytes of %s", need, c->name);
    munmap(c->base, c->mapped);
    c->base = p;
    c->mapped = need;
    return UMPI_NCCL_SUCCESS;
}

static char *slot(struct ncclComm *c, int r, size_t size)
{
    return c->base + HDR + (size_t) r * size;
}

EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *out, int nranks, ncclUniqueId id, int rank)
{
    *out = NULL;
    if (injected("ncclCommInitRank") == 1)
        return fail(NULL, UMPI_NCCL_INTERNAL_ERROR, "failure injected by FAKENCCL_FAIL=ncclCommInitRank");
    if (load_driver() != 0)
        return fail(NULL, UMPI_NCCL_UNHANDLED_CUDA_ERROR, "the fake CUDA driver (UMPI_CUDA_LIBRARY) cannot be loaded");
    if (nranks < 1 || rank < 0 || rank >= nranks || strncmp(id.internal, "/fakenccl-", 10) != 0)
        return fail(NULL, UMPI_NCCL_INVALID_ARGUMENT, "rank %d of %d, id '%.40s'", rank, nranks, id.internal);
    struct ncclComm *c = calloc(1, sizeof(*c));
    c->rank = rank;
    c->nranks = nranks;
    snprintf(c->name, sizeof(c->name), "%s", id.internal);
    c->fd = shm_open(c->name, O_CREAT | O_RDWR, 0600);
    struct stat st;
    if (c->fd < 0 || fstat(c->fd, &st) != 0 || ((size_t) st.st_size < HDR && ftruncate(c->fd, HDR) != 0)) {
        if (c->fd >= 0)
            close(c->fd);
        free(c);
        return fail(NULL, UMPI_NCCL_SYSTEM_ERROR, "shm_open %s failed", id.internal);
    }
    c->base = mmap(NULL, HDR, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
    c->mapped = HDR;
    int zero = 0;
    if (!__atomic_compare_exchange_n(&hdr(c)->nranks, &zero, nranks, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&
        zero != nranks) {
        munmap(c->base, c->mapped);
        close(c->fd);
        free(c);
        return fail(NULL, UMPI_NCCL_INVALID_USAGE, "rank %d says %d ranks, another said %d", rank, nranks, zero);
    }
    ncclResult_t r = barrier(c);
    if (rank == 0)
        shm_unlink(c->name);
    if (r != UMPI_NCCL_SUCCESS) {
        memcpy(last_global, c->last, sizeof(last_global));
        munmap(c->base, c->mapped);
        close(c->fd);
        free(c);
        return r;
    }
    live_comms++;
    *out = c;
    return UMPI_NCCL_SUCCESS;
}

static ncclResult_t comm_free(struct ncclComm *c)
{
    if (c == NULL)
        return UMPI_NCCL_INVALID_ARGUMENT;
    munmap(c->base, c->mapped);
    close(c->fd);
    /* the last result copy reads the pinned buffer: it completes first (NCCL's own kernels would
     * be stopped by an abort; this fake's "kernel" is that copy) */
    if (c->used)
        drv.sync(c->stream);
    if (c->pinned != NULL)
        drv.free_host(c->pinned);
    free(c);
    live_comms--;
    return UMPI_NCCL_SUCCESS;
}

EXPORT ncclResult_t ncclCommDestroy(ncclComm_t c)
{
    return comm_free(c);
}

EXPORT ncclResult_t ncclCommAbort(ncclComm_t c)
{
    return comm_free(c);
}

EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t c, ncclResult_t *r)
{
    if (c == NULL)
        return UMPI_NCCL_INVALID_ARGUMENT;
    *r = c->async;
    return UMPI_NCCL_SUCCESS;
}

/* ---- collectives -------------------------------------------------------------------------------- */

static size_t type_size(ncclDataType_t t)
{
    switch (t) {
    case UMPI_NCCL_INT8: case UMPI_NCCL_UINT8: return 1;
    case UMPI_NCCL_FLOAT16: case UMPI_NCCL_BFLOAT16: return 2;
    case UMPI_NCCL_INT32: case UMPI_NCCL_UINT32: case UMPI_NCCL_FLOAT32: return 4;
    case UMPI_NCCL_INT64: case UMPI_NCCL_UINT64: case UMPI_NCCL_FLOAT64: return 8;
    default: return 0;
    }
}

#define FAKE_REDUCE(T, acc, in, n, op)                                                             \
    do {                                                                                           \
        T *x = (T *) (acc);                                                                        \
        const T *y = (const T *) (in);                                                             \
        for (size_t i = 0; i < (n); i++)                                                           \
            x[i] = (op) == UMPI_NCCL_SUM ? (T) (x[i] + y[i]) : op == UMPI_NCCL_PROD ? (T) (x[i] * y[i]) \
                 : op == UMPI_NCCL_MAX ? (x[i] > y[i] ? x[i] : y[i]) : (x[i] < y[i] ? x[i] : y[i]); \
    } while (0)

static void reduce(void *acc, const void *in, size_t n, ncclDataType_t t, ncclRedOp_t op)
{
    switch (t) {
    case UMPI_NCCL_INT8: FAKE_REDUCE(int8_t, acc, in, n, op); break;
    case UMPI_NCCL_UINT8: FAKE_REDUCE(uint8_t, acc, in, n, op); break;
    case UMPI_NCCL_INT32: FAKE_REDUCE(int32_t, acc, in, n, op); break;
    case UMPI_NCCL_UINT32: FAKE_REDUCE(uint32_t, acc, in, n, op); break;
    case UMPI_NCCL_INT64: FAKE_REDUCE(int64_t, acc, in, n, op); break;
    case UMPI_NCCL_UINT64: FAKE_REDUCE(uint64_t, acc, in, n, op); break;
    case UMPI_NCCL_FLOAT32: FAKE_REDUCE(float, acc, in, n, op); break;
    case UMPI_NCCL_FLOAT64: FAKE_REDUCE(double, acc, in, n, op); break;
    }
}

/* The checks every collective makes; the arithmetic ones when `reducing`. */
static ncclResult_t check(struct ncclComm *c, const char *fn, ncclDataType_t t, ncclRedOp_t op, int reducing)
{
    if (c == NULL)
        return fail(NULL, UMPI_NCCL_INVALID_ARGUMENT, "%s: NULL communicator", fn);
    int inj = injected(fn);
    if (inj == 1)
        return fail(c, UMPI_NCCL_INTERNAL_ERROR, "failure injected by FAKENCCL_FAIL=%s", fn);
    if (type_size(t) == 0)
        return fail(c, UMPI_NCCL_INVALID_ARGUMENT, "%s: datatype %d unknown", fn, t);
    if (reducing && (t == UMPI_NCCL_FLOAT16 || t == UMPI_NCCL_BFLOAT16))
        return fail(c, UMPI_NCCL_INVALID_ARGUMENT, "%s: no 16-bit float arithmetic in the fake", fn);
    if (reducing && (op < UMPI_NCCL_SUM || op > UMPI_NCCL_MIN))
        return fail(c, UMPI_NCCL_INVALID_ARGUMENT, "%s: op %d not in the fake (sum, prod, max, min)", fn, op);
    return UMPI_NCCL_SUCCESS;
}

/* p..p+n must be device memory, as NCCL requires. */
static ncclResult_t device_buf(struct ncclComm *c, const char *fn, const char *what, const void *p)
{
    unsigned type = 0;
    umpi_cu_pointer_attribute_t a = UMPI_CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
    void *data = &type;
    if (p == NULL || drv.attrs(1, &a, &data, (CUdeviceptr) (uintptr_t) p) != 0 || type != UMPI_CU_MEMORYTYPE_DEVICE)
        return fail(c, UMPI_NCCL_INVALID_ARGUMENT, "%s: %s %p is not device memory", fn, what, p);
    return UMPI_NCCL_SUCCESS;
}

/* Stream order, then room for slots of `slotsz` and a result of `outsz` bytes. */
static ncclResult_t begin(struct ncclComm *c, CUstream s, size_t slotsz, size_t outsz)
{
    if (c->used && c->stream != s && drv.sync(c->stream) != 0)
        return fail(c, UMPI_NCCL_UNHANDLED_CUDA_ERROR, "cuStreamSynchronize of the previous stream failed");
    if (drv.sync(s) != 0)
        return fail(c, UMPI_NCCL_UNHANDLED_CUDA_ERROR, "cuStreamSynchronize failed");
    c->stream = s;
    c->used = 1;
    ncclResult_t r = room(c, (slotsz + 63) & ~(size_t) 63);
    if (r != UMPI_NCCL_SUCCESS)
        return r;
    if (outsz > c->pinned_size) {
        if (c->pinned != NULL)
            drv.free_host(c->pinned);
        c->pinned = NULL;
        c->pinned_size = 0;
        if (drv.host_alloc((void **) &c->pinned, outsz, 0) != 0)
            return fail(c, UMPI_NCCL_UNHANDLED_CUDA_ERROR, "cuMemHostAlloc of %zu bytes failed", outsz);
        c->pinned_size = outsz;
    }
    return UMPI_NCCL_SUCCESS;
}

static ncclResult_t in(struct ncclComm *c, char *dst, const void *src, size_t n)
{
    if (n > 0 && drv.dtoh(dst, (CUdeviceptr) (uintptr_t) src, n) != 0)
        return fail(c, UMPI_NCCL_UNHANDLED_CUDA_ERROR, "cuMemcpyDtoH of %zu bytes failed", n);
    return UMPI_NCCL_SUCCESS;
}

/* The result, stream-ordered; the async injection after a collective that otherwise worked. */
static ncclResult_t out(struct ncclComm *c, const char *fn, void *dst, size_t n, CUstream s)
{
    if (n > 0 && drv.htod_async((CUdeviceptr) (uintptr_t) dst, c->pinned, n, s) != 0)
        return fail(c, UMPI_NCCL_UNHANDLED_CUDA_ERROR, "cuMemcpyHtoDAsync of %zu bytes failed", n);
    collectives++;
    if (injected(fn) == 2) {
        c->async = UMPI_NCCL_REMOTE_ERROR;
        fail(c, UMPI_NCCL_REMOTE_ERROR, "a peer of %s failed (injected by FAKENCCL_FAIL=async:%s)", fn, fn);
    }
    return UMPI_NCCL_SUCCESS;
}

#define TRY(call)                                                                                  \
    do {                                                                                           \
        ncclResult_t r_ = (call);                                                                  \
        if (r_ != UMPI_NCCL_SUCCESS)                                                               \
            return r_;                                                                             \
    } while (0)

EXPORT ncclResult_t ncclAllReduce(const void *sbuf, void *rbuf, size_t count, ncclDataType_t t, ncclRedOp_t op,
                                  ncclComm_t c, CUstream s)
{
    TRY(check(c, "ncclAllReduce", t, op, 1));
    size_t n = count * type_size(t);
    if (n > 0) {
        TRY(device_buf(c, "ncclAllReduce", "sendbuff", sbuf));
        TRY(device_buf(c, "ncclAllReduce", "recvbuff", rbuf));
    }
    TRY(begin(c, s, n, n));
    size_t sz = (n + 63) & ~(size_t) 63;
    TRY(in(c, slot(c, c->rank, sz), sbuf, n));
    TRY(barrier(c));
    memcpy(c->pinned, slot(c, 0, sz), n);
    for (int r = 1; r < c->nranks; r++)
        reduce(c->pinned, slot(c, r, sz), count, t, op);
    TRY(barrier(c));
    return out(c, "ncclAllReduce", rbuf, n, s);
}

EXPORT ncclResult_t ncclReduce(const void *sbuf, void *rbuf, size_t count, ncclDataType_t t, ncclRedOp_t op,
                               int root, ncclComm_t c, CUstream s)
{
    TRY(check(c, "ncclReduce", t, op, 1));
    if (root < 0 || root >= c->nranks)
        return fail(c, UMPI_NCCL_INVALID_ARGUMENT, "ncclReduce: root %d of %d ranks", root, c->nranks);
    size_t n = count * type_size(t);
    if (n > 0) {
        TRY(device_buf(c, "ncclReduce", "sendbuff", sbuf));
        if (c->rank == root)
            TRY(device_buf(c, "ncclReduce", "recvbuff", rbuf));
    }
    TRY(begin(c, s, n, n));
    size_t sz = (n + 63) & ~(size_t) 63;
    TRY(in(c, slot(c, c->rank, sz), sbuf, n));
    TRY(barrier(c));
    if (c->rank == root) {
        memcpy(c->pinned, slot(c, 0, sz), n);
        for (int r = 1; r < c->nranks; r++)
            reduce(c->pinned, slot(c, r, sz), count, t, op);
    }
    TRY(barrier(c));
    return out(c, "ncclReduce", rbuf, c->rank == root ? n : 0, s);
}

EXPORT ncclResult_t ncclBroadcast(const void *sbuf, void *rbuf, size_t count, ncclDataType_t t, int root,
                                  ncclComm_t c, CUstream s)
{
    TRY(check(c, "ncclBroadcast", t, 0, 0));
    if (root < 0 || root >= c->nranks)
        return fail(c, UMPI_NCCL_INVALID_ARGUMENT, "ncclBroadcast: root %d of %d ranks", root, c->nranks);
    size_t n = count * type_size(t);
    if (n > 0) {
        if (c->rank == root)
            TRY(device_buf(c, "ncclBroadcast", "sendbuff", sbuf));
        TRY(device_buf(c, "ncclBroadcast", "recvbuff", rbuf));
    }
    TRY(begin(c, s, n, n));
    size_t sz = (n + 63) & ~(size_t) 63;
    if (c->rank == root)
        TRY(in(c, slot(c, 0, sz), sbuf, n));
    TRY(barrier(c));
    memcpy(c->pinned, slot(c, 0, sz), n);
    TRY(barrier(c));
    return out(c, "ncclBroadcast", rbuf, n, s);
}

EXPORT ncclResult_t ncclAllGather(const void *sbuf, void *rbuf, size_t count, ncclDataType_t t, ncclComm_t c,
                                  CUstream s)
{
    TRY(check(c, "ncclAllGather", t, 0, 0));
    size_t n = count * type_size(t);
    if (n > 0) {
        TRY(device_buf(c, "ncclAllGather", "sendbuff", sbuf));
        TRY(device_buf(c, "ncclAllGather", "recvbuff", rbuf));
    }
    TRY(begin(c, s, n, n * (size_t) c->nranks));
    size_t sz = (n + 63) & ~(size_t) 63;
    TRY(in(c, slot(c, c->rank, sz), sbuf, n));
    TRY(barrier(c));
    for (int r = 0; r < c->nranks; r++)
        memcpy(c->pinned + (size_t) r * n, slot(c, r, sz), n);
    TRY(barrier(c));
    return out(c, "ncclAllGather", rbuf, n * (size_t) c->nranks, s);
}

EXPORT ncclResult_t ncclReduceScatter(const void *sbuf, void *rbuf, size_t count, ncclDataType_t t,
                                      ncclRedOp_t op, ncclComm_t c, CUstream s)
{
    TRY(check(c, "ncclReduceScatter", t, op, 1));
    size_t n = count * type_size(t), all = n * (size_t) c->nranks;
    if (n > 0) {
        TRY(device_buf(c, "ncclReduceScatter", "sendbuff", sbuf));
        TRY(device_buf(c, "ncclReduceScatter", "recvbuff", rbuf));
    }
    TRY(begin(c, s, all, n));
    size_t sz = (all + 63) & ~(size_t) 63;
    TRY(in(c, slot(c, c->rank, sz), sbuf, all));
    TRY(barrier(c));
    memcpy(c->pinned, slot(c, 0, sz) + (size_t) c->rank * n, n);
    for (int r = 1; r < c->nranks; r++)
        reduce(c->pinned, slot(c, r, sz) + (size_t) c->rank * n, count, t, op);
    TRY(barrier(c));
    return out(c, "ncclReduceScatter", rbuf, n, s);
}
