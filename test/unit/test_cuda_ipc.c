/*
 * The CUDA IPC caches (src/cuda/ipc_cache.c) against the fake driver: exports cached per
 * allocation and renewed on a new buffer id; imports opened once per allocation, reused for
 * offsets inside it, replaced when the peer reallocates, bounded by an LRU limit that skips
 * mappings in use, and a failing open reported as a fallback. The fake refuses a second open of
 * an open allocation (CUDA_ERROR_ALREADY_MAPPED) as the driver does; no test may ever meet it.
 */
#include "cuda/umpi_cuda_ipc.h"
#include "fake_cuda.h"
#include "unit.h"

#define DEV ((uintptr_t) 0x7e0000000000ULL)
#define MIB ((size_t) 1 << 20)

static unsigned long stat(enum umpi_cuda_stat s) { return umpi_cuda_stats[s]; }

/* The descriptor a peer would send for an allocation (base, size, id) at offset off. */
static struct umpi_cuda_ipc_desc peer_desc(uint64_t base, uint64_t size, unsigned long long id, uint64_t off)
{
    struct umpi_cuda_ipc_desc d;
    struct fake_handle fh = { base, id, { 0 } };
    memset(&d, 0, sizeof(d));
    memcpy(&d.handle, &fh, sizeof(fh));
    d.base = base;
    d.size = size;
    d.buffer_id = id;
    d.offset = off;
    return d;
}

static void test_export(void)
{
    struct umpi_cuda_ipc_desc d;
    int ok;
    size_t maps, in_use, exports;

    SECTION("export: one handle per allocation, offsets inside it")
    {
        fake_start();
        fake_get_handle_calls = 0;
        fake_add(DEV, MIB, 7);
        CHECK(umpi_cuda_ipc_export((void *) (DEV + 100), 50, &d, &ok) == UMPI_OK && ok, "exported");
        CHECK(d.base == DEV && d.size == MIB && d.buffer_id == 7 && d.offset == 100 && d.device == 0,
              "desc base %#llx size %llu id %llu offset %llu", (unsigned long long) d.base,
              (unsigned long long) d.size, (unsigned long long) d.buffer_id, (unsigned long long) d.offset);
        CHECK(fake_get_handle_calls == 1, "one cuIpcGetMemHandle: %d", fake_get_handle_calls);
        CHECK(umpi_cuda_ipc_export((void *) (DEV + 4096), 4096, &d, &ok) == UMPI_OK && ok && d.offset == 4096 &&
              d.base == DEV, "second buffer in the same allocation");
        CHECK(fake_get_handle_calls == 1, "handle cached: %d calls", fake_get_handle_calls);
        umpi_cuda_ipc_counts(&maps, &in_use, &exports);
        CHECK(exports == 1 && maps == 0, "%zu exports %zu mappings", exports, maps);
        d.offset = 0;
        CHECK(umpi_cuda_ipc_export((void *) (DEV + MIB - 8), 16, &d, &ok) == UMPI_ERR_OTHER && !ok,
              "past the end of the allocation: %s", umpi_status_last_msg());
    }

    SECTION("export: freed and allocated again at the same base")
    {
        fake_start();
        fake_get_handle_calls = 0;
        struct fake_alloc *a = fake_add(DEV, MIB, 7);
        umpi_cuda_ipc_export((void *) DEV, 64, &d, &ok);
        struct umpi_cuda_ipc_desc first = d;
        a->live = 0;
        fake_add(DEV, MIB, 8);
        CHECK(umpi_cuda_ipc_export((void *) DEV, 64, &d, &ok) == UMPI_OK && ok && d.buffer_id == 8,
              "new id %llu", (unsigned long long) d.buffer_id);
        CHECK(fake_get_handle_calls == 2 && memcmp(&first.handle, &d.handle, sizeof(d.handle)) != 0,
              "a new handle: %d calls", fake_get_handle_calls);
        CHECK(stat(UMPI_CUDA_STAT_ipc_stale) == 1 && stat(UMPI_CUDA_STAT_buffer_id_changed) == 1, "counted");
        umpi_cuda_ipc_counts(&maps, &in_use, &exports);
        CHECK(exports == 1, "the stale export is gone: %zu", exports);
    }

    SECTION("export: what IPC cannot carry")
    {
        static char host[256];
        fake_start();
        CHECK(umpi_cuda_ipc_export(host, sizeof(host), &d, &ok) == UMPI_OK && !ok, "host memory");
        struct fake_alloc *m = fake_add(DEV, MIB, 1);
        m->managed = 1;
        CHECK(umpi_cuda_ipc_export((void *) DEV, 8, &d, &ok) == UMPI_OK && !ok, "managed memory");
        struct fake_alloc *v = fake_add(DEV + 4 * MIB, MIB, 2);
        v->legacy_ipc = 0;
        CHECK(umpi_cuda_ipc_export((void *) (DEV + 4 * MIB), 8, &d, &ok) == UMPI_OK && !ok, "VMM allocation");
        struct fake_alloc *p = fake_add(DEV + 8 * MIB, MIB, 3);
        p->legacy_ipc = 0;
        p->pool = 1;
        CHECK(umpi_cuda_ipc_export((void *) (DEV + 8 * MIB), 8, &d, &ok) == UMPI_OK && !ok, "pool allocation");
        fake_add(DEV + 12 * MIB, MIB, 4);
        fake_get_handle_fail = 1;
        CHECK(umpi_cuda_ipc_export((void *) (DEV + 12 * MIB), 8, &d, &ok) == UMPI_OK && !ok,
              "cuIpcGetMemHandle fails");
        CHECK(stat(UMPI_CUDA_STAT_ipc_fallback) == 5, "5 fallbacks counted: %lu", stat(UMPI_CUDA_STAT_ipc_fallback));
        fake_get_handle_fail = 0;
        CHECK(umpi_cuda_ipc_export((void *) (DEV + 12 * MIB), 8, &d, &ok) == UMPI_OK && ok, "then it works");
    }
}

