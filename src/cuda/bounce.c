/*
 * Pinned host buffers for small device data on its way through host memory (interface:
 * umpi_cuda_bounce.h): the host side of a small device message, a collective's host copies.
 *
 * Why pinned: the driver moves pageable memory through staging buffers of its own, synchronously
 * and with more work per copy; pinned memory is what its copy engines read and write directly,
 * and what a GPU kernel can write (packing a datatype straight into the buffer).
 *
 * Why a pool of size classes: pinning memory costs milliseconds (cuMemHostAlloc), a message must
 * not. Requests are rounded up to a power of two from 256 bytes to UMPI_CUDA_BOUNCE_MAX; each class
 * keeps a free list, refilled by cutting a slab of UMPI__SLAB bytes (one cuMemHostAlloc, counted as
 * stage_allocs) into buffers of the class. Buffers go back to their class's list and stay pinned
 * until MPI_Finalize. Larger requests are not pooled: the caller gets malloc'ed memory and the
 * pipeline (pipeline.c) is the path for large device data.
 *
 * Threads: the lists are guarded by a mutex under MPI_THREAD_MULTIPLE only, like the big lock.
 */
#include "cuda/umpi_cuda_bounce.h"

#include <stdlib.h>

#define UMPI__MIN_SHIFT 8                     /* 256 bytes */
#define UMPI__MAX_SHIFT 16                    /* UMPI_CUDA_BOUNCE_MAX, 64 KiB */
#define UMPI__NCLASSES (UMPI__MAX_SHIFT - UMPI__MIN_SHIFT + 1)
#define UMPI__SLAB ((size_t) 256 << 10)       /* bytes pinned at a time */
_Static_assert(((size_t) 1 << UMPI__MAX_SHIFT) == UMPI_CUDA_BOUNCE_MAX, "the largest class is the limit");

struct umpi__free {
    struct umpi__free *next;
};

struct umpi__slab {
    struct umpi__slab *next;
    void *mem;
};

static struct umpi__free *umpi__lists[UMPI__NCLASSES];
static struct umpi__slab *umpi__slabs;
static size_t umpi__out; /* buffers handed out and not returned */
static pthread_mutex_t umpi__lock_m = PTHREAD_MUTEX_INITIALIZER;

static void umpi__lock(void)
{
    if (umpi_unlikely(umpi_global.is_multi))
        pthread_mutex_lock(&umpi__lock_m);
}

static void umpi__unlock(void)
{
    if (umpi_unlikely(umpi_global.is_multi))
        pthread_mutex_unlock(&umpi__lock_m);
}

/* The class of n bytes (n at most UMPI_CUDA_BOUNCE_MAX). */
static unsigned umpi__class(size_t n)
{
    unsigned c = 0;
    while (((size_t) 1 << (UMPI__MIN_SHIFT + c)) < n)
        c++;
    return c;
}

/* A new slab cut into buffers of class c, on c's list. Under the lock. */
static umpi_status_t umpi__refill(unsigned c)
{
    struct umpi__slab *s = malloc(sizeof(*s));
    if (s == NULL) {
        umpi_status_msg("no memory to describe a pinned slab");
        return UMPI_ERR_NOMEM;
    }
    CUresult r = umpi_cuda_drv.cuMemHostAlloc(&s->mem, UMPI__SLAB, UMPI_CU_MEMHOSTALLOC_PORTABLE);
    if (r != UMPI_CUDA_SUCCESS) {
        char buf[160];
        umpi_status_msg("cuMemHostAlloc of a pinned slab for small device data failed: %s",
                        umpi_cuda_strerror(r, buf, sizeof(buf)));
        free(s);
        return UMPI_ERR_OTHER;
    }
    umpi_cuda_slow_path(UMPI_CUDA_STAT_stage_allocs, "cuda: %zu KiB of pinned memory for buffers of %zu bytes",
                        UMPI__SLAB >> 10, (size_t) 1 << (UMPI__MIN_SHIFT + c));
    s->next = umpi__slabs;
    umpi__slabs = s;
    size_t size = (size_t) 1 << (UMPI__MIN_SHIFT + c);
    for (size_t off = UMPI__SLAB; off >= size; off -= size) {
        struct umpi__free *f = (struct umpi__free *) ((char *) s->mem + off - size);
        f->next = umpi__lists[c];
        umpi__lists[c] = f;
    }
    return UMPI_OK;
}

umpi_status_t umpi_cuda_bounce_get(size_t n, void **p)
{
    if (n > UMPI_CUDA_BOUNCE_MAX) {
        *p = malloc(n);
        if (*p != NULL)
            return UMPI_OK;
        umpi_status_msg("out of memory for a %zu-byte host buffer", n);
        return UMPI_ERR_NOMEM;
    }
    unsigned c = umpi__class(n);
    umpi__lock();
    umpi_status_t st = umpi__lists[c] != NULL ? UMPI_OK : umpi__refill(c);
    if (st == UMPI_OK) {
        struct umpi__free *f = umpi__lists[c];
        umpi__lists[c] = f->next;
        umpi__out++;
        *p = f;
    }
    umpi__unlock();
    return st;
}

void umpi_cuda_bounce_put(void *p, size_t n)
{
    if (p == NULL)
        return;
    if (n > UMPI_CUDA_BOUNCE_MAX) {
        free(p);
        return;
    }
    unsigned c = umpi__class(n);
    struct umpi__free *f = p;
    umpi__lock();
    f->next = umpi__lists[c];
    umpi__lists[c] = f;
    umpi__out--;
    umpi__unlock();
}

size_t umpi_cuda_bounce_out(void)
{
    return umpi__out;
}

void umpi_cuda_bounce_finalize(void)
{
    umpi__lock();
    if (umpi__out != 0)
        umpi_debug(1, "cuda: %zu pinned buffer(s) for small device data still in use at finalize", umpi__out);
    while (umpi__slabs != NULL) {
        struct umpi__slab *s = umpi__slabs;
        umpi__slabs = s->next;
        umpi_cuda_drv.cuMemFreeHost(s->mem);
        free(s);
    }
    for (unsigned c = 0; c < UMPI__NCLASSES; c++)
        umpi__lists[c] = NULL;
    umpi__out = 0;
    umpi__unlock();
}
