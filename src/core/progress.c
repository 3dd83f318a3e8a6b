/* Progress hooks beyond UCX (collective schedules and GPU pipelines register here). */
#include "core/umpi_progress.h"

#include <errno.h>
#include <sched.h>

#define UMPI_PROGRESS_MAX_HOOKS 8

int umpi_progress_nhooks;
static umpi_progress_hook_t umpi__hooks[UMPI_PROGRESS_MAX_HOOKS];

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
    for (int round = 0; round < UMPI_PROGRESS_REPOLL; round++) {
        unsigned n = 0;
        for (int i = 0; i < umpi_progress_nhooks; i++)
            n += umpi__hooks[i]();
        total += n;
        if (n == 0 || umpi_ucx_progress() == 0)
            break;
    }
    return total;
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
 * its own (one CPU, two ranks: "oversubscribed"). The union of the node's bindings is what counts,
 * and only the launcher knows it: mpirun passes it as UMPI_NODE_CPUS. Without it the own mask is
 * the safe guess: counting the machine's or the cgroup's CPUs instead would call ranks that a
 * `taskset -c 0 mpirun -n 2` put on one CPU unshared, and spinning there costs milliseconds per
 * message, where yielding with cores to spare costs a fraction of a microsecond.
 */
static int umpi__node_cpus(const char **from)
{
    cpu_set_t *set;
    int n = 0;

    if (umpi_config.node_cpus > 0) {
        *from = "UMPI_NODE_CPUS";
        return umpi_config.node_cpus;
    }
    *from = "own affinity";
    /* Sized for the CPUs this machine may have, not glibc's fixed 1024. */
    for (int ncpu = CPU_SETSIZE; ncpu <= (1 << 20) && n == 0; ncpu *= 2) {
        if ((set = CPU_ALLOC(ncpu)) == NULL)
            break;
        if (sched_getaffinity(0, CPU_ALLOC_SIZE(ncpu), set) == 0)
            n = CPU_COUNT_S(CPU_ALLOC_SIZE(ncpu), set);
        CPU_FREE(set);
        if (n == 0 && errno != EINVAL)
            break;
    }
    return n > 0 ? n : 1;
}

void umpi_progress_init(int local_ranks)
{
    const char *from;
    int cores = umpi__node_cpus(&from);
    umpi_progress_oversubscribed = local_ranks > cores;
    umpi_progress_cores = cores;
    umpi_progress_spin = umpi_config.spin_count >= 0 ? umpi_config.spin_count
                         : umpi_progress_oversubscribed ? 0 : UMPI_SPIN_DEFAULT;
    umpi_debug(1, "%d ranks on this node, %d cores usable (%s): %s (UMPI_SPIN_COUNT=%d)", local_ranks, cores,
               from, umpi_progress_oversubscribed ? "oversubscribed, yield when idle" : "spin before yielding",
               umpi_progress_spin);
}