static void test_import(void)
{
    struct umpi_cuda_ipc_desc d;
    umpi_cuda_ipc_ref_t *r1, *r2, *r3;
    void *p1, *p2, *p3;
    size_t maps, in_use, exports;

    SECTION("import: opened once, offsets reuse the mapping, peers apart")
    {
        fake_start();
        int opens = fake_opens;
        d = peer_desc(DEV, MIB, 5, 100);
        CHECK(umpi_cuda_ipc_open(1, &d, 50, &p1, &r1) == UMPI_OK && p1 != NULL && r1 != NULL, "opened");
        CHECK(fake_opens == opens + 1, "one cuIpcOpenMemHandle");
        d.offset = 8192;
        CHECK(umpi_cuda_ipc_open(1, &d, 4096, &p2, &r2) == UMPI_OK && r2 == r1 &&
              (char *) p2 - (char *) p1 == 8192 - 100, "offset inside the cached allocation");
        CHECK(fake_opens == opens + 1 && stat(UMPI_CUDA_STAT_ipc_hits) == 1, "no second open");
        umpi_cuda_ipc_counts(&maps, &in_use, &exports);
        CHECK(maps == 1 && in_use == 1, "%zu mappings, %zu in use", maps, in_use);
        /* another process may have an allocation at the same address: a different mapping */
        d = peer_desc(DEV, MIB, 5000, 0);
        CHECK(umpi_cuda_ipc_open(2, &d, 8, &p3, &r3) == UMPI_OK && r3 != r1 && fake_opens == opens + 2,
              "peer 2's allocation at the same base");
        umpi_cuda_ipc_release(r1);
        umpi_cuda_ipc_release(r2);
        umpi_cuda_ipc_release(r3);
        umpi_cuda_ipc_counts(&maps, &in_use, &exports);
        CHECK(maps == 2 && in_use == 0, "cached after release: %zu, in use %zu", maps, in_use);
        d = peer_desc(DEV, MIB, 5, MIB - 8);
        CHECK(umpi_cuda_ipc_open(1, &d, 16, &p1, &r1) == UMPI_ERR_INTERN && p1 == NULL, "past the end: %s",
              umpi_status_last_msg());
        CHECK(fake_already_mapped == 0, "never ALREADY_MAPPED");
    }

    SECTION("import: the peer freed and reallocated at the same base")
    {
        fake_start();
        int closes = fake_closes;
        d = peer_desc(DEV, MIB, 5, 0);
        umpi_cuda_ipc_open(1, &d, 64, &p1, &r1);
        umpi_cuda_ipc_release(r1);
        d = peer_desc(DEV, MIB, 6, 0);
        CHECK(umpi_cuda_ipc_open(1, &d, 64, &p2, &r2) == UMPI_OK && p2 != NULL && p2 != p1, "new mapping");
        CHECK(fake_closes == closes + 1 && stat(UMPI_CUDA_STAT_ipc_stale) == 1, "stale one closed first");
        /* in use while the peer reallocates: it stays open for its holder, then closes */
        d = peer_desc(DEV, 2 * MIB, 7, 0);
        CHECK(umpi_cuda_ipc_open(1, &d, 64, &p3, &r3) == UMPI_OK && p3 != NULL && r3 != r2, "third allocation");
        CHECK(fake_closes == closes + 1, "in use: not closed");
        umpi_cuda_ipc_counts(&maps, &in_use, &exports);
        CHECK(maps == 1 && in_use == 1, "the stale one is out of the cache: %zu, %zu in use", maps, in_use);
        umpi_cuda_ipc_release(r2);
        CHECK(fake_closes == closes + 2, "closed at its last release");
        /* a new allocation overlapping an old one at another base replaces it too */
        umpi_cuda_ipc_release(r3);
        d = peer_desc(DEV + MIB, MIB, 8, 0);
        CHECK(umpi_cuda_ipc_open(1, &d, 64, &p1, &r1) == UMPI_OK && fake_closes == closes + 3,
              "overlapping allocation: the old one closed");
        umpi_cuda_ipc_release(r1);
        CHECK(fake_already_mapped == 0 && fake_bad_closes == 0, "never ALREADY_MAPPED, no bad close");
    }

    SECTION("import: LRU limit never closes a mapping in use")
    {
        umpi_cuda_ipc_ref_t *r[6];
        void *p;
        fake_start();
        umpi_config.cuda_ipc_cache = 3;
        int closes = fake_closes;
        for (int i = 0; i < 3; i++) {
            d = peer_desc(DEV + (uint64_t) i * 4 * MIB, MIB, 100 + (unsigned) i, 0);
            umpi_cuda_ipc_open(1, &d, 8, &p, &r[i]);
        }
        umpi_cuda_ipc_release(r[1]);
        umpi_cuda_ipc_release(r[2]);
        /* r[0] is the oldest but in use: the fourth allocation evicts r[1] */
        d = peer_desc(DEV + 12 * MIB, MIB, 103, 0);
        umpi_cuda_ipc_open(1, &d, 8, &p, &r[3]);
        CHECK(fake_closes == closes + 1 && stat(UMPI_CUDA_STAT_ipc_evicted) == 1, "one eviction");
        d = peer_desc(DEV, MIB, 100, 0);
        int opens = fake_opens;
        umpi_cuda_ipc_open(1, &d, 8, &p, &r[4]);
        CHECK(fake_opens == opens && r[4] == r[0], "the in-use oldest survived");
        d = peer_desc(DEV + 4 * MIB, MIB, 101, 0);
        umpi_cuda_ipc_open(1, &d, 8, &p, &r[5]);
        CHECK(fake_opens == opens + 1, "the evicted one is opened again");
        /* all in use now (r0 twice, r3, r5) and r2 evicted: 3 entries; release shrinks nothing below */
        umpi_cuda_ipc_counts(&maps, &in_use, &exports);
        CHECK(maps == 3 && in_use == 3, "%zu mappings, %zu in use", maps, in_use);
        umpi_config.cuda_ipc_cache = 1;
        d = peer_desc(DEV + 20 * MIB, MIB, 105, 0);
        umpi_cuda_ipc_open(1, &d, 8, &p, &r[1]);
        umpi_cuda_ipc_counts(&maps, &in_use, &exports);
        CHECK(maps == 4 && in_use == 4, "over the limit while all are in use: %zu", maps);
        umpi_cuda_ipc_release(r[0]);
        umpi_cuda_ipc_release(r[4]);
        umpi_cuda_ipc_release(r[3]);
        umpi_cuda_ipc_release(r[5]);
        umpi_cuda_ipc_counts(&maps, &in_use, &exports);
        CHECK(maps == 1 && in_use == 1, "back to the limit as they are released: %zu", maps);
        umpi_cuda_ipc_release(r[1]);
        umpi_config.cuda_ipc_cache = 64;
        CHECK(fake_already_mapped == 0 && fake_bad_closes == 0, "never ALREADY_MAPPED, no bad close");
    }

    SECTION("import: a handle that cannot be opened falls back, reported")
    {
        fake_start();
        fake_open_fail = 1;
        d = peer_desc(DEV, MIB, 9, 0);
        CHECK(umpi_cuda_ipc_open(3, &d, 8, &p1, &r1) == UMPI_OK && p1 == NULL && r1 == NULL, "fallback");
        CHECK(stat(UMPI_CUDA_STAT_ipc_fallback) == 1 && stat(UMPI_CUDA_STAT_ipc_opened) == 0, "counted");
        fake_open_fail = 0;
        int opens = fake_opens;
        CHECK(umpi_cuda_ipc_open(3, &d, 8, &p1, &r1) == UMPI_OK && p1 == NULL && fake_opens == opens,
              "not tried again for that allocation");
        CHECK(stat(UMPI_CUDA_STAT_ipc_fallback) == 2, "but counted again");
        d = peer_desc(DEV, MIB, 10, 0);
        CHECK(umpi_cuda_ipc_open(3, &d, 8, &p1, &r1) == UMPI_OK && p1 != NULL && fake_opens == opens + 1,
              "a new allocation is tried");
        umpi_cuda_ipc_release(r1);
    }

    SECTION("import: forget a peer, finalize closes everything")
    {
        fake_start();
        int opens = fake_opens, closes = fake_closes;
        d = peer_desc(DEV, MIB, 11, 0);
        umpi_cuda_ipc_open(4, &d, 8, &p1, &r1);
        umpi_cuda_ipc_release(r1);
        d = peer_desc(DEV, MIB, 12, 0);
        umpi_cuda_ipc_open(5, &d, 8, &p2, &r2);
        umpi_cuda_ipc_forget_peer(4);
        CHECK(fake_closes == closes + 1, "peer 4's mapping closed");
        umpi_cuda_ipc_forget_peer(5);
        CHECK(fake_closes == closes + 1, "peer 5's is in use");
        umpi_cuda_ipc_release(r2);
        CHECK(fake_closes == closes + 2, "closed at release");
        d = peer_desc(DEV + 4 * MIB, MIB, 13, 0);
        umpi_cuda_ipc_open(6, &d, 8, &p1, &r1);
        umpi_cuda_ipc_release(r1);
        umpi_cuda_finalize();
        CHECK(fake_opens - opens == fake_closes - closes && fake_open_now() == 0, "every open closed");
    }
}

