/* Progress hooks beyond UCX (collective schedules and GPU pipelines register here). */
#include "core/umpi_progress.h"

#include "core/umpi_cpuset.h"
#include "pmi/umpi_pmi.h"

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
        if (n == 0 || umpi_ucx_progress() == 0)
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
#define UMPI_SPIN_DEFAULT 100000

int umpi_progress_spin = UMPI_SPIN_DEFAULT;
int umpi_progress_oversubscribed;
int umpi_progress_cores = 1;

/*
 * How many CPUs the node's ranks share. A rank sees only its own affinity mask: right while the
 * ranks are not bound (they all have the launcher's mask), wrong once each is bound to a core of
 * its own (one CPU, two ranks: "oversubscribed", yielding at every wait). So every rank publishes
 * its mask (umpi_cpuset.h: 5 bytes for one core) next to its UCX address before the fence of
 * MPI_Init, and after it counts the union of the masks of its node's ranks: right under any
 * launcher (srun --cpu-bind, mpirun --bind-to, taskset, numactl). It costs no round trip of its
 * own: the put rides on the fence MPI_Init makes anyway, the gets are local lookups after that
 * collecting fence (PMIx), and a rank whose own mask already holds a CPU for every rank of its
 * node, the unbound case, reads nothing (under PMI-2 a get asks the node's PMI server). Counting
 * the machine's or the cgroup's CPUs instead would call ranks that a `taskset -c 0 mpirun -n 2` put
 * on one CPU unshared, and spinning there costs milliseconds per message, where yielding with
 * cores to spare costs a fraction of a microsecond. UMPI_NODE_CPUS, when set (mpirun sets it
 * when it binds), wins without any of this.
 */
#define UMPI__CPUS_KEY "umpi.cpus"

static struct {
    int local_ranks;
    unsigned char *own; /* this process's affinity mask, kept from init to the fence */
    size_t own_len;
} umpi__cpus;

static void umpi__decide(int cores)
{
    if (cores < 1)
        cores = 1;
    umpi_progress_oversubscribed = umpi__cpus.local_ranks > cores;
    umpi_progress_cores = cores;
    umpi_progress_spin = umpi_config.spin_count >= 0 ? umpi_config.spin_count
                         : umpi_progress_oversubscribed ? 0 : UMPI_SPIN_DEFAULT;
}

static void umpi__report(const char *from)
{
    umpi_debug(1, "%d ranks on this node, %d cores usable (%s): %s (UMPI_SPIN_COUNT=%d)", umpi__cpus.local_ranks,
               umpi_progress_cores, from,
               umpi_progress_oversubscribed ? "oversubscribed, yield when idle" : "spin before yielding",
               umpi_progress_spin);
}

umpi_status_t umpi_progress_init(int local_ranks)
{
    unsigned char *card;
    size_t len;
    umpi_status_t st;

    free(umpi__cpus.own);
    umpi__cpus.own = NULL;
    umpi__cpus.own_len = 0;
    umpi__cpus.local_ranks = local_ranks;
    if (umpi_config.node_cpus > 0) {
        umpi__decide(umpi_config.node_cpus);
        return UMPI_OK;
    }
    if (umpi_cpuset_own(&umpi__cpus.own, &umpi__cpus.own_len) != 0) {
        umpi_debug(1, "cannot read this process's affinity mask: %s; taking 1 core", strerror(errno));
        umpi__decide(1);
        return UMPI_OK;
    }
    /* Until the fence: the own mask, the safe guess (see above). */
    umpi__decide(umpi_cpuset_count(umpi__cpus.own, umpi__cpus.own_len));
    if (local_ranks <= 1)
        return UMPI_OK;
    card = umpi_cpuset_encode(umpi__cpus.own, umpi__cpus.own_len, &len);
    if (card == NULL) {
        umpi_status_msg("out of memory for the affinity mask");
        return UMPI_ERR_NOMEM;
    }
    st = umpi_pmi_put(UMPI__CPUS_KEY, card, len);
    free(card);
    return st;
}

void umpi_progress_node_cpus(void)
{
    int me = umpi_global.rank, node = umpi_pmi_node_of(me), found = 1, peers = 1;
    unsigned char *all = umpi__cpus.own;
    size_t all_len = umpi__cpus.own_len;
    char from[96];

    if (umpi_config.node_cpus > 0) {
        umpi__report("UMPI_NODE_CPUS");
        return;
    }
    if (all == NULL || umpi_progress_cores >= umpi__cpus.local_ranks) {
        umpi__report("own affinity");
        goto out;
    }
    for (int r = 0; r < umpi_global.size; r++) {
        void *v = NULL;
        size_t len = 0;

        if (r == me || umpi_pmi_node_of(r) != node)
            continue;
        peers++;
        /* A rank that published nothing (another library, or told UMPI_NODE_CPUS) adds nothing. */
        if (umpi_pmi_get(r, UMPI__CPUS_KEY, &v, &len) == UMPI_OK && umpi_cpuset_merge(&all, &all_len, v, len) == 0)
            found++;
        free(v);
    }
    umpi__decide(umpi_cpuset_count(all, all_len));
    if (found == peers)
        snprintf(from, sizeof(from), "union of the node's %d ranks' affinity", found);
    else
        snprintf(from, sizeof(from), "union of the affinity of %d of the node's %d ranks", found, peers);
    umpi__report(from);
out:
    free(all);
    umpi__cpus.own = NULL;
    umpi__cpus.own_len = 0;
}
