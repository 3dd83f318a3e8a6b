/*
 * A fake CUDA driver for the unit tests of the IPC caches and the staged pipeline: made-up device
 * allocations for cuPointerGetAttributes, IPC handles that name an allocation and refuse to be
 * opened twice (CUDA_ERROR_ALREADY_MAPPED, as the driver does), pinned memory from malloc, and
 * streams whose copies run only when the test says so (fake_stream_step), in order per stream.
 * "Device" memory here is ordinary host memory, so staged copies really move bytes.
 */
#ifndef FAKE_CUDA_H
#define FAKE_CUDA_H

#include "cuda/umpi_cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_ALREADY_MAPPED 208
#define FAKE_FAIL_RC 999

struct fake_alloc {
    uintptr_t start;
    size_t size;
    unsigned memtype;
    int managed, legacy_ipc, pool;
    unsigned long long id;
    int live;
};

#define FAKE_MAX 32
static struct fake_alloc fake_allocs[FAKE_MAX];
static int fake_queries;

static CUresult fake_cuInit(unsigned flags) { (void) flags; return 0; }
static CUresult fake_cuDriverGetVersion(int *v) { *v = 12040; return 0; }
static CUresult fake_cuDeviceGetCount(int *n) { *n = 1; return 0; }
static CUresult fake_cuDeviceGet(CUdevice *d, int i) { *d = i; return 0; }
static CUresult fake_cuDeviceGetName(char *name, int len, CUdevice d)
{
    snprintf(name, (size_t) len, "Fake GPU %d", d);
    return 0;
}
static CUresult fake_cuGetErrorString(CUresult r, const char **s) { (void) r; *s = "fake error text"; return 0; }
static CUresult fake_cuGetErrorName(CUresult r, const char **s) { (void) r; *s = "CUDA_ERROR_FAKE"; return 0; }

static CUresult fake_cuPointerGetAttributes(unsigned n, umpi_cu_pointer_attribute_t *attrs, void **data,
                                            CUdeviceptr ptr)
{
    fake_queries++;
    const struct fake_alloc *a = NULL;
    for (int i = 0; i < FAKE_MAX; i++)
        if (fake_allocs[i].live && ptr >= fake_allocs[i].start && ptr < fake_allocs[i].start + fake_allocs[i].size)
            a = &fake_allocs[i];
    for (unsigned i = 0; i < n; i++) {
        switch ((int) attrs[i]) {
        case UMPI_CU_POINTER_ATTRIBUTE_MEMORY_TYPE: *(unsigned *) data[i] = a ? a->memtype : 0; break;
        case UMPI_CU_POINTER_ATTRIBUTE_IS_MANAGED: *(unsigned char *) data[i] = a ? (unsigned char) a->managed : 0; break;
        case UMPI_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *) data[i] = a ? 0 : -2; break;
        case UMPI_CU_POINTER_ATTRIBUTE_BUFFER_ID: *(unsigned long long *) data[i] = a ? a->id : 0; break;
        case UMPI_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *(CUdeviceptr *) data[i] = a ? a->start : 0; break;
        case UMPI_CU_POINTER_ATTRIBUTE_RANGE_SIZE: *(size_t *) data[i] = a ? a->size : 0; break;
        case UMPI_CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
            *(unsigned char *) data[i] = a ? (unsigned char) a->legacy_ipc : 0; break;
        case UMPI_CU_POINTER_ATTRIBUTE_MAPPED: *(unsigned char *) data[i] = a != NULL; break;
        case UMPI_CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
            *(CUmemoryPool *) data[i] = a && a->pool ? (CUmemoryPool) 0x1234 : NULL; break;
        default: return UMPI_CUDA_ERROR_INVALID_VALUE;
        }
    }
    return 0;
}

static inline struct fake_alloc *fake_add(uintptr_t start, size_t size, unsigned long long id)
{
    for (int i = 0; i < FAKE_MAX; i++) {
        if (!fake_allocs[i].live) {
            fake_allocs[i] = (struct fake_alloc){ start, size, UMPI_CU_MEMORYTYPE_DEVICE, 0, 1, 0, id, 1 };
            return &fake_allocs[i];
        }
    }
    abort();
}

