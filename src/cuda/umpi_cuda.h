/*
 * src/cuda: services for device memory: the driver loader and buffer classification (here), CUDA
 * IPC caches (umpi_cuda_ipc.h), the pinned pipeline (umpi_cuda_pipe.h), driver copies
 * (umpi_cuda_copy.h), GPU kernels (umpi_cuda_kern.h) and NCCL (umpi_cuda_nccl.h). The protocols
 * that use them live with their callers: point-to-point's in src/pt2pt (umpi_p2p_gpu.h), the
 * collectives' in src/coll; README.md, "GPU buffers".
 *
 *   MPI_Init -> umpi_cuda_init: UMPI_CUDA=0|1|auto -> dlopen libcuda.so.1 -> dlsym the table ->
 *               cuInit -> a device? -> umpi_cuda_active = 1
 *   per call -> umpi_cuda_classify(buf): not active? host (one branch).
 *               host granule cached? host (one load, one compare).
 *               device/pinned/managed range cached? that range (binary search, under a lock
 *               with THREAD_MULTIPLE). Otherwise one cuPointerGetAttributes, result cached.
 *   finalize -> counters at UMPI_DEBUG>=1, cache freed, dlclose.
 *
 * The cache and its policies are described in classify.c.
 */
#ifndef UMPI_CUDA_H
#define UMPI_CUDA_H

#include "core/umpi.h"
#include "cuda/umpi_cuda_drv.h"

/* ---- state --------------------------------------------------------------------------------- */

/* 1 when CUDA is in use: the driver loaded, cuInit succeeded, at least one device. */
extern int umpi_cuda_active;
/* 1 in libmpi, whose point-to-point and collectives carry device buffers (MPI_Init sets it);
 * MPIX_Query_cuda_support() answers umpi_cuda_active && this. 0 in programs that link src/cuda
 * alone (the unit tests). */
extern int umpi_cuda_device_buffers;

/* What umpi_info and UMPI_DEBUG show. */
struct umpi_cuda_state {
    const char *mode;      /* "auto", "0", "1": UMPI_CUDA as understood */
    int loaded;            /* the library was opened and every required symbol found */
    int driver_version;    /* cuDriverGetVersion: 12040 is 12.4; 0 if unknown */
    int devices;           /* cuDeviceGetCount, or 0 */
    int active;            /* umpi_cuda_active */
    char why[256];         /* why CUDA is not active (or what was found when it is) */
    int ipc;               /* UMPI_CUDA_IPC: device messages within a node may use CUDA IPC */
};

/*
 * Reads UMPI_CUDA and loads the driver. With UMPI_CUDA=1 a missing driver or device is an error
 * (UMPI_ERR_OTHER, cause in umpi_status_last_msg()); otherwise the process goes on host-only.
 * Exported for umpi_info, which calls it without MPI_Init.
 */
umpi_status_t umpi_cuda_init(void) UMPI_EXPORT;
/* The same, with another library name or (libname NULL) a ready table: the unit tests' entry. */
umpi_status_t umpi_cuda_setup(const char *libname, const struct umpi_cuda_driver *fake);
/* The value of an on/off/auto knob (UMPI_CUDA, UMPI_NCCL, UMPI_CUDA_COLL_IPC): 0 never ("0", "no",
 * "off", "false"), 1 required ("1", "yes", "on", "true"), 2 auto (NULL or "auto"), -1 not understood. */
int umpi_cuda_mode_parse(const char *s);
/* Prints the counters at UMPI_DEBUG>=1, empties the cache, closes the library. */
void umpi_cuda_finalize(void) UMPI_EXPORT;
void umpi_cuda_get_state(struct umpi_cuda_state *st) UMPI_EXPORT;

/* loader.c, for start.c: the driver opened (libname, or the ready table `fake`), and closed. */
umpi_status_t umpi_cuda_driver_open(const char *libname, const struct umpi_cuda_driver *fake);
void umpi_cuda_driver_close(void);

/* "CUDA_ERROR_INVALID_VALUE: invalid argument" for a CUresult, via the driver when it is loaded. */
const char *umpi_cuda_strerror(CUresult r, char *buf, size_t len);

