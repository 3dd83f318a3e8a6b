/*
 * Windows and one-sided communication (MPI_Win_*, MPI_Put/Get/Accumulate and kin).
 *
 * Design: contiguous MPI_Put / MPI_Get go through UCX RMA (ucp_put_nbx / ucp_get_nbx on memory
 * registered at window creation, whose packed remote keys every process gathers then; the knob
 * UMPI_RMA_UCX=0 sends them as messages instead), and need nothing from the target process
 * where the transport does RMA in hardware (UCX emulates it with messages elsewhere, which the
 * target's UCX progress serves). On a shared window, and between the ranks of one node on a window of
 * MPI_Win_allocate, the caller applies puts, gets and accumulates with host buffers itself, in the
 * node's segment (umpi_rma_apply_shared, below).
 * Every other operation (accumulates, derived target datatypes, dynamic windows, a target whose
 * memory could not be registered or is device memory, an origin buffer in device memory) is a
 * message to the target, applied there by the progress engine; except puts and gets to device
 * window memory on the origin's node in fence and PSCW epochs (CUDA IPC, below). Each window has a private
 * communicator (a duplicate of the one it was made on), so its traffic has a context id of its
 * own and can never meet a user's message:
 *
 *   tag 0         UMPI_RMA_TAG_REQ       origin -> target: umpi_rma_hdr_t, target layout, payload
 *   tag 1         UMPI_RMA_TAG_POST      PSCW: target -> origin, "exposure epoch open"
 *   tag 2         UMPI_RMA_TAG_COMPLETE  PSCW: origin -> target, "my accesses are done"
 *   tag 3 + seq   replies                target -> origin: data of a get / fetching op, an ack
 *
 * One request message (all in one UCX tagged message, so one sender's requests arrive in order):
 *
 *   +------------------+-------------------------------+------------------------------+
 *   | umpi_rma_hdr_t   | nblocks x umpi_rma_block_t     | payload (bytes, packed)      |
 *   +------------------+-------------------------------+------------------------------+
 *   blocks: the target's layout of target_count x target_datatype, as (byte offset, length)
 *   from the target address, flattened at the origin (the target never sees the datatype);
 *   payload: put / accumulate data in the packed order of that layout; compare-and-swap: the
 *   origin value then the compare value.
 *
 * The target applies requests one at a time, in arrival order, inside its progress hook: so an
 * accumulate is atomic with respect to every other accumulate (element-wise and more), and the
 * ordering of accumulates from one origin is kept. Get-like operations and the synchronisation
 * requests (lock, unlock, flush) are answered on the origin's reply tag; the origin waits for the
 * answer, so a get sent as a message has its data when the call returns (one through UCX RMA at the
 * next flush: umpi_rma_drain), and "flush" is one round trip whose answer
 * comes after every earlier request of that origin was applied.
 *
 * Progress rule: the target applies requests only while it is inside an MPI call that polls the
 * progress engine (any blocking or testing call: MPI_Win_fence/wait/unlock, MPI_Barrier,
 * MPI_Test, ...). A passive-target operation towards a process that computes without calling MPI
 * completes when that process next enters MPI.
 *
 * Device memory (devmem.c; README, one-sided): window memory of MPI_Win_create or MPI_Win_attach,
 * and every origin, result and compare buffer, may be CUDA device memory, which neither the CPU
 * nor UCX (Debian's has no CUDA transport) may touch:
 *
 *   origin:  classify each buffer (umpi_rma_classify*) -> device: umpi_cuda_pack into the host
 *            payload; the reply umpi_cuda_unpack'ed into it; never the UCX RMA path
 *   target:  window memory classified at MPI_Win_create (w->dev) and at MPI_Win_attach (region
 *            dev) -> device: no UCX key published (umpi_rma_map), and umpi__apply_dev copies the
 *            blocks with the driver: put/get straight; accumulate, get_accumulate and CAS read the
 *            blocks to host memory, combine there as for host memory, and write back, all inside
 *            the one request, so the rule above (one request at a time) keeps them atomic
 *
 * The copies are on umpi's blocking copy stream and waited for before the request is answered (a
 * reply means the data is in place). MPI_Win_allocate(_shared) memory is host memory.
 *
 * CUDA IPC (ipc.c): within a node, a contiguous put or get towards an MPI_Win_create window of
 * device memory, in a fence or PSCW epoch, is one driver copy by the origin between its buffer and
 * its IPC mapping of the target's window (the handles gathered at creation when some process has
 * device memory; mapped through src/cuda/ipc_cache.c on first use, released at MPI_Win_free).
 * Ordering: the origin's copy runs on its own stream, not after the target's legacy-stream work (a
 * cuMemcpy from pageable memory may still be in flight when it returns), so the target passes
 * umpi_cuda_fence in MPI_Win_fence and MPI_Win_post before others may copy; and the origin waits
 * for its copy stream before the fence's barrier and before MPI_Win_complete's notes, so the data
 * is in place when the target's epoch ends. Passive target stays on messages: no call of the target
 * orders its device work against an origin's copies there (it would pass the fence at every call
 * that may precede a remote lock, MPI_Barrier too). Accumulates stay on messages too (to be atomic
 * against the target's message path they would need a lock, or a GPU kernel applying them in one
 * place); so do derived target types, dynamic windows (handles per attached region) and other
 * nodes.
 */
