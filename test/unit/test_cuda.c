/*
 * src/cuda without a GPU: the loader against missing or wrong libraries and a fake driver, and the
 * classification caches against a fake cuPointerGetAttributes that serves made-up allocations at
 * addresses that are never dereferenced.
 */
#include "cuda/umpi_cuda.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>

int PMPIX_Query_cuda_support(void);

/* ---- the fake driver ------------------------------------------------------------------------- */

struct fake_alloc {
    uintptr_t start;
    size_t size;
    unsigned memtype; /* UMPI_CU_MEMORYTYPE_* */
    int managed, ordinal, legacy_ipc, pool;
    unsigned long long id;
    int live;
};

#define FAKE_MAX 16
static struct fake_alloc fake_allocs[FAKE_MAX];
static int fake_queries;     /* cuPointerGetAttributes calls */
static int fake_old_driver;  /* rejects the CUDA 11 attributes */
static int fake_fail;        /* cuPointerGetAttributes fails */
static CUresult fake_init_rc;
static int fake_devices = 2;

static CUresult fake_cuInit(unsigned flags) { return fake_init_rc; }
static CUresult fake_cuDriverGetVersion(int *v) { *v = 12040; return 0; }
static CUresult fake_cuDeviceGetCount(int *n) { *n = fake_devices; return 0; }
static CUresult fake_cuDeviceGet(CUdevice *d, int i) { *d = i; return 0; }
static CUresult fake_cuDeviceGetName(char *name, int len, CUdevice d)
{
    snprintf(name, (size_t) len, "Fake GPU %d", d);
    return 0;
}
static CUresult fake_cuGetErrorString(CUresult r, const char **s) { *s = "fake error text"; return 0; }
static CUresult fake_cuGetErrorName(CUresult r, const char **s) { *s = "CUDA_ERROR_FAKE"; return 0; }

static CUresult fake_cuPointerGetAttributes(unsigned n, umpi_cu_pointer_attribute_t *attrs, void **data,
                                            CUdeviceptr ptr)
{
    __atomic_fetch_add(&fake_queries, 1, __ATOMIC_RELAXED);
    if (fake_fail)
        return 999;
    const struct fake_alloc *a = NULL;
    for (int i = 0; i < FAKE_MAX; i++)
        if (fake_allocs[i].live && ptr >= fake_allocs[i].start && ptr < fake_allocs[i].start + fake_allocs[i].size)
            a = &fake_allocs[i];
    for (unsigned i = 0; i < n; i++) {
        switch ((int) attrs[i]) {
        case UMPI_CU_POINTER_ATTRIBUTE_MEMORY_TYPE: *(unsigned *) data[i] = a ? a->memtype : 0; break;
        case UMPI_CU_POINTER_ATTRIBUTE_IS_MANAGED: *(unsigned char *) data[i] = a ? (unsigned char) a->managed : 0; break;
        case UMPI_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *) data[i] = a ? a->ordinal : -2; break;
        case UMPI_CU_POINTER_ATTRIBUTE_BUFFER_ID: *(unsigned long long *) data[i] = a ? a->id : 0; break;
        case UMPI_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *(CUdeviceptr *) data[i] = a ? a->start : 0; break;
        case UMPI_CU_POINTER_ATTRIBUTE_RANGE_SIZE: *(size_t *) data[i] = a ? a->size : 0; break;
        case UMPI_CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
        case UMPI_CU_POINTER_ATTRIBUTE_MAPPED:
        case UMPI_CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
            if (fake_old_driver)
                return UMPI_CUDA_ERROR_INVALID_VALUE;
            if (attrs[i] == UMPI_CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE)
                *(CUmemoryPool *) data[i] = a && a->pool ? (CUmemoryPool) 0x1234 : NULL;
            else if (attrs[i] == UMPI_CU_POINTER_ATTRIBUTE_MAPPED)
                *(unsigned char *) data[i] = a != NULL;
            else
                *(unsigned char *) data[i] = a ? (unsigned char) a->legacy_ipc : 0;
            break;
        default: return UMPI_CUDA_ERROR_INVALID_VALUE;
        }
    }
    return 0;
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
    return d;
}

