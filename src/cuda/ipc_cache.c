/*
 * The CUDA IPC caches (interface and the reason for the key: umpi_cuda_ipc.h).
 *
 * Two tables of the same shape, one entry per remote or local allocation:
 *
 *   imports  (peer, base) -> id, handle, the local mapping, a reference count
 *   exports  (-1, base)   -> id, the handle of this process's allocation
 *
 * Each table is a hash of 256 chains on (peer, base) for the lookups that transfers make, and a
 * list in least-recently-used order for the limit UMPI_CUDA_IPC_CACHE (entries per table). When a
 * table is over the limit the least recently used entries that no transfer holds are closed; an
 * entry in use is never closed under a transfer, so the table may stay over the limit until its
 * holders release it (counted once per excess as ipc_evicted when closed).
 *
 * An import whose open failed is kept as a "failed" entry (no mapping): later transfers of that
 * allocation fall back at once, each counted, without asking the driver again. A new id at the
 * same base, or a new allocation overlapping a cached one of the same peer, means the peer freed
 * the old one: the stale entry is closed (ipc_stale); one still in use is unlinked from the hash
 * and the list ("detached") and closed at its last release.
 *
 * Export entries hold no resource (a handle is 64 bytes), so their limit only bounds memory.
 * Every export validates the buffer id with the driver first (umpi_cuda_validate), since
 * classification's range cache cannot see a free and reallocation of the same extent.
 *
 * Threads: one mutex, taken only under MPI_THREAD_MULTIPLE, like the classification cache.
 */
#include "cuda/umpi_cuda_ipc.h"

#include <stdlib.h>
#include <string.h>

struct umpi_cuda_ipc_entry {
    int peer;                  /* -1 in the export table */
    uint64_t base, size;
    unsigned long long id;
    CUipcMemHandle handle;
    CUdeviceptr mapped;        /* imports: the local address of the mapping; 0 when failed */
    int refs;                  /* transfers holding the mapping */
    int failed, detached;
    struct umpi_cuda_ipc_entry *hnext; /* hash chain */
    struct umpi_cuda_ipc_entry *prev, *next; /* LRU list: head most recent */
};

#define UMPI__IPC_BUCKETS 256

struct umpi__ipc_table {
    struct umpi_cuda_ipc_entry *bucket[UMPI__IPC_BUCKETS];
    struct umpi_cuda_ipc_entry *head, *tail;
    struct umpi_cuda_ipc_entry *detached; /* dropped while in use, chained by hnext */
    size_t count, in_use;
};

static struct umpi__ipc_table umpi__imports, umpi__exports;
static pthread_mutex_t umpi__ipc_lock = PTHREAD_MUTEX_INITIALIZER;

static void umpi__lock(void)
{
    if (umpi_unlikely(umpi_global.is_multi))
        pthread_mutex_lock(&umpi__ipc_lock);
}

static void umpi__unlock(void)
{
    if (umpi_unlikely(umpi_global.is_multi))
        pthread_mutex_unlock(&umpi__ipc_lock);
}

static unsigned umpi__hash(int peer, uint64_t base)
{
    /* allocations are at least 512-byte aligned: the low bits carry nothing */
    uint64_t h = (base >> 9) * 0x9e3779b97f4a7c15ULL + (uint64_t) (unsigned) peer * 0xff51afd7ed558ccdULL;
    return (unsigned) (h >> 56) & (UMPI__IPC_BUCKETS - 1);
}

static struct umpi_cuda_ipc_entry *umpi__find(struct umpi__ipc_table *t, int peer, uint64_t base)
{
    for (struct umpi_cuda_ipc_entry *e = t->bucket[umpi__hash(peer, base)]; e != NULL; e = e->hnext)
        if (e->peer == peer && e->base == base)
            return e;
    return NULL;
}

static void umpi__lru_unlink(struct umpi__ipc_table *t, struct umpi_cuda_ipc_entry *e)
{
    if (e->prev != NULL)
        e->prev->next = e->next;
    else
        t->head = e->next;
    if (e->next != NULL)
        e->next->prev = e->prev;
    else
        t->tail = e->prev;
    e->prev = e->next = NULL;
}