/*
 * The streams umpi queues its own copies and kernels on (the staging pool's, NCCL's) are blocking
 * streams: the driver runs their work after whatever the application queued before on the legacy
 * default stream, and the legacy stream's later work after theirs. So a buffer the application
 * filled or cleared with the synchronous driver calls (cuMemcpy from pageable memory and cuMemset
 * return before the device has written it) is read or written by umpi only after those writes,
 * with no host-side wait: what the application sees as done before an MPI call is done for umpi
 * too. Work on the application's own non-blocking streams is not waited for: as with every
 * CUDA-aware MPI, the application synchronizes those before handing their buffers to MPI.
 */
#define UMPI_CUDA_STREAM_FLAGS UMPI_CU_STREAM_DEFAULT

/* ---- slow-path counters ------------------------------------------------------------------------ */

/*
 * UMPI_CUDA_STAT(name, doc): every event that costs more than the fast path. Counted always,
 * printed at finalize with UMPI_DEBUG>=1. Counters bumped on a fast path are approximate under
 * MPI_THREAD_MULTIPLE (plain load and store, no locked instruction); the others are exact.
 */
#define UMPI_CUDA_STATS(X)                                                                          \
    X(host_hits, "host buffers answered by the granule cache (no driver call)")                     \
    X(range_hits, "device, managed or pinned buffers answered by the range cache")                 \
    X(driver_queries, "cuPointerGetAttributes calls (cache misses)")                                \
    X(query_errors, "cuPointerGetAttributes failures")                                              \
    X(range_replaced, "cached ranges dropped because a new allocation overlaps them")              \
    X(range_overflow, "times the range cache was full and emptied")                                 \
    X(buffer_id_changed, "validations that found a range freed and allocated again")               \
    X(host_flushes, "times the host granule cache was emptied (a new device range was seen)")      \
    X(staged_copies, "device messages moved by one copy through a host buffer (small, or from a host sender)") \
    X(pipelined, "device buffers moved by the pinned-buffer pipeline")                              \
    X(ipc_opened, "CUDA IPC handles opened (cuIpcOpenMemHandle)")                                   \
    X(ipc_hits, "CUDA IPC mappings reused from the cache")                                          \
    X(ipc_fallback, "device buffers that CUDA IPC could not carry (reason at UMPI_DEBUG=1)")        \
    X(ipc_stale, "IPC mappings or exported handles dropped: the allocation was freed and reused")  \
    X(ipc_evicted, "IPC mappings closed to stay within UMPI_CUDA_IPC_CACHE")                        \
    X(stage_allocs, "pinned staging buffers allocated (cuMemHostAlloc) for the pipeline")          \
    /* point-to-point and collectives on device buffers (src/pt2pt/gpu_*.c, copy.c) */             \
    X(ipc_transfers, "device messages copied by the receiver straight from the sender's GPU memory (CUDA IPC)") \
    X(self_copies, "device messages to the own process copied directly on the GPU")                 \
    X(pipe_fallback, "large device messages not sent by CUDA IPC (reason at UMPI_DEBUG=1)")          \
    X(dtype_staged, "non-contiguous device buffers (un)packed through host memory (no GPU kernels yet)") \
    X(coll_staged, "collective steps whose device buffer was moved through host memory")           \
    X(coll_whole, "small blocking collectives on device buffers run whole on host copies (one copy in, one out)") \
    X(reduce_staged, "reductions on device buffers computed on the CPU through host copies (a host operand, a user op, no GPU kernel)") \
    /* collectives within a node through CUDA IPC (src/coll/device_ipc.c) */ \
    X(coll_ipc, "collectives on device buffers done through CUDA IPC between the members of one node") \
    X(coll_ipc_fallback, "large collectives in one node that the members agreed to move through host memory instead of CUDA IPC (reason at UMPI_DEBUG=1)") \
    /* NCCL (src/coll/nccl.c) */                                                                   \
    X(nccl_colls, "blocking collectives on device buffers run by NCCL")                              \
    X(nccl_comms, "NCCL communicators made (one per MPI communicator that used NCCL)")               \
    X(nccl_declined, "collectives on device buffers at or above UMPI_NCCL_THRESH that NCCL did not run (reason at UMPI_DEBUG=1)") \
    /* one-sided communication (src/rma/devmem.c) */                                               \
    X(rma_staged, "one-sided operations whose origin buffer was device memory, packed or unpacked through host memory") \
    X(rma_target, "one-sided requests applied to device window memory through driver copies (at the target)") \
    X(rma_ipc, "one-sided puts and gets copied by the origin straight to or from a device window of its node (CUDA IPC)") \
    X(late_envelopes, "small host receives given a longer device message they matched (MPI_ERR_TRUNCATE) when its sender nudged")