/* ---- IPC: a handle is (base, id) of an allocation; the fake keeps what this "process" opened ---- */

struct fake_handle {
    uint64_t base;
    unsigned long long id;
    char pad[48];
};

#define FAKE_MAPS 64
static struct { struct fake_handle h; CUdeviceptr at; int open; } fake_maps[FAKE_MAPS];
static int fake_get_handle_calls, fake_get_handle_fail, fake_opens, fake_closes, fake_open_fail;
static int fake_already_mapped, fake_bad_closes;
static CUdeviceptr fake_next_map = 0x500000000000ULL;

static CUresult fake_cuIpcGetMemHandle(CUipcMemHandle *h, CUdeviceptr p)
{
    fake_get_handle_calls++;
    if (fake_get_handle_fail)
        return FAKE_FAIL_RC;
    for (int i = 0; i < FAKE_MAX; i++) {
        if (fake_allocs[i].live && p >= fake_allocs[i].start && p < fake_allocs[i].start + fake_allocs[i].size) {
            struct fake_handle fh = { fake_allocs[i].start, fake_allocs[i].id, { 0 } };
            memset(h, 0, sizeof(*h));
            memcpy(h, &fh, sizeof(fh));
            return 0;
        }
    }
    return UMPI_CUDA_ERROR_INVALID_VALUE;
}

static CUresult fake_cuIpcOpenMemHandle(CUdeviceptr *p, CUipcMemHandle h, unsigned flags)
{
    struct fake_handle fh;
    (void) flags;
    memcpy(&fh, &h, sizeof(fh));
    if (fake_open_fail)
        return FAKE_FAIL_RC;
    for (int i = 0; i < FAKE_MAPS; i++) {
        if (fake_maps[i].open && memcmp(&fake_maps[i].h, &fh, sizeof(fh)) == 0) {
            fake_already_mapped++;
            return FAKE_ALREADY_MAPPED;
        }
    }
    for (int i = 0; i < FAKE_MAPS; i++) {
        if (!fake_maps[i].open) {
            fake_maps[i].h = fh;
            fake_maps[i].at = fake_next_map;
            fake_maps[i].open = 1;
            fake_next_map += 1ULL << 32;
            *p = fake_maps[i].at;
            fake_opens++;
            return 0;
        }
    }
    abort();
}

static CUresult fake_cuIpcCloseMemHandle(CUdeviceptr p)
{
    for (int i = 0; i < FAKE_MAPS; i++) {
        if (fake_maps[i].open && fake_maps[i].at == p) {
            fake_maps[i].open = 0;
            fake_closes++;
            return 0;
        }
    }
    fake_bad_closes++;
    return UMPI_CUDA_ERROR_INVALID_VALUE;
}

static inline int fake_open_now(void)
{
    int n = 0;
    for (int i = 0; i < FAKE_MAPS; i++)
        n += fake_maps[i].open;
    return n;
}

/* ---- pinned memory, streams, events, copies ----------------------------------------------------- */

#define FAKE_STREAMS 8
#define FAKE_OPS 256

struct fake_op {
    void *dst;
    const void *src;
    size_t n;
    CUevent event; /* a record, not a copy, when set */
};

static struct fake_stream {
    struct fake_op op[FAKE_OPS];
    unsigned head, tail;  /* queued [head, tail) */
    unsigned long done;   /* ops completed ever */
    int live;
} fake_streams[FAKE_STREAMS];

struct CUevent_st {
    int stream;          /* -1: never recorded */
    unsigned long after; /* complete once the stream has done this many ops */
    int fail;            /* cuEventQuery reports an error */
};

static int fake_host_allocs, fake_host_frees, fake_host_alloc_fail, fake_events, fake_events_destroyed;
static int fake_copy_fail_at = -1; /* the n-th copy fails (0-based), -1 never */
static int fake_copies, fake_query_fail_next;
static int fake_streams_created, fake_streams_destroyed;