static void umpi__lru_front(struct umpi__ipc_table *t, struct umpi_cuda_ipc_entry *e)
{
    e->prev = NULL;
    e->next = t->head;
    if (t->head != NULL)
        t->head->prev = e;
    t->head = e;
    if (t->tail == NULL)
        t->tail = e;
}

static void umpi__touch(struct umpi__ipc_table *t, struct umpi_cuda_ipc_entry *e)
{
    if (t->head != e) {
        umpi__lru_unlink(t, e);
        umpi__lru_front(t, e);
    }
}

/* Takes e out of the hash and the list (it stays allocated). */
static void umpi__unlink(struct umpi__ipc_table *t, struct umpi_cuda_ipc_entry *e)
{
    struct umpi_cuda_ipc_entry **pp = &t->bucket[umpi__hash(e->peer, e->base)];
    while (*pp != e)
        pp = &(*pp)->hnext;
    *pp = e->hnext;
    e->hnext = NULL;
    umpi__lru_unlink(t, e);
    t->count--;
}

static void umpi__link(struct umpi__ipc_table *t, struct umpi_cuda_ipc_entry *e)
{
    unsigned b = umpi__hash(e->peer, e->base);
    e->hnext = t->bucket[b];
    t->bucket[b] = e;
    umpi__lru_front(t, e);
    t->count++;
}

/* Closes an unlinked entry's mapping and frees it. */
static void umpi__close(struct umpi_cuda_ipc_entry *e)
{
    if (e->mapped != 0 && umpi_cuda_drv.cuIpcCloseMemHandle != NULL) {
        CUresult r = umpi_cuda_drv.cuIpcCloseMemHandle(e->mapped);
        if (r != UMPI_CUDA_SUCCESS) {
            char buf[128];
            umpi_debug(1, "cuda: cuIpcCloseMemHandle of peer %d's allocation %#llx failed: %s", e->peer,
                       (unsigned long long) e->base, umpi_cuda_strerror(r, buf, sizeof(buf)));
        }
    }
    free(e);
}

/* Drops a stale or forgotten entry: closed now, or at its last release when in use. */
static void umpi__drop(struct umpi__ipc_table *t, struct umpi_cuda_ipc_entry *e)
{
    umpi__unlink(t, e);
    if (e->refs > 0) {
        e->detached = 1;
        e->hnext = t->detached;
        t->detached = e;
        t->in_use--; /* counted among the detached from now on */
    } else {
        umpi__close(e);
    }
}

/* Brings the table back to the limit, oldest first, skipping entries in use. */
static void umpi__trim(struct umpi__ipc_table *t)
{
    size_t limit = umpi_config.cuda_ipc_cache > 0 ? (size_t) umpi_config.cuda_ipc_cache : 1;
    struct umpi_cuda_ipc_entry *e = t->tail;
    while (t->count > limit && e != NULL) {
        struct umpi_cuda_ipc_entry *prev = e->prev;
        if (e->refs == 0) {
            if (t == &umpi__imports)
                umpi_cuda_slow_path(UMPI_CUDA_STAT_ipc_evicted,
                                    "cuda: IPC cache full (UMPI_CUDA_IPC_CACHE=%d): closing peer %d's allocation "
                                    "%#llx", umpi_config.cuda_ipc_cache, e->peer, (unsigned long long) e->base);
            umpi__unlink(t, e);
            umpi__close(e);
        }
        e = prev;
    }
}

/* ---- sender ---------------------------------------------------------------------------------- */

