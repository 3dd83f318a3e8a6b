/*
 * The CPUs this node's ranks share, and so how a waiting rank behaves (umpi_progress_spin,
 * umpi_progress_oversubscribed, umpi_progress_cores of the progress engine): each rank publishes
 * its affinity mask through the process manager at MPI_Init and counts the union of its node's.
 */
#include "api/umpi_cpuset.h"
#include "api/umpi_hw.h"
#include "core/umpi_progress.h"
#include "pmi/umpi_pmi.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
                         : umpi_progress_oversubscribed ? 0 : UMPI_PROGRESS_SPIN_DEFAULT;
}

static void umpi__report(const char *from)
{
    umpi_debug(1, "%d ranks on this node, %d cores usable (%s): %s (UMPI_SPIN_COUNT=%d)", umpi__cpus.local_ranks,
               umpi_progress_cores, from,
               umpi_progress_oversubscribed ? "oversubscribed, yield when idle" : "spin before yielding",
               umpi_progress_spin);
}

umpi_status_t umpi_node_cpus_publish(int local_ranks)
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

void umpi_node_cpus_count(void)
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
