/*
 * libcuda_fake.so: a CUDA driver without a GPU, for testing umpi's device paths on any machine
 * (`make check` builds it; UMPI_CUDA_LIBRARY names it; test/fakecuda/README.md). Test-only.
 *
 * It exports the driver entry points umpi's table needs (src/cuda/umpi_cuda_drv.h), under the
 * versioned names libcuda.so.1 exports, and behaves like the driver where umpi depends on it:
 *
 * - Device memory the CPU cannot touch. One large PROT_NONE reservation (64 GiB of address space,
 *   nothing committed) stands for the GPU's unified address range; every device allocation gets
 *   addresses inside it and a memfd behind it, mapped read-write only at a private alias that the
 *   fake's copies go through. A CPU load or store through a device pointer (in umpi, in UCX, in
 *   a test) is a segmentation fault: every missed device check fails a test.
 * - Pointer attributes: memory type, buffer id (unique per allocation, new after free +
 *   realloc, and addresses are reused first-fit, so a freed range comes back with a new id), range
 *   start and size, managed, legacy-IPC capable, mapped, memory pool.
 * - Pinned host (cuMemHostAlloc, cuMemHostRegister) and managed memory (CPU-accessible) are
 *   reported as such.
 * - Streams and events: copies are queued per stream and run in order, only when something waits
 *   for them: cuStreamSynchronize, cuEventSynchronize, or an event or stream query that has
 *   answered CUDA_ERROR_NOT_READY FAKECUDA_DELAY times (default 2). Code that reads a copy's
 *   destination before its event completed reads stale data. Copies to or from pageable host
 *   memory run at once (the driver stages them synchronously).
 * - A current context is required for allocations, copies, streams, events and IPC
 *   (CUDA_ERROR_INVALID_CONTEXT otherwise), per thread, as with the driver.
 * - CUDA IPC between processes: a handle names (pid, fd of the memfd, buffer id, size); the
 *   importer opens /proc/PID/fd/FD, checks that the file is still that allocation, and maps it at
 *   new device addresses. Opening an allocation this process has open already is
 *   CUDA_ERROR_ALREADY_MAPPED; a handle of freed memory or of this process fails.
 *
 * Environment (of the process that loads it):
 *   FAKECUDA_DELAY=N     queries answering NOT_READY before a queued copy runs (default 2)
 *   FAKECUDA_IPC=ok|noget|noopen   cuIpcGetMemHandle or cuIpcOpenMemHandle fails (default ok)
 *   FAKECUDA_DEVICES=N   devices reported (default 1)
 *   FAKECUDA_VA_GB=N     the device address range reserved, in GiB (default 64; less under valgrind)
 *   FAKECUDA_REPORT=1    print what is still allocated when the process exits
 *
 * fakecuda_counts() (not a driver function) tells tests what is live, to check for leaks.
 */
#include "cuda/umpi_cuda_drv.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

enum {
    FAKE_ERR_INVALID_VALUE = 1,
    FAKE_ERR_OUT_OF_MEMORY = 2,
    FAKE_ERR_NOT_INITIALIZED = 3,
    FAKE_ERR_INVALID_CONTEXT = 201,
    FAKE_ERR_ALREADY_MAPPED = 208,
    FAKE_ERR_NO_BINARY_FOR_GPU = 209,
    FAKE_ERR_INVALID_HANDLE = 400,
    FAKE_ERR_NOT_READY = 600,
    FAKE_ERR_NOT_SUPPORTED = 801,
};

/* ---- state ------------------------------------------------------------------------------------ */

#define PAGE ((size_t) 4096)
static size_t VA_SIZE = (size_t) 64 << 30; /* FAKECUDA_VA_GB */

enum { K_DEVICE, K_POOL, K_IMPORT, K_MANAGED, K_PINNED, K_REGISTERED };

