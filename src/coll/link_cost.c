/*
 * What a message costs on each class of link (umpi_coll_cost.h): the measured parameters of the
 * cost model, the network's from UCX's estimate, and which class links the members of a view.
 *
 * The model: a message of n bytes between two members costs alpha + n * beta; reducing n bytes
 * costs n * gamma. alpha, beta and gamma belong to the link class the members share (same node:
 * shared memory through UCX; several nodes: the network). The SHM values are measured on the
 * development machine by bench/coll_params (bench/README.md says how; bench/NOTES.md has the
 * runs); the NET values are UCX's own estimate for this job's network (umpi_coll_net_setup), or a
 * compiled-in InfiniBand guess with UMPI_COLL_NET_COST=builtin.
 */
#include "coll/umpi_coll.h"
#include "core/umpi_err.h"
#include "core/umpi_progress.h"
#include "netmod/ucx/umpi_ucx.h"
#include "pmi/umpi_pmi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* SHM: bench/coll_params on the 2-core development VM, 2 ranks, best of 9 on a quiet machine:
 *   alpha the half round trip of an 8-byte ping-pong, beta a 4 MiB ping-pong, gamma
 *   `inout[i] += in[i]` on 256 KiB of doubles; post = alpha (every rank has a core, so messages
 *   posted together wait for nobody); beta_cached from 64 KiB ping-pongs (osu_latency), three
 *   times faster than the 4 MiB beta because the pieces stay in the cache.
 * NET: a typical 100 Gb/s InfiniBand link (one node here to measure on), gamma as SHM,
 *   beta_cached = beta (the wire does not care about the cache); replaced at MPI_Init below. */
umpi_coll_cost_t umpi_coll_cost[UMPI_LINK_NCLASSES] = {
    [UMPI_LINK_SHM] = {.alpha = 0.109, .beta = 1.0 / 13281.0, .gamma = 1.0 / 28654.0, .post = 0.109,
                       .beta_cached = 1.0 / 39000.0},
    [UMPI_LINK_NET] = {.alpha = 2.0, .beta = 1.0 / 11000.0, .gamma = 1.0 / 29000.0, .post = 2.0,
                       .beta_cached = 1.0 / 11000.0},
};

/* ---- the NET parameters of this job ----------------------------------------------------------------
 * The compiled-in NET values above are a guess for InfiniBand. Across the Slurm test bed's veth/TCP
 * links UCX itself estimates 5.3 us and 1190 MB/s (and measured latency is 7-20 us, bandwidth
 * 1-1.7 GB/s: bench/NOTES.md, "allreduce and point-to-point across nodes over TCP on the Slurm
 * test bed"), i.e. a latency 2.6x and a time per byte 9x the guess:
 * with the guess, every crossover between a latency-bound and a bandwidth-bound algorithm across
 * nodes sits at the wrong size. UMPI_COLL_NET_COST=auto (the default) takes UCX's own estimate
 * instead (ucp_ep_evaluate_perf: the latency and bandwidth of the transports it chose for the
 * endpoint, no message sent) on MPI_COMM_WORLD rank 0's endpoint to the first rank of another
 * node: alpha is its time for 8 bytes, beta the slope between 1 and 4 MiB. Every process must
 * price alike (they must all choose the same algorithm), so rank 0 publishes its values through
 * the process manager and every process reads them after one more fence at MPI_Init; on one node
 * nothing is asked or exchanged. */
#define UMPI__NET_BUILTIN_ALPHA 2.0
#define UMPI__NET_BUILTIN_BW 11000.0
#define UMPI__NET_KEY "umpi.coll.net"

static int umpi__net_parse(const char *s, double *alpha, double *bw)
{
    char *end;
    *alpha = strtod(s, &end);
    if (end == s || *end != ',')
        return -1;
    const char *b = end + 1;
    *bw = strtod(b, &end);
    if (end == b || *end != '\0')
        return -1;
    return isfinite(*alpha) && isfinite(*bw) && *alpha >= 0 && *bw > 0 ? 0 : -1;
}

