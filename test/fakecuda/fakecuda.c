/*
 * libcuda_fake.so: a CUDA driver without a GPU, for testing umpi's device paths on any machine
 * (`make check` builds it; UMPI_CUDA_LIBRARY names it; test/fakecuda/README.md). Test-only.
 *
 * It exports the driver entry points umpi's table needs (src/cuda/umpi_cuda_drv.h), under the
 * versioned names libcuda.so.1 exports, and behaves like the driver where correctness depends on
 * it, never kinder: a program that passes here may still fail on a GPU, but every way of using the
 * driver that the documentation does not promise to work fails here too, where we could model it.
 *
 * This file: memory. fakecuda_exec.c: streams, events, copies, kernels (and the thread that runs
 * them later, in an order that changes from run to run).
 *
 * - The unified address range. Device, pool, managed and pinned host allocations and IPC mappings
 *   all take their addresses from one space, as under UVA: segments reserved with mmap(NULL) on
 *   demand, a segment the size the allocation needs (so the kernel puts it wherever it likes,
 *   also where the program's own memory was unmapped a moment ago, as the driver's reservations
 *   land), allocations first-fit inside them, so that a freed range comes back, to any kind of
 *   memory (a device buffer's addresses as pinned host memory, say), with a new buffer id.
 * - Device memory the CPU cannot touch: a device allocation is a memfd mapped PROT_NONE at its
 *   GPU address (and read-write at a private alias the fake's copies use), so a load or store
 *   through a device pointer anywhere in the process is a segmentation fault; kernels open the
 *   mappings while they run (fk_device_window).
 * - Pointer attributes as the driver gives them (fakecuda_attrs below).
 * - A current context is required for allocations, copies, streams, events and IPC
 *   (CUDA_ERROR_INVALID_CONTEXT otherwise), per thread, as with the driver.
 * - CUDA IPC between processes: a handle names (pid, fd of the memfd, buffer id, size); the
 *   importer opens /proc/PID/fd/FD, checks that the file is still that allocation, and maps it at
 *   new GPU addresses. Opening an allocation this process has open already is
 *   CUDA_ERROR_ALREADY_MAPPED; a handle of freed memory or of this process fails.
 * - Frees (cuMemFree, cuMemFreeHost, cuMemHostUnregister, cuIpcCloseMemHandle) first wait for all
 *   queued work, as the driver's do.
 *
 * Environment (of the process that loads it):
 *   FAKECUDA_DELAY=N     the executor waits up to N microseconds (random) before each queued
 *                        operation (default 20; 0: as soon as it can, still from its own thread)
 *   FAKECUDA_SEED=N      the executor's random choices (default: from the clock and the pid)
 *   FAKECUDA_IPC=ok|noget|noopen   cuIpcGetMemHandle or cuIpcOpenMemHandle fails (default ok)
 *   FAKECUDA_DEVICES=N   devices reported (default 1)
 *   FAKECUDA_VA_GB=N     the most GiB of GPU addresses reserved (default 64)
 *   FAKECUDA_REPORT=1    print what is still allocated when the process exits
 *
 * fakecuda_counts() (not a driver function) tells tests what is live, to check for leaks.
 */
#include "fakecuda.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

struct fakecuda fk = { .lock = PTHREAD_MUTEX_INITIALIZER, .ndevices = 1, .delay_us = 20 };
__thread int fk_current_ctx;

#define PAGE ((size_t) 4096)
#define SEG_ALIGN ((size_t) 2 << 20) /* the GPU's large page: reservations come in multiples of it */

static struct range *ranges;      /* every known range, sorted by start, disjoint */
static size_t nranges, cap;
static unsigned long long next_id = 1;
static int ipc_mode;              /* 0 ok, 1 noget, 2 noopen */
static size_t va_limit;           /* FAKECUDA_VA_GB */

/* The reserved GPU address segments, sorted by base. */
struct segment {
    uintptr_t base;
    size_t size;
};
static struct segment *segs;
static size_t nsegs, segcap, va_reserved;

EXPORT void fakecuda_counts(struct fakecuda_counts *out);
void fakecuda_counts(struct fakecuda_counts *out)
{
    pthread_mutex_lock(&fk.lock);
    *out = fk.counts;
    pthread_mutex_unlock(&fk.lock);
}

