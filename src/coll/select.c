/*
 * Algorithm tables, the cost model, and the collective driver (umpi_coll.h).
 *
 * The model: a message of n bytes between two members costs alpha + n * beta; reducing n bytes
 * costs n * gamma. Each algorithm states its cost for p members as the critical path of its
 * rounds (the formulas below, with n the message size the kind defines: args.bytes). alpha, beta
 * and gamma belong to the link class the members share (same node: shared memory through UCX;
 * several nodes: the network); the values are measured on this machine (bench/NOTES.md).
 *
 * Flat against hierarchical (part hier2): on a communicator spanning nodes a flat algorithm's
 * formula gets the NET parameters with beta multiplied by max_ppn (the members of a node share
 * its network link and, in the bandwidth-bound algorithms, all send at once), so every round is
 * charged as if it crossed the network. A hierarchical formula adds its node phases (max_ppn
 * members, SHM parameters) and its leaders' phase (nnodes members, NET parameters unshared) from
 * umpi_coll_shape. The NET values are UCX's own estimate for the link (part net, below; the
 * compiled-in InfiniBand guess with UMPI_COLL_NET_COST=builtin). UMPI_DEBUG=2 prints every candidate of
 * each call with its estimate (and the usable() refusals), UMPI_DEBUG=1 the choice.
 */
#include "coll/umpi_coll.h"
#include "coll/umpi_coll_device.h"
#include "core/umpi_err.h"
#include "core/umpi_progress.h"
#include "netmod/ucx/umpi_ucx.h"
#include "pmi/umpi_pmi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* SHM: measured by bench/coll_params on the 2-core development VM (2 ranks, umpi, best of 9):
 *   2026-11-22 08:01, load average 2.8 (part perf):  alpha 0.109 us (8-byte ping-pong half round
 *     trip), beta 1/13281 us/B (4 MiB ping-pong), gamma 1/28654 us/B (`inout[i] += in[i]` on
 *     doubles, 256 KiB);
 *   earlier the same day at load 13: alpha 0.115, gamma 1/29000; beta then came out at 1/1600, a
 *     measurement of the load (the osu_bw figure 1/13500 was used instead, and the quiet run
 *     confirms it).
 * NET: not measured (one node here): a typical 100 Gb/s InfiniBand link, gamma as SHM.
 * beta_cached (part perf4): SHM 2026-11-22 09:27, osu_latency -m 8:65536 -i 20000:5000, 2 ranks,
 *   best of 9: (1.81 - 0.13 us) / 65536 B = 1/39000 us/B, three times the 4 MiB beta; NET: the
 *   wire, as beta. */
umpi_coll_cost_t umpi_coll_cost[UMPI_LINK_NCLASSES] = {
    [UMPI_LINK_SHM] = {.alpha = 0.109, .beta = 1.0 / 13281.0, .gamma = 1.0 / 28654.0, .post = 0.109,
                       .beta_cached = 1.0 / 39000.0},
    [UMPI_LINK_NET] = {.alpha = 2.0, .beta = 1.0 / 11000.0, .gamma = 1.0 / 29000.0, .post = 2.0,
                       .beta_cached = 1.0 / 11000.0},
};

/* ---- the NET parameters of this job (issue 6, part net) -------------------------------------------
 * The compiled-in NET values above are a guess for InfiniBand. Across the Slurm test bed's veth/TCP
 * links UCX itself estimates 5.3 us and 1190 MB/s (and measured latency is 7-20 us, bandwidth
 * 1-1.7 GB/s: bench/NOTES.md, part net), i.e. a latency 2.6x and a time per byte 9x the guess:
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
            if (st == UMPI_OK && (s = umpi_progress_wait_ucx(req)) != UCS_OK)
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
 * the ranks sharing the machine compete. Measured 2026-11-22 08:07 (load average 4) as that very
 * situation: two bench/coll_params pairs at once, each pair pinned to its own core (`taskset -c 0
 * mpirun -n 2 coll_params -r 9` and the same on core 1), umpi, mean of the two pairs: alpha
 * 1.55 us (1.61, 1.49), beta 1/10290 us/B (1/12066, 1/8970), gamma 1/29200 us/B. One pair alone
 * on one core gave alpha 1.41 us, beta 1/13026 (load 2.8). With these the model stops choosing
 * scatter-allgather broadcast and Rabenseifner reduce at 64 KiB and 1 MiB, which lose by 2-3x
 * there. Oversubscribed, the cores are the bottleneck and the TOTAL work of all ranks counts,
 * which a critical-path formula only approximates (Rabenseifner reduce moves twice binomial's
 * bytes in all); part perf3 adds the work estimates below (umpi__work_*), priced over the cores.
 * post (part perf2): most of that alpha is the wait for the peer to get a core, which messages
 * posted together share; each still costs its own software start-up, the unloaded SHM alpha. With
 * it, alltoall at 4 ranks takes the one-round linear algorithm up to about 10 KiB per block
 * (measured 2026-11-22, forced runs, 1 KiB: linear 11-13.5 us, pairwise 16-17).
 * beta_cached (part perf4): the same two pinned pairs at once, osu_latency -m 8:65536, best of 7:
 * (3.84 - 1.83 us) / 65536 B and (3.89 - 1.64) / 65536, mean 1/30800 us/B. */
static const umpi_coll_cost_t umpi__cost_oversubscribed = {.alpha = 1.55, .beta = 1.0 / 10290.0,
                                                           .gamma = 1.0 / 29200.0, .post = 0.109,
                                                           .beta_cached = 1.0 / 30800.0};

static double umpi__lg(int p)
{
    return p > 1 ? (double) umpi_coll_log2(umpi_coll_pow2_ceil(p)) : 0.0;
}

/* floor(log2 p): the rounds among the largest power of two of members, which the algorithms that
 * fold the others in first (recursive doubling, Rabenseifner) run (part net: their formulas counted
 * ceil(log2 p) rounds there, one round too many for every p not a power of two) */
static double umpi__lg_floor(int p)
{
    return p > 1 ? (double) umpi_coll_log2(p) : 0.0;
}

/* ---- cost formulas (p members, n bytes) ----------------------------------------------------------- */

static double umpi__cost_dissemination(const umpi_coll_cost_t *c, int p, double n)
{
    (void) n;
    return umpi__lg(p) * c->alpha;
}

static double umpi__cost_binomial(const umpi_coll_cost_t *c, int p, double n)
{
    return umpi__lg(p) * (c->alpha + n * c->beta);
}

static double umpi__cost_recursive_doubling_reduce(const umpi_coll_cost_t *c, int p, double n)
{
    /* log p exchanges of n bytes, each followed by a reduction; a non-power-of-two size adds a
     * step before and after */
    double extra = (p & (p - 1)) ? 2 * (c->alpha + n * c->beta) + n * c->gamma : 0;
    return umpi__lg_floor(p) * (c->alpha + n * c->beta + n * c->gamma) + extra;
}

/* Hierarchical: a node phase among max_ppn members over shared memory, an inter-node phase among
 * the leaders over the network, and (for results everyone needs) a node phase again. */
static double umpi__cost_hier_barrier(const umpi_coll_cost_t *c, int p, double n)
{
    (void) c;
    const umpi_coll_cost_t *shm = &umpi_coll_cost[UMPI_LINK_SHM], *net = &umpi_coll_cost[UMPI_LINK_NET];
    (void) p;
    return 2 * umpi__cost_dissemination(shm, umpi_coll_shape.max_ppn, n) +
           umpi__cost_dissemination(net, umpi_coll_shape.nnodes, n);
}

static double umpi__cost_hier_bcast(const umpi_coll_cost_t *c, int p, double n)
{
    (void) c;
    (void) p;
    const umpi_coll_cost_t *shm = &umpi_coll_cost[UMPI_LINK_SHM], *net = &umpi_coll_cost[UMPI_LINK_NET];
    return (shm->alpha + n * shm->beta) + umpi__cost_binomial(net, umpi_coll_shape.nnodes, n) +
           umpi__cost_binomial(shm, umpi_coll_shape.max_ppn, n);
}

static double umpi__cost_hier_allreduce(const umpi_coll_cost_t *c, int p, double n)
{
    (void) c;
    (void) p;
    const umpi_coll_cost_t *shm = &umpi_coll_cost[UMPI_LINK_SHM], *net = &umpi_coll_cost[UMPI_LINK_NET];
    return umpi__cost_recursive_doubling_reduce(shm, umpi_coll_shape.max_ppn, n) +
           umpi__cost_recursive_doubling_reduce(net, umpi_coll_shape.nnodes, n) +
           umpi__cost_binomial(shm, umpi_coll_shape.max_ppn, n);
}