static void umpi__net_set(double alpha, double bw, const char *from)
{
    umpi_coll_cost_t *net = &umpi_coll_cost[UMPI_LINK_NET];
    net->alpha = net->post = alpha;
    net->beta = net->beta_cached = 1.0 / bw;
    umpi_debug(1, "collectives across nodes: latency %.3f us, bandwidth %.0f MB/s (%s)", alpha, bw, from);
}

/*
 * One empty message each way between this process and peer (first: this one sends first), on the
 * netmod's wire-up tag, so that the endpoints of both are wired up before anything else: the
 * network estimate leaves rank 0 an endpoint whose wire-up needs the peer's progress, and a peer
 * that made no other call until MPI_Finalize would leave rank 0's final flush waiting for it while
 * it waits in the fence (seen with mpirun across hosts and under srun).
 */
static umpi_status_t umpi__handshake(int peer, int first)
{
    char out = 0, in = 0;
    ucp_ep_h ep;
    umpi_status_t st = umpi_ucx_ep(peer, &ep);
    for (int step = 0; step < 2 && st == UMPI_OK; step++) {
        ucs_status_t s;
        if ((step == 0) == (first != 0)) {
            void *req;
            st = umpi_ucx_send(ep, &out, 1, umpi_ucx_wireup_tag(), 0, NULL, &req);
            if (st == UMPI_OK && (s = umpi_ucx_wait(req)) != UCS_OK)
                st = umpi_ucx_status(s, "wire-up send");
        } else {
            struct umpi_ucx_recv_wait w;
            st = umpi_ucx_recv_blocking(&in, 1, umpi_ucx_wireup_tag(), ~(ucp_tag_t) 0, &w);
            if (st == UMPI_OK)
                umpi_progress_wait(&w.done);
            if (st == UMPI_OK && (s = w.status) != UCS_OK)
                st = umpi_ucx_status(s, "wire-up receive");
        }
    }
    return st;
}

int umpi_coll_net_setup(int world_rank, int world_size)
{
    const char *knob = umpi_config.coll_net_cost;
    double alpha = UMPI__NET_BUILTIN_ALPHA, bw = UMPI__NET_BUILTIN_BW;
    if (strcmp(knob, "builtin") == 0) {
        umpi__net_set(alpha, bw, "UMPI_COLL_NET_COST=builtin");
        return MPI_SUCCESS;
    }
    if (strcmp(knob, "auto") != 0) {
        if (umpi__net_parse(knob, &alpha, &bw) != 0)
            return umpi_err_create(MPI_ERR_ARG,
                                   "UMPI_COLL_NET_COST='%s': expected auto, builtin or LATENCY_US,BANDWIDTH_MBS "
                                   "(a latency >= 0 and a bandwidth > 0, e.g. 20,1200)",
                                   knob);
        umpi__net_set(alpha, bw, "UMPI_COLL_NET_COST");
        return MPI_SUCCESS;
    }
    /* auto: the first rank on another node than rank 0; none, one node: nothing to price */
    int node0 = umpi_coll_node_of(0), other = -1;
    for (int r = 1; r < world_size && other < 0; r++)
        if (umpi_coll_node_of(r) != node0)
            other = r;
    if (other < 0)
        return MPI_SUCCESS;
    double v[3] = {alpha, bw, 0}; /* v[2]: 1 when rank 0 made an endpoint to `other` for it */
    umpi_status_t st = UMPI_OK;
    if (world_rank == 0) {
        static const size_t sizes[3] = {8, 1 << 20, 4 << 20};
        double t[3];
        st = umpi_ucx_estimate(other, sizes, t, 3);
        double slope = st == UMPI_OK ? (t[2] - t[1]) / (double) (sizes[2] - sizes[1]) : 0;
        if (st == UMPI_OK && isfinite(t[0]) && t[0] >= 0 && isfinite(slope) && slope > 0) {
            v[0] = t[0];
            v[1] = 1.0 / slope;
        } else {
            /* an unreachable peer is reported by the call that first talks to it, not here */
            umpi_debug(1, "UCX gave no usable estimate for rank %d (%s); the built-in network guess stays", other,
                       st == UMPI_OK ? "not increasing with size" : umpi_status_string(st));
        }
        v[2] = st == UMPI_OK;
        st = umpi_pmi_put(UMPI__NET_KEY, v, sizeof(v));
    }
    /* through the process manager, not UCX: MPI_Init must not need a path between nodes that the
     * application's own messages may never take (UCX_TLS=sm,self across nodes fails at the first
     * such message, naming its call) */
    if (st == UMPI_OK)
        st = umpi_pmi_fence();
    void *got = NULL;
    size_t len = 0;
    if (st == UMPI_OK)
        st = umpi_pmi_get(0, UMPI__NET_KEY, &got, &len);
    if (st == UMPI_OK && len == sizeof(v))
        memcpy(v, got, sizeof(v));
    free(got);
    if (st != UMPI_OK || len != sizeof(v))
        return umpi_err_from_status(st != UMPI_OK ? st : UMPI_ERR_INTERN,
                                    "agreeing on the network's latency and bandwidth for the collectives failed");
    /* rank 0's endpoint to `other` is half made (its wire-up waits for other's progress): one
     * message each way finishes it now, while both are here (umpi__handshake says why) */
    if (v[2] != 0 && (world_rank == 0 || world_rank == other)) {
        st = umpi__handshake(world_rank == 0 ? other : 0, world_rank == 0);
        if (st != UMPI_OK)
            return umpi_err_from_status(st, "connecting to the rank whose link priced the network");
    }
    umpi__net_set(v[0], v[1], "UCX's estimate, from rank 0");
    return MPI_SUCCESS;
}