static struct fake_alloc *fake_add(uintptr_t start, size_t size, unsigned memtype, int ordinal,
                                   unsigned long long id)
{
    for (int i = 0; i < FAKE_MAX; i++) {
        if (!fake_allocs[i].live) {
            fake_allocs[i] = (struct fake_alloc){ start, size, memtype, 0, ordinal, 1, 0, id, 1 };
            return &fake_allocs[i];
        }
    }
    abort();
}

static void fake_free(struct fake_alloc *a) { a->live = 0; }

/* The driver maps memory the CPU reaches (pinned host) into the process: an address-space event,
 * which UCX's hooks deliver to umpi_cuda_vm_changed under MPI_Init. */
static struct fake_alloc *fake_map(uintptr_t start, size_t size, unsigned memtype, unsigned long long id)
{
    struct fake_alloc *a = fake_add(start, size, memtype, -2, id);
    umpi_cuda_vm_changed(start, size);
    return a;
}

static void fake_unmap(struct fake_alloc *a)
{
    a->live = 0;
    umpi_cuda_vm_changed(a->start, a->size);
}

/* A fresh active fake driver, empty caches, no fake allocations; address-space events are watched
 * (as MPI_Init arranges where UCX's memory hooks work). */
static void fake_start(void)
{
    struct umpi_cuda_driver d = fake_driver();
    memset(fake_allocs, 0, sizeof(fake_allocs));
    fake_old_driver = fake_fail = 0;
    fake_queries = 0;
    fake_init_rc = 0;
    fake_devices = 2;
    umpi_config.cuda = "auto";
    umpi_config.cuda_host_cache = 1;
    umpi_cuda_finalize();
    umpi_cuda_setup(NULL, &d);
    umpi_cuda_cache_watched(1);
}

/* Driver calls made by one classification. */
static int calls(const void *p, size_t len, struct umpi_cuda_buf_info *info, umpi_status_t *st)
{
    int before = fake_queries;
    umpi_status_t s = umpi_cuda_classify(p, len, info);
    if (st != NULL)
        *st = s;
    return fake_queries - before;
}

#define GRANULE ((uintptr_t) 1 << UMPI_CUDA_GRANULE_SHIFT)
/* Fake GPU addresses: granule-aligned, far from this process's heap, never touched. */
#define DEV ((uintptr_t) 0x7e0000000000ULL)

/* ---- tests ----------------------------------------------------------------------------------- */