/* -- part c3: intercommunicator and neighbourhood costs (p: members of my group) -- */

/* Root to every remote process (or back), one message each: p messages of n bytes in sequence. */
static double umpi__cost_inter_linear(const umpi_coll_cost_t *c, int p, double n)
{
    return p * (c->alpha + n * c->beta);
}

/* Leader exchange plus a binomial tree in the group. */
static double umpi__cost_inter_leader_tree(const umpi_coll_cost_t *c, int p, double n)
{
    return (1 + umpi__lg(p)) * (c->alpha + n * c->beta);
}

/* Linear reduction to the leader, leader exchange, binomial broadcast back. */
static double umpi__cost_inter_reduce_bcast(const umpi_coll_cost_t *c, int p, double n)
{
    return (p - 1) * (c->alpha + n * c->beta + n * c->gamma) + (1 + umpi__lg(p)) * (c->alpha + n * c->beta);
}

/* Neighbourhood, one phase: n is everything this process sends; the messages overlap. */
static double umpi__cost_neighbor_linear(const umpi_coll_cost_t *c, int p, double n)
{
    (void) p;
    return c->alpha + n * c->beta;
}

/* part c1 (gather ... alltoall): n is the bytes of ONE process's block (see coll_c1.c) */
static double umpi__cost_tree_gather(const umpi_coll_cost_t *c, int p, double n)
{
    /* log2 p rounds; the root takes in the other p - 1 blocks */
    return umpi__lg(p) * c->alpha + (p - 1) * n * c->beta;
}

static double umpi__cost_linear_rooted(const umpi_coll_cost_t *c, int p, double n)
{
    /* the root handles p - 1 messages one after the other */
    return (p - 1) * (c->alpha + n * c->beta);
}

static double umpi__cost_ring(const umpi_coll_cost_t *c, int p, double n)
{
    return (p - 1) * (c->alpha + n * c->beta);
}

static double umpi__cost_recursive_doubling_gather(const umpi_coll_cost_t *c, int p, double n)
{
    return umpi__lg(p) * c->alpha + (p - 1) * n * c->beta;
}

static double umpi__cost_bruck_gather(const umpi_coll_cost_t *c, int p, double n)
{
    /* log2 p rounds moving p - 1 blocks in all, plus packing in and rotating out (2 p blocks) */
    return umpi__lg(p) * c->alpha + (p - 1) * n * c->beta + 2 * p * n * c->beta;
}

static double umpi__cost_pairwise(const umpi_coll_cost_t *c, int p, double n)
{
    return (p - 1) * (c->alpha + n * c->beta);
}

static double umpi__cost_linear_all(const umpi_coll_cost_t *c, int p, double n)
{
    /* all 2 (p - 1) messages at once: one wait for the peers, the start-ups one after another,
     * and the transfers congest */
    return c->alpha + (p - 2) * c->post + (p - 1) * n * c->beta + (p > 2 ? (p - 1) * n * c->beta : 0);
}

static double umpi__cost_bruck_alltoall(const umpi_coll_cost_t *c, int p, double n)
{
    /* log2 p rounds of about p/2 blocks, each block packed and unpacked in every round */
    return umpi__lg(p) * (c->alpha + (p / 2.0) * n * 3 * c->beta) + 2 * p * n * c->beta;
}

/* ---- cost formulas of part c2 (reductions, more broadcast and barrier algorithms) ------------------
 * n: Reduce, Allreduce, Scan, Exscan: count * type size; Reduce_scatter(_block): the whole vector
 * each member contributes (sum of recvcounts, or p * recvcount, times the type size); Bcast: the
 * message; Barrier: 0. */

/* a fold of a non-power-of-two size: one more exchange of the whole vector and its reduction */
static double umpi__fold(const umpi_coll_cost_t *c, int p, double n, double gamma)
{
    return (p & (p - 1)) ? c->alpha + n * c->beta + n * gamma : 0;
}

static double umpi__cost_barrier_rd(const umpi_coll_cost_t *c, int p, double n)
{
    (void) n;
    return (umpi_coll_log2(p) + ((p & (p - 1)) ? 2 : 0)) * c->alpha;
}

static double umpi__cost_bcast_scatter_allgather(const umpi_coll_cost_t *c, int p, double n)
{
    return (umpi__lg(p) + p - 1) * c->alpha + 2.0 * n * (p - 1) / p * c->beta;
}

static double umpi__cost_bcast_pipeline(const umpi_coll_cost_t *c, int p, double n)
{
    double seg = n < 65536 ? n : 65536, nseg = n <= 65536 ? 1 : n / 65536;
    return (p - 2 + nseg) * (c->alpha + seg * c->beta);
}

/* part perf2: p - 1 sends from the root in one round (umpi__cost_linear_all's start-ups) */
static double umpi__cost_bcast_linear(const umpi_coll_cost_t *c, int p, double n)
{
    return p > 1 ? c->alpha + (p - 2) * c->post + (p - 1) * n * c->beta : 0;
}

static double umpi__cost_reduce_binomial(const umpi_coll_cost_t *c, int p, double n)
{
    return umpi__lg(p) * (c->alpha + n * c->beta + n * c->gamma);
}

static double umpi__cost_reduce_rabenseifner(const umpi_coll_cost_t *c, int p, double n)
{
    /* halving + gather, then the result to a root that is not new rank 0 (counted always) */
    double f = (double) (p - 1) / p;
    return 2 * umpi__lg(p) * c->alpha + 2 * n * f * c->beta + n * f * c->gamma + umpi__fold(c, p, n, c->gamma) +
           c->alpha + n * c->beta;
}

static double umpi__cost_allreduce_ring(const umpi_coll_cost_t *c, int p, double n)
{
    double f = (double) (p - 1) / p;
    return 2 * (p - 1) * c->alpha + 2 * n * f * c->beta + n * f * c->gamma;
}

static double umpi__cost_allreduce_rabenseifner(const umpi_coll_cost_t *c, int p, double n)
{
    /* halving and doubling among q = 2^floor(log2 p), the others folded in before and out after */
    int q = p > 1 ? 1 << umpi_coll_log2(p) : 1;
    double f = (double) (q - 1) / q;
    return 2 * umpi__lg_floor(p) * c->alpha + 2 * n * f * c->beta + n * f * c->gamma + umpi__fold(c, p, n, c->gamma) +
           umpi__fold(c, p, n, 0);
}

static double umpi__cost_allreduce_reduce_bcast(const umpi_coll_cost_t *c, int p, double n)
{
    return umpi__lg(p) * (2 * c->alpha + 2 * n * c->beta + n * c->gamma);
}

static double umpi__cost_rs_ring(const umpi_coll_cost_t *c, int p, double n)
{
    return (p - 1) * c->alpha + n * (p - 1) / p * (c->beta + c->gamma);
}

static double umpi__cost_rs_halving(const umpi_coll_cost_t *c, int p, double n)
{
    return umpi__lg(p) * c->alpha + n * (p - 1) / p * (c->beta + c->gamma) + umpi__fold(c, p, n, c->gamma) +
           ((p & (p - 1)) ? c->alpha + n / p * c->beta : 0);
}

static double umpi__cost_rs_reduce_scatterv(const umpi_coll_cost_t *c, int p, double n)
{
    return umpi__cost_reduce_binomial(c, p, n) + (p - 1) * (c->alpha + n / p * c->beta);
}

static double umpi__cost_scan_rd(const umpi_coll_cost_t *c, int p, double n)
{
    return umpi__lg(p) * (c->alpha + n * c->beta + 2 * n * c->gamma);
}

static double umpi__cost_scan_linear(const umpi_coll_cost_t *c, int p, double n)
{
    return (p - 1) * (c->alpha + n * c->beta + n * c->gamma);
}

/* ---- cost formulas of part hier2 (more hierarchical algorithms) ----------------------------------------
 * As the lead's hierarchical formulas above: node phases among max_ppn members with the SHM
 * parameters, the leaders' phase among nnodes with the NET ones, each phase as its flat formula;
 * the c parameter (the link class of the whole communicator) is not used. n as the kind defines it
 * (Reduce, Allreduce: the vector; Gather, Scatter, Allgather: one process's block). */