enum umpi_cuda_stat {
#define UMPI__CUDA_STAT_ENUM(name, doc) UMPI_CUDA_STAT_##name,
    UMPI_CUDA_STATS(UMPI__CUDA_STAT_ENUM)
#undef UMPI__CUDA_STAT_ENUM
    UMPI_CUDA_NSTATS
};

extern unsigned long umpi_cuda_stats[UMPI_CUDA_NSTATS];
extern const char *const umpi_cuda_stat_names[UMPI_CUDA_NSTATS];

/* Approximate count for hot paths. */
static inline void umpi_cuda_stat_hot(enum umpi_cuda_stat s)
{
    __atomic_store_n(&umpi_cuda_stats[s], __atomic_load_n(&umpi_cuda_stats[s], __ATOMIC_RELAXED) + 1,
                     __ATOMIC_RELAXED);
}

/* The counters that are not 0, at UMPI_DEBUG>=1 (each with what it counts at 2): MPI_Finalize. */
void umpi_cuda_stats_print(void);

/* Exact count of a slow-path event, and at UMPI_DEBUG>=1 a line saying why it was taken. */
void umpi_cuda_slow_path(enum umpi_cuda_stat s, const char *fmt, ...) UMPI_PRINTF(2, 3);
static inline void umpi_cuda_stat_add(enum umpi_cuda_stat s)
{
    __atomic_fetch_add(&umpi_cuda_stats[s], 1, __ATOMIC_RELAXED);
}

/* ---- buffer classification --------------------------------------------------------------------- */

typedef enum {
    UMPI_CUDA_MEM_HOST = 0,        /* pageable host memory (or memory CUDA does not know) */
    UMPI_CUDA_MEM_HOST_PINNED = 1, /* cuMemHostAlloc / cuMemHostRegister: host, DMA-able */
    UMPI_CUDA_MEM_DEVICE = 2,      /* device memory: the CPU must not touch it */
    UMPI_CUDA_MEM_MANAGED = 3,     /* cuMemAllocManaged: migrates on touch */
} umpi_cuda_memtype_t;

#define UMPI_CUDA_BUF_VMM         0x1 /* cuMemCreate + cuMemMap (not legacy-IPC capable, no pool) */
#define UMPI_CUDA_BUF_POOL        0x2 /* stream-ordered allocator (cuMemAllocAsync, a memory pool) */
#define UMPI_CUDA_BUF_LEGACY_IPC  0x4 /* cuIpcGetMemHandle works on it */
#define UMPI_CUDA_BUF_MAPPED      0x8 /* the driver says the range is mapped */

struct umpi_cuda_buf_info {
    umpi_cuda_memtype_t type;
    unsigned flags;               /* UMPI_CUDA_BUF_* */
    int device;                   /* ordinal for DEVICE/MANAGED, -1 otherwise */
    uintptr_t range_start;        /* the allocation holding the buffer; 0 and 0 for pageable host */
    size_t range_size;
    unsigned long long buffer_id; /* the driver's id of that allocation, 0 if none */
};

static inline int umpi_cuda_is_gpu(const struct umpi_cuda_buf_info *info)
{
    return info->type >= UMPI_CUDA_MEM_DEVICE;
}

/* Host granule cache (classify.c): a direct-mapped table of 2 MiB granules known to be host. */
#define UMPI_CUDA_GRANULE_SHIFT 21
#define UMPI_CUDA_HOST_SLOTS 1024
extern uint64_t umpi_cuda_host_slots[UMPI_CUDA_HOST_SLOTS];
extern uint64_t umpi_cuda_host_epoch;