/* Two threads open and release the same allocations under MPI_THREAD_MULTIPLE. */
static void *thread_body(void *arg)
{
    long bad = 0;
    (void) arg;
    for (int i = 0; i < 20000; i++) {
        struct umpi_cuda_ipc_desc d = peer_desc(DEV + (uint64_t) (i % 5) * 4 * MIB, MIB, 200 + (unsigned) (i % 5), 64);
        umpi_cuda_ipc_ref_t *r;
        void *p;
        if (umpi_cuda_ipc_open(7, &d, 8, &p, &r) != UMPI_OK || p == NULL)
            bad++;
        umpi_cuda_ipc_release(r);
    }
    return (void *) bad;
}

static void test_threads(void)
{
    SECTION("import: concurrent threads")
    {
        pthread_t t[4];
        long bad = 0;
        fake_start();
        umpi_config.cuda_ipc_cache = 3;
        umpi_global.is_multi = 1;
        for (int i = 0; i < 4; i++)
            pthread_create(&t[i], NULL, thread_body, NULL);
        for (int i = 0; i < 4; i++) {
            void *r;
            pthread_join(t[i], &r);
            bad += (long) r;
        }
        umpi_global.is_multi = 0;
        umpi_config.cuda_ipc_cache = 64;
        CHECK(bad == 0 && fake_already_mapped == 0 && fake_bad_closes == 0, "%ld failures", bad);
    }
}

int main(void)
{
    test_export();
    test_import();
    test_threads();
    umpi_cuda_finalize();
    CHECK(fake_open_now() == 0, "nothing left open");
    return unit_done("test_cuda_ipc");
}