#define UMPI__SHM (&umpi_coll_cost[UMPI_LINK_SHM])
#define UMPI__NET (&umpi_coll_cost[UMPI_LINK_NET])

static double umpi__cost_hier_reduce(const umpi_coll_cost_t *c, int p, double n)
{
    (void) c;
    (void) p;
    /* node reduce, leaders' reduce, the result to a root that does not lead its node (counted always) */
    return umpi__cost_reduce_binomial(UMPI__SHM, umpi_coll_shape.max_ppn, n) +
           umpi__cost_reduce_binomial(UMPI__NET, umpi_coll_shape.nnodes, n) + UMPI__SHM->alpha + n * UMPI__SHM->beta;
}

static double umpi__cost_hier_gather(const umpi_coll_cost_t *c, int p, double n)
{
    (void) c;
    /* node gather of max_ppn blocks, nnodes - 1 pieces of max_ppn blocks into the root's leader,
     * the p blocks to the root and into place */
    int ppn = umpi_coll_shape.max_ppn;
    return umpi__cost_tree_gather(UMPI__SHM, ppn, n) + umpi__cost_linear_rooted(UMPI__NET, umpi_coll_shape.nnodes, ppn * n) +
           UMPI__SHM->alpha + 2 * p * n * UMPI__SHM->beta;
}

static double umpi__cost_hier_allgather(const umpi_coll_cost_t *c, int p, double n)
{
    (void) c;
    /* node gather, leaders' ring of node pieces, node broadcast of all p blocks, into place */
    int ppn = umpi_coll_shape.max_ppn;
    return umpi__cost_tree_gather(UMPI__SHM, ppn, n) + umpi__cost_ring(UMPI__NET, umpi_coll_shape.nnodes, ppn * n) +
           umpi__cost_binomial(UMPI__SHM, ppn, p * n) + p * n * UMPI__SHM->beta;
}

static double umpi__cost_hier_allreduce_large(const umpi_coll_cost_t *c, int p, double n)
{
    (void) c;
    (void) p;
    int ppn = umpi_coll_shape.max_ppn, k = umpi_coll_shape.nnodes;
    double net = (k & (k - 1)) == 0 ? umpi__cost_allreduce_rabenseifner(UMPI__NET, k, n)
                                    : umpi__cost_allreduce_ring(UMPI__NET, k, n);
    return umpi__cost_reduce_rabenseifner(UMPI__SHM, ppn, n) + net +
           umpi__cost_bcast_scatter_allgather(UMPI__SHM, ppn, n);
}

/* ---- total work (part perf3) ------------------------------------------------------------------------
 * Oversubscribed (more ranks than cores on the node), the cores are the bottleneck: what the wall
 * clock sees is the work of all members together divided by the cores, not only the critical path.
 * These functions give that total (same arguments as the formulas above, the oversubscribed
 * parameters): every message costs its software start-up (post) and n beta of copying, every
 * reduced byte gamma, and every time a member waits for a peer between rounds it gives its core
 * away and takes it back. That switch is not measured on its own: half the hand-off the
 * oversubscribed alpha adds to post, the most that keeps the measured 8-byte choices (allreduce:
 * recursive doubling 4.6 us, reduce + bcast 5.4) and enough to see the 1.5x that posting every
 * alltoall block at once gains over p - 1 rounds at 64 KiB and 1 MiB. The driver prices
 * max(critical path, work / cores). Only the kinds whose large messages were measured
 * oversubscribed have them (reduce, allreduce, allgather(v), alltoall(v); bench/NOTES.md). */

/* Pieces larger than this (a quarter of the 1 MiB L2 each core of the development VM has) do not
 * stay in the cache with their destination and the vector they are reduced into; oversubscribed,
 * the share of such a piece beyond it (1 - this / piece) costs twice beta: fitted, not measured
 * on its own, to allreduce at 1 MiB and 4 ranks, where the ring (256 KiB pieces) takes 190-254 us,
 * Rabenseifner (512 KiB pieces in two of its four rounds, the same bytes in all) 292-400 and
 * reduce + bcast (1 MiB pieces) 818-1071 (bench/NOTES.md, part perf3). Reductions only: where
 * pieces are only copied into place the measurements show no such effect (allgather at 1 MiB:
 * recursive doubling, 1 and 2 MiB pieces, best 586-731 us; the ring, 1 MiB pieces, 647-654). */
#define UMPI__PIECE_CACHED 262144.0

/* b bytes moved in pieces of s bytes: the bytes that count twice */
static double umpi__big(double s, double b)
{
    return s > UMPI__PIECE_CACHED ? b * (1 - UMPI__PIECE_CACHED / s) : 0;
}

/* m messages, bytes moved in all (big of them in pieces over UMPI__PIECE_CACHED), w waits in all */
static double umpi__w(const umpi_coll_cost_t *c, double m, double bytes, double big, double w)
{
    return m * c->post + (bytes + big) * c->beta + w * (c->alpha - c->post) / 2;
}

static int umpi__pof2_floor(int p)
{
    int q = umpi_coll_pow2_ceil(p);
    return q > p ? q / 2 : q;
}

static double umpi__work_reduce_binomial(const umpi_coll_cost_t *c, int p, double n)
{
    /* p - 1 messages of the whole vector, each reduced by its receiver, which waits for it */
    return umpi__w(c, p - 1, (p - 1) * n, umpi__big(n, (p - 1) * n), p - 1) + (p - 1) * n * c->gamma;
}

static double umpi__work_reduce_rabenseifner(const umpi_coll_cost_t *c, int p, double n)
{
    /* fold of r = p - q members, halving among q (n (q - 1) bytes moved and reduced in all),
     * binomial gather of the blocks (n / 2 per round), the result to the root (counted always) */
    int q = umpi__pof2_floor(p), r = p - q;
    double lq = umpi__lg(q);
    double big = umpi__big(n, r * n + n);
    for (int k = 1; k <= (int) lq; k++) /* halving round k: q pieces of n / 2^k; gather: n / 2 */
        big += umpi__big(n / (1 << k), q * n / (1 << k)) + umpi__big(n / q * (1 << (k - 1)), n / 2);
    return umpi__w(c, r + q * lq + q, r * n + (q - 1) * n + lq * n / 2 + n, big, r + q * lq + q) +
           (r * n + (q - 1) * n) * c->gamma;
}

static double umpi__work_allreduce_rd(const umpi_coll_cost_t *c, int p, double n)
{
    int q = umpi__pof2_floor(p), r = p - q;
    double lq = umpi__lg(q);
    double bytes = (q * lq + 2 * r) * n;
    return umpi__w(c, q * lq + 2 * r, bytes, umpi__big(n, bytes), q * lq + 2 * r) + (q * lq + r) * n * c->gamma;
}

static double umpi__work_allreduce_ring(const umpi_coll_cost_t *c, int p, double n)
{
    /* every member: 2 (p - 1) messages of n / p, p - 1 of them reduced */
    return umpi__w(c, 2.0 * p * (p - 1), 2.0 * (p - 1) * n, umpi__big(n / p, 2.0 * (p - 1) * n), 2.0 * p * (p - 1)) +
           (p - 1) * n * c->gamma;
}

static double umpi__work_allreduce_rabenseifner(const umpi_coll_cost_t *c, int p, double n)
{
    /* the ring's bytes in 2 log2 q rounds among q, the fold before (reduced) and after */
    int q = umpi__pof2_floor(p), r = p - q;
    double lq = umpi__lg(q);
    double big = umpi__big(n, 2.0 * r * n);
    for (int k = 1; k <= (int) lq; k++) /* halving and doubling round k: q pieces of n / 2^k each */
        big += umpi__big(n / (1 << k), 2.0 * q * n / (1 << k));
    return umpi__w(c, 2 * q * lq + 2 * r, 2.0 * (q - 1) * n + 2 * r * n, big, 2 * q * lq + 2 * r) +
           ((q - 1) * n + r * n) * c->gamma;
}

static double umpi__work_allreduce_reduce_bcast(const umpi_coll_cost_t *c, int p, double n)
{
    return umpi__w(c, 2 * (p - 1), 2.0 * (p - 1) * n, umpi__big(n, 2.0 * (p - 1) * n), 2 * (p - 1)) +
           (p - 1) * n * c->gamma;
}