#ifndef UMPI_RMA_H
#define UMPI_RMA_H

#include "core/umpi.h"
#include "core/umpi_err.h"
#include "core/umpi_obj.h"
#include "cuda/umpi_cuda.h"
#include "cuda/umpi_cuda_ipc.h"
#include "netmod/ucx/umpi_ucx_rma.h"
#include "rma/umpi_rma_err.h"

#include <sched.h>

enum {
    UMPI_RMA_TAG_REQ = 0,
    UMPI_RMA_TAG_POST = 1,
    UMPI_RMA_TAG_COMPLETE = 2,
    UMPI_RMA_TAG_REPLY = 3,      /* + sequence number, modulo UMPI_RMA_SEQ_SPAN */
};
#define UMPI_RMA_SEQ_SPAN (1u << 22)

typedef enum {
    UMPI_RMA_PUT = 1,
    UMPI_RMA_GET,
    UMPI_RMA_ACC,        /* accumulate (MPI_REPLACE, MPI_NO_OP included) */
    UMPI_RMA_GACC,       /* get_accumulate, fetch_and_op: the old data comes back, then acc */
    UMPI_RMA_CAS,
    UMPI_RMA_LOCK,
    UMPI_RMA_UNLOCK,
    UMPI_RMA_FLUSH,
} umpi_rma_kind_t;

typedef struct {
    uint32_t kind;           /* umpi_rma_kind_t */
    int32_t origin;          /* rank in the window's group */
    uint32_t reply_tag;      /* where the answer goes (0: none expected) */
    int32_t lock_type;       /* LOCK: MPI_LOCK_SHARED / MPI_LOCK_EXCLUSIVE */
    MPI_Op op;               /* ACC, GACC: a predefined op (the same handle in every process) */
    MPI_Datatype elem;       /* ACC, GACC, CAS: the predefined type of the elements */
    MPI_Aint addr;           /* target: byte offset from the window base (dynamic: an address) */
    uint64_t nblocks;
    uint64_t bytes;          /* payload bytes = bytes the layout covers (CAS: twice one element) */
} umpi_rma_hdr_t;

typedef struct {
    MPI_Aint off;
    MPI_Aint len;
} umpi_rma_block_t;

_Static_assert(sizeof(umpi_rma_hdr_t) % 8 == 0, "blocks after the header stay aligned");

/* What every reply ends with (after its data, if any): whether the request touched memory that the
 * target's dynamic window does not have attached; in the answer to a flush or an unlock, whether an
 * earlier request of the same origin that had no answer did (the origin cannot know the target's
 * attachments, so the target checks, and the error reaches the origin at its next answer). */
typedef struct {
    int64_t code;            /* MPI_SUCCESS or MPI_ERR_RMA_RANGE */
    int64_t lo, hi;          /* MPI_ERR_RMA_RANGE: the addresses accessed, [lo, hi) */
    int64_t earlier;         /* 1: by an earlier request (a flush's or an unlock's answer) */
} umpi_rma_status_t;