const char *fk_env(const char *name, const char *def)
{
    const char *v = getenv(name);
    return v != NULL && *v ? v : def;
}

static void report(void)
{
    if (strcmp(fk_env("FAKECUDA_REPORT", "0"), "1") != 0)
        return;
    struct fakecuda_counts *c = &fk.counts;
    fprintf(stderr, "fakecuda[%d]: at exit: %ld device, %ld pinned, %ld registered, %ld managed allocations, "
            "%ld IPC mappings, %ld streams, %ld events live (executor seed %u)\n", (int) getpid(), c->device_allocs,
            c->pinned_allocs, c->registered, c->managed_allocs, c->imports, c->streams, c->events, fk.seed);
}

/* ---- ranges ----------------------------------------------------------------------------------- */

static size_t find(uintptr_t p)
{
    size_t lo = 0, hi = nranges;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ranges[mid].start + (ranges[mid].mapped ? ranges[mid].mapped : ranges[mid].size) <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

struct range *fk_lookup(uintptr_t p)
{
    size_t i = find(p);
    if (i < nranges && ranges[i].start <= p && p < ranges[i].start + ranges[i].size)
        return &ranges[i];
    return NULL;
}

static int insert(const struct range *r)
{
    if (nranges == cap) {
        size_t c = cap ? 2 * cap : 64;
        struct range *n = realloc(ranges, c * sizeof(*n));
        if (n == NULL)
            return -1;
        ranges = n;
        cap = c;
    }
    size_t i = find(r->start);
    memmove(&ranges[i + 1], &ranges[i], (nranges - i) * sizeof(*ranges));
    ranges[i] = *r;
    nranges++;
    return 0;
}

static void erase(struct range *r)
{
    size_t i = (size_t) (r - ranges);
    memmove(&ranges[i], &ranges[i + 1], (nranges - i - 1) * sizeof(*ranges));
    nranges--;
}

static int is_device_kind(int k)
{
    return k == K_DEVICE || k == K_POOL || k == K_IMPORT;
}

/* ---- the unified address range ---------------------------------------------------------------- */

static int in_segments(uintptr_t p)
{
    for (size_t i = 0; i < nsegs; i++)
        if (p >= segs[i].base && p < segs[i].base + segs[i].size)
            return 1;
    return 0;
}

/* A new segment of at least `need` bytes, wherever the kernel puts it. */
static int reserve(size_t need)
{
    size_t size = (need + SEG_ALIGN - 1) & ~(SEG_ALIGN - 1);
    if (va_reserved + size > va_limit)
        return -1;
    if (nsegs == segcap) {
        size_t c = segcap ? 2 * segcap : 16;
        struct segment *n = realloc(segs, c * sizeof(*n));
        if (n == NULL)
            return -1;
        segs = n;
        segcap = c;
    }
    char *p = mmap(NULL, size + SEG_ALIGN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    uintptr_t base = ((uintptr_t) p + SEG_ALIGN - 1) & ~(uintptr_t) (SEG_ALIGN - 1);
    if (base > (uintptr_t) p)
        munmap(p, base - (uintptr_t) p);
    if ((uintptr_t) p + size + SEG_ALIGN > base + size)
        munmap((char *) (base + size), (uintptr_t) p + size + SEG_ALIGN - (base + size));
    size_t i = 0;
    while (i < nsegs && segs[i].base < base)
        i++;
    memmove(&segs[i + 1], &segs[i], (nsegs - i) * sizeof(*segs));
    segs[i] = (struct segment){ base, size };
    nsegs++;
    va_reserved += size;
    return 0;
}

/* First fit among the segments (lowest address first), reserving a new one when none has room. */
static uintptr_t va_alloc(size_t mapped)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        for (size_t s = 0; s < nsegs; s++) {
            uintptr_t at = segs[s].base, end = segs[s].base + segs[s].size;
            for (size_t i = find(at); i < nranges && ranges[i].start < end; i++) {
                if (ranges[i].kind == K_REGISTERED)
                    continue;
                if (ranges[i].start >= at + mapped)
                    break;
                at = ranges[i].start + ranges[i].mapped;
            }
            if (at + mapped <= end)
                return at;
        }
        if (attempt == 0 && reserve(mapped) != 0)
            break;
    }
    return 0;
}