/* gathers to all, n one member's block: every member ends with the p - 1 others' blocks */
static double umpi__work_allgather_rd(const umpi_coll_cost_t *c, int p, double n)
{
    return umpi__w(c, p * umpi__lg(p), (double) p * (p - 1) * n, 0, p * umpi__lg(p));
}

static double umpi__work_allgather_bruck(const umpi_coll_cost_t *c, int p, double n)
{
    /* as recursive doubling, plus each member's packing in and rotating out (2 p blocks) */
    return umpi__w(c, p * umpi__lg(p), (double) p * (p - 1) * n + 2.0 * p * p * n, 0, p * umpi__lg(p));
}

/* p (p - 1) blocks, one message each, in p - 1 rounds (ring, pairwise) */
static double umpi__work_rounds(const umpi_coll_cost_t *c, int p, double n)
{
    return umpi__w(c, (double) p * (p - 1), (double) p * (p - 1) * n, 0, (double) p * (p - 1));
}

/* p (p - 1) blocks, one message each, all in one round: one wait per member */
static double umpi__work_linear_all(const umpi_coll_cost_t *c, int p, double n)
{
    return umpi__w(c, (double) p * (p - 1), (double) p * (p - 1) * n, 0, p);
}

static double umpi__work_bruck_alltoall(const umpi_coll_cost_t *c, int p, double n)
{
    /* every member: the critical path's bytes (log2 p rounds of p/2 blocks, 3 copies each, the
     * packing in and out) */
    double lg = umpi__lg(p);
    return umpi__w(c, p * lg, p * (lg * (p / 2.0) * n * 3 + 2.0 * p * n), 0, p * lg);
}

/* ---- segmented reduce (part perf4) -----------------------------------------------------------------
 * k segments of s bytes (UMPI_REDUCE_SEGMENT_SIZE; the whole vector when 0 or larger). A step is
 * one segment received, reduced and sent on; the busiest member (the root) takes it in from each
 * of its children. Chain: p - 2 + k steps (the last segment leaves the far end after k, and
 * climbs p - 2 more). Binomial, lg = ceil(log2 p): lg - 1 steps bring the deepest child's first
 * segment up, then the root takes in k segments from lg children each, waiting once per segment
 * (it posts all their receives at once). Streamed segments stay in the cache and move at
 * beta_cached; one segment (k = 1) is the unsegmented chain or tree, priced like the binomial
 * reduce's rounds with beta. Measured 2026-11-22 (bench/NOTES.md, part perf4), 2 ranks, forced,
 * best of 7: 1 MiB binomial 96.5 us, pipeline (64 KiB) 45.0; formulas 115.7 and 65. */
static void umpi__segments(double n, double *seg, double *k)
{
    double s = (double) umpi_config.reduce_segment_size;
    if (s <= 0 || s > n)
        s = n;
    *seg = s;
    *k = s > 0 ? (double) (long long) ((n + s - 1) / s) : 1;
}

/* one step: a segment moved and reduced (written as the binomial formula's round, so that the
 * unsegmented two-member case ties it exactly and the table order keeps binomial) */
static double umpi__seg_step(const umpi_coll_cost_t *c, double seg, double k)
{
    double b = k > 1 && c->beta_cached > 0 ? c->beta_cached : c->beta;
    return c->alpha + seg * b + seg * c->gamma;
}

static double umpi__cost_reduce_pipeline(const umpi_coll_cost_t *c, int p, double n)
{
    double seg, k;
    umpi__segments(n, &seg, &k);
    return (p - 2 + k) * umpi__seg_step(c, seg, k);
}

static double umpi__cost_reduce_tree_pipeline(const umpi_coll_cost_t *c, int p, double n)
{
    double seg, k, lg = umpi__lg(p);
    umpi__segments(n, &seg, &k);
    return (lg - 1) * umpi__seg_step(c, seg, k) + k * umpi__seg_step(c, lg * seg, k);
}

/* Both: p - 1 edges carrying the vector in k messages each, every segment reduced by its
 * receiver; the pieces are segments (no out-of-cache share when small). A member with children
 * waits once per phase, for all of them at once: k waits at each of them (chain: p - 1 members
 * wait, binomial: floor(p / 2); the leaves only send). */
static double umpi__work_segmented(const umpi_coll_cost_t *c, int p, double n, double waiting)
{
    double seg, k;
    umpi__segments(n, &seg, &k);
    double m = (p - 1) * k;
    return umpi__w(c, m, (p - 1) * n, umpi__big(seg, (p - 1) * n), waiting * k) + (p - 1) * n * c->gamma;
}

static double umpi__work_reduce_pipeline(const umpi_coll_cost_t *c, int p, double n)
{
    return umpi__work_segmented(c, p, n, p - 1);
}

static double umpi__work_reduce_tree_pipeline(const umpi_coll_cost_t *c, int p, double n)
{
    return umpi__work_segmented(c, p, n, p / 2);
}

/* ---- fan-in/fan-out barriers (part perf4) ---------------------------------------------------------- */
/* Two hand-offs (the last signal to member 0, its release to the others) and member 0 posting
 * p - 1 releases one after another. */
static double umpi__cost_barrier_linear(const umpi_coll_cost_t *c, int p, double n)
{
    (void) n;
    return p > 1 ? 2 * c->alpha + (p - 2) * c->post : 0;
}

/* Work (oversubscribed, umpi__w): dissemination and recursive doubling send and wait p ceil(log2
 * p) times in all (recursive doubling: log2 q per member of the power of two q, 2 per folded
 * pair); the linear barrier sends 2 (p - 1) messages and each member waits once. */
static double umpi__work_barrier_dissemination(const umpi_coll_cost_t *c, int p, double n)
{
    (void) n;
    return umpi__w(c, p * umpi__lg(p), 0, 0, p * umpi__lg(p));
}

static double umpi__work_barrier_rd(const umpi_coll_cost_t *c, int p, double n)
{
    (void) n;
    int q = umpi__pof2_floor(p), r = p - q;
    double m = q * umpi__lg(q) + 4.0 * r;
    return umpi__w(c, m, 0, 0, m);
}

static double umpi__work_barrier_linear(const umpi_coll_cost_t *c, int p, double n)
{
    (void) n;
    return umpi__w(c, 2.0 * (p - 1), 0, 0, p);
}

/* ---- tables --------------------------------------------------------------------------------------- */

static const umpi_coll_algo_t umpi__barrier[] = {
    {"dissemination", umpi_barrier_dissemination, NULL, umpi__cost_dissemination,
     "ceil(log2 p) rounds, each member signals rank + 2^k and waits for rank - 2^k",
     umpi__work_barrier_dissemination, .pair = umpi_barrier_pair},
    {"hier", umpi_barrier_hier, umpi_coll_hier_usable, umpi__cost_hier_barrier,
     "node barrier, barrier among node leaders, node barrier (communicators spanning nodes)"},
    /* part c2 */
    {"recursive_doubling", umpi_barrier_recursive_doubling, NULL, umpi__cost_barrier_rd,
     "log2 p pairwise exchanges among a power of two; the members above it fold in before and after",
     umpi__work_barrier_rd},
    /* part perf4 */
    {"linear", umpi_barrier_linear, NULL, umpi__cost_barrier_linear,
     "every member signals member 0, which releases all in one round (member 0 leaves first)",
     umpi__work_barrier_linear},
};

static const umpi_coll_algo_t umpi__bcast[] = {
    {"binomial", umpi_bcast_binomial, NULL, umpi__cost_binomial,
     "binomial tree from the root: log2 p rounds of the whole message", .pair = umpi_bcast_pair},
    {"hier", umpi_bcast_hier, umpi_coll_hier_usable, umpi__cost_hier_bcast,
     "root to its node leader, binomial among node leaders, binomial inside each node"},
    /* part c2 */
    {"scatter_allgather", umpi_bcast_scatter_allgather, NULL, umpi__cost_bcast_scatter_allgather,
     "binomial scatter of p blocks, then a ring allgather (van de Geijn): large messages"},
    {"pipeline", umpi_bcast_pipeline, NULL, umpi__cost_bcast_pipeline,
     "chain from the root in 64 KiB segments, forwarding one while receiving the next: large messages"},
    /* part perf2 */
    {"linear", umpi_bcast_linear, NULL, umpi__cost_bcast_linear,
     "the root sends to every other member in one round, nobody forwards: small messages, oversubscribed"},
};

