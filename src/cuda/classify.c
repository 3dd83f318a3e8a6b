/*
 * Buffer classification: what kind of memory an MPI buffer is, asked of the driver once and cached.
 *
 * Two caches, consulted in this order by umpi_cuda_classify (umpi_cuda.h):
 *
 * 1. Host granules. Under UVA one 64-bit virtual address space serves host and GPUs: the driver
 *    reserves the virtual ranges that device, managed and pinned allocations live in, so at any
 *    moment an address is either host memory or inside a GPU reservation, never both. Once the
 *    driver has said "host" for a pointer, its whole 2 MiB granule is cached as host (a granule
 *    that holds a cached range is not): later buffers in it cost one load and one compare. The
 *    table is direct-mapped (granule index mod 1024), so it never grows and a collision is a miss.
 *    What could make an entry wrong is the address space changing under it: the program unmaps
 *    its memory and the driver then reserves those addresses for GPU memory (its reservations go
 *    wherever mmap puts them, freed host ranges included), and a device pointer in that granule
 *    would then be taken for host memory and touched by the CPU. So the granule cache is used only
 *    while something tells classification about every mapping and unmapping in the process
 *    (umpi_cuda_vm_changed; MPI_Init connects UCX's memory events to it, umpi_cuda_cache_watched),
 *    and each such event drops the granules it covers. Without events (UCX's hooks not installed,
 *    umpi_info, the unit tests) every host buffer is asked of the driver. UMPI_CUDA_HOST_CACHE=0
 *    turns the granule cache off altogether.
 *
 * 2. Ranges. Device, managed and pinned-host answers come with the allocation's extent
 *    (RANGE_START_ADDR, RANGE_SIZE) and its BUFFER_ID; they go into a sorted array of disjoint
 *    ranges [start, end), searched by bisection. A new range replaces every cached one it overlaps.
 *    Freed memory comes back with new ids, as any kind: a device range's addresses as pinned host
 *    memory, a pinned range's as device memory (the driver hands out its addresses again). With the
 *    address-space events, a range that a mapping or unmapping touches is dropped (pinned and
 *    managed memory is mapped into the process, so it changes kind only through such events), and
 *    a cached range is otherwise trusted: device memory freed and allocated again is device memory
 *    still, which is all classification says (what must know the allocation exactly, CUDA IPC,
 *    calls umpi_cuda_validate, which compares BUFFER_IDs). Without the events each range hit is
 *    checked against the driver's BUFFER_ID of the pointer (one attribute).
 *
 * Threads: the granule table is read and written with single atomic 64-bit loads and stores (no
 * lock); the range array is guarded by umpi__cache_lock, taken only under MPI_THREAD_MULTIPLE, like
 * the big lock. Callers need not hold the big lock (p2p calls classify before they take it).
 */
#include "cuda/umpi_cuda.h"

#include <stdlib.h>
#include <string.h>

uint64_t umpi_cuda_host_slots[UMPI_CUDA_HOST_SLOTS];
uint64_t umpi_cuda_host_epoch = 1;

struct umpi__range {
    uintptr_t start, end;
    struct umpi_cuda_buf_info info;
};

/* The most ranges cached; past it the cache is emptied (counted: range_overflow). */
#define UMPI__RANGES_MAX 65536

static struct umpi__range *umpi__ranges;
static size_t umpi__nranges, umpi__cap;
static pthread_mutex_t umpi__cache_lock = PTHREAD_MUTEX_INITIALIZER;
/* The driver rejected the CUDA 11 attributes: ask only for the basic ones. */
static int umpi__basic_attrs;

/* Address-space events reach umpi_cuda_vm_changed (umpi_cuda_cache_watched): the caches may trust
 * what they hold. */
static int umpi__watched;
/* Events seen (host keys are stored only if none came during the driver query that made them). */
static uint64_t umpi__vm_events;
/* The span the events since the range cache last looked have touched, [lo, hi): the event handler
 * may run in any thread, inside any mmap, so it takes only this spin lock (nothing under it maps
 * memory) and the range cache applies the span under its own lock on its next slow path. */