/* Gives [start, start+mapped) back to the reservation (no access, nothing committed). */
static void va_release(uintptr_t start, size_t mapped)
{
    mmap((void *) start, mapped, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
}

void fk_device_window(int open)
{
    for (size_t i = 0; i < nranges; i++)
        if (is_device_kind(ranges[i].kind))
            mprotect((void *) ranges[i].start, ranges[i].mapped, open ? PROT_READ | PROT_WRITE : PROT_NONE);
}

char *fk_resolve(uintptr_t p, size_t n, int *cls)
{
    const struct range *r = fk_lookup(p);
    *cls = CL_PAGEABLE;
    if (r == NULL)
        return in_segments(p) ? NULL : (char *) p; /* GPU addresses of no allocation: freed */
    if (n > r->size - (p - r->start))
        return NULL;
    if (is_device_kind(r->kind)) {
        *cls = CL_DEVICE;
        return r->alias + (p - r->start);
    }
    *cls = r->kind == K_MANAGED ? CL_MANAGED : CL_PINNED;
    return (char *) p;
}

/* ---- init, devices, contexts, errors ----------------------------------------------------------- */

EXPORT CUresult cuInit(unsigned int flags)
{
    (void) flags;
    pthread_mutex_lock(&fk.lock);
    if (!fk.initialized) {
        va_limit = (size_t) atoi(fk_env("FAKECUDA_VA_GB", "64")) << 30;
        fk.delay_us = atoi(fk_env("FAKECUDA_DELAY", "20"));
        fk.ndevices = atoi(fk_env("FAKECUDA_DEVICES", "1"));
        const char *seed = getenv("FAKECUDA_SEED");
        fk.seed = seed != NULL && *seed ? (unsigned) strtoul(seed, NULL, 0)
                                        : (unsigned) time(NULL) * 2654435761u ^ (unsigned) getpid();
        const char *ipc = fk_env("FAKECUDA_IPC", "ok");
        ipc_mode = strcmp(ipc, "noget") == 0 ? 1 : strcmp(ipc, "noopen") == 0 ? 2 : 0;
        atexit(report);
        fk.initialized = 1;
        fk_exec_init();
    }
    pthread_mutex_unlock(&fk.lock);
    return 0;
}

EXPORT CUresult cuDriverGetVersion(int *v)
{
    *v = 13000;
    return 0;
}

EXPORT CUresult cuDeviceGetCount(int *n)
{
    if (!fk.initialized)
        return FAKE_ERR_NOT_INITIALIZED;
    *n = fk.ndevices;
    return 0;
}

EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    if (!fk.initialized)
        return FAKE_ERR_NOT_INITIALIZED;
    if (ordinal < 0 || ordinal >= fk.ndevices)
        return FAKE_ERR_INVALID_VALUE;
    *d = ordinal;
    return 0;
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    snprintf(name, (size_t) len, "umpi fake GPU %d (no GPU: test/fakecuda)", d);
    return 0;
}

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice d)
{
    if (!fk.initialized)
        return FAKE_ERR_NOT_INITIALIZED;
    if (d < 0 || d >= fk.ndevices)
        return FAKE_ERR_INVALID_VALUE;
    *ctx = (CUcontext) (uintptr_t) (d + 1);
    return 0;
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
    return d >= 0 && d < fk.ndevices ? 0 : FAKE_ERR_INVALID_VALUE;
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *ctx)
{
    *ctx = (CUcontext) (uintptr_t) fk_current_ctx;
    return 0;
}

EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
    uintptr_t c = (uintptr_t) ctx;
    if (c > (uintptr_t) fk.ndevices)
        return FAKE_ERR_INVALID_CONTEXT;
    fk_current_ctx = (int) c;
    return 0;
}