static const umpi_coll_algo_t umpi__allreduce[] = {
    {"recursive_doubling", umpi_allreduce_recursive_doubling, NULL, umpi__cost_recursive_doubling_reduce,
     "log2 p exchanges of the whole vector, reducing after each (non-powers of two fold in first)",
     umpi__work_allreduce_rd, .pair = umpi_allreduce_pair},
    {"hier", umpi_allreduce_hier, umpi_coll_hier_usable_commutative, umpi__cost_hier_allreduce,
     "allreduce inside each node, among node leaders, then broadcast inside each node (commutative ops)"},
    /* part c2 */
    {"ring", umpi_allreduce_ring, umpi_coll_commutative, umpi__cost_allreduce_ring,
     "ring reduce-scatter then ring allgather of p blocks: bandwidth-optimal, commutative ops",
     umpi__work_allreduce_ring},
    {"rabenseifner", umpi_allreduce_rabenseifner, umpi_coll_commutative, umpi__cost_allreduce_rabenseifner,
     "recursive halving reduce-scatter then recursive doubling allgather: large vectors, commutative ops",
     umpi__work_allreduce_rabenseifner},
    {"reduce_bcast", umpi_allreduce_reduce_bcast, NULL, umpi__cost_allreduce_reduce_bcast,
     "binomial reduce to member 0 in rank order, then binomial broadcast", umpi__work_allreduce_reduce_bcast},
    /* part hier2 */
    {"hier_large", umpi_allreduce_hier_large, umpi_coll_hier_usable_commutative, umpi__cost_hier_allreduce_large,
     "Rabenseifner reduce in each node, ring/Rabenseifner among node leaders, scatter+allgather bcast in each "
     "node: large vectors, commutative ops"},
};

/* -- part c3: one algorithm per kind on intercommunicators, one for neighbourhood collectives -- */
#define UMPI__ONE(name, fn, cost, doc) static const umpi_coll_algo_t umpi__##fn[] = {{name, umpi_##fn, NULL, cost, doc}}
UMPI__ONE("inter_leader", inter_barrier, umpi__cost_inter_leader_tree,
          "barrier in each group, leaders exchange a message, binomial release in each group");
UMPI__ONE("inter_leader", inter_bcast, umpi__cost_inter_leader_tree,
          "root sends to the other group's rank 0, which broadcasts there along a binomial tree");
UMPI__ONE("inter_linear", inter_gather, umpi__cost_inter_linear, "every remote process sends its block to the root");
UMPI__ONE("inter_linear", inter_gatherv, umpi__cost_inter_linear, "every remote process sends its block to the root");
UMPI__ONE("inter_linear", inter_scatter, umpi__cost_inter_linear, "the root sends each remote process its block");
UMPI__ONE("inter_linear", inter_scatterv, umpi__cost_inter_linear, "the root sends each remote process its block");
UMPI__ONE("inter_linear", inter_allgather, umpi__cost_inter_linear,
          "every process sends its block to every process of the other group");
UMPI__ONE("inter_linear", inter_allgatherv, umpi__cost_inter_linear,
          "every process sends its block to every process of the other group");
UMPI__ONE("inter_linear", inter_alltoall, umpi__cost_inter_linear, "block i to and from remote rank i, one phase");
UMPI__ONE("inter_linear", inter_alltoallv, umpi__cost_inter_linear, "block i to and from remote rank i, one phase");
UMPI__ONE("inter_linear", inter_alltoallw, umpi__cost_inter_linear, "block i to and from remote rank i, one phase");
UMPI__ONE("inter_leader", inter_reduce, umpi__cost_inter_reduce_bcast,
          "linear reduction to the group's rank 0, which sends the result to the root");
UMPI__ONE("inter_leader", inter_allreduce, umpi__cost_inter_reduce_bcast,
          "linear reduction to each leader, leaders swap, binomial broadcast in each group");
UMPI__ONE("inter_leader", inter_reduce_scatter, umpi__cost_inter_reduce_bcast,
          "linear reduction to each leader, leaders swap, linear scatter in each group");
UMPI__ONE("inter_leader", inter_reduce_scatter_block, umpi__cost_inter_reduce_bcast,
          "linear reduction to each leader, leaders swap, linear scatter in each group");
UMPI__ONE("linear", neighbor_linear, umpi__cost_neighbor_linear,
          "every receive from an in-neighbour and send to an out-neighbour posted in one phase");
/* part c1 */
static const umpi_coll_algo_t umpi__gather[] = {
    {"binomial", umpi_gather_binomial, NULL, umpi__cost_tree_gather,
     "binomial tree to the root, subtrees' blocks packed: log2 p rounds"},
    {"linear", umpi_gather_linear, NULL, umpi__cost_linear_rooted,
     "every process sends to the root, which receives p - 1 messages in one round"},
    /* part hier2 */
    {"hier", umpi_gather_hier, umpi_coll_hier_usable, umpi__cost_hier_gather,
     "binomial gather to each node leader, leaders send their node's blocks to the root's, blocks placed by rank"},
};

static const umpi_coll_algo_t umpi__gatherv[] = {
    {"linear", umpi_gatherv_linear, NULL, umpi__cost_linear_rooted,
     "every process sends to the root, which receives p - 1 messages in one round"},
};

static const umpi_coll_algo_t umpi__scatter[] = {
    {"binomial", umpi_scatter_binomial, NULL, umpi__cost_tree_gather,
     "binomial tree from the root, subtrees' blocks packed: log2 p rounds"},
    {"linear", umpi_scatter_linear, NULL, umpi__cost_linear_rooted,
     "the root sends every process its block, p - 1 messages in one round"},
    /* part hier2 */
    {"hier", umpi_scatter_hier, umpi_coll_hier_usable, umpi__cost_hier_gather,
     "root's node leader sends each leader its node's blocks, binomial scatter inside each node"},
};

static const umpi_coll_algo_t umpi__scatterv[] = {
    {"linear", umpi_scatterv_linear, NULL, umpi__cost_linear_rooted,
     "the root sends every process its block, p - 1 messages in one round"},
};

static const umpi_coll_algo_t umpi__allgather[] = {
    {"recursive_doubling", umpi_allgather_recursive_doubling, umpi_allgather_recursive_doubling_usable,
     umpi__cost_recursive_doubling_gather, "log2 p exchanges of doubling halves (p a power of two)",
     umpi__work_allgather_rd, .pair = umpi_allgather_pair},
    {"bruck", umpi_allgather_bruck, NULL, umpi__cost_bruck_gather,
     "ceil(log2 p) rounds sending to rank - 2^k, packed, rotated at the end (any p)", umpi__work_allgather_bruck},
    {"ring", umpi_allgather_ring, NULL, umpi__cost_ring,
     "p - 1 rounds passing one block to the right neighbour", umpi__work_rounds},
    /* part hier2 */
    {"hier", umpi_allgather_hier, umpi_coll_hier_usable, umpi__cost_hier_allgather,
     "gather to each node leader, ring among leaders, node broadcast, blocks placed by rank"},
};

static const umpi_coll_algo_t umpi__allgatherv[] = {
    {"ring", umpi_allgatherv_ring, NULL, umpi__cost_ring,
     "p - 1 rounds passing one block to the right neighbour", umpi__work_rounds},
    {"linear", umpi_allgatherv_linear, NULL, umpi__cost_linear_all,
     "every process sends its block to every other in one round", umpi__work_linear_all},
};

static const umpi_coll_algo_t umpi__alltoall[] = {
    {"pairwise", umpi_alltoall_pairwise, NULL, umpi__cost_pairwise,
     "p - 1 rounds exchanging one block with rank XOR k (power of two) or rank +/- k", umpi__work_rounds,
     .pair = umpi_alltoall_pair},
    {"bruck", umpi_alltoall_bruck, NULL, umpi__cost_bruck_alltoall,
     "ceil(log2 p) rounds of about p/2 packed blocks (small messages)", umpi__work_bruck_alltoall},
    {"linear", umpi_alltoall_linear, NULL, umpi__cost_linear_all,
     "all p - 1 sends and receives posted in one round", umpi__work_linear_all},
};

/* alltoallw shares the alltoallv builders (they read the per-process datatypes when given) */
static const umpi_coll_algo_t umpi__alltoallv[] = {
    {"pairwise", umpi_alltoallv_pairwise, NULL, umpi__cost_pairwise,
     "p - 1 rounds exchanging one block with rank XOR k (power of two) or rank +/- k", umpi__work_rounds},
    {"linear", umpi_alltoallv_linear, NULL, umpi__cost_linear_all,
     "all p - 1 sends and receives posted in one round", umpi__work_linear_all},
};