struct range {
    uintptr_t start;
    size_t size;           /* as asked (what RANGE_SIZE reports) */
    size_t mapped;         /* page-rounded */
    int kind;
    unsigned long long id;
    char *alias;           /* device kinds: where the bytes are */
    int fd;                /* device kinds: the memfd (-1 for imports) */
    pid_t owner;           /* imports: the exporting process */
    unsigned long long owner_id;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct range *ranges;      /* sorted by start, disjoint */
static size_t nranges, cap;
static uintptr_t va_base;         /* the reservation */
static unsigned long long next_id = 1;
static int initialized, delay = 2, ndevices = 1, ipc_mode; /* 0 ok, 1 noget, 2 noopen */
static __thread int current_ctx; /* 0: none; d+1: device d's primary context */

struct fakecuda_counts {
    long device_allocs, pinned_allocs, registered, managed_allocs, imports, streams, events;
    long copies, ipc_opens, ipc_closes;
};
static struct fakecuda_counts counts;

EXPORT void fakecuda_counts(struct fakecuda_counts *out);
void fakecuda_counts(struct fakecuda_counts *out)
{
    pthread_mutex_lock(&lock);
    *out = counts;
    pthread_mutex_unlock(&lock);
}

static const char *env(const char *name, const char *def)
{
    const char *v = getenv(name);
    return v != NULL && *v ? v : def;
}

static void report(void)
{
    if (strcmp(env("FAKECUDA_REPORT", "0"), "1") != 0)
        return;
    fprintf(stderr, "fakecuda[%d]: at exit: %ld device, %ld pinned, %ld registered, %ld managed allocations, "
            "%ld IPC mappings, %ld streams, %ld events live\n", (int) getpid(), counts.device_allocs,
            counts.pinned_allocs, counts.registered, counts.managed_allocs, counts.imports, counts.streams,
            counts.events);
}

/* ---- ranges --------------------------------------------------------------------------------- */

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

/* The range holding p (within its reported size), or NULL. */
static struct range *lookup(uintptr_t p)
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

/* First fit in the reservation: freed addresses are handed out again, as the driver does. */
static uintptr_t va_alloc(size_t mapped)
{
    uintptr_t at = va_base;
    for (size_t i = 0; i < nranges; i++) {
        if (!is_device_kind(ranges[i].kind))
            continue;
        if (ranges[i].start >= at + mapped)
            break;
        at = ranges[i].start + ranges[i].mapped;
    }
    return at + mapped <= va_base + VA_SIZE ? at : 0;
}

/* ---- init, devices, contexts, errors ----------------------------------------------------------- */

EXPORT CUresult cuInit(unsigned int flags)
{
    (void) flags;
    pthread_mutex_lock(&lock);
    if (!initialized) {
        VA_SIZE = (size_t) atoi(env("FAKECUDA_VA_GB", "64")) << 30;
        void *p = mmap(NULL, VA_SIZE + ((size_t) 2 << 20), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                       -1, 0);
        if (p == MAP_FAILED) {
            pthread_mutex_unlock(&lock);
            return FAKE_ERR_OUT_OF_MEMORY;
        }
        va_base = ((uintptr_t) p + ((2u << 20) - 1)) & ~(uintptr_t) ((2u << 20) - 1);
        delay = atoi(env("FAKECUDA_DELAY", "2"));
        ndevices = atoi(env("FAKECUDA_DEVICES", "1"));
        const char *ipc = env("FAKECUDA_IPC", "ok");
        ipc_mode = strcmp(ipc, "noget") == 0 ? 1 : strcmp(ipc, "noopen") == 0 ? 2 : 0;
        atexit(report);
        initialized = 1;
    }
    pthread_mutex_unlock(&lock);
    return 0;
}

EXPORT CUresult cuDriverGetVersion(int *v)
{
    *v = 12040;
    return 0;
}

EXPORT CUresult cuDeviceGetCount(int *n)
{
    if (!initialized)
        return FAKE_ERR_NOT_INITIALIZED;
    *n = ndevices;
    return 0;
}

EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    if (!initialized)
        return FAKE_ERR_NOT_INITIALIZED;
    if (ordinal < 0 || ordinal >= ndevices)
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
    if (!initialized)
        return FAKE_ERR_NOT_INITIALIZED;
    if (d < 0 || d >= ndevices)
        return FAKE_ERR_INVALID_VALUE;
    *ctx = (CUcontext) (uintptr_t) (d + 1);
    return 0;
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
    return d >= 0 && d < ndevices ? 0 : FAKE_ERR_INVALID_VALUE;
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *ctx)
{
    *ctx = (CUcontext) (uintptr_t) current_ctx;
    return 0;
}

EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
    uintptr_t c = (uintptr_t) ctx;
    if (c > (uintptr_t) ndevices)
        return FAKE_ERR_INVALID_CONTEXT;
    current_ctx = (int) c;
    return 0;
}