static struct {
    int busy;
    uintptr_t lo, hi;
} umpi__dirty = { 0, UINTPTR_MAX, 0 };

static void umpi__lock(void)
{
    if (umpi_unlikely(umpi_global.is_multi))
        pthread_mutex_lock(&umpi__cache_lock);
}

static void umpi__unlock(void)
{
    if (umpi_unlikely(umpi_global.is_multi))
        pthread_mutex_unlock(&umpi__cache_lock);
}

/* Empties the host granule table: a new epoch makes every key stale; a wrapped epoch clears it. */
static void umpi__host_flush(void)
{
    uint64_t e = __atomic_add_fetch(&umpi_cuda_host_epoch, 1, __ATOMIC_RELAXED);
    if ((e & 0xffff) == 0) {
        for (size_t i = 0; i < UMPI_CUDA_HOST_SLOTS; i++)
            __atomic_store_n(&umpi_cuda_host_slots[i], 0, __ATOMIC_RELAXED);
        __atomic_add_fetch(&umpi_cuda_host_epoch, 1, __ATOMIC_RELAXED);
    }
}

static void umpi__dirty_lock(void)
{
    while (__atomic_exchange_n(&umpi__dirty.busy, 1, __ATOMIC_ACQUIRE))
        ;
}

static void umpi__dirty_unlock(void)
{
    __atomic_store_n(&umpi__dirty.busy, 0, __ATOMIC_RELEASE);
}

void umpi_cuda_vm_changed(uintptr_t start, size_t len)
{
    if (len == 0)
        return;
    uintptr_t end = start + len < start ? UINTPTR_MAX : start + len;
    umpi__dirty_lock();
    if (start < umpi__dirty.lo)
        umpi__dirty.lo = start;
    if (end > umpi__dirty.hi)
        umpi__dirty.hi = end;
    umpi__dirty_unlock();
    /* the granules it covers stop being host (all of them: a new epoch, when it is big) */
    uintptr_t g0 = start >> UMPI_CUDA_GRANULE_SHIFT, g1 = (end - 1) >> UMPI_CUDA_GRANULE_SHIFT;
    if (g1 - g0 >= UMPI_CUDA_HOST_SLOTS) {
        __atomic_add_fetch(&umpi_cuda_host_epoch, 1, __ATOMIC_RELAXED);
    } else {
        for (uintptr_t g = g0; g <= g1; g++)
            __atomic_store_n(&umpi_cuda_host_slots[g & (UMPI_CUDA_HOST_SLOTS - 1)], 0, __ATOMIC_RELAXED);
    }
    __atomic_add_fetch(&umpi__vm_events, 1, __ATOMIC_RELEASE);
}

static void umpi__remove(uintptr_t start, uintptr_t end);

/* Drops the cached ranges the address-space events since the last call touched. Under the lock. */
static void umpi__apply_events(void)
{
    if (__atomic_load_n(&umpi__dirty.hi, __ATOMIC_RELAXED) == 0)
        return;
    umpi__dirty_lock();
    uintptr_t lo = umpi__dirty.lo, hi = umpi__dirty.hi;
    umpi__dirty.lo = UINTPTR_MAX;
    umpi__dirty.hi = 0;
    umpi__dirty_unlock();
    if (lo < hi)
        umpi__remove(lo, hi);
}

void umpi_cuda_cache_watched(int on)
{
    umpi__lock();
    umpi__watched = on;
    umpi__unlock();
}

void umpi_cuda_cache_reset(void)
{
    umpi__lock();
    umpi__nranges = 0;
    umpi__basic_attrs = 0;
    for (size_t i = 0; i < UMPI_CUDA_HOST_SLOTS; i++)
        __atomic_store_n(&umpi_cuda_host_slots[i], 0, __ATOMIC_RELAXED);
    umpi__unlock();
}

void umpi_cuda_cache_finalize(void)
{
    umpi_cuda_cache_reset();
    free(umpi__ranges);
    umpi__ranges = NULL;
    umpi__cap = 0;
}

