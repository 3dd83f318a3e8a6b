/* The progress engine's registered hooks (collective schedules, GPU pipelines) and its waits. */
#include "core/umpi_progress.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UMPI_PROGRESS_MAX_HOOKS 8

int umpi_progress_nhooks;
static umpi_progress_hook_t umpi__hooks[UMPI_PROGRESS_MAX_HOOKS];
/* Hooks are running, or an atomic wait is: passes made now poll UCX only. */
static int umpi__hooks_busy;

/*
 * A hook that moved (a collective schedule finished a phase and posted the next one's sends and
 * receives) may have handed UCX new work that a second UCX poll completes at once (a receive that
 * matched a message already here, a rendezvous whose data can be fetched now), letting the hook
 * move again. So one progress call (MPI_Test, say) repeats the pair while the hooks move, a few
 * times at most: a nonblocking collective then goes as far as it can in each call instead of one
 * phase per call (bench/NOTES.md, overlap).
 */
#define UMPI_PROGRESS_REPOLL 8

unsigned umpi_progress_hooks(void)
{
    unsigned total = 0;
    if (umpi__hooks_busy)
        return 0;
    umpi__hooks_busy = 1;
    for (int round = 0; round < UMPI_PROGRESS_REPOLL; round++) {
        unsigned n = 0;
        for (int i = 0; i < umpi_progress_nhooks; i++)
            n += umpi__hooks[i]();
        total += n;
        if (n == 0 || umpi_progress_net() == 0)
            break;
    }
    umpi__hooks_busy = 0;
    return total;
}

void umpi_progress_wait_atomic(volatile int *flag)
{
    int busy = umpi__hooks_busy;
    int idle = 0;
    umpi__hooks_busy = 1;
    while (!*flag) {
        if (umpi_progress() != 0)
            idle = 0;
        else if (++idle >= umpi_progress_spin)
            sched_yield();
    }
    umpi__hooks_busy = busy;
}

int umpi_progress_register(umpi_progress_hook_t hook)
{
    if (umpi_progress_nhooks == UMPI_PROGRESS_MAX_HOOKS)
        return -1;
    umpi__hooks[umpi_progress_nhooks++] = hook;
    return 0;
}

void umpi_progress_unregister(umpi_progress_hook_t hook)
{
    for (int i = 0; i < umpi_progress_nhooks; i++) {
        if (umpi__hooks[i] != hook)
            continue;
        for (; i + 1 < umpi_progress_nhooks; i++)
            umpi__hooks[i] = umpi__hooks[i + 1];
        umpi_progress_nhooks--;
        return;
    }
}

/* Resolved at MPI_Init from UMPI_SPIN_COUNT and the node's load (src/api/node_cpus.c). */
int umpi_progress_spin = UMPI_PROGRESS_SPIN_DEFAULT;
int umpi_progress_oversubscribed;
int umpi_progress_cores = 1;

/* Until the network is up (and after it is gone) a pass has no network to poll. */
static unsigned umpi__no_net(struct ucp_worker *worker)
{
    (void) worker;
    return 0;
}

umpi_progress_net_t umpi_progress_net_poll = umpi__no_net;
struct ucp_worker *umpi_progress_net_worker;

void umpi_progress_set_net(umpi_progress_net_t poll, struct ucp_worker *worker)
{
    umpi_progress_net_poll = poll != NULL ? poll : umpi__no_net;
    umpi_progress_net_worker = worker;
}