static void test_loader(void)
{
    struct umpi_cuda_state s;
    umpi_status_t st;

    SECTION("loader: missing library")
    {
        umpi_config.cuda = "auto";
        st = umpi_cuda_setup("libumpi-no-such-cuda.so.1", NULL);
        umpi_cuda_get_state(&s);
        CHECK(st == UMPI_OK && !umpi_cuda_active && !s.loaded, "auto without a driver: host only");
        CHECK(strstr(s.why, "libumpi-no-such-cuda.so.1") != NULL, "why: %s", s.why);
        CHECK(PMPIX_Query_cuda_support() == 0, "MPIX_Query_cuda_support without a driver");

        umpi_config.cuda = "1";
        st = umpi_cuda_setup("libumpi-no-such-cuda.so.1", NULL);
        CHECK(st == UMPI_ERR_OTHER && !umpi_cuda_active, "UMPI_CUDA=1 without a driver is an error");
        CHECK(strstr(umpi_status_last_msg(), "UMPI_CUDA=1") != NULL &&
              strstr(umpi_status_last_msg(), "could not be loaded") != NULL,
              "message: %s", umpi_status_last_msg());

        umpi_config.cuda = "0";
        st = umpi_cuda_setup("libumpi-no-such-cuda.so.1", NULL);
        umpi_cuda_get_state(&s);
        CHECK(st == UMPI_OK && !umpi_cuda_active && strcmp(s.mode, "0") == 0, "UMPI_CUDA=0");

        umpi_config.cuda = "sometimes";
        st = umpi_cuda_setup("libumpi-no-such-cuda.so.1", NULL);
        umpi_cuda_get_state(&s);
        CHECK(st == UMPI_OK && strcmp(s.mode, "auto") == 0, "a malformed UMPI_CUDA means auto");
    }

    SECTION("loader: a library that is not the CUDA driver")
    {
        umpi_config.cuda = "auto";
        st = umpi_cuda_setup("libm.so.6", NULL);
        umpi_cuda_get_state(&s);
        CHECK(st == UMPI_OK && !umpi_cuda_active && strstr(s.why, "has no cuGetErrorString"), "why: %s", s.why);
        umpi_config.cuda = "on";
        st = umpi_cuda_setup("libm.so.6", NULL);
        CHECK(st == UMPI_ERR_OTHER, "UMPI_CUDA=on with libm is an error");
    }

    SECTION("loader: driver without a device")
    {
        struct umpi_cuda_driver d = fake_driver();
        umpi_config.cuda = "auto";
        fake_init_rc = UMPI_CUDA_ERROR_NO_DEVICE;
        st = umpi_cuda_setup(NULL, &d);
        umpi_cuda_get_state(&s);
        CHECK(st == UMPI_OK && !umpi_cuda_active && strstr(s.why, "cuInit failed"), "why: %s", s.why);
        umpi_config.cuda = "1";
        st = umpi_cuda_setup(NULL, &d);
        CHECK(st == UMPI_ERR_OTHER && strstr(umpi_status_last_msg(), "CUDA_ERROR_FAKE"), "msg: %s",
              umpi_status_last_msg());
        fake_init_rc = 0;
        fake_devices = 0;
        umpi_config.cuda = "auto";
        st = umpi_cuda_setup(NULL, &d);
        umpi_cuda_get_state(&s);
        CHECK(st == UMPI_OK && !umpi_cuda_active && strstr(s.why, "no device"), "why: %s", s.why);
    }

    SECTION("loader: a working driver")
    {
        fake_start();
        umpi_cuda_get_state(&s);
        CHECK(umpi_cuda_active && s.active && s.devices == 2 && s.driver_version == 12040, "active");
        CHECK(strstr(s.why, "12.4") && strstr(s.why, "Fake GPU 0"), "why: %s", s.why);
        /* A GPU alone is not enough: device buffers must be carried too (not yet). */
        CHECK(PMPIX_Query_cuda_support() == 0, "MPIX_Query_cuda_support with a GPU, device buffers not carried");
        umpi_cuda_device_buffers = 1;
        CHECK(PMPIX_Query_cuda_support() == 1, "MPIX_Query_cuda_support with a GPU and device buffers");
        umpi_cuda_device_buffers = 0;
        umpi_cuda_finalize();
        CHECK(!umpi_cuda_active && PMPIX_Query_cuda_support() == 0, "finalize deactivates");
    }
}