typedef struct umpi_rma_region {
    char *base;
    MPI_Aint size;
    int dev;                     /* device memory: applied through driver copies (devmem.c) */
} umpi_rma_region_t;

/* A lock request waiting at the target. */
typedef struct umpi_rma_waiter {
    int origin, lock_type;
    uint32_t reply_tag;
} umpi_rma_waiter_t;

/* CUDA IPC to device window memory (ipc.c): what each process publishes at MPI_Win_create (gathered
 * by every process, the same build everywhere: host byte order), and the origin's mapping of it. */
typedef struct {
    struct umpi_cuda_ipc_desc desc; /* the allocation holding the window's base; offset: of base in it */
    int32_t usable;                 /* 1: desc is valid (device memory that CUDA IPC can export) */
    int32_t pad;
} umpi_rma_ipc_rec_t;
_Static_assert(sizeof(umpi_rma_ipc_rec_t) == 112, "the IPC record is 112 bytes on the wire");

typedef struct {
    umpi_rma_ipc_rec_t rec;
    char *mapped;                   /* the target's window base in my mapping; NULL: not opened yet */
    umpi_cuda_ipc_ref_t *ref;       /* held until MPI_Win_free (or MPI_Finalize) */
    int failed;                     /* the open failed once: messages from then on */
} umpi_rma_ipc_t;

typedef struct umpi_win {
    MPI_Win handle;
    umpi_comm_t *comm;           /* private duplicate of the creating communicator */
    int flavor;                  /* MPI_WIN_FLAVOR_* */
    char *base;
    MPI_Aint size;
    int disp_unit;
    int dev;                     /* base is device memory (MPI_Win_create on GPU memory) */
    MPI_Aint *sizes;             /* every rank's size and disp_unit (origin-side checks) */
    int *disp_units;
    char **shared_bases;         /* FLAVOR_SHARED, ALLOCATE: the part of every rank of my node in my
                                  * mapping of the node's segment (NULL: another node, or no segment) */
    void *shm;                   /* the node's segment, shm_len bytes (NULL: none) */
    size_t shm_len;
    int *shm_lock;               /* with shm: the word after the ranks' parts that serialises every
                                  * data operation on the window's memory (umpi_rma_shm_lock) */
    MPI_Errhandler errhandler;
    MPI_Info info;               /* the hints in force (a private info object) */
    char name[MPI_MAX_OBJECT_NAME];
    struct umpi_attr *attrs;     /* cached attributes of user keyvals (core/umpi_attr.h) */

    /* origin side */
    uint32_t seq;                /* next reply sequence number */
    int fence_epoch;             /* a fence opened an access epoch */
    int lock_all;                /* in MPI_Win_lock_all */
    int *locked;                 /* per target: 0 or the lock type held */
    int *start_ranks;            /* PSCW access epoch: 1 for each target of MPI_Win_start */
    int started;                 /* in an access epoch of MPI_Win_start */
    int *post_ranks;             /* PSCW exposure epoch: 1 for each origin of MPI_Win_post */
    int posted;                  /* exposure epoch open (posted, not yet waited for) */
    int completes;               /* MPI_Win_complete messages still to receive */
    char *dirty;                 /* per target: requests sent since its last flush */
    char *rma_dirty;             /* per target: UCX puts since its last flush */
    void **inflight;             /* UCX puts and gets not yet complete at the origin (deferred to the
                                  * next flush, unlock, fence or PSCW complete: umpi_rma_drain) */
    int ninflight, capinflight;

    /* UCX RMA: my registration, and every target's address and packed remote key */
    ucp_mem_h memh;              /* NULL: my memory is not registered */
    void *rkey_packed;
    uint64_t *rma_base;          /* per target: the address of its window memory */
    MPI_Aint *rkey_off, *rkey_len; /* per target: its packed key in rkey_all (length 0: none) */
    char *rkey_all;
    ucp_rkey_h *rkeys;           /* per target: unpacked on first use */

    /* target side */
    int lock_shared;             /* shared locks granted */
    int lock_excl;               /* an exclusive lock granted */
    umpi_rma_waiter_t *waiting;  /* lock requests not yet granted, in arrival order */
    int nwaiting, capwaiting;
    umpi_rma_status_t *unattached; /* FLAVOR_DYNAMIC, per origin: its first access outside attached
                                    * memory by a request without an answer, until its next flush */
    umpi_rma_region_t *regions;  /* FLAVOR_DYNAMIC: attached memory */
    int nregions, capregions;

    /* CUDA IPC (ipc.c): NULL unless some process's window memory is device memory */
    umpi_rma_ipc_t *ipc;         /* per target */
    int ipc_pending;             /* IPC copies queued on my copy stream, not yet waited for */

    struct umpi_win *next;       /* the live windows, for the progress hook */
} umpi_win_t;