/* Staging-buffer overlap checks: each pinned buffer's operations in flight. */
#define FAKE_PINNED 64
static struct { void *p; size_t n; int busy; } fake_pinned[FAKE_PINNED];
static int fake_violations; /* an operation started on a staging buffer another one still uses */

static int fake_pinned_index(const void *p)
{
    for (int i = 0; i < FAKE_PINNED; i++)
        if (fake_pinned[i].p != NULL && (const char *) p >= (const char *) fake_pinned[i].p &&
            (const char *) p < (const char *) fake_pinned[i].p + fake_pinned[i].n)
            return i;
    return -1;
}

/* Marks a staging buffer used by one more operation (counts a violation if it already was). */
static void fake_pinned_acquire(const void *p)
{
    int i = fake_pinned_index(p);
    if (i < 0)
        return;
    if (fake_pinned[i].busy)
        fake_violations++;
    fake_pinned[i].busy++;
}

static void fake_pinned_release(const void *p)
{
    int i = fake_pinned_index(p);
    if (i >= 0)
        fake_pinned[i].busy--;
}

static CUresult fake_cuMemHostAlloc(void **p, size_t n, unsigned flags)
{
    (void) flags;
    if (fake_host_alloc_fail)
        return FAKE_FAIL_RC;
    *p = malloc(n);
    for (int i = 0; i < FAKE_PINNED; i++) {
        if (fake_pinned[i].p == NULL) {
            fake_pinned[i].p = *p;
            fake_pinned[i].n = n;
            fake_pinned[i].busy = 0;
            break;
        }
    }
    fake_host_allocs++;
    return 0;
}

static CUresult fake_cuMemFreeHost(void *p)
{
    int i = fake_pinned_index(p);
    if (i >= 0)
        fake_pinned[i].p = NULL;
    free(p);
    fake_host_frees++;
    return 0;
}

static CUresult fake_cuStreamCreate(CUstream *s, unsigned flags)
{
    (void) flags;
    for (int i = 0; i < FAKE_STREAMS; i++) {
        if (!fake_streams[i].live) {
            memset(&fake_streams[i], 0, sizeof(fake_streams[i]));
            fake_streams[i].live = 1;
            *s = (CUstream) (uintptr_t) (i + 1);
            fake_streams_created++;
            return 0;
        }
    }
    return FAKE_FAIL_RC;
}

static struct fake_stream *fake_stream_of(CUstream s)
{
    uintptr_t i = (uintptr_t) s;
    if (i < 1 || i > FAKE_STREAMS || !fake_streams[i - 1].live)
        abort();
    return &fake_streams[i - 1];
}

static CUresult fake_cuStreamDestroy(CUstream s)
{
    fake_stream_of(s)->live = 0;
    fake_streams_destroyed++;
    return 0;
}

static CUresult fake_cuStreamSynchronize(CUstream s);

static void fake_enqueue(CUstream s, struct fake_op op)
{
    struct fake_stream *st = fake_stream_of(s);
    if (st->tail - st->head >= FAKE_OPS)
        abort();
    st->op[st->tail++ % FAKE_OPS] = op;
}

static CUresult fake_copy(void *dst, const void *src, size_t n, CUstream s, const void *pinned)
{
    if (fake_copies++ == fake_copy_fail_at)
        return FAKE_FAIL_RC;
    fake_pinned_acquire(pinned);
    fake_enqueue(s, (struct fake_op){ dst, src, n, NULL });
    return 0;
}

static CUresult fake_cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
    return fake_copy(dst, (const void *) (uintptr_t) src, n, s, dst);
}

static CUresult fake_cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
    return fake_copy((void *) (uintptr_t) dst, src, n, s, src);
}

static CUresult fake_cuEventCreate(CUevent *e, unsigned flags)
{
    (void) flags;
    *e = calloc(1, sizeof(**e));
    (*e)->stream = -1;
    fake_events++;
    return 0;
}