/* SHM when the node runs more ranks than cores (4 ranks on the 2-core VM): a rank that waits
 * yields, so a message's start-up is the hand-off to the rank that sends it, and the transfers of
 * the ranks sharing the machine compete. Measured as that very situation: two bench/coll_params
 * pairs at once, each pair pinned to its own core (`taskset -c 0 mpirun -n 2 coll_params -r 9` and
 * the same on core 1), the mean of the two pairs; beta_cached the same way with osu_latency -m
 * 8:65536 (bench/NOTES.md has the runs). With these the model stops choosing scatter-allgather
 * broadcast and Rabenseifner reduce at 64 KiB and 1 MiB, which lose by 2-3x there. Oversubscribed,
 * the cores are the bottleneck and the TOTAL work of all ranks counts, which a critical-path
 * formula only approximates (Rabenseifner reduce moves twice binomial's bytes in all): the
 * algorithms' work formulas (algo_cost.c) are priced over the cores as well.
 * post: most of that alpha is the wait for the peer to get a core, which messages posted together
 * share; each still costs its own software start-up, the unloaded SHM alpha. With it, alltoall at 4
 * ranks takes the one-round linear algorithm up to about 10 KiB per block, which forced runs
 * confirm (bench/NOTES.md, "small collectives, per-call overhead and oversubscribed
 * bcast/alltoall"). */
const umpi_coll_cost_t umpi_coll_cost_oversubscribed = {.alpha = 1.55, .beta = 1.0 / 10290.0,
                                                        .gamma = 1.0 / 29200.0, .post = 0.109,
                                                        .beta_cached = 1.0 / 30800.0};

umpi_link_t umpi_coll_link(const umpi_comm_t *c, const umpi_coll_view_t *v)
{
    if (c->coll != NULL && v->size == c->size && v->rank == c->rank)
        return c->coll->nnodes > 1 ? UMPI_LINK_NET : UMPI_LINK_SHM;
    int node = -1;
    for (int i = 0; i < v->size; i++) {
        int n = umpi_coll_node_of(v->world ? v->world[i] : i);
        if (i > 0 && n != node)
            return UMPI_LINK_NET;
        node = n;
    }
    return UMPI_LINK_SHM;
}