static const umpi_coll_algo_t umpi__reduce[] = {
    {"binomial", umpi_reduce_binomial, NULL, umpi__cost_reduce_binomial,
     "binomial tree to the root (to member 0 in rank order, then the root, for non-commutative ops)",
     umpi__work_reduce_binomial, .pair = umpi_reduce_pair},
    {"rabenseifner", umpi_reduce_rabenseifner, umpi_coll_commutative, umpi__cost_reduce_rabenseifner,
     "recursive halving reduce-scatter then binomial gather of the blocks: large vectors, commutative ops",
     umpi__work_reduce_rabenseifner},
    /* part hier2 */
    {"hier", umpi_reduce_hier, umpi_coll_hier_usable_commutative, umpi__cost_hier_reduce,
     "binomial reduce inside each node, among node leaders, then to the root (commutative ops)"},
    /* part perf4 */
    {"pipeline", umpi_reduce_pipeline, NULL, umpi__cost_reduce_pipeline,
     "chain to the root in segments of UMPI_REDUCE_SEGMENT_SIZE, each reduced and sent on while the next "
     "arrives: large vectors, any op (rank order)",
     umpi__work_reduce_pipeline},
    {"tree_pipeline", umpi_reduce_tree_pipeline, NULL, umpi__cost_reduce_tree_pipeline,
     "binomial tree to the root in segments of UMPI_REDUCE_SEGMENT_SIZE, levels working at once: large "
     "vectors, any op (rank order)",
     umpi__work_reduce_tree_pipeline},
};

/* Reduce_scatter and Reduce_scatter_block run the same algorithms. */
static const umpi_coll_algo_t umpi__reduce_scatter[] = {
    {"ring", umpi_reduce_scatter_ring, umpi_coll_commutative, umpi__cost_rs_ring,
     "p - 1 ring steps, each passing one running block sum on: large vectors, commutative ops"},
    {"recursive_halving", umpi_reduce_scatter_recursive_halving, umpi_coll_commutative, umpi__cost_rs_halving,
     "log2 p rounds exchanging half of the remaining blocks: commutative ops"},
    {"reduce_scatterv", umpi_reduce_scatter_reduce_scatterv, NULL, umpi__cost_rs_reduce_scatterv,
     "binomial reduce to member 0 in rank order, then a send of each block: any op"},
};

static const umpi_coll_algo_t umpi__scan[] = {
    {"recursive_doubling", umpi_scan_recursive_doubling, NULL, umpi__cost_scan_rd,
     "log2 p exchanges of block partials, folding lower ranks' data first: any op"},
    {"linear", umpi_scan_linear, NULL, umpi__cost_scan_linear,
     "a chain: each member adds its data to its predecessor's result and passes it on"},
};

static const umpi_coll_algo_t umpi__exscan[] = {
    {"recursive_doubling", umpi_exscan_recursive_doubling, NULL, umpi__cost_scan_rd,
     "log2 p exchanges of block partials, keeping only lower ranks' data in the result: any op"},
    {"linear", umpi_exscan_linear, NULL, umpi__cost_scan_linear,
     "a chain: each member receives its result from its predecessor and passes on result op data"},
};

#define UMPI__TABLE(t) {t, sizeof(t) / sizeof(t[0])}

static const struct {
    const umpi_coll_algo_t *algos;
    int n;
} umpi__tables[UMPI_COLL_NKINDS][2] = {
    [UMPI_COLL_BARRIER][0] = UMPI__TABLE(umpi__barrier),
    [UMPI_COLL_BCAST][0] = UMPI__TABLE(umpi__bcast),
    [UMPI_COLL_ALLREDUCE][0] = UMPI__TABLE(umpi__allreduce),
    [UMPI_COLL_GATHER][0] = UMPI__TABLE(umpi__gather),
    [UMPI_COLL_GATHERV][0] = UMPI__TABLE(umpi__gatherv),
    [UMPI_COLL_SCATTER][0] = UMPI__TABLE(umpi__scatter),
    [UMPI_COLL_SCATTERV][0] = UMPI__TABLE(umpi__scatterv),
    [UMPI_COLL_ALLGATHER][0] = UMPI__TABLE(umpi__allgather),
    [UMPI_COLL_ALLGATHERV][0] = UMPI__TABLE(umpi__allgatherv),
    [UMPI_COLL_ALLTOALL][0] = UMPI__TABLE(umpi__alltoall),
    [UMPI_COLL_ALLTOALLV][0] = UMPI__TABLE(umpi__alltoallv),
    [UMPI_COLL_ALLTOALLW][0] = UMPI__TABLE(umpi__alltoallv),
    /* -- part c3: intercommunicators ([kind][1]; no scan, exscan) and neighbourhood collectives -- */
    [UMPI_COLL_BARRIER][1] = UMPI__TABLE(umpi__inter_barrier),
    [UMPI_COLL_BCAST][1] = UMPI__TABLE(umpi__inter_bcast),
    [UMPI_COLL_GATHER][1] = UMPI__TABLE(umpi__inter_gather),
    [UMPI_COLL_GATHERV][1] = UMPI__TABLE(umpi__inter_gatherv),
    [UMPI_COLL_SCATTER][1] = UMPI__TABLE(umpi__inter_scatter),
    [UMPI_COLL_SCATTERV][1] = UMPI__TABLE(umpi__inter_scatterv),
    [UMPI_COLL_ALLGATHER][1] = UMPI__TABLE(umpi__inter_allgather),
    [UMPI_COLL_ALLGATHERV][1] = UMPI__TABLE(umpi__inter_allgatherv),
    [UMPI_COLL_ALLTOALL][1] = UMPI__TABLE(umpi__inter_alltoall),
    [UMPI_COLL_ALLTOALLV][1] = UMPI__TABLE(umpi__inter_alltoallv),
    [UMPI_COLL_ALLTOALLW][1] = UMPI__TABLE(umpi__inter_alltoallw),
    [UMPI_COLL_REDUCE][1] = UMPI__TABLE(umpi__inter_reduce),
    [UMPI_COLL_ALLREDUCE][1] = UMPI__TABLE(umpi__inter_allreduce),
    [UMPI_COLL_REDUCE_SCATTER][1] = UMPI__TABLE(umpi__inter_reduce_scatter),
    [UMPI_COLL_REDUCE_SCATTER_BLOCK][1] = UMPI__TABLE(umpi__inter_reduce_scatter_block),
    [UMPI_COLL_NEIGHBOR_ALLGATHER][0] = UMPI__TABLE(umpi__neighbor_linear),
    [UMPI_COLL_NEIGHBOR_ALLGATHERV][0] = UMPI__TABLE(umpi__neighbor_linear),
    [UMPI_COLL_NEIGHBOR_ALLTOALL][0] = UMPI__TABLE(umpi__neighbor_linear),
    [UMPI_COLL_NEIGHBOR_ALLTOALLV][0] = UMPI__TABLE(umpi__neighbor_linear),
    [UMPI_COLL_NEIGHBOR_ALLTOALLW][0] = UMPI__TABLE(umpi__neighbor_linear),
    [UMPI_COLL_REDUCE][0] = UMPI__TABLE(umpi__reduce),
    [UMPI_COLL_REDUCE_SCATTER][0] = UMPI__TABLE(umpi__reduce_scatter),
    [UMPI_COLL_REDUCE_SCATTER_BLOCK][0] = UMPI__TABLE(umpi__reduce_scatter),
    [UMPI_COLL_SCAN][0] = UMPI__TABLE(umpi__scan),
    [UMPI_COLL_EXSCAN][0] = UMPI__TABLE(umpi__exscan),
};