/* Index of the first range whose end is above p (it holds p if its start is at most p). */
static size_t umpi__find(uintptr_t p)
{
    size_t lo = 0, hi = umpi__nranges;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (umpi__ranges[mid].end <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Caches [start, end) with info, dropping the ranges it overlaps. Out of memory: not cached. */
static void umpi__insert(uintptr_t start, uintptr_t end, const struct umpi_cuda_buf_info *info)
{
    size_t first = umpi__find(start), last = first;
    while (last < umpi__nranges && umpi__ranges[last].start < end)
        last++;
    if (last == first + 1 && umpi__ranges[first].start == start && umpi__ranges[first].end == end &&
        umpi__ranges[first].info.buffer_id == info->buffer_id) {
        umpi__ranges[first].info = *info; /* asked again (a buffer past its end): the same allocation */
        return;
    }
    if (last > first) {
        umpi_cuda_stat_add(UMPI_CUDA_STAT_range_replaced);
        umpi_debug(2, "cuda: range [%#lx, %#lx) replaces %zu cached range(s) from %#lx", (unsigned long) start,
                   (unsigned long) end, last - first, (unsigned long) umpi__ranges[first].start);
    }
    size_t n = umpi__nranges - (last - first) + 1;
    if (n > UMPI__RANGES_MAX) {
        umpi_cuda_slow_path(UMPI_CUDA_STAT_range_overflow, "cuda: %d cached ranges: cache emptied",
                            UMPI__RANGES_MAX);
        umpi__nranges = 0;
        first = last = 0;
        n = 1;
    }
    if (n > umpi__cap) {
        size_t cap = umpi__cap ? 2 * umpi__cap : 64;
        struct umpi__range *r = realloc(umpi__ranges, cap * sizeof(*r));
        if (r == NULL)
            return;
        umpi__ranges = r;
        umpi__cap = cap;
    }
    memmove(&umpi__ranges[first + 1], &umpi__ranges[last], (umpi__nranges - last) * sizeof(*umpi__ranges));
    umpi__ranges[first] = (struct umpi__range){ start, end, *info };
    umpi__nranges = n;
}

static void umpi__remove(uintptr_t start, uintptr_t end)
{
    size_t first = umpi__find(start), last = first;
    while (last < umpi__nranges && umpi__ranges[last].start < end)
        last++;
    memmove(&umpi__ranges[first], &umpi__ranges[last], (umpi__nranges - last) * sizeof(*umpi__ranges));
    umpi__nranges -= last - first;
}

/* One cuPointerGetAttributes call, translated into info. */
static umpi_status_t umpi__query(uintptr_t p, struct umpi_cuda_buf_info *info)
{
    unsigned memtype = 0, managed = 0, legacy_ipc = 0, mapped = 0;
    int ordinal = -1;
    unsigned long long buffer_id = 0;
    CUdeviceptr start = 0;
    size_t size = 0;
    CUmemoryPool pool = NULL;
    umpi_cu_pointer_attribute_t attrs[] = {
        UMPI_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, UMPI_CU_POINTER_ATTRIBUTE_IS_MANAGED,
        UMPI_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, UMPI_CU_POINTER_ATTRIBUTE_BUFFER_ID,
        UMPI_CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, UMPI_CU_POINTER_ATTRIBUTE_RANGE_SIZE,
        /* CUDA 11.0 and 11.3: */
        UMPI_CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, UMPI_CU_POINTER_ATTRIBUTE_MAPPED,
        UMPI_CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
    };
    /* Booleans are written as one byte by some drivers and four by others: zeroed unsigned ints
     * read right either way on little-endian machines. */
    void *data[] = { &memtype, &managed, &ordinal, &buffer_id, &start, &size, &legacy_ipc, &mapped, &pool };
    unsigned n = umpi__basic_attrs ? 6 : 9;

    umpi_cuda_stat_add(UMPI_CUDA_STAT_driver_queries);
    CUresult r = umpi_cuda_drv.cuPointerGetAttributes(n, attrs, data, (CUdeviceptr) p);
    if (r == UMPI_CUDA_ERROR_INVALID_VALUE && n == 9) {
        umpi_debug(1, "cuda: the driver does not know the CUDA 11 pointer attributes; VMM and pool "
                      "allocations are not told apart");
        umpi__basic_attrs = 1;
        n = 6;
        r = umpi_cuda_drv.cuPointerGetAttributes(n, attrs, data, (CUdeviceptr) p);
    }
    if (r != UMPI_CUDA_SUCCESS) {
        char buf[128];
        umpi_cuda_stat_add(UMPI_CUDA_STAT_query_errors);
        umpi_status_msg("cuPointerGetAttributes(%p) failed: %s", (void *) p, umpi_cuda_strerror(r, buf, sizeof(buf)));
        return UMPI_ERR_OTHER;
    }

    umpi_cuda_info_host(info);
    if (managed || memtype == UMPI_CU_MEMORYTYPE_UNIFIED)
        info->type = UMPI_CUDA_MEM_MANAGED;
    else if (memtype == UMPI_CU_MEMORYTYPE_DEVICE || memtype == UMPI_CU_MEMORYTYPE_ARRAY)
        info->type = UMPI_CUDA_MEM_DEVICE;
    else if (memtype == UMPI_CU_MEMORYTYPE_HOST)
        info->type = UMPI_CUDA_MEM_HOST_PINNED;
    else
        return UMPI_OK; /* pageable host: no range, no id */
    if (info->type != UMPI_CUDA_MEM_HOST_PINNED)
        info->device = ordinal;
    info->range_start = (uintptr_t) start;
    info->range_size = size;
    info->buffer_id = buffer_id;
    if (legacy_ipc)
        info->flags |= UMPI_CUDA_BUF_LEGACY_IPC;
    if (mapped)
        info->flags |= UMPI_CUDA_BUF_MAPPED;
    if (pool != NULL)
        info->flags |= UMPI_CUDA_BUF_POOL;
    else if (!umpi__basic_attrs && info->type == UMPI_CUDA_MEM_DEVICE && !legacy_ipc)
        info->flags |= UMPI_CUDA_BUF_VMM;
    return UMPI_OK;
}

static const char *umpi__type_name(umpi_cuda_memtype_t t)
{
    static const char *const names[] = { "host", "pinned host", "device", "managed" };
    return names[t];
}

/* Does any cached range meet granule g? Such a granule is not cached as host (defensive: it mixes
 * a host page with a pinned or GPU range, and pinned-ness must be asked each time). */
static int umpi__granule_has_range(uintptr_t p)
{
    uintptr_t g0 = p >> UMPI_CUDA_GRANULE_SHIFT << UMPI_CUDA_GRANULE_SHIFT;
    uintptr_t g1 = g0 + ((uintptr_t) 1 << UMPI_CUDA_GRANULE_SHIFT);
    size_t i = umpi__find(g0);
    return i < umpi__nranges && umpi__ranges[i].start < g1;
}

/* Whether the driver's allocation at p is still the one cached with id (one attribute asked). */
static int umpi__same_allocation(uintptr_t p, unsigned long long id)
{
    unsigned long long now = 0;
    umpi_cu_pointer_attribute_t attr = UMPI_CU_POINTER_ATTRIBUTE_BUFFER_ID;
    void *data = &now;
    umpi_cuda_stat_add(UMPI_CUDA_STAT_driver_queries);
    return umpi_cuda_drv.cuPointerGetAttributes(1, &attr, &data, (CUdeviceptr) p) == UMPI_CUDA_SUCCESS && now == id;
}

umpi_status_t umpi_cuda_classify_slow(const void *ptr, size_t len, struct umpi_cuda_buf_info *info)
{
    uintptr_t p = (uintptr_t) ptr;
    umpi_status_t st = UMPI_OK;

    umpi__lock();
    umpi__apply_events();
    size_t i = umpi__find(p);
    if (i < umpi__nranges && umpi__ranges[i].start <= p && len <= umpi__ranges[i].end - p) {
        if (umpi__watched || umpi__same_allocation(p, umpi__ranges[i].info.buffer_id)) {
            *info = umpi__ranges[i].info;
            umpi__unlock();
            umpi_cuda_stat_hot(UMPI_CUDA_STAT_range_hits);
            return UMPI_OK;
        }
        umpi_cuda_stat_add(UMPI_CUDA_STAT_buffer_id_changed);
        umpi__remove(umpi__ranges[i].start, umpi__ranges[i].end);
    }

    uint64_t events = __atomic_load_n(&umpi__vm_events, __ATOMIC_ACQUIRE);
    st = umpi__query(p, info);
    if (st != UMPI_OK)
        goto out;
    if (info->type == UMPI_CUDA_MEM_HOST) {
        if (umpi__watched && umpi_config.cuda_host_cache && !umpi__granule_has_range(p) &&
            __atomic_load_n(&umpi__vm_events, __ATOMIC_ACQUIRE) == events) {
            unsigned slot = (unsigned) (p >> UMPI_CUDA_GRANULE_SHIFT) & (UMPI_CUDA_HOST_SLOTS - 1);
            __atomic_store_n(&umpi_cuda_host_slots[slot],
                             umpi_cuda_host_key(p, __atomic_load_n(&umpi_cuda_host_epoch, __ATOMIC_RELAXED)),
                             __ATOMIC_RELAXED);
        }
        goto out;
    }

    uintptr_t start = info->range_start, end = start + info->range_size;
    if (info->range_size == 0 || start > p || end <= p) {
        /* The driver knows the pointer but gave no extent around it: answer, cache nothing. */
        umpi_debug(2, "cuda: %p is %s memory with no range reported", ptr, umpi__type_name(info->type));
        goto out;
    }
    umpi__insert(start, end, info);
    if (info->type != UMPI_CUDA_MEM_HOST_PINNED)
        umpi__host_flush();
    umpi_debug(2, "cuda: %p is %s memory [%#lx, %#lx) device %d id %llu flags %#x", ptr,
               umpi__type_name(info->type), (unsigned long) start, (unsigned long) end, info->device,
               info->buffer_id, info->flags);
    if (len > end - p) {
        if (info->type == UMPI_CUDA_MEM_HOST_PINNED) {
            /* Host memory partly registered: host, and not pinned as a whole. */
            umpi_cuda_info_host(info);
        } else {
            umpi_status_msg("the buffer of %zu bytes at %p runs past the end of its %s allocation [%#lx, %#lx)", len,
                            ptr, umpi__type_name(info->type), (unsigned long) start, (unsigned long) end);
            st = UMPI_ERR_OTHER;
        }
    }
out:
    umpi__unlock();
    return st;
}

int umpi_cuda_validate(const void *ptr, size_t len, struct umpi_cuda_buf_info *info)
{
    unsigned long long id = 0;
    umpi_cu_pointer_attribute_t attr = UMPI_CU_POINTER_ATTRIBUTE_BUFFER_ID;
    void *data = &id;

    if (!umpi_cuda_active || !umpi_cuda_is_gpu(info))
        return 1;
    umpi_cuda_stat_add(UMPI_CUDA_STAT_driver_queries);
    if (umpi_cuda_drv.cuPointerGetAttributes(1, &attr, &data, (CUdeviceptr) (uintptr_t) ptr) == UMPI_CUDA_SUCCESS &&
        id == info->buffer_id)
        return 1;
    umpi_cuda_slow_path(UMPI_CUDA_STAT_buffer_id_changed,
                        "cuda: %p: allocation id %llu is now %llu (freed and allocated again)", ptr,
                        info->buffer_id, id);
    umpi__lock();
    umpi__remove(info->range_start, info->range_start + info->range_size);
    umpi__unlock();
    if (umpi_cuda_classify(ptr, len, info) != UMPI_OK)
        umpi_cuda_info_host(info); /* the caller sees id 0 and treats the range as unknown */
    return 0;
}

void umpi_cuda_forget(const void *ptr, size_t len)
{
    uintptr_t p = (uintptr_t) ptr;
    if (!umpi_cuda_active || len == 0)
        return;
    umpi__lock();
    umpi__remove(p, p + len);
    umpi__unlock();
    umpi__host_flush();
}