static inline uint64_t umpi_cuda_host_key(uintptr_t p, uint64_t epoch)
{
    /* granule index + 1 (so that 0 is never a key) above a 16-bit epoch */
    return ((((uint64_t) p >> UMPI_CUDA_GRANULE_SHIFT) + 1) << 16) | (epoch & 0xffff);
}

umpi_status_t umpi_cuda_classify_slow(const void *ptr, size_t len, struct umpi_cuda_buf_info *info);

static inline void umpi_cuda_info_host(struct umpi_cuda_buf_info *info)
{
    info->type = UMPI_CUDA_MEM_HOST;
    info->flags = 0;
    info->device = -1;
    info->range_start = 0;
    info->range_size = 0;
    info->buffer_id = 0;
}

/**
 * Says what kind of memory [ptr, ptr+len) is. Thread-safe: callers need not hold the big lock.
 * A zero-length buffer is host (nothing of it is ever read or written), without a driver call.
 * Returns UMPI_OK, or UMPI_ERR_OTHER (cause in umpi_status_last_msg()) when the driver fails or the
 * buffer runs past the end of its device allocation.
 */
static inline umpi_status_t umpi_cuda_classify(const void *ptr, size_t len, struct umpi_cuda_buf_info *info)
{
    if (umpi_likely(!umpi_cuda_active) || len == 0) {
        umpi_cuda_info_host(info);
        return UMPI_OK;
    }
    uintptr_t p = (uintptr_t) ptr;
    uint64_t key = umpi_cuda_host_key(p, __atomic_load_n(&umpi_cuda_host_epoch, __ATOMIC_RELAXED));
    unsigned slot = (unsigned) (p >> UMPI_CUDA_GRANULE_SHIFT) & (UMPI_CUDA_HOST_SLOTS - 1);
    if (umpi_likely(__atomic_load_n(&umpi_cuda_host_slots[slot], __ATOMIC_RELAXED) == key)) {
        umpi_cuda_stat_hot(UMPI_CUDA_STAT_host_hits);
        umpi_cuda_info_host(info);
        return UMPI_OK;
    }
    return umpi_cuda_classify_slow(ptr, len, info);
}

/* The granule cache alone: 1 when ptr's 2 MiB granule is known to be host memory (then so is any
 * buffer starting there), 0 when the full classification must answer. For the hot paths of a GPU
 * machine (point-to-point on host buffers): one load and one compare, no description filled. */
static inline int umpi_cuda_known_host(const void *ptr)
{
    uintptr_t p = (uintptr_t) ptr;
    uint64_t key = umpi_cuda_host_key(p, __atomic_load_n(&umpi_cuda_host_epoch, __ATOMIC_RELAXED));
    unsigned slot = (unsigned) (p >> UMPI_CUDA_GRANULE_SHIFT) & (UMPI_CUDA_HOST_SLOTS - 1);
    if (umpi_likely(__atomic_load_n(&umpi_cuda_host_slots[slot], __ATOMIC_RELAXED) == key)) {
        umpi_cuda_stat_hot(UMPI_CUDA_STAT_host_hits);
        return 1;
    }
    return 0;
}

/**
 * For CUDA IPC: asks the driver for the buffer id of info's range again and says whether
 * it is still the allocation that was classified (1), or was freed and reused (0: the cache entry is
 * dropped and info refreshed). Classification never does this; an IPC handle must.
 */
int umpi_cuda_validate(const void *ptr, size_t len, struct umpi_cuda_buf_info *info);

/* Drops what the caches know about [ptr, ptr+len): umpi calls it before freeing memory it registered
 * or allocated itself. */
void umpi_cuda_forget(const void *ptr, size_t len);

/*
 * Address-space events (classify.c says why the caches need them): umpi_cuda_vm_changed(start, len)
 * is told of every mapping and unmapping in the process, from the thread that made it, inside
 * mmap or munmap (it takes no lock that anything mapping memory could hold, and allocates nothing);
 * umpi_cuda_cache_watched(1) says from then on every one will be told, (0) that they no longer are.
 */
void umpi_cuda_vm_changed(uintptr_t start, size_t len);
void umpi_cuda_cache_watched(int on);

/* classify.c internals that loader.c calls. */
void umpi_cuda_cache_reset(void);
void umpi_cuda_cache_finalize(void);

#endif /* UMPI_CUDA_H */