static const char *const umpi__kind_names[UMPI_COLL_NKINDS] = {
    [UMPI_COLL_BARRIER] = "barrier",
    [UMPI_COLL_BCAST] = "bcast",
    [UMPI_COLL_GATHER] = "gather",
    [UMPI_COLL_GATHERV] = "gatherv",
    [UMPI_COLL_SCATTER] = "scatter",
    [UMPI_COLL_SCATTERV] = "scatterv",
    [UMPI_COLL_ALLGATHER] = "allgather",
    [UMPI_COLL_ALLGATHERV] = "allgatherv",
    [UMPI_COLL_ALLTOALL] = "alltoall",
    [UMPI_COLL_ALLTOALLV] = "alltoallv",
    [UMPI_COLL_ALLTOALLW] = "alltoallw",
    [UMPI_COLL_REDUCE] = "reduce",
    [UMPI_COLL_ALLREDUCE] = "allreduce",
    [UMPI_COLL_REDUCE_SCATTER] = "reduce_scatter",
    [UMPI_COLL_REDUCE_SCATTER_BLOCK] = "reduce_scatter_block",
    [UMPI_COLL_SCAN] = "scan",
    [UMPI_COLL_EXSCAN] = "exscan",
    [UMPI_COLL_NEIGHBOR_ALLGATHER] = "neighbor_allgather",
    [UMPI_COLL_NEIGHBOR_ALLGATHERV] = "neighbor_allgatherv",
    [UMPI_COLL_NEIGHBOR_ALLTOALL] = "neighbor_alltoall",
    [UMPI_COLL_NEIGHBOR_ALLTOALLV] = "neighbor_alltoallv",
    [UMPI_COLL_NEIGHBOR_ALLTOALLW] = "neighbor_alltoallw",
};

/* The knob forcing each kind's algorithm (neighborhood collectives have one algorithm each). */
static const char **umpi__knob(umpi_coll_kind_t kind)
{
    switch (kind) {
    case UMPI_COLL_BARRIER: return &umpi_config.barrier_algorithm;
    case UMPI_COLL_BCAST: return &umpi_config.bcast_algorithm;
    case UMPI_COLL_GATHER: return &umpi_config.gather_algorithm;
    case UMPI_COLL_GATHERV: return &umpi_config.gatherv_algorithm;
    case UMPI_COLL_SCATTER: return &umpi_config.scatter_algorithm;
    case UMPI_COLL_SCATTERV: return &umpi_config.scatterv_algorithm;
    case UMPI_COLL_ALLGATHER: return &umpi_config.allgather_algorithm;
    case UMPI_COLL_ALLGATHERV: return &umpi_config.allgatherv_algorithm;
    case UMPI_COLL_ALLTOALL: return &umpi_config.alltoall_algorithm;
    case UMPI_COLL_ALLTOALLV: return &umpi_config.alltoallv_algorithm;
    case UMPI_COLL_ALLTOALLW: return &umpi_config.alltoallw_algorithm;
    case UMPI_COLL_REDUCE: return &umpi_config.reduce_algorithm;
    case UMPI_COLL_ALLREDUCE: return &umpi_config.allreduce_algorithm;
    case UMPI_COLL_REDUCE_SCATTER: return &umpi_config.reduce_scatter_algorithm;
    case UMPI_COLL_REDUCE_SCATTER_BLOCK: return &umpi_config.reduce_scatter_block_algorithm;
    case UMPI_COLL_SCAN: return &umpi_config.scan_algorithm;
    case UMPI_COLL_EXSCAN: return &umpi_config.exscan_algorithm;
    default: return NULL;
    }
}

const umpi_coll_algo_t *umpi_coll_algos(umpi_coll_kind_t kind, int inter, int *n)
{
    *n = umpi__tables[kind][inter != 0].n;
    return umpi__tables[kind][inter != 0].algos;
}

const char *umpi_coll_kind_name(umpi_coll_kind_t kind)
{
    return umpi__kind_names[kind];
}

umpi_coll_shape_t umpi_coll_shape;

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

/* Oversubscribed estimates closer than this (relative) are a tie, broken by the work (part perf4). */
#define UMPI__TIE 0.01
/* Oversubscribed calls of at most this many bytes price their critical path with beta_cached (part perf4). */
#define UMPI__CALL_CACHED 65536

/* The algorithm for this call: the forced one if it can run it, else the cheapest usable one. */
static const umpi_coll_algo_t *umpi__select(const umpi_coll_view_t *v, const umpi_coll_args_t *a)
{
    int inter = a->comm->is_inter, n;
    const umpi_coll_algo_t *t = umpi_coll_algos(a->kind, inter, &n);
    const char **knob = umpi__knob(a->kind);
    const char *forced = knob ? *knob : NULL;
    if (forced != NULL && strcmp(forced, "auto") != 0) {
        for (int i = 0; i < n; i++) {
            if (strcmp(t[i].name, forced) != 0)
                continue;
            if (t[i].usable == NULL || t[i].usable(v, a))
                return &t[i];
            umpi_debug(1, "%s: algorithm %s (forced) cannot run this call; the cost model chooses",
                       umpi__kind_names[a->kind], forced);
            break;
        }
    }
    umpi_link_t link = umpi_coll_link(a->comm, v);
    umpi_coll_cost_t eff = link == UMPI_LINK_SHM && umpi_progress_oversubscribed ? umpi__cost_oversubscribed
                                                                                 : umpi_coll_cost[link];
    /* Across nodes, the members of a node share its network link: a flat algorithm whose members
     * all send at once gets 1 / max_ppn of the bandwidth each (part hier2). The hierarchical
     * formulas price their leaders' phase (one member per node) with the unshared NET values. */
    if (link == UMPI_LINK_NET && umpi_coll_shape.max_ppn > 1)
        eff.beta *= umpi_coll_shape.max_ppn;
    const umpi_coll_cost_t *cost = &eff;
    /* part perf4: oversubscribed, a call of at most UMPI__CALL_CACHED bytes keeps all its pieces
     * in the cache, and its critical path moves them at beta_cached (measured with messages of
     * that size). Larger calls keep beta: at 128-256 KiB the whole-vector algorithms measured out
     * of the cache (binomial reduce, 4 ranks, 256 KiB: 77-157 us against 19-26 segmented). The
     * work estimates keep beta (part perf3's fit). Measured: allreduce 4 ranks, 32-64 KiB, reduce +
     * bcast beats Rabenseifner (bench/NOTES.md, parts perf3 and perf4). */
    umpi_coll_cost_t cp_eff = eff;
    if (link == UMPI_LINK_SHM && umpi_progress_oversubscribed && a->bytes <= UMPI__CALL_CACHED &&
        eff.beta_cached > 0)
        cp_eff.beta = eff.beta_cached;
    const umpi_coll_algo_t *best = NULL;
    double best_t = 0, best_w = 0;
    for (int i = 0; i < n; i++) {
        if (t[i].usable != NULL && !t[i].usable(v, a)) {
            umpi_debug(2, "%s candidate %s: cannot run this call", umpi__kind_names[a->kind], t[i].name);
            continue;
        }
        double est = t[i].cost ? t[i].cost(&cp_eff, v->size, (double) a->bytes) : 0, w = 0;
        /* part perf3: oversubscribed, the total work over the cores when it is the larger */
        if (t[i].work != NULL && link == UMPI_LINK_SHM && umpi_progress_oversubscribed) {
            w = t[i].work(cost, v->size, (double) a->bytes) / umpi_progress_cores;
            umpi_debug(2, "%s candidate %s: critical path %.3f us, work / %d cores %.3f us",
                       umpi__kind_names[a->kind], t[i].name, est, umpi_progress_cores, w);
            if (w > est)
                est = w;
        }
        /* UMPI_DEBUG=2: every candidate with its estimate (part hier2) */
        umpi_debug(2, "%s candidate %s: estimated %.3f us (%d members, %zu bytes, %d nodes, at most %d per node)",
                   umpi__kind_names[a->kind], t[i].name, est, v->size, a->bytes, umpi_coll_shape.nnodes,
                   umpi_coll_shape.max_ppn);
        /* part perf4: oversubscribed, estimates within UMPI__TIE of each other are the same time
         * to this model; the one with less work wins then (it gives the shared cores back to the
         * other ranks sooner). The linear barrier ties dissemination so at 4 ranks on 2 cores;
         * releasing member 0 first, it makes a broadcast from it that follows 5-15x faster (median),
         * a reduce or a one-round alltoall 1.3-1.6x, but a 1 KiB recursive-doubling allreduce or
         * allgather, whose members then start staggered, 1.3-1.6x slower (bench/NOTES.md, perf4). */
        int better;
        if (best == NULL)
            better = 1;
        else if (w > 0 && best_w > 0 && est <= best_t * (1 + UMPI__TIE) && est >= best_t * (1 - UMPI__TIE))
            better = w < best_w;
        else
            better = est < best_t;
        if (better) {
            best = &t[i];
            best_t = est;
            best_w = w;
        }
    }
    return best;
}