static void test_classify(void)
{
    struct umpi_cuda_buf_info info;
    umpi_status_t st;
    static char heap_like[4096];
    char *h = heap_like;

    SECTION("classify: no CUDA costs no driver call")
    {
        fake_start();
        umpi_cuda_active = 0;
        CHECK(calls(h, 10, &info, NULL) == 0 && info.type == UMPI_CUDA_MEM_HOST, "inactive");
        umpi_cuda_active = 1;
        CHECK(calls((void *) DEV, 0, &info, NULL) == 0 && info.type == UMPI_CUDA_MEM_HOST, "zero length");
        CHECK(calls(NULL, 0, &info, NULL) == 0 && info.type == UMPI_CUDA_MEM_HOST, "NULL, zero length");
    }

    SECTION("classify: host fast path")
    {
        fake_start();
        CHECK(calls(h, 100, &info, NULL) == 1 && info.type == UMPI_CUDA_MEM_HOST && info.device == -1, "first");
        CHECK(calls(h, 100, &info, NULL) == 0 && info.type == UMPI_CUDA_MEM_HOST, "same buffer again");
        CHECK(calls(h + 1000, 5, &info, NULL) == 0, "same granule");
        uintptr_t other = ((uintptr_t) h & ~(GRANULE - 1)) + 5 * GRANULE;
        CHECK(calls((void *) other, 8, &info, NULL) == 1 && calls((void *) other, 8, &info, NULL) == 0,
              "another granule: one query");
        CHECK(umpi_cuda_stats[UMPI_CUDA_STAT_host_hits] == 3, "host hits %lu",
              umpi_cuda_stats[UMPI_CUDA_STAT_host_hits]);
        umpi_config.cuda_host_cache = 0;
        umpi_cuda_cache_reset();
        CHECK(calls(h, 100, &info, NULL) == 1 && calls(h, 100, &info, NULL) == 1, "UMPI_CUDA_HOST_CACHE=0");
    }

    SECTION("classify: device ranges, hits and ends")
    {
        fake_start();
        fake_add(DEV, 1 << 20, UMPI_CU_MEMORYTYPE_DEVICE, 1, 7);
        CHECK(calls((void *) DEV, 64, &info, &st) == 1 && st == UMPI_OK && info.type == UMPI_CUDA_MEM_DEVICE,
              "first");
        CHECK(info.device == 1 && info.buffer_id == 7 && info.range_start == DEV && info.range_size == 1 << 20 &&
              (info.flags & UMPI_CUDA_BUF_LEGACY_IPC) && !(info.flags & (UMPI_CUDA_BUF_VMM | UMPI_CUDA_BUF_POOL)),
              "info: dev %d id %llu flags %#x", info.device, info.buffer_id, info.flags);
        CHECK(calls((void *) (DEV + 100), 100, &info, NULL) == 0 && info.type == UMPI_CUDA_MEM_DEVICE, "inside");
        CHECK(calls((void *) (DEV + (1 << 20) - 1), 1, &info, NULL) == 0 && info.type == UMPI_CUDA_MEM_DEVICE,
              "last byte");
        CHECK(calls((void *) DEV, 1 << 20, &info, NULL) == 0, "the whole range");
        CHECK(calls((void *) (DEV + (1 << 20)), 1, &info, NULL) == 1 && info.type == UMPI_CUDA_MEM_HOST,
              "one past the end is not in the range");
        CHECK(calls((void *) (DEV + (1 << 20)), 1, &info, NULL) == 1,
              "a granule that holds a device range is not cached as host");
        CHECK(calls((void *) (DEV + (1 << 20) - 10), 20, &info, &st) == 1 && st == UMPI_ERR_OTHER &&
              strstr(umpi_status_last_msg(), "runs past the end"), "buffer past the end: %s",
              umpi_status_last_msg());
        CHECK(umpi_cuda_stats[UMPI_CUDA_STAT_range_hits] == 3, "range hits %lu",
              umpi_cuda_stats[UMPI_CUDA_STAT_range_hits]);
    }

    SECTION("classify: adjacent and overlapping ranges")
    {
        fake_start();
        struct fake_alloc *a = fake_add(DEV, 65536, UMPI_CU_MEMORYTYPE_DEVICE, 0, 1);
        struct fake_alloc *b = fake_add(DEV + 65536, 65536, UMPI_CU_MEMORYTYPE_DEVICE, 0, 2);
        CHECK(calls((void *) DEV, 1, &info, NULL) == 1 && calls((void *) (DEV + 65536), 1, &info, NULL) == 1,
              "two queries");
        CHECK(calls((void *) (DEV + 65535), 1, &info, NULL) == 0 && info.buffer_id == 1, "A's last byte");
        CHECK(calls((void *) (DEV + 65536), 1, &info, NULL) == 0 && info.buffer_id == 2, "B's first byte");
        CHECK(calls((void *) (DEV + 65530), 12, &info, &st) == 1 && st == UMPI_ERR_OTHER, "across A and B");
        /* Both freed; one larger allocation over both: the first miss replaces the two ranges. */
        fake_free(a);
        fake_free(b);
        fake_add(DEV + 4096, 1 << 20, UMPI_CU_MEMORYTYPE_DEVICE, 0, 3);
        CHECK(calls((void *) (DEV + 200000), 1, &info, NULL) == 1 && info.buffer_id == 3, "new range");
        CHECK(umpi_cuda_stats[UMPI_CUDA_STAT_range_replaced] == 1, "replaced %lu",
              umpi_cuda_stats[UMPI_CUDA_STAT_range_replaced]);
        CHECK(calls((void *) (DEV + 100), 1, &info, NULL) == 1 && info.type == UMPI_CUDA_MEM_HOST,
              "A's old start is no longer cached");
        CHECK(calls((void *) (DEV + 65536), 1, &info, NULL) == 0 && info.buffer_id == 3, "B's old start: new range");
    }

    SECTION("classify: reuse with a new buffer id")
    {
        fake_start();
        struct fake_alloc *a = fake_add(DEV, 1 << 20, UMPI_CU_MEMORYTYPE_DEVICE, 0, 10);
        calls((void *) DEV, 8, &info, NULL);
        CHECK(umpi_cuda_validate((void *) DEV, 8, &info) == 1 && info.buffer_id == 10, "same allocation");
        fake_free(a);
        fake_add(DEV, 1 << 20, UMPI_CU_MEMORYTYPE_DEVICE, 0, 11);
        CHECK(calls((void *) DEV, 8, &info, NULL) == 0 && info.buffer_id == 10,
              "classification does not validate (stale id, right type)");
        CHECK(umpi_cuda_validate((void *) DEV, 8, &info) == 0 && info.buffer_id == 11, "validate sees the new id");
        CHECK(umpi_cuda_stats[UMPI_CUDA_STAT_buffer_id_changed] == 1, "counted");
        CHECK(calls((void *) DEV, 8, &info, NULL) == 0 && info.buffer_id == 11, "cache refreshed");
        CHECK(umpi_cuda_validate((void *) DEV, 8, &info) == 1, "valid again");
    }

    SECTION("classify: managed, pinned host, VMM, pools")
    {
        fake_start();
        struct fake_alloc *m = fake_add(DEV, 1 << 16, UMPI_CU_MEMORYTYPE_DEVICE, 1, 20);
        m->managed = 1;
        CHECK(calls((void *) (DEV + 8), 8, &info, NULL) == 1 && info.type == UMPI_CUDA_MEM_MANAGED &&
              info.device == 1 && umpi_cuda_is_gpu(&info), "managed");

        uintptr_t pinned = DEV + 16 * GRANULE;
        fake_add(pinned, 8192, UMPI_CU_MEMORYTYPE_HOST, -2, 21);
        CHECK(calls((void *) pinned, 8192, &info, NULL) == 1 && info.type == UMPI_CUDA_MEM_HOST_PINNED &&
              info.device == -1 && !umpi_cuda_is_gpu(&info), "pinned host");
        CHECK(calls((void *) (pinned + 100), 100, &info, NULL) == 0 && info.type == UMPI_CUDA_MEM_HOST_PINNED,
              "pinned host: cached");
        CHECK(calls((void *) pinned, 10000, &info, &st) == 1 && st == UMPI_OK && info.type == UMPI_CUDA_MEM_HOST,
              "partly registered host memory is host, not pinned");

        struct fake_alloc *v = fake_add(DEV + 32 * GRANULE, GRANULE, UMPI_CU_MEMORYTYPE_DEVICE, 0, 22);
        v->legacy_ipc = 0;
        CHECK(calls((void *) v->start, 8, &info, NULL) == 1 && (info.flags & UMPI_CUDA_BUF_VMM) &&
              !(info.flags & UMPI_CUDA_BUF_LEGACY_IPC), "VMM: flags %#x", info.flags);
        struct fake_alloc *p = fake_add(DEV + 40 * GRANULE, GRANULE, UMPI_CU_MEMORYTYPE_DEVICE, 0, 23);
        p->legacy_ipc = 0;
        p->pool = 1;
        CHECK(calls((void *) p->start, 8, &info, NULL) == 1 && info.flags == (UMPI_CUDA_BUF_POOL | UMPI_CUDA_BUF_MAPPED),
              "pool: flags %#x", info.flags);
    }

    SECTION("classify: an old driver without the CUDA 11 attributes")
    {
        fake_start();
        fake_old_driver = 1;
        struct fake_alloc *v = fake_add(DEV, GRANULE, UMPI_CU_MEMORYTYPE_DEVICE, 0, 30);
        v->legacy_ipc = 0;
        CHECK(calls((void *) DEV, 8, &info, &st) == 2 && st == UMPI_OK && info.type == UMPI_CUDA_MEM_DEVICE &&
              info.flags == 0, "retried with the basic attributes, no VMM guess: flags %#x", info.flags);
        fake_add(DEV + 4 * GRANULE, 4096, UMPI_CU_MEMORYTYPE_DEVICE, 0, 31);
        CHECK(calls((void *) (DEV + 4 * GRANULE), 8, &info, NULL) == 1, "then asks only those");
    }

    SECTION("classify: new device ranges empty the host granule cache; forget")
    {
        fake_start();
        calls(h, 8, &info, NULL);
        CHECK(calls(h, 8, &info, NULL) == 0, "host cached");
        fake_add(DEV, 4096, UMPI_CU_MEMORYTYPE_DEVICE, 0, 40);
        calls((void *) DEV, 8, &info, NULL);
        CHECK(calls(h, 8, &info, NULL) == 1, "host asked again after a new device range");
        umpi_cuda_forget((void *) DEV, 4096);
        CHECK(calls((void *) DEV, 8, &info, NULL) == 1 && info.type == UMPI_CUDA_MEM_DEVICE, "forgotten range");
    }

    SECTION("classify: address-space events drop what they touch")
    {
        fake_start();
        /* a host granule, cached; its memory unmapped and the driver's device memory there */
        uintptr_t g = DEV + 64 * GRANULE;
        struct fake_alloc *host = fake_map(g, 4096, 0, 0); /* memtype 0: what the driver says of host memory */
        CHECK(calls((void *) g, 8, &info, NULL) == 1 && info.type == UMPI_CUDA_MEM_HOST, "host");
        CHECK(calls((void *) (g + 100), 8, &info, NULL) == 0, "its granule cached");
        fake_unmap(host);
        fake_add(g, 1 << 20, UMPI_CU_MEMORYTYPE_DEVICE, 0, 50);
        umpi_cuda_vm_changed(g, 1 << 20); /* the driver's reservation there */
        CHECK(calls((void *) g, 8, &info, NULL) == 1 && info.type == UMPI_CUDA_MEM_DEVICE,
              "the granule is asked again: device memory now (type %d)", info.type);
        /* device memory freed, its addresses handed out again as pinned host memory (mapped: an event) */
        fake_free(&fake_allocs[1]);
        struct fake_alloc *pin = fake_map(g, 1 << 20, UMPI_CU_MEMORYTYPE_HOST, 51);
        CHECK(calls((void *) g, 8, &info, NULL) == 1 && info.type == UMPI_CUDA_MEM_HOST_PINNED && info.buffer_id == 51,
              "pinned host memory where device memory was: type %d id %llu", info.type, info.buffer_id);
        /* and back: freed (unmapped), device memory again */
        fake_unmap(pin);
        fake_add(g, 1 << 20, UMPI_CU_MEMORYTYPE_DEVICE, 0, 52);
        CHECK(calls((void *) g, 8, &info, NULL) == 1 && info.type == UMPI_CUDA_MEM_DEVICE && info.buffer_id == 52,
              "device memory where pinned memory was: type %d id %llu", info.type, info.buffer_id);
        CHECK(calls((void *) (g + 64), 8, &info, NULL) == 0, "then cached");
        /* an event far from every cached range drops nothing */
        umpi_cuda_vm_changed(DEV + 1000 * GRANULE, 4096);
        CHECK(calls((void *) g, 8, &info, NULL) == 0, "an unrelated event: still cached");
    }

    SECTION("classify: without address-space events every answer is checked")
    {
        fake_start();
        umpi_cuda_cache_watched(0);
        CHECK(calls(h, 100, &info, NULL) == 1 && calls(h, 100, &info, NULL) == 1,
              "host memory: asked each time (no granule cache)");
        struct fake_alloc *a = fake_add(DEV, 1 << 20, UMPI_CU_MEMORYTYPE_DEVICE, 0, 60);
        CHECK(calls((void *) DEV, 8, &info, NULL) == 1 && info.buffer_id == 60, "device");
        CHECK(calls((void *) (DEV + 8), 8, &info, NULL) == 1 && info.buffer_id == 60,
              "a range hit costs one check of the buffer id");
        fake_free(a);
        fake_add(DEV, 1 << 20, UMPI_CU_MEMORYTYPE_HOST, -2, 61); /* no event told of it */
        CHECK(calls((void *) (DEV + 8), 8, &info, NULL) == 2 && info.type == UMPI_CUDA_MEM_HOST_PINNED &&
              info.buffer_id == 61, "a changed id: asked again (pinned now, type %d)", info.type);
    }

    SECTION("classify: driver failure")
    {
        fake_start();
        fake_fail = 1;
        CHECK(calls((void *) DEV, 8, &info, &st) == 1 && st == UMPI_ERR_OTHER &&
              strstr(umpi_status_last_msg(), "cuPointerGetAttributes"), "error: %s", umpi_status_last_msg());
        CHECK(umpi_cuda_stats[UMPI_CUDA_STAT_query_errors] == 1, "counted");
        fake_fail = 0;
    }
}