EXPORT CUresult cuCtxGetDevice(CUdevice *d)
{
    if (!fk_need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    *d = fk_current_ctx - 1;
    return 0;
}

EXPORT CUresult cuCtxGetId(CUcontext ctx, unsigned long long *id)
{
    uintptr_t c = (uintptr_t) ctx;
    if (c == 0 || c > (uintptr_t) fk.ndevices)
        return FAKE_ERR_INVALID_CONTEXT;
    *id = (unsigned long long) c;
    return 0;
}

EXPORT CUresult cuGetErrorName(CUresult r, const char **s)
{
    switch (r) {
    case 0: *s = "CUDA_SUCCESS"; break;
    case FAKE_ERR_INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; break;
    case FAKE_ERR_OUT_OF_MEMORY: *s = "CUDA_ERROR_OUT_OF_MEMORY"; break;
    case FAKE_ERR_NOT_INITIALIZED: *s = "CUDA_ERROR_NOT_INITIALIZED"; break;
    case FAKE_ERR_INVALID_CONTEXT: *s = "CUDA_ERROR_INVALID_CONTEXT"; break;
    case FAKE_ERR_ALREADY_MAPPED: *s = "CUDA_ERROR_ALREADY_MAPPED"; break;
    case FAKE_ERR_NO_BINARY_FOR_GPU: *s = "CUDA_ERROR_NO_BINARY_FOR_GPU"; break;
    case FAKE_ERR_INVALID_HANDLE: *s = "CUDA_ERROR_INVALID_HANDLE"; break;
    case FAKE_ERR_NOT_FOUND: *s = "CUDA_ERROR_NOT_FOUND"; break;
    case FAKE_ERR_NOT_READY: *s = "CUDA_ERROR_NOT_READY"; break;
    case FAKE_ERR_NOT_SUPPORTED: *s = "CUDA_ERROR_NOT_SUPPORTED"; break;
    default: *s = NULL; return FAKE_ERR_INVALID_VALUE;
    }
    return 0;
}

EXPORT CUresult cuGetErrorString(CUresult r, const char **s)
{
    switch (r) {
    case 0: *s = "no error"; break;
    case FAKE_ERR_INVALID_VALUE: *s = "invalid argument"; break;
    case FAKE_ERR_NO_BINARY_FOR_GPU: *s = "no kernel image is available for execution on the device"; break;
    case FAKE_ERR_OUT_OF_MEMORY: *s = "out of memory"; break;
    case FAKE_ERR_NOT_INITIALIZED: *s = "initialization error"; break;
    case FAKE_ERR_INVALID_CONTEXT: *s = "invalid device context (no current context in this thread)"; break;
    case FAKE_ERR_ALREADY_MAPPED: *s = "resource already mapped"; break;
    case FAKE_ERR_INVALID_HANDLE: *s = "invalid resource handle"; break;
    case FAKE_ERR_NOT_FOUND: *s = "named symbol not found"; break;
    case FAKE_ERR_NOT_READY: *s = "device not ready"; break;
    case FAKE_ERR_NOT_SUPPORTED: *s = "operation not supported (FAKECUDA_IPC)"; break;
    default: *s = NULL; return FAKE_ERR_INVALID_VALUE;
    }
    return 0;
}

EXPORT CUresult cuDeviceGetAttribute(int *value, int attrib, CUdevice d)
{
    if (!fk.initialized)
        return FAKE_ERR_NOT_INITIALIZED;
    if (d < 0 || d >= fk.ndevices)
        return FAKE_ERR_INVALID_VALUE;
    switch (attrib) {
    case 16: *value = 4; return 0;    /* multiprocessors */
    case 75: *value = 9; return 0;    /* compute capability major */
    case 76: *value = 0; return 0;    /* minor */
    default: return FAKE_ERR_INVALID_VALUE;
    }
}

/* ---- allocations ------------------------------------------------------------------------------ */

/* Device memory: a memfd, PROT_NONE at its GPU address, read-write at the alias. Under the lock. */
static CUresult map_device(struct range *r)
{
    r->alias = mmap(NULL, r->mapped, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
    if (r->alias == MAP_FAILED) {
        r->alias = NULL;
        return FAKE_ERR_OUT_OF_MEMORY;
    }
    r->start = va_alloc(r->mapped);
    if (r->start == 0 ||
        mmap((void *) r->start, r->mapped, PROT_NONE, MAP_SHARED | MAP_FIXED, r->fd, 0) == MAP_FAILED) {
        if (r->start != 0)
            va_release(r->start, r->mapped);
        munmap(r->alias, r->mapped);
        r->alias = NULL;
        return FAKE_ERR_OUT_OF_MEMORY;
    }
    if (insert(r) != 0) {
        va_release(r->start, r->mapped);
        munmap(r->alias, r->mapped);
        r->alias = NULL;
        return FAKE_ERR_OUT_OF_MEMORY;
    }
    return 0;
}

static CUresult dev_alloc(CUdeviceptr *dptr, size_t bytes, int kind)
{
    if (!fk_need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    if (bytes == 0)
        return FAKE_ERR_INVALID_VALUE;
    pthread_mutex_lock(&fk.lock);
    struct range r = { .size = bytes, .mapped = (bytes + PAGE - 1) & ~(PAGE - 1), .kind = kind, .id = next_id++ };
    char name[64];
    snprintf(name, sizeof(name), "fakecuda-%llu", r.id);
    r.fd = memfd_create(name, MFD_CLOEXEC);
    CUresult rc = FAKE_ERR_OUT_OF_MEMORY;
    if (r.fd >= 0 && ftruncate(r.fd, (off_t) r.mapped) == 0)
        rc = map_device(&r);
    if (rc != 0) {
        if (r.fd >= 0)
            close(r.fd);
        pthread_mutex_unlock(&fk.lock);
        return rc;
    }
    fk.counts.device_allocs++;
    pthread_mutex_unlock(&fk.lock);
    *dptr = r.start;
    return 0;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes)
{
    return dev_alloc(dptr, bytes, K_DEVICE);
}

/* Stream-ordered allocation: the address is good at once; the pool's memory is not IPC-capable. */
EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytes, CUstream s)
{
    (void) s;
    return dev_alloc(dptr, bytes, K_POOL);
}

/* Memory with a GPU address given back (the executor's work on it drained first). */
static CUresult va_free(uintptr_t p, int kind_a, int kind_b)
{
    pthread_mutex_lock(&fk.lock);
    struct range *r = fk_lookup(p);
    if (r == NULL || r->start != p || (r->kind != kind_a && r->kind != kind_b)) {
        pthread_mutex_unlock(&fk.lock);
        return FAKE_ERR_INVALID_VALUE;
    }
    fk_drain_all();
    r = fk_lookup(p);
    if (r->alias != NULL)
        munmap(r->alias, r->mapped);
    if (r->fd >= 0)
        close(r->fd);
    va_release(r->start, r->mapped);
    switch (r->kind) {
    case K_IMPORT: fk.counts.imports--; fk.counts.ipc_closes++; break;
    case K_PINNED: fk.counts.pinned_allocs--; break;
    case K_MANAGED: fk.counts.managed_allocs--; break;
    default: fk.counts.device_allocs--; break;
    }
    erase(r);
    pthread_mutex_unlock(&fk.lock);
    return 0;
}

/* cuMemFree frees device, pool and managed memory. */
EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
    if (!fk_need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    pthread_mutex_lock(&fk.lock);
    struct range *r = fk_lookup(p);
    int kind = r != NULL ? r->kind : -1;
    pthread_mutex_unlock(&fk.lock);
    if (kind == K_MANAGED)
        return va_free(p, K_MANAGED, K_MANAGED);
    return va_free(p, K_DEVICE, K_POOL);
}

EXPORT CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s)
{
    (void) s;
    if (!fk_need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    return va_free(p, K_DEVICE, K_POOL);
}

/* Host memory the driver allocates (pinned, managed): read-write at addresses of the unified range. */
static CUresult host_alloc(void **p, size_t bytes, int kind)
{
    if (!fk_need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    if (bytes == 0)
        return FAKE_ERR_INVALID_VALUE;
    pthread_mutex_lock(&fk.lock);
    struct range r = { .size = bytes, .mapped = (bytes + PAGE - 1) & ~(PAGE - 1), .kind = kind, .id = next_id++,
                       .fd = -1 };
    r.start = va_alloc(r.mapped);
    if (r.start == 0 || mmap((void *) r.start, r.mapped, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED ||
        insert(&r) != 0) {
        if (r.start != 0)
            va_release(r.start, r.mapped);
        pthread_mutex_unlock(&fk.lock);
        return FAKE_ERR_OUT_OF_MEMORY;
    }
    if (kind == K_PINNED)
        fk.counts.pinned_allocs++;
    else
        fk.counts.managed_allocs++;
    pthread_mutex_unlock(&fk.lock);
    *p = (void *) r.start;
    return 0;
}

EXPORT CUresult cuMemHostAlloc(void **p, size_t bytes, unsigned int flags)
{
    (void) flags;
    return host_alloc(p, bytes, K_PINNED);
}

EXPORT CUresult cuMemFreeHost(void *p)
{
    return va_free((uintptr_t) p, K_PINNED, K_PINNED);
}

EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytes, unsigned flags)
{
    (void) flags;
    void *p = NULL;
    CUresult rc = host_alloc(&p, bytes, K_MANAGED);
    if (rc == 0)
        *dptr = (CUdeviceptr) (uintptr_t) p;
    return rc;
}

EXPORT CUresult cuMemHostRegister_v2(void *p, size_t bytes, unsigned int flags)
{
    (void) flags;
    if (!fk_need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    pthread_mutex_lock(&fk.lock);
    struct range r = { .start = (uintptr_t) p, .size = bytes, .kind = K_REGISTERED, .id = next_id++, .fd = -1 };
    size_t i = find(r.start);
    CUresult rc = 0;
    if (bytes == 0 || in_segments(r.start))
        rc = FAKE_ERR_INVALID_VALUE;
    else if (i < nranges && ranges[i].start < r.start + bytes)
        rc = FAKE_ERR_INVALID_VALUE; /* overlaps a registered range: registered twice */
    else if (insert(&r) != 0)
        rc = FAKE_ERR_OUT_OF_MEMORY;
    else
        fk.counts.registered++;
    pthread_mutex_unlock(&fk.lock);
    return rc;
}

EXPORT CUresult cuMemHostUnregister(void *p)
{
    pthread_mutex_lock(&fk.lock);
    struct range *r = fk_lookup((uintptr_t) p);
    if (r == NULL || r->start != (uintptr_t) p || r->kind != K_REGISTERED) {
        pthread_mutex_unlock(&fk.lock);
        return FAKE_ERR_INVALID_VALUE;
    }
    fk_drain_all();
    erase(fk_lookup((uintptr_t) p));
    fk.counts.registered--;
    pthread_mutex_unlock(&fk.lock);
    return 0;
}

/* ---- pointer attributes ----------------------------------------------------------------------- */

/*
 * As the driver answers (cuPointerGetAttributes never fails for a pointer it does not know: it
 * fills defaults and succeeds):
 *
 *   kind              MEMORY_TYPE  IS_MANAGED  LEGACY_IPC  MEMPOOL  BUFFER_ID, RANGE_*   DEVICE_ORDINAL
 *   cuMemAlloc        DEVICE       0           1           NULL     the allocation        its device
 *   cuMemAllocAsync   DEVICE       0           0           a pool   the allocation        its device
 *   IPC mapping       DEVICE       0           1           NULL     the mapping           its device
 *   cuMemAllocManaged DEVICE       1           0           NULL     the allocation        its device
 *   cuMemHostAlloc    HOST         0           0           NULL     the allocation        the device current then
 *   cuMemHostRegister HOST         0           0           NULL     the registered range  the device current then
 *   pageable          0            0           0           NULL     0                     -2
 */
EXPORT CUresult cuPointerGetAttributes(unsigned int n, umpi_cu_pointer_attribute_t *attrs, void **data,
                                       CUdeviceptr ptr)
{
    if (!fk.initialized)
        return FAKE_ERR_NOT_INITIALIZED;
    pthread_mutex_lock(&fk.lock);
    const struct range *found = fk_lookup((uintptr_t) ptr);
    struct range copy;
    if (found != NULL)
        copy = *found;
    pthread_mutex_unlock(&fk.lock);
    const struct range *r = found != NULL ? &copy : NULL;
    int host = r != NULL && (r->kind == K_PINNED || r->kind == K_REGISTERED);
    for (unsigned i = 0; i < n; i++) {
        switch ((int) attrs[i]) {
        case UMPI_CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
            *(unsigned *) data[i] = r == NULL ? 0 : host ? UMPI_CU_MEMORYTYPE_HOST : UMPI_CU_MEMORYTYPE_DEVICE;
            break;
        case UMPI_CU_POINTER_ATTRIBUTE_IS_MANAGED:
            *(unsigned char *) data[i] = r != NULL && r->kind == K_MANAGED;
            break;
        case UMPI_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
            *(int *) data[i] = r != NULL ? 0 : -2;
            break;
        case UMPI_CU_POINTER_ATTRIBUTE_BUFFER_ID:
            *(unsigned long long *) data[i] = r != NULL ? r->id : 0;
            break;
        case UMPI_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
            *(CUdeviceptr *) data[i] = r != NULL ? r->start : 0;
            break;
        case UMPI_CU_POINTER_ATTRIBUTE_RANGE_SIZE:
            *(size_t *) data[i] = r != NULL ? r->size : 0;
            break;
        case UMPI_CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
            *(unsigned char *) data[i] = r != NULL && (r->kind == K_DEVICE || r->kind == K_IMPORT);
            break;
        case UMPI_CU_POINTER_ATTRIBUTE_MAPPED:
            *(unsigned char *) data[i] = r != NULL;
            break;
        case UMPI_CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
            *(CUmemoryPool *) data[i] = r != NULL && r->kind == K_POOL ? (CUmemoryPool) (uintptr_t) 0x9001 : NULL;
            break;
        default:
            return FAKE_ERR_INVALID_VALUE;
        }
    }
    return 0;
}

/* ---- IPC -------------------------------------------------------------------------------------- */

struct handle {
    uint32_t magic;
    int32_t pid;
    int32_t fd;
    int32_t pad;
    uint64_t id;
    uint64_t size;
};
#define HANDLE_MAGIC 0xfa4ecda0u
_Static_assert(sizeof(struct handle) <= sizeof(CUipcMemHandle), "handle fits");

EXPORT CUresult cuIpcGetMemHandle(CUipcMemHandle *h, CUdeviceptr p)
{
    if (!fk_need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    if (ipc_mode == 1)
        return FAKE_ERR_NOT_SUPPORTED;
    pthread_mutex_lock(&fk.lock);
    const struct range *r = fk_lookup(p);
    CUresult rc = 0;
    if (r == NULL || r->start != p || r->kind != K_DEVICE) {
        rc = FAKE_ERR_INVALID_VALUE; /* not the base of a cuMemAlloc allocation */
    } else {
        struct handle hd = { HANDLE_MAGIC, (int32_t) getpid(), r->fd, 0, r->id, r->size };
        memset(h, 0, sizeof(*h));
        memcpy(h, &hd, sizeof(hd));
    }
    pthread_mutex_unlock(&fk.lock);
    return rc;
}

EXPORT CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *dptr, CUipcMemHandle h, unsigned int flags)
{
    struct handle hd;
    char path[64], link[128], want[64];
    (void) flags;
    if (!fk_need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    if (ipc_mode == 2)
        return FAKE_ERR_NOT_SUPPORTED;
    memcpy(&hd, &h, sizeof(hd));
    if (hd.magic != HANDLE_MAGIC || hd.pid == (int32_t) getpid())
        return FAKE_ERR_INVALID_HANDLE; /* not a handle, or this process's own memory */
    pthread_mutex_lock(&fk.lock);
    for (size_t i = 0; i < nranges; i++) {
        if (ranges[i].kind == K_IMPORT && ranges[i].owner == hd.pid && ranges[i].owner_id == hd.id) {
            pthread_mutex_unlock(&fk.lock);
            return FAKE_ERR_ALREADY_MAPPED;
        }
    }
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int) hd.pid, (int) hd.fd);
    snprintf(want, sizeof(want), "/memfd:fakecuda-%llu ", (unsigned long long) hd.id);
    ssize_t len = readlink(path, link, sizeof(link) - 1);
    link[len > 0 ? len : 0] = '\0';
    if (len <= 0 || strncmp(link, want, strlen(want)) != 0) {
        pthread_mutex_unlock(&fk.lock);
        return FAKE_ERR_INVALID_HANDLE; /* the allocation was freed (its fd closed or reused) */
    }
    struct range r = { .size = hd.size, .mapped = (hd.size + PAGE - 1) & ~(PAGE - 1), .kind = K_IMPORT,
                       .id = next_id++, .owner = hd.pid, .owner_id = hd.id };
    r.fd = open(path, O_RDWR | O_CLOEXEC);
    CUresult rc = r.fd >= 0 ? map_device(&r) : FAKE_ERR_INVALID_HANDLE;
    if (r.fd >= 0)
        close(r.fd); /* the mappings keep the file */
    r.fd = -1;
    if (rc == 0) {
        fk_lookup(r.start)->fd = -1;
        fk.counts.imports++;
        fk.counts.ipc_opens++;
        *dptr = r.start;
    }
    pthread_mutex_unlock(&fk.lock);
    return rc;
}

EXPORT CUresult cuIpcCloseMemHandle(CUdeviceptr p)
{
    if (!fk_need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    return va_free(p, K_IMPORT, K_IMPORT);
}