static CUresult fake_cuEventDestroy(CUevent e)
{
    free(e);
    fake_events_destroyed++;
    return 0;
}

static CUresult fake_cuEventRecord(CUevent e, CUstream s)
{
    struct fake_stream *st = fake_stream_of(s);
    e->stream = (int) ((uintptr_t) s - 1);
    e->after = st->done + (st->tail - st->head);
    e->fail = 0;
    return 0;
}

static CUresult fake_cuEventQuery(CUevent e)
{
    if (fake_query_fail_next) {
        fake_query_fail_next = 0;
        return FAKE_FAIL_RC;
    }
    if (e->stream < 0 || fake_streams[e->stream].done >= e->after)
        return 0;
    return UMPI_CUDA_ERROR_NOT_READY;
}

/* Runs the oldest queued copy of stream i; returns 0 if it had none. */
static inline int fake_stream_step(int i)
{
    struct fake_stream *st = &fake_streams[i];
    if (!st->live || st->head == st->tail)
        return 0;
    struct fake_op *op = &st->op[st->head++ % FAKE_OPS];
    memcpy(op->dst, op->src, op->n);
    fake_pinned_release(fake_pinned_index(op->dst) >= 0 ? op->dst : op->src);
    st->done++;
    return 1;
}

static CUresult fake_cuStreamSynchronize(CUstream s)
{
    int i = (int) ((uintptr_t) s - 1);
    while (fake_stream_step(i))
        ;
    return 0;
}

static inline int fake_copies_pending(void)
{
    int n = 0;
    for (int i = 0; i < FAKE_STREAMS; i++)
        n += fake_streams[i].live ? (int) (fake_streams[i].tail - fake_streams[i].head) : 0;
    return n;
}

static struct umpi_cuda_driver fake_driver(void)
{
    struct umpi_cuda_driver d;
    memset(&d, 0, sizeof(d));
    d.cuInit = fake_cuInit;
    d.cuDriverGetVersion = fake_cuDriverGetVersion;
    d.cuDeviceGetCount = fake_cuDeviceGetCount;
    d.cuDeviceGet = fake_cuDeviceGet;
    d.cuDeviceGetName = fake_cuDeviceGetName;
    d.cuGetErrorString = fake_cuGetErrorString;
    d.cuGetErrorName = fake_cuGetErrorName;
    d.cuPointerGetAttributes = fake_cuPointerGetAttributes;
    d.cuIpcGetMemHandle = fake_cuIpcGetMemHandle;
    d.cuIpcOpenMemHandle = fake_cuIpcOpenMemHandle;
    d.cuIpcCloseMemHandle = fake_cuIpcCloseMemHandle;
    d.cuMemHostAlloc = fake_cuMemHostAlloc;
    d.cuMemFreeHost = fake_cuMemFreeHost;
    d.cuStreamCreate = fake_cuStreamCreate;
    d.cuStreamDestroy = fake_cuStreamDestroy;
    d.cuStreamSynchronize = fake_cuStreamSynchronize;
    d.cuMemcpyDtoHAsync = fake_cuMemcpyDtoHAsync;
    d.cuMemcpyHtoDAsync = fake_cuMemcpyHtoDAsync;
    d.cuEventCreate = fake_cuEventCreate;
    d.cuEventDestroy = fake_cuEventDestroy;
    d.cuEventRecord = fake_cuEventRecord;
    d.cuEventQuery = fake_cuEventQuery;
    return d;
}

/* A fresh active fake driver: empty caches and pools (the previous ones finalized). */
static void fake_start(void)
{
    struct umpi_cuda_driver d = fake_driver();
    umpi_config.cuda = "auto";
    umpi_config.cuda_host_cache = 1;
    umpi_cuda_finalize();
    memset(fake_allocs, 0, sizeof(fake_allocs));
    fake_copy_fail_at = -1;
    fake_query_fail_next = fake_host_alloc_fail = fake_open_fail = fake_get_handle_fail = 0;
    umpi_cuda_setup(NULL, &d);
}

#endif /* FAKE_CUDA_H */