extern struct umpi_handle_table umpi_win_table;

/* NULL when h is not a live window (MPI_WIN_NULL included). */
static inline umpi_win_t *umpi_win_get(MPI_Win h)
{
    if (umpi_unlikely(UMPI_HANDLE_OBJ(h) != UMPI_OBJ_WIN || UMPI_HANDLE_KIND(h) != UMPI_KIND_DIRECT))
        return NULL;
    return (umpi_win_t *) umpi_ht_get(&umpi_win_table, UMPI_HANDLE_INDEX(h));
}

/* MPI_ERR_WIN naming arg unless h is a live window. */
static inline int umpi_rma_win_check(MPI_Win h, umpi_win_t **w, const char *arg)
{
    *w = umpi_win_get(h);
    if (umpi_likely(*w != NULL))
        return MPI_SUCCESS;
    if (h == MPI_WIN_NULL)
        return umpi_err_create(MPI_ERR_WIN, "MPI_WIN_NULL in argument '%s'", arg);
    return umpi_err_create(MPI_ERR_WIN, "invalid window 0x%x in argument '%s'", (unsigned) h, arg);
}


/* MPI_Finalize, before UCX goes: gives back the UCX resources of windows still alive (a program
 * need not free its windows) and stops serving them. */
void umpi_rma_finalize(void);

/* ---- between the files of src/rma ---- */

/* The progress hook: applies the requests that arrived at every live window (target.c). */
unsigned umpi_rma_progress(void);
/* Live windows (win.c), for the hook. */
extern umpi_win_t *umpi_rma_windows;

/* Sends one request (header, blocks, payload) to target; with reply != NULL waits for the answer:
 * reply_len bytes of data and a umpi_rma_status_t, for which reply has room after the data
 * (MPI_ERR_RMA_RANGE when the status says so). ops.c; the big lock is held. */
int umpi_rma_request(umpi_win_t *w, int target, umpi_rma_hdr_t *h, const umpi_rma_block_t *blocks,
                     const void *payload, void *reply, size_t reply_len);
/* Remote completion of everything sent to target: a UCX endpoint flush after puts, a flush round
 * trip after requests. */
int umpi_rma_flush_target(umpi_win_t *w, int target);
/* The UCX part of it alone (before an unlock request, which is a flush round trip itself). */
int umpi_rma_flush_ucx(umpi_win_t *w, int target);
/* Waits for every UCX put and get of w still in flight (local completion: the data fetched, the
 * origin buffers free): MPI_Win_flush_local*, the request-based calls, and every flush. */
int umpi_rma_drain(umpi_win_t *w);
/*
 * Shared windows, and MPI_Win_allocate's windows between the ranks of one node (each node's window
 * memory is one segment, win.c): an MPI call's operation on another rank's part is applied by the
 * calling process itself, straight into the node's segment (umpi_rma_apply_shared), under a lock
 * word kept in the segment, which the targets also take when they apply a request that came as a
 * message (device origin buffers, other nodes): so accumulates stay atomic with respect to each
 * other whoever applies them, and an operation needs nothing from its target process when both are
 * on one node. A spin lock: the sections are a few copies.
 */