/* Threads classify the same ranges at once under MPI_THREAD_MULTIPLE (the cache lock is taken). */
#define NTHREADS 4
static void *thread_body(void *arg)
{
    struct umpi_cuda_buf_info info;
    long bad = 0;
    for (int i = 0; i < 20000; i++) {
        uintptr_t p = DEV + (uintptr_t) (i % 8) * GRANULE + (uintptr_t) (i % 1000);
        if (umpi_cuda_classify((void *) p, 16, &info) != UMPI_OK || info.type != UMPI_CUDA_MEM_DEVICE ||
            info.buffer_id != 100 + (unsigned long long) (i % 8))
            bad++;
        if (umpi_cuda_classify(arg, 16, &info) != UMPI_OK || info.type != UMPI_CUDA_MEM_HOST)
            bad++;
    }
    return (void *) bad;
}

static void test_threads(void)
{
    SECTION("classify: concurrent threads")
    {
        static char hosts[NTHREADS][64];
        pthread_t t[NTHREADS];
        long bad = 0;
        fake_start();
        for (int i = 0; i < 8; i++)
            fake_add(DEV + (uintptr_t) i * GRANULE, 4096, UMPI_CU_MEMORYTYPE_DEVICE, 0, 100 + (unsigned) i);
        umpi_global.is_multi = 1;
        for (int i = 0; i < NTHREADS; i++)
            pthread_create(&t[i], NULL, thread_body, hosts[i]);
        for (int i = 0; i < NTHREADS; i++) {
            void *r;
            pthread_join(t[i], &r);
            bad += (long) r;
        }
        umpi_global.is_multi = 0;
        CHECK(bad == 0, "%ld wrong answers", bad);
        CHECK(fake_queries < 100, "%d driver queries for 8 ranges and a few host granules", fake_queries);
    }
}

int main(void)
{
    test_loader();
    test_classify();
    test_threads();
    umpi_config.debug = 1; /* the counters line at finalize */
    umpi_cuda_finalize();
    return unit_done("test_cuda");
}
