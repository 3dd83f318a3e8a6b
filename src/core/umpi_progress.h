/*
 * The one progress engine (shared/DESIGN.md, "Progress and threads").
 *
 * A pass polls, in order: the network (the UCX worker, which completes requests through their
 * callbacks), then the registered hooks (collective schedules, GPU pipelines). Every blocking call
 * waits here; nothing else spins. Under oversubscription (more ranks than cores) a waiter that has
 * made no progress for umpi_progress_spin polls yields its CPU on every further empty poll, so the
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

#include <sched.h>

/*
 * The network's poll: the engine stands below the network module, which sets it once its worker
 * exists (src/netmod/ucx/ucx.c: ucp_worker_progress on its worker) and clears it when the worker
 * goes. A pointer to UCX's own function, called with its own argument, so a pass costs what a
 * direct call into UCX did. Not NULL: a pass before the network is up polls nothing.
 */
struct ucp_worker;
typedef unsigned (*umpi_progress_net_t)(struct ucp_worker *worker);
extern umpi_progress_net_t umpi_progress_net_poll;
extern struct ucp_worker *umpi_progress_net_worker;
void umpi_progress_set_net(umpi_progress_net_t poll, struct ucp_worker *worker);
static inline unsigned umpi_progress_net(void)
{
    return umpi_progress_net_poll(umpi_progress_net_worker);
}

typedef unsigned (*umpi_progress_hook_t)(void);
extern int umpi_progress_nhooks;
unsigned umpi_progress_hooks(void);
int umpi_progress_register(umpi_progress_hook_t hook);
/* Removes a registered hook (a hook with nothing to do is better gone than called every pass). */
void umpi_progress_unregister(umpi_progress_hook_t hook);

/* One pass; returns the number of events processed. */
static inline unsigned umpi_progress(void)
{
    unsigned n = umpi_progress_net();
    if (umpi_unlikely(umpi_progress_nhooks != 0))
        n += umpi_progress_hooks();
    return n;
}

/*
 * Spinning pays when the rank we wait for runs on another core; when ranks outnumber cores it only
 * burns the time slice that rank needs (measured: 4 ranks on 2 cores pass a token in 2.3 us per
 * hop yielding at once, 4.2-5.2 us after 1000 polls). sched_yield costs about 0.3 us, which is why a
 * rank with a core of its own spins first.
 *
 * How long: an empty poll takes 5-7 ns here, so 1000 polls were 5-7 us, and on a node busy with
 * other work a rank that yields gives its core to that work for a scheduler slice (milliseconds),
 * not to its peer. Measured 2026-11-22, 2 ranks, load average 10 from other jobs, 7 interleaved
 * rounds: osu_barrier median 21.5 us with 1000 polls, 0.22 us never yielding (Open MPI, which
 * never yields, 0.18); 8 B allreduce median 25.7 vs 0.26 us. 100000 polls (0.5-0.7 ms, about
 * a scheduler slice) gave the never-yielding numbers and still lets a rank that waits long give
 * way (bench/NOTES.md).
 */
#define UMPI_PROGRESS_SPIN_DEFAULT 100000

/* Polls before yielding, resolved at MPI_Init from UMPI_SPIN_COUNT and the node's load
 * (src/api/node_cpus.c). */
extern int umpi_progress_spin;
/* Nonzero when this node runs more ranks than this process may use cores (collective selection). */
extern int umpi_progress_oversubscribed;
/* The cores this process may use (its affinity mask), at least 1 (the cost model's total-work term). */
extern int umpi_progress_cores;

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

/*
 * Blocks until *flag is nonzero with the big lock held throughout and UCX alone polled: for a wait
 * that must be atomic with what its caller did just before (a probe reading the header of a
 * message it took out of UCX's queue, while older messages it took wait to be listed behind it:
 * no thread and no hook may receive past them meanwhile). Only for data already arriving, never
 * for another process's next call. Idle, it yields the CPU as any wait does (the lock stays
 * held), so the driver's threads and the peers it waits for run.
 */
void umpi_progress_wait_atomic(volatile int *flag);

/*
 * The asynchronous progress thread (progress_thread.c; UMPI_ASYNC_PROGRESS=1): MPI_Init starts it
 * once the network is up and umpi_global.is_multi is set, MPI_Finalize stops and joins it before
 * the network goes. Stop without a start does nothing.
 */
umpi_status_t umpi_progress_thread_start(void);
void umpi_progress_thread_stop(void);

#endif