static inline void umpi_rma_shm_lock(umpi_win_t *w)
{
    if (w->shm_lock == NULL)
        return;
    while (__atomic_exchange_n(w->shm_lock, 1, __ATOMIC_ACQUIRE) != 0)
        for (int spins = 0; __atomic_load_n(w->shm_lock, __ATOMIC_RELAXED) != 0; spins++) {
            if (spins >= 100) /* the holder may have lost its core (more ranks than cores) */
                sched_yield();
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#elif defined(__aarch64__)
            __asm__ __volatile__("yield");
#endif
        }
}
static inline void umpi_rma_shm_unlock(umpi_win_t *w)
{
    if (w->shm_lock != NULL)
        __atomic_store_n(w->shm_lock, 0, __ATOMIC_RELEASE);
}
/* Applies a data request (put, get, an accumulate: header, target blocks, packed payload) to
 * target's part of a shared window; out receives what a fetching kind returns (target.c). */
void umpi_rma_apply_shared(umpi_win_t *w, int target, const umpi_rma_hdr_t *h, const umpi_rma_block_t *b,
                           const void *payload, void *out);

/* Registers the window's memory and gathers every process's key (collective; win.c). */
int umpi_rma_map(umpi_win_t *w);

/* ---- device memory (devmem.c) ---- */

int umpi_rma_classify_slow(const void *buf, size_t len, int errclass, const char *arg, int *dev);
/* Whether [buf, buf + len) is device memory (*dev 1; managed and pinned host memory are host);
 * errclass naming arg when the driver cannot say. One branch on a process without CUDA. */
static inline int umpi_rma_classify(const void *buf, size_t len, int errclass, const char *arg, int *dev)
{
    *dev = 0;
    if (umpi_likely(!umpi_cuda_active) || buf == NULL || len == 0 || umpi_cuda_known_host(buf))
        return MPI_SUCCESS;
    return umpi_rma_classify_slow(buf, len, errclass, arg, dev);
}
/* The same for count x dt at buf, as point-to-point asks it (the first byte of a derived type). */
static inline int umpi_rma_classify_dt(const void *buf, MPI_Count count, const umpi_dtype_t *dt, const char *arg,
                                       int *dev)
{
    size_t bytes = (size_t) (count * dt->size);
    return umpi_rma_classify((const char *) buf + dt->true_lb, dt->contig ? bytes : (bytes > 0), MPI_ERR_BUFFER, arg,
                             dev);
}
/* Origin side: the packed bytes of count x dt at buf (device memory when dev) into host dst, and
 * host src back into it; the big lock is held (driver copies). */
int umpi_rma_pack(const umpi_dtype_t *dt, const void *buf, MPI_Count count, int dev, void *dst, size_t bytes);
int umpi_rma_unpack(const umpi_dtype_t *dt, void *buf, MPI_Count count, int dev, const void *src, size_t bytes);
/* Target side: the blocks of device window memory at mem into packed host memory, and back; a
 * driver failure ends the job (as every failure inside the progress hook does). */
void umpi_rma_dev_gather(umpi_win_t *w, char *mem, const umpi_rma_block_t *b, uint64_t n, char *out);
void umpi_rma_dev_scatter(umpi_win_t *w, char *mem, const umpi_rma_block_t *b, uint64_t n, const char *in);

/* ---- CUDA IPC to device windows within a node (ipc.c) ---- */

/* Collective at MPI_Win_create when some process's window memory is device memory: every process
 * exports its window memory's allocation if it can, and all gather the records into w->ipc. */
int umpi_rma_ipc_setup(umpi_win_t *w);
/* Origin: a contiguous put (local -> the target's window at addr) or get of len bytes through the
 * target's IPC mapping, queued on the copy stream; *done 0 when this target cannot take it (not
 * device memory, another node, UMPI_CUDA_IPC=0, its handle refused): the caller sends a message.
 * Only in epochs whose synchronization the target takes part in (fence, PSCW). Big lock held. */
int umpi_rma_ipc_copy(umpi_win_t *w, int target, int put, void *local, MPI_Aint addr, size_t len, int *done);
/* Origin: waits for its IPC copies (before the fence's barrier, MPI_Win_complete's notes). */
int umpi_rma_ipc_wait(umpi_win_t *w);
/* Target: before it opens its device window memory to others' IPC copies (fence, post): the work
 * it queued on the legacy stream before is done. */
int umpi_rma_ipc_expose(umpi_win_t *w);
/* Gives back the mappings and frees w->ipc (MPI_Win_free, MPI_Finalize). */
void umpi_rma_ipc_release(umpi_win_t *w);

#endif
