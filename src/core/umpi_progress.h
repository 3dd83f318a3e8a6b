/*
 * The one progress engine (shared/DESIGN.md, "Progress and threads").
 *
 * A pass polls, in order: the UCX worker (completes requests through their callbacks), then the
 * registered hooks (collective schedules, GPU pipelines: later issues). Every blocking call waits
 * here; nothing else spins. Under oversubscription (more ranks than cores) a waiter that has made
 * no progress for umpi_progress_spin polls yields its CPU on every further empty poll, so the
 * rank it waits for can run.
 *
 * Thread contract: called with the big lock held (umpi_lock); umpi_progress_wait releases it
 * between polls under MPI_THREAD_MULTIPLE so that other threads can post and complete operations.
 * umpi_progress_wait_atomic does not, for the rare wait that must not let anything in.
 *
 * Hooks never run inside a hook: a hook that waits (umpi_progress_wait_atomic) meanwhile polls
 * UCX only, so no hook sees another's state, or its own, half changed.
 */
#ifndef UMPI_PROGRESS_H
#define UMPI_PROGRESS_H

#include "core/umpi.h"
#include "netmod/ucx/umpi_ucx.h"

#include <sched.h>

typedef unsigned (*umpi_progress_hook_t)(void);
extern int umpi_progress_nhooks;
unsigned umpi_progress_hooks(void);
int umpi_progress_register(umpi_progress_hook_t hook);
/* Removes a registered hook (a hook with nothing to do is better gone than called every pass). */
void umpi_progress_unregister(umpi_progress_hook_t hook);

/* One pass; returns the number of events processed. */
static inline unsigned umpi_progress(void)
{
    unsigned n = umpi_ucx_progress();
    if (umpi_unlikely(umpi_progress_nhooks != 0))
        n += umpi_progress_hooks();
    return n;
}

/* Polls before yielding, resolved at MPI_Init from UMPI_SPIN_COUNT and the node's load. */
extern int umpi_progress_spin;
/* Nonzero when this node runs more ranks than this process may use cores (collective selection). */
extern int umpi_progress_oversubscribed;
/* The cores this process may use (its affinity mask), at least 1 (the cost model's total-work term). */
extern int umpi_progress_cores;
/* Resolves UMPI_SPIN_COUNT = -1 (auto) from the number of ranks on this node and the CPUs they
 * share: at MPI_Init before the fence (publishes this process's affinity mask), ... */
umpi_status_t umpi_progress_init(int local_ranks);
/* ... and after it (the union of the masks of the node's ranks; logs the decision). */
void umpi_progress_node_cpus(void);

/* State of one blocking wait: how many empty polls so far. */
typedef struct {
    int idle;
} umpi_waiter_t;

/* One step of a blocking wait: poll, and when idle for long enough let other processes and threads run. */
static inline void umpi_progress_step(umpi_waiter_t *w)
{
    if (umpi_progress() != 0) {
        w->idle = 0;
    } else if (++w->idle >= umpi_progress_spin) {
        umpi_unlock();
        sched_yield();
        umpi_lock();
        return;
    }
    if (umpi_unlikely(umpi_global.is_multi)) {
        umpi_unlock();
        umpi_lock();
    }
}

/*
 * The progress of a call that must not block (MPI_Test and its kin, MPI_Iprobe): passes while
 * events keep coming (at most 17: a collective's next round, a rendezvous's data), then, where
 * waiters yield at once (umpi_progress_spin 0: more ranks than cores, or UMPI_SPIN_COUNT=0), a
 * yield when the first pass found nothing, so the ranks it waits for run now rather than when its
 * time slice ends (Open MPI yields the same way when oversubscribed). A program that polls, in a
 * loop or between slices of computation, waits as surely as MPI_Wait does. Measured, 4 ranks on
 * 2 cores, osu_iallreduce with 4 tests during the computation: overlap 0 % before at every size,
 * 85-95 % after at 8 B-64 KiB (bench/NOTES.md).
 */
static inline unsigned umpi_progress_poll(void)
{
    unsigned n = umpi_progress(), k;
    for (int i = 0; i < 16 && n != 0 && (k = umpi_progress()) != 0; i++)
        n += k;
    if (n == 0 && umpi_progress_spin == 0) {
        umpi_unlock();
        sched_yield();
        umpi_lock();
    }
    return n;
}

/* Blocks until *flag is nonzero. */
static inline void umpi_progress_wait(volatile int *flag)
{
    umpi_waiter_t w = {0};
    while (!*flag)
        umpi_progress_step(&w);
}

/* Blocks until ucx_req, a UCX request handed to a blocking caller (umpi_ucx.h; NULL: complete
 * already), completes, and frees it: its status. */
static inline ucs_status_t umpi_progress_wait_ucx(void *ucx_req)
{
    umpi_waiter_t w = {0};
    ucs_status_t s = UCS_OK;
    if (ucx_req != NULL)
        while ((s = umpi_ucx_test_send(ucx_req)) == UCS_INPROGRESS)
            umpi_progress_step(&w);
    return s;
}

/*
 * Blocks until *flag is nonzero with the big lock held throughout and UCX alone polled: for a wait
 * that must be atomic with what its caller did just before (a probe reading the header of a
 * message it took out of UCX's queue, while older messages it took wait to be listed behind it:
 * no thread and no hook may receive past them meanwhile). Only for data already arriving, never
 * for another process's next call. Idle, it yields the CPU as any wait does (the lock stays
 * held), so the driver's threads and the peers it waits for run.
 */
void umpi_progress_wait_atomic(volatile int *flag);

#endif