umpi_status_t umpi_cuda_ipc_export(const void *buf, size_t len, struct umpi_cuda_ipc_desc *desc, int *usable)
{
    struct umpi_cuda_buf_info info;
    umpi_status_t st = umpi_cuda_classify(buf, len, &info);
    const char *why = NULL;

    *usable = 0;
    if (st != UMPI_OK)
        return st;
    if (umpi_cuda_is_gpu(&info))
        umpi_cuda_validate(buf, len, &info); /* refreshes info if the allocation changed */
    if (info.type != UMPI_CUDA_MEM_DEVICE)
        why = info.type == UMPI_CUDA_MEM_MANAGED ? "managed memory" : "not device memory";
    else if (info.flags & UMPI_CUDA_BUF_POOL)
        why = "a stream-ordered pool allocation (no legacy IPC handle)";
    else if (info.flags & UMPI_CUDA_BUF_VMM)
        why = "a VMM allocation (no legacy IPC handle)";
    else if (info.range_size == 0)
        why = "the driver reported no allocation range";
    if (why != NULL) {
        umpi_cuda_slow_path(UMPI_CUDA_STAT_ipc_fallback, "cuda: no IPC for %p (%zu bytes): %s", buf, len, why);
        return UMPI_OK;
    }

    umpi__lock();
    struct umpi_cuda_ipc_entry *e = umpi__find(&umpi__exports, -1, info.range_start);
    if (e != NULL && (e->id != info.buffer_id || e->size != info.range_size)) {
        umpi_cuda_slow_path(UMPI_CUDA_STAT_ipc_stale, "cuda: exported allocation %#lx changed id %llu -> %llu",
                            (unsigned long) info.range_start, e->id, info.buffer_id);
        umpi__drop(&umpi__exports, e);
        e = NULL;
    }
    if (e == NULL) {
        CUipcMemHandle h;
        CUresult r = umpi_cuda_drv.cuIpcGetMemHandle(&h, (CUdeviceptr) info.range_start);
        if (r != UMPI_CUDA_SUCCESS) {
            char ebuf[128];
            umpi__unlock();
            umpi_cuda_slow_path(UMPI_CUDA_STAT_ipc_fallback, "cuda: no IPC for %p: cuIpcGetMemHandle failed: %s",
                                buf, umpi_cuda_strerror(r, ebuf, sizeof(ebuf)));
            return UMPI_OK;
        }
        e = calloc(1, sizeof(*e));
        if (e == NULL) {
            umpi__unlock();
            umpi_status_msg("no memory for an IPC export entry");
            return UMPI_ERR_NOMEM;
        }
        e->peer = -1;
        e->base = info.range_start;
        e->size = info.range_size;
        e->id = info.buffer_id;
        e->handle = h;
        umpi__link(&umpi__exports, e);
        umpi__trim(&umpi__exports);
    } else {
        umpi__touch(&umpi__exports, e);
    }
    memset(desc, 0, sizeof(*desc));
    desc->handle = e->handle;
    desc->base = e->base;
    desc->size = e->size;
    desc->buffer_id = e->id;
    desc->offset = (uintptr_t) buf - info.range_start;
    desc->device = info.device;
    umpi__unlock();
    *usable = 1;
    return UMPI_OK;
}

/* ---- receiver -------------------------------------------------------------------------------- */

/* Drops the peer's cached entries that the allocation [base, base+size) with this id replaces. */
static void umpi__drop_stale(int peer, const struct umpi_cuda_ipc_desc *d)
{
    struct umpi_cuda_ipc_entry *e = umpi__imports.head;
    while (e != NULL) {
        struct umpi_cuda_ipc_entry *next = e->next;
        if (e->peer == peer && e->base < d->base + d->size && d->base < e->base + e->size &&
            (e->id != d->buffer_id || memcmp(&e->handle, &d->handle, sizeof(d->handle)) != 0 || e->base != d->base ||
             e->size != d->size)) {
            umpi_cuda_slow_path(UMPI_CUDA_STAT_ipc_stale,
                                "cuda: peer %d freed its allocation %#llx (id %llu): its IPC mapping is closed", peer,
                                (unsigned long long) e->base, e->id);
            umpi__drop(&umpi__imports, e);
        }
        e = next;
    }
}

