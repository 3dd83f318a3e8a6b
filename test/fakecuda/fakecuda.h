/*
 * What the two halves of the fake CUDA driver share (test-only; README.md here says what the fake
 * models): fakecuda.c keeps the memory (allocations, the address space, pointer attributes, IPC),
 * fakecuda_exec.c the work (streams, events, copies, memsets, kernels and the thread that runs them).
 *
 * One mutex guards everything, as a driver's big lock would: the API calls, the executor thread and
 * the copies it runs all hold it, so a copy never races an allocation or a free.
 */
#ifndef FAKECUDA_H
#define FAKECUDA_H

#include "cuda/umpi_cuda_drv.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define EXPORT __attribute__((visibility("default")))

enum {
    FAKE_ERR_INVALID_VALUE = 1,
    FAKE_ERR_OUT_OF_MEMORY = 2,
    FAKE_ERR_NOT_INITIALIZED = 3,
    FAKE_ERR_INVALID_CONTEXT = 201,
    FAKE_ERR_ALREADY_MAPPED = 208,
    FAKE_ERR_NO_BINARY_FOR_GPU = 209,
    FAKE_ERR_INVALID_HANDLE = 400,
    FAKE_ERR_NOT_FOUND = 500,
    FAKE_ERR_NOT_READY = 600,
    FAKE_ERR_NOT_SUPPORTED = 801,
};

/* Kinds of memory the driver knows. Those with a GPU address (all but REGISTERED) take their
 * addresses from the unified range (fakecuda.c), where a freed range is handed out again, to any
 * kind: a device allocation's addresses can come back as pinned host memory, as on a real GPU. */
enum { K_DEVICE, K_POOL, K_IMPORT, K_MANAGED, K_PINNED, K_REGISTERED };

struct range {
    uintptr_t start;
    size_t size;           /* as asked (what RANGE_SIZE reports) */
    size_t mapped;         /* page-rounded */
    int kind;
    unsigned long long id;
    char *alias;           /* device kinds: where the CPU reaches the bytes (the fake's copies) */
    int fd;                /* device kinds: the memfd (-1 for imports) */
    pid_t owner;           /* imports: the exporting process */
    unsigned long long owner_id;
};

/* What a copy's end is, as the driver's synchronization rules tell them apart. */
enum { CL_DEVICE, CL_MANAGED, CL_PINNED, CL_PAGEABLE };

struct fakecuda_counts {
    long device_allocs, pinned_allocs, registered, managed_allocs, imports, streams, events;
    long copies, ipc_opens, ipc_closes;
};

struct fakecuda {
    pthread_mutex_t lock;
    int initialized;
    int ndevices;
    int delay_us;          /* FAKECUDA_DELAY: the executor waits up to this long before each operation */
    unsigned seed;         /* FAKECUDA_SEED, else from the clock and pid: the order work runs in */
    struct fakecuda_counts counts;
};
extern struct fakecuda fk;
extern __thread int fk_current_ctx; /* 0: none; d+1: device d's primary context */

static inline int fk_need_ctx(void)
{
    return fk.initialized && fk_current_ctx != 0;
}

const char *fk_env(const char *name, const char *def);

/* ---- memory (fakecuda.c), under fk.lock ---- */

/* The range holding p (within its reported size), or NULL. */
struct range *fk_lookup(uintptr_t p);
/* Where the CPU can reach n bytes at p and what kind of memory they are (CL_*); NULL when p..p+n
 * is not wholly inside one allocation although p is a GPU address (a freed range, or past the end). */
char *fk_resolve(uintptr_t p, size_t n, int *cls);
/* Makes every device allocation readable and writable at its GPU address (1) or not (0): kernels
 * run on the CPU between the two (fakecuda_exec.c). */
void fk_device_window(int open);

/* ---- work (fakecuda_exec.c) ---- */

void fk_exec_init(void);
/* Runs every stream's queued work to the end (what a device synchronization would wait for);
 * under fk.lock. Frees call it: the driver's cuMemFree waits for the work that may use the memory. */
void fk_drain_all(void);

#endif /* FAKECUDA_H */