static int need_ctx(void)
{
    return initialized && current_ctx != 0;
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
    case FAKE_ERR_NO_BINARY_FOR_GPU: *s = "no kernel image for this device (the fake GPU runs no GPU code)"; break;
    case FAKE_ERR_OUT_OF_MEMORY: *s = "out of memory"; break;
    case FAKE_ERR_NOT_INITIALIZED: *s = "initialization error"; break;
    case FAKE_ERR_INVALID_CONTEXT: *s = "invalid device context (no current context in this thread)"; break;
    case FAKE_ERR_ALREADY_MAPPED: *s = "resource already mapped"; break;
    case FAKE_ERR_INVALID_HANDLE: *s = "invalid resource handle"; break;
    case FAKE_ERR_NOT_READY: *s = "device not ready"; break;
    case FAKE_ERR_NOT_SUPPORTED: *s = "operation not supported (FAKECUDA_IPC)"; break;
    default: *s = NULL; return FAKE_ERR_INVALID_VALUE;
    }
    return 0;
}

/* ---- allocations ------------------------------------------------------------------------------ */

static CUresult dev_alloc(CUdeviceptr *dptr, size_t bytes, int kind)
{
    if (!need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    if (bytes == 0)
        return FAKE_ERR_INVALID_VALUE;
    size_t mapped = (bytes + PAGE - 1) & ~(PAGE - 1);
    pthread_mutex_lock(&lock);
    struct range r = { .size = bytes, .mapped = mapped, .kind = kind, .id = next_id++, .fd = -1 };
    char name[64];
    snprintf(name, sizeof(name), "fakecuda-%llu", r.id);
    r.fd = memfd_create(name, MFD_CLOEXEC);
    if (r.fd < 0 || ftruncate(r.fd, (off_t) mapped) != 0)
        goto fail;
    r.alias = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd, 0);
    if (r.alias == MAP_FAILED) {
        r.alias = NULL;
        goto fail;
    }
    r.start = va_alloc(mapped);
    if (r.start == 0 || insert(&r) != 0)
        goto fail;
    counts.device_allocs++;
    pthread_mutex_unlock(&lock);
    *dptr = r.start;
    return 0;
fail:
    if (r.alias != NULL)
        munmap(r.alias, mapped);
    if (r.fd >= 0)
        close(r.fd);
    pthread_mutex_unlock(&lock);
    return FAKE_ERR_OUT_OF_MEMORY;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes)
{
    return dev_alloc(dptr, bytes, K_DEVICE);
}

EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytes, CUstream s)
{
    (void) s;
    return dev_alloc(dptr, bytes, K_POOL);
}

static CUresult dev_free(CUdeviceptr p, int import)
{
    if (!need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    pthread_mutex_lock(&lock);
    struct range *r = lookup(p);
    if (r == NULL || r->start != p || !is_device_kind(r->kind) || (r->kind == K_IMPORT) != import) {
        pthread_mutex_unlock(&lock);
        return FAKE_ERR_INVALID_VALUE;
    }
    munmap(r->alias, r->mapped);
    if (r->fd >= 0)
        close(r->fd);
    if (import) {
        counts.imports--;
        counts.ipc_closes++;
    } else {
        counts.device_allocs--;
    }
    erase(r);
    pthread_mutex_unlock(&lock);
    return 0;
}

static CUresult managed_free(CUdeviceptr p);

EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
    if (p < va_base || p >= va_base + VA_SIZE)
        return managed_free(p); /* cuMemFree frees managed memory too */
    return dev_free(p, 0);
}

EXPORT CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s)
{
    (void) s;
    return dev_free(p, 0);
}

static CUresult host_range(void *p, size_t bytes, int kind)
{
    pthread_mutex_lock(&lock);
    struct range r = { .start = (uintptr_t) p, .size = bytes, .kind = kind, .id = next_id++, .fd = -1 };
    size_t i = find(r.start);
    if (i < nranges && ranges[i].start < r.start + bytes) {
        pthread_mutex_unlock(&lock);
        return FAKE_ERR_INVALID_VALUE; /* overlaps a known range: registered twice */
    }
    int rc = insert(&r);
    if (rc == 0) {
        if (kind == K_PINNED)
            counts.pinned_allocs++;
        else if (kind == K_REGISTERED)
            counts.registered++;
        else
            counts.managed_allocs++;
    }
    pthread_mutex_unlock(&lock);
    return rc == 0 ? 0 : FAKE_ERR_OUT_OF_MEMORY;
}