/*
 * Blocking collectives kept for the same call again. Building a schedule is ~700 of the ~4000
 * instructions of a 4-member 8-byte alltoall (callgrind, bench/NOTES.md), the same every time the
 * call is the same, and applications and benchmarks repeat calls: the communicator keeps each
 * kind's last blocking schedule with the arguments it was built from and runs it again when they
 * match. Safe to compare by address: a schedule reads the buffers when it runs, never when it is
 * built, and the kept datatypes and op are retained, so no new object can take their address.
 * Not kept: the v and w variants (their count arrays may change between calls), calls of more
 * than UMPI__KEEP_BYTES (the build is small next to moving the data), device buffers (CUDA active:
 * where the data is is decided per call), schedules over umpi_sched_keepable's limits.
 */
#define UMPI__KEEP_BYTES 65536

static void umpi__kept_clear(struct umpi_coll_kept *k)
{
    if (k->s == NULL)
        return;
    umpi_sched_free(k->s);
    if (k->sdt != NULL)
        umpi_dtype_release(k->sdt);
    if (k->rdt != NULL)
        umpi_dtype_release(k->rdt);
    if (k->op != NULL)
        umpi_op_release(k->op);
    memset(k, 0, sizeof(*k));
}

void umpi_coll_kept_free(umpi_coll_comm_t *cc)
{
    for (int i = 0; i < UMPI_COLL_NKINDS; i++)
        umpi__kept_clear(&cc->kept[i]);
}

static int umpi__kept_match(const struct umpi_coll_kept *k, const umpi_coll_algo_t *algo, const umpi_coll_args_t *a)
{
    return k->s != NULL && k->algo == algo && k->sbuf == a->sbuf && k->rbuf == a->rbuf && k->scount == a->scount &&
           k->rcount == a->rcount && k->sdt == a->sdt && k->rdt == a->rdt && k->op == a->op && k->root == a->root;
}

/* Runs the blocking collective a with algo: the kept schedule when it was built for these
 * arguments, else a new one, kept afterwards when small enough. */
static int umpi__run_kept(umpi_coll_comm_t *cc, const umpi_coll_algo_t *algo, const umpi_coll_view_t *v,
                          umpi_coll_args_t *a)
{
    struct umpi_coll_kept *k = &cc->kept[a->kind];
    int err;
    if (!k->busy && umpi__kept_match(k, algo, a)) {
        umpi_sched_unpark(k->s);
        k->busy = 1; /* a call of the same kind in the meantime (a user op's) builds its own */
        err = umpi_sched_run_kept(k->s);
        k->busy = 0;
        if (err != MPI_SUCCESS)
            umpi__kept_clear(k);
        else
            umpi_sched_park(k->s);
        return err;
    }
    umpi_sched_t *s = umpi_sched_new(a->comm);
    if (s == NULL)
        return umpi_err_create(MPI_ERR_OTHER, "out of memory starting a collective");
    err = algo->build(s, v, a);
    if (err == MPI_SUCCESS)
        err = umpi_sched_run_kept(s);
    if (err != MPI_SUCCESS || k->busy || !umpi_sched_keepable(s)) {
        umpi_sched_free(s);
        return err;
    }
    umpi__kept_clear(k);
    k->s = s;
    k->algo = algo;
    k->sbuf = a->sbuf;
    k->rbuf = a->rbuf;
    k->scount = a->scount;
    k->rcount = a->rcount;
    k->sdt = a->sdt;
    k->rdt = a->rdt;
    k->op = a->op;
    k->root = a->root;
    if (k->sdt != NULL)
        umpi_dtype_retain(k->sdt);
    if (k->rdt != NULL)
        umpi_dtype_retain(k->rdt);
    if (k->op != NULL)
        umpi_op_retain(k->op);
    umpi_sched_park(s);
    return MPI_SUCCESS;
}

static int umpi__post(umpi_coll_args_t *a, int mode, MPI_Request *request, umpi_coll_comm_t *cc, int host_only);

int umpi_coll_post(umpi_coll_args_t *a, int mode, MPI_Request *request)
{
    umpi_coll_comm_t *cc = umpi_coll_comm(a->comm);
    if (cc == NULL)
        return umpi_err_create(MPI_ERR_OTHER, "out of memory describing the nodes of a communicator");
    /* device buffers: run whole through CUDA IPC within a node or by NCCL when every member
     * agrees, or, small, on host copies of them (umpi_coll_device.h); otherwise the schedule
     * below moves each step's device data through host memory */
    int host_only = 1;
    if (umpi_unlikely(umpi_cuda_active)) {
        int err;
        if (umpi_coll_dev_offload(a, cc, mode, &err) || umpi_coll_dev_whole(a, mode, &host_only, &err))
            return err;
    }
    return umpi__post(a, mode, request, cc, host_only);
}

int umpi_coll_post_host(umpi_coll_args_t *a, int mode, MPI_Request *request)
{
    umpi_coll_comm_t *cc = umpi_coll_comm(a->comm);
    if (cc == NULL)
        return umpi_err_create(MPI_ERR_OTHER, "out of memory describing the nodes of a communicator");
    return umpi__post(a, mode, request, cc, 1);
}

/* The call, its buffers host memory when host_only (then the paths that never stage may run). */
static int umpi__post(umpi_coll_args_t *a, int mode, MPI_Request *request, umpi_coll_comm_t *cc, int host_only)
{
    umpi_coll_view_t v;
    umpi_coll_view_local(&v, a->comm);
    /* What a choice depends on: the communicator (size, nodes: cc is its own), the kind, the
     * bytes and whether the op commutes (the usable() tests); knobs are read once at MPI_Init. A
     * repeated call (every benchmark loop, most applications) reuses it: 10-20 ns of the 40-60 ns
     * a one-process collective costs went to selection. */
    int commutative = a->op == NULL || umpi_op_is_commutative(a->op);
    const umpi_coll_algo_t *algo = NULL;
    if (cc->last[a->kind].algo != NULL && cc->last[a->kind].bytes == a->bytes &&
        cc->last[a->kind].commutative == commutative && !umpi_unlikely(umpi_config.debug)) {
        algo = cc->last[a->kind].algo;
    } else {
        umpi_coll_shape.nnodes = cc->nnodes;
        umpi_coll_shape.max_ppn = cc->max_ppn;
        algo = umpi__select(&v, a);
        cc->last[a->kind].algo = algo;
        cc->last[a->kind].bytes = a->bytes;
        cc->last[a->kind].commutative = commutative;
    }
    int nalgos;
    if (algo == NULL && a->comm->is_inter && (umpi_coll_algos(a->kind, 1, &nalgos), nalgos == 0))
        return umpi_err_create(MPI_ERR_COMM, "%s is not defined on an intercommunicator (argument 'comm')",
                               umpi__kind_names[a->kind]);
    if (algo == NULL)
        return umpi_err_create(MPI_ERR_INTERN, "no %s algorithm can run on this %s", umpi__kind_names[a->kind],
                               a->comm->is_inter ? "intercommunicator" : "communicator");
    umpi_debug(1, "%s%s on %s (size %d, %zu bytes): algorithm %s",
               mode == UMPI_COLL_NONBLOCKING ? "i" : "", umpi__kind_names[a->kind],
               a->comm->name[0] ? a->comm->name : "a communicator", a->comm->size, a->bytes, algo->name);
    /* part small: two members, blocking: the algorithm's messages straight from the call (pair.c;
     * device buffers keep the schedule, which stages them) */
    if (algo->pair != NULL && mode == UMPI_COLL_BLOCKING && v.size == 2 && host_only) {
        int err;
        if (algo->pair(&v, a, &err))
            return err;
    }
    if (mode == UMPI_COLL_BLOCKING && a->bytes <= UMPI__KEEP_BYTES && a->scounts == NULL && a->rcounts == NULL &&
        a->sdts == NULL && a->rdts == NULL && host_only)
        return umpi__run_kept(cc, algo, &v, a);
    umpi_sched_t *s = umpi_sched_new(a->comm);
    if (s == NULL)
        return umpi_err_create(MPI_ERR_OTHER, "out of memory starting a collective");
    int err = algo->build(s, &v, a);
    if (err != MPI_SUCCESS) {
        umpi_sched_free(s);
        return err;
    }
    if (mode == UMPI_COLL_BLOCKING)
        return umpi_sched_run(s);
    return umpi_sched_request(s, mode == UMPI_COLL_PERSISTENT, request);
}