umpi_status_t umpi_cuda_ipc_open(int peer, const struct umpi_cuda_ipc_desc *desc, size_t len, void **ptr,
                                 umpi_cuda_ipc_ref_t **ref)
{
    *ptr = NULL;
    *ref = NULL;
    if (desc->offset > desc->size || len > desc->size - desc->offset) {
        umpi_status_msg("CUDA IPC: %zu bytes at offset %llu run past peer %d's allocation of %llu bytes", len,
                        (unsigned long long) desc->offset, peer, (unsigned long long) desc->size);
        return UMPI_ERR_INTERN;
    }

    umpi__lock();
    struct umpi_cuda_ipc_entry *e = umpi__find(&umpi__imports, peer, desc->base);
    if (e != NULL && (e->id != desc->buffer_id || e->size != desc->size ||
                      memcmp(&e->handle, &desc->handle, sizeof(desc->handle)) != 0))
        e = NULL; /* the same base, another allocation: dropped below */
    if (e == NULL) {
        umpi__drop_stale(peer, desc);
        e = calloc(1, sizeof(*e));
        if (e == NULL) {
            umpi__unlock();
            umpi_status_msg("no memory for an IPC cache entry");
            return UMPI_ERR_NOMEM;
        }
        e->peer = peer;
        e->base = desc->base;
        e->size = desc->size;
        e->id = desc->buffer_id;
        e->handle = desc->handle;
        CUresult r = umpi_cuda_drv.cuIpcOpenMemHandle(&e->mapped, desc->handle,
                                                      UMPI_CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
        if (r != UMPI_CUDA_SUCCESS) {
            char ebuf[128];
            e->mapped = 0;
            e->failed = 1;
            umpi_cuda_slow_path(UMPI_CUDA_STAT_ipc_fallback,
                                "cuda: peer %d's IPC handle of %#llx (device %d) could not be opened: %s", peer,
                                (unsigned long long) desc->base, (int) desc->device,
                                umpi_cuda_strerror(r, ebuf, sizeof(ebuf)));
        } else {
            umpi_cuda_stat_add(UMPI_CUDA_STAT_ipc_opened);
        }
        umpi__link(&umpi__imports, e);
    } else {
        umpi__touch(&umpi__imports, e);
        if (e->failed)
            umpi_cuda_slow_path(UMPI_CUDA_STAT_ipc_fallback,
                                "cuda: peer %d's IPC handle of %#llx failed to open before; not tried again", peer,
                                (unsigned long long) desc->base);
        else
            umpi_cuda_stat_hot(UMPI_CUDA_STAT_ipc_hits);
    }
    if (!e->failed) {
        if (e->refs++ == 0)
            umpi__imports.in_use++;
        *ptr = (void *) (uintptr_t) (e->mapped + desc->offset);
        *ref = e;
    }
    umpi__trim(&umpi__imports);
    umpi__unlock();
    return UMPI_OK;
}

void umpi_cuda_ipc_release(umpi_cuda_ipc_ref_t *e)
{
    if (e == NULL)
        return;
    umpi__lock();
    if (--e->refs == 0) {
        if (e->detached) {
            struct umpi_cuda_ipc_entry **pp = &umpi__imports.detached;
            while (*pp != e)
                pp = &(*pp)->hnext;
            *pp = e->hnext;
            umpi__close(e);
        } else {
            umpi__imports.in_use--;
            umpi__trim(&umpi__imports);
        }
    }
    umpi__unlock();
}

void umpi_cuda_ipc_forget_peer(int peer)
{
    umpi__lock();
    struct umpi_cuda_ipc_entry *e = umpi__imports.head;
    while (e != NULL) {
        struct umpi_cuda_ipc_entry *next = e->next;
        if (e->peer == peer)
            umpi__drop(&umpi__imports, e);
        e = next;
    }
    umpi__unlock();
}

void umpi_cuda_ipc_counts(size_t *mappings, size_t *in_use, size_t *exports)
{
    umpi__lock();
    *mappings = umpi__imports.count;
    *in_use = umpi__imports.in_use;
    *exports = umpi__exports.count;
    umpi__unlock();
}

static void umpi__table_clear(struct umpi__ipc_table *t)
{
    while (t->head != NULL) {
        struct umpi_cuda_ipc_entry *e = t->head;
        if (e->refs > 0)
            umpi_debug(1, "cuda: IPC mapping of peer %d's %#llx still held by %d transfer(s) at finalize", e->peer,
                       (unsigned long long) e->base, e->refs);
        umpi__unlink(t, e);
        umpi__close(e);
    }
    while (t->detached != NULL) {
        struct umpi_cuda_ipc_entry *e = t->detached;
        t->detached = e->hnext;
        umpi_debug(1, "cuda: stale IPC mapping of peer %d's %#llx still held at finalize", e->peer,
                   (unsigned long long) e->base);
        umpi__close(e);
    }
    t->in_use = 0;
}

void umpi_cuda_ipc_finalize(void)
{
    umpi__lock();
    umpi__table_clear(&umpi__imports);
    umpi__table_clear(&umpi__exports);
    umpi__unlock();
}