static CUresult host_unrange(void *p, int kind)
{
    pthread_mutex_lock(&lock);
    struct range *r = lookup((uintptr_t) p);
    if (r == NULL || r->start != (uintptr_t) p || r->kind != kind) {
        pthread_mutex_unlock(&lock);
        return FAKE_ERR_INVALID_VALUE;
    }
    if (kind == K_PINNED)
        counts.pinned_allocs--;
    else if (kind == K_REGISTERED)
        counts.registered--;
    else
        counts.managed_allocs--;
    erase(r);
    pthread_mutex_unlock(&lock);
    return 0;
}

EXPORT CUresult cuMemHostAlloc(void **p, size_t bytes, unsigned int flags)
{
    (void) flags;
    if (!need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    void *m = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return FAKE_ERR_OUT_OF_MEMORY;
    CUresult r = host_range(m, bytes ? bytes : 1, K_PINNED);
    if (r != 0)
        munmap(m, bytes ? bytes : 1);
    else
        *p = m;
    return r;
}

EXPORT CUresult cuMemFreeHost(void *p)
{
    pthread_mutex_lock(&lock);
    struct range *r = lookup((uintptr_t) p);
    size_t n = r != NULL ? r->size : 0;
    pthread_mutex_unlock(&lock);
    CUresult rc = host_unrange(p, K_PINNED);
    if (rc == 0)
        munmap(p, n);
    return rc;
}

EXPORT CUresult cuMemHostRegister_v2(void *p, size_t bytes, unsigned int flags)
{
    (void) flags;
    if (!need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    return host_range(p, bytes, K_REGISTERED);
}

EXPORT CUresult cuMemHostUnregister(void *p)
{
    return host_unrange(p, K_REGISTERED);
}

EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytes, unsigned flags)
{
    (void) flags;
    if (!need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    void *m = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return FAKE_ERR_OUT_OF_MEMORY;
    CUresult r = host_range(m, bytes ? bytes : 1, K_MANAGED);
    if (r != 0)
        munmap(m, bytes ? bytes : 1);
    else
        *dptr = (CUdeviceptr) (uintptr_t) m;
    return r;
}

/* cuMemFree of managed memory goes through cuMemFree_v2 in the driver; here too. */
static CUresult managed_free(CUdeviceptr p)
{
    pthread_mutex_lock(&lock);
    struct range *r = lookup((uintptr_t) p);
    size_t n = r != NULL && r->kind == K_MANAGED ? r->size : 0;
    pthread_mutex_unlock(&lock);
    if (n == 0)
        return FAKE_ERR_INVALID_VALUE;
    CUresult rc = host_unrange((void *) (uintptr_t) p, K_MANAGED);
    if (rc == 0)
        munmap((void *) (uintptr_t) p, n);
    return rc;
}

/* ---- pointer attributes ----------------------------------------------------------------------- */

EXPORT CUresult cuPointerGetAttributes(unsigned int n, umpi_cu_pointer_attribute_t *attrs, void **data,
                                       CUdeviceptr ptr)
{
    if (!initialized)
        return FAKE_ERR_NOT_INITIALIZED;
    pthread_mutex_lock(&lock);
    const struct range *r = lookup((uintptr_t) ptr);
    struct range copy;
    if (r != NULL)
        copy = *r;
    pthread_mutex_unlock(&lock);
    r = r != NULL ? &copy : NULL;
    for (unsigned i = 0; i < n; i++) {
        switch ((int) attrs[i]) {
        case UMPI_CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
            *(unsigned *) data[i] = r == NULL ? 0
                                  : r->kind == K_PINNED || r->kind == K_REGISTERED ? UMPI_CU_MEMORYTYPE_HOST
                                                                                    : UMPI_CU_MEMORYTYPE_DEVICE;
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

/* ---- copies, streams, events ------------------------------------------------------------------ */

/* Where the CPU can reach n bytes at p: the alias of device memory, p itself for host memory;
 * NULL when p..p+n is not wholly inside one device allocation although it starts in the device
 * range. *pageable says whether p is ordinary host memory. Under the lock. */
static char *resolve(uintptr_t p, size_t n, int *pageable)
{
    *pageable = 0;
    const struct range *r = lookup(p);
    if (r != NULL && is_device_kind(r->kind))
        return n <= r->size - (p - r->start) ? r->alias + (p - r->start) : NULL;
    if (p >= va_base && p < va_base + VA_SIZE)
        return NULL; /* device addresses that are no allocation (freed) */
    if (r != NULL && n > r->size - (p - r->start))
        return NULL;
    *pageable = r == NULL;
    return (char *) p;
}

struct op {
    char *dst;
    const char *src;
    size_t n;
};

#define NSTREAMS 64
static struct stream {
    struct op *q;
    size_t head, tail, cap; /* queued [head, tail) */
    unsigned long long done, queued;
    int live, polls;
} streams[NSTREAMS]; /* [0] is the legacy default stream (CUstream NULL) */

struct CUevent_st {
    int stream;              /* -1: never recorded */
    unsigned long long after;
    int polls;
};

static struct stream *stream_of(CUstream s)
{
    uintptr_t i = (uintptr_t) s;
    if (i >= NSTREAMS || (i != 0 && !streams[i].live))
        return NULL;
    return &streams[i];
}

/* Runs the stream's queued copies until `until` have completed (all when until is ~0). */
static void run(struct stream *st, unsigned long long until)
{
    while (st->head < st->tail && st->done < until) {
        struct op *o = &st->q[st->head++ % st->cap];
        memmove(o->dst, o->src, o->n);
        st->done++;
    }
    if (st->head == st->tail)
        st->head = st->tail = 0;
}

static CUresult enqueue(struct stream *st, char *dst, const char *src, size_t n)
{
    if (st->tail - st->head == st->cap) {
        size_t c = st->cap ? 2 * st->cap : 64;
        struct op *q = malloc(c * sizeof(*q));
        if (q == NULL)
            return FAKE_ERR_OUT_OF_MEMORY;
        for (size_t i = st->head; i < st->tail; i++)
            q[i - st->head] = st->q[i % st->cap];
        st->tail -= st->head;
        st->head = 0;
        free(st->q);
        st->q = q;
        st->cap = c;
    }
    st->q[st->tail++ % st->cap] = (struct op){ dst, src, n };
    st->queued++;
    return 0;
}

static CUresult copy(uintptr_t dst, uintptr_t src, size_t n, CUstream s)
{
    if (!need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    if (n == 0)
        return 0;
    pthread_mutex_lock(&lock);
    struct stream *st = stream_of(s);
    int dpage, spage;
    char *d = resolve(dst, n, &dpage);
    const char *sp = resolve(src, n, &spage);
    CUresult rc = 0;
    if (st == NULL)
        rc = FAKE_ERR_INVALID_HANDLE;
    else if (d == NULL || sp == NULL)
        rc = FAKE_ERR_INVALID_VALUE;
    else if (dpage || spage) {
        /* pageable host memory: the driver copies synchronously, after the stream's earlier work */
        run(st, ~0ULL);
        memmove(d, sp, n);
        st->queued++;
        st->done++;
    } else {
        rc = enqueue(st, d, sp, n);
    }
    if (rc == 0)
        counts.copies++;
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    return copy(dst, src, n, s);
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
    return copy(dst, (uintptr_t) src, n, s);
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
    return copy((uintptr_t) dst, src, n, s);
}

EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
    return copy(dst, src, n, s);
}

/* Synchronous copies (tests use them; the driver's are on the legacy stream). */
static CUresult copy_sync(uintptr_t dst, uintptr_t src, size_t n)
{
    CUresult rc = copy(dst, src, n, NULL);
    if (rc == 0) {
        pthread_mutex_lock(&lock);
        run(&streams[0], ~0ULL);
        pthread_mutex_unlock(&lock);
    }
    return rc;
}

EXPORT CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return copy_sync(dst, src, n);
}

EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
    return copy_sync(dst, (uintptr_t) src, n);
}

EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
    return copy_sync((uintptr_t) dst, src, n);
}

EXPORT CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char v, size_t n)
{
    if (!need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    pthread_mutex_lock(&lock);
    int page;
    char *d = resolve(dst, n, &page);
    run(&streams[0], ~0ULL);
    if (d != NULL)
        memset(d, v, n);
    pthread_mutex_unlock(&lock);
    return d != NULL ? 0 : FAKE_ERR_INVALID_VALUE;
}

EXPORT CUresult cuStreamCreate(CUstream *s, unsigned int flags)
{
    (void) flags;
    if (!need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    pthread_mutex_lock(&lock);
    for (int i = 1; i < NSTREAMS; i++) {
        if (!streams[i].live) {
            free(streams[i].q);
            memset(&streams[i], 0, sizeof(streams[i]));
            streams[i].live = 1;
            counts.streams++;
            pthread_mutex_unlock(&lock);
            *s = (CUstream) (uintptr_t) i;
            return 0;
        }
    }
    pthread_mutex_unlock(&lock);
    return FAKE_ERR_OUT_OF_MEMORY;
}

EXPORT CUresult cuStreamDestroy_v2(CUstream s)
{
    pthread_mutex_lock(&lock);
    struct stream *st = stream_of(s);
    CUresult rc = st == NULL || s == NULL ? FAKE_ERR_INVALID_HANDLE : 0;
    if (rc == 0) {
        run(st, ~0ULL); /* the driver completes the work queued before the destroy */
        st->live = 0;
        counts.streams--;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT CUresult cuStreamSynchronize(CUstream s)
{
    if (!need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    pthread_mutex_lock(&lock);
    struct stream *st = stream_of(s);
    if (st != NULL)
        run(st, ~0ULL);
    pthread_mutex_unlock(&lock);
    return st != NULL ? 0 : FAKE_ERR_INVALID_HANDLE;
}

EXPORT CUresult cuStreamQuery(CUstream s)
{
    pthread_mutex_lock(&lock);
    struct stream *st = stream_of(s);
    CUresult rc = st == NULL ? FAKE_ERR_INVALID_HANDLE : 0;
    if (st != NULL && st->head < st->tail) {
        if (++st->polls <= delay) {
            rc = FAKE_ERR_NOT_READY;
        } else {
            st->polls = 0;
            run(st, ~0ULL);
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT CUresult cuEventCreate(CUevent *e, unsigned int flags)
{
    (void) flags;
    if (!need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    struct CUevent_st *ev = calloc(1, sizeof(*ev));
    if (ev == NULL)
        return FAKE_ERR_OUT_OF_MEMORY;
    ev->stream = -1;
    pthread_mutex_lock(&lock);
    counts.events++;
    pthread_mutex_unlock(&lock);
    *e = ev;
    return 0;
}

EXPORT CUresult cuEventDestroy_v2(CUevent e)
{
    if (e == NULL)
        return FAKE_ERR_INVALID_HANDLE;
    pthread_mutex_lock(&lock);
    counts.events--;
    pthread_mutex_unlock(&lock);
    free(e);
    return 0;
}

EXPORT CUresult cuEventRecord(CUevent e, CUstream s)
{
    if (!need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    pthread_mutex_lock(&lock);
    struct stream *st = stream_of(s);
    if (st != NULL) {
        e->stream = (int) (uintptr_t) s;
        e->after = st->queued;
        e->polls = 0;
    }
    pthread_mutex_unlock(&lock);
    return st != NULL ? 0 : FAKE_ERR_INVALID_HANDLE;
}

EXPORT CUresult cuEventQuery(CUevent e)
{
    CUresult rc = 0;
    pthread_mutex_lock(&lock);
    if (e->stream >= 0) {
        struct stream *st = &streams[e->stream];
        if (st->done < e->after) {
            if (++e->polls <= delay) {
                rc = FAKE_ERR_NOT_READY;
            } else {
                run(st, e->after);
            }
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT CUresult cuEventSynchronize(CUevent e)
{
    pthread_mutex_lock(&lock);
    if (e->stream >= 0)
        run(&streams[e->stream], e->after);
    pthread_mutex_unlock(&lock);
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
    if (!need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    if (ipc_mode == 1)
        return FAKE_ERR_NOT_SUPPORTED;
    pthread_mutex_lock(&lock);
    const struct range *r = lookup(p);
    CUresult rc = 0;
    if (r == NULL || r->start != p || r->kind != K_DEVICE) {
        rc = FAKE_ERR_INVALID_VALUE; /* not the base of a cuMemAlloc allocation */
    } else {
        struct handle hd = { HANDLE_MAGIC, (int32_t) getpid(), r->fd, 0, r->id, r->size };
        memset(h, 0, sizeof(*h));
        memcpy(h, &hd, sizeof(hd));
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

EXPORT CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *dptr, CUipcMemHandle h, unsigned int flags)
{
    struct handle hd;
    char path[64], link[128], want[64];
    (void) flags;
    if (!need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    if (ipc_mode == 2)
        return FAKE_ERR_NOT_SUPPORTED;
    memcpy(&hd, &h, sizeof(hd));
    if (hd.magic != HANDLE_MAGIC || hd.pid == (int32_t) getpid())
        return FAKE_ERR_INVALID_HANDLE; /* not a handle, or this process's own memory */
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nranges; i++) {
        if (ranges[i].kind == K_IMPORT && ranges[i].owner == hd.pid && ranges[i].owner_id == hd.id) {
            pthread_mutex_unlock(&lock);
            return FAKE_ERR_ALREADY_MAPPED;
        }
    }
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int) hd.pid, (int) hd.fd);
    snprintf(want, sizeof(want), "/memfd:fakecuda-%llu ", (unsigned long long) hd.id);
    ssize_t len = readlink(path, link, sizeof(link) - 1);
    link[len > 0 ? len : 0] = '\0';
    if (len <= 0 || strncmp(link, want, strlen(want)) != 0) {
        pthread_mutex_unlock(&lock);
        return FAKE_ERR_INVALID_HANDLE; /* the allocation was freed (its fd closed or reused) */
    }
    int fd = open(path, O_RDWR | O_CLOEXEC);
    size_t mapped = (hd.size + PAGE - 1) & ~(PAGE - 1);
    struct range r = { .size = hd.size, .mapped = mapped, .kind = K_IMPORT, .id = next_id++, .fd = -1,
                       .owner = hd.pid, .owner_id = hd.id };
    r.alias = fd >= 0 ? mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    if (fd >= 0)
        close(fd);
    if (r.alias == MAP_FAILED) {
        pthread_mutex_unlock(&lock);
        return FAKE_ERR_INVALID_HANDLE;
    }
    r.start = va_alloc(mapped);
    if (r.start == 0 || insert(&r) != 0) {
        munmap(r.alias, mapped);
        pthread_mutex_unlock(&lock);
        return FAKE_ERR_OUT_OF_MEMORY;
    }
    counts.imports++;
    counts.ipc_opens++;
    pthread_mutex_unlock(&lock);
    *dptr = r.start;
    return 0;
}

EXPORT CUresult cuIpcCloseMemHandle(CUdeviceptr p)
{
    return dev_free(p, 1);
}

/* ---- modules and kernels ---------------------------------------------------------------------- */

/* A fake GPU runs no GPU code: every image is refused as a real driver refuses one built for other
 * architectures, so umpi takes its host paths (test/unit/test_cuda_kern runs the kernels' bodies on
 * the CPU instead). The attributes describe a small Hopper-class device. */
EXPORT CUresult cuModuleLoadData(void **mod, const void *image)
{
    (void) image;
    if (!need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    *mod = NULL;
    return FAKE_ERR_NO_BINARY_FOR_GPU;
}

EXPORT CUresult cuModuleUnload(void *mod)
{
    (void) mod;
    return FAKE_ERR_INVALID_HANDLE;   /* nothing was ever loaded */
}

EXPORT CUresult cuModuleGetFunction(void **fn, void *mod, const char *name)
{
    (void) mod;
    (void) name;
    *fn = NULL;
    return FAKE_ERR_INVALID_HANDLE;
}

EXPORT CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned shmem, CUstream s, void **params, void **extra)
{
    (void) f, (void) gx, (void) gy, (void) gz, (void) bx, (void) by, (void) bz;
    (void) shmem, (void) s, (void) params, (void) extra;
    return FAKE_ERR_INVALID_HANDLE;
}

EXPORT CUresult cuDeviceGetAttribute(int *value, int attrib, CUdevice d)
{
    if (!initialized)
        return FAKE_ERR_NOT_INITIALIZED;
    if (d < 0 || d >= ndevices)
        return FAKE_ERR_INVALID_VALUE;
    switch (attrib) {
    case 16: *value = 4; return 0;    /* multiprocessors */
    case 75: *value = 9; return 0;    /* compute capability major */
    case 76: *value = 0; return 0;    /* minor */
    default: return FAKE_ERR_INVALID_VALUE;
    }
}

EXPORT CUresult cuCtxGetDevice(CUdevice *d)
{
    if (!need_ctx())
        return FAKE_ERR_INVALID_CONTEXT;
    *d = current_ctx - 1;
    return 0;
}
