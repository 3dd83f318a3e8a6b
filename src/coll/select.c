/*
 * The algorithm tables and the choice of an algorithm for a call (umpi_coll.h).
 *
 * Each kind's table lists its algorithms with their build functions and cost formulas
 * (algo_cost.c). A call gets the algorithm UMPI_<COLL>_ALGORITHM forces, when it can run the call,
 * else the usable one whose formula, priced with the parameters of the link class between the
 * members (link_cost.c), is the cheapest. UMPI_DEBUG=2 prints every candidate of each call with
 * its estimate (and the usable() refusals), UMPI_DEBUG=1 the choice.
 */
#include "coll/umpi_coll.h"
#include "core/umpi_progress.h"

#include <string.h>

/* ---- tables --------------------------------------------------------------------------------------- */

static const umpi_coll_algo_t umpi__barrier[] = {
    {"dissemination", umpi_barrier_dissemination, NULL, umpi_coll_time_dissemination,
     "ceil(log2 p) rounds, each member signals rank + 2^k and waits for rank - 2^k",
     umpi_coll_work_barrier_dissemination, .pair = umpi_barrier_pair},
    {"hier", umpi_barrier_hier, umpi_coll_hier_usable, umpi_coll_time_hier_barrier,
     "node barrier, barrier among node leaders, node barrier (communicators spanning nodes)"},
    {"recursive_doubling", umpi_barrier_recursive_doubling, NULL, umpi_coll_time_barrier_rd,
     "log2 p pairwise exchanges among a power of two; the members above it fold in before and after",
     umpi_coll_work_barrier_rd},
    {"linear", umpi_barrier_linear, NULL, umpi_coll_time_barrier_linear,
     "every member signals member 0, which releases all in one round (member 0 leaves first)",
     umpi_coll_work_barrier_linear},
};

static const umpi_coll_algo_t umpi__bcast[] = {
    {"binomial", umpi_bcast_binomial, NULL, umpi_coll_time_binomial,
     "binomial tree from the root: log2 p rounds of the whole message", .pair = umpi_bcast_pair},
    {"hier", umpi_bcast_hier, umpi_coll_hier_usable, umpi_coll_time_hier_bcast,
     "root to its node leader, binomial among node leaders, binomial inside each node"},
    {"scatter_allgather", umpi_bcast_scatter_allgather, NULL, umpi_coll_time_bcast_scatter_allgather,
     "binomial scatter of p blocks, then a ring allgather (van de Geijn): large messages"},
    {"pipeline", umpi_bcast_pipeline, NULL, umpi_coll_time_bcast_pipeline,
     "chain from the root in 64 KiB segments, forwarding one while receiving the next: large messages"},
    {"linear", umpi_bcast_linear, NULL, umpi_coll_time_bcast_linear,
     "the root sends to every other member in one round, nobody forwards: small messages, oversubscribed"},
};

static const umpi_coll_algo_t umpi__allreduce[] = {
    {"recursive_doubling", umpi_allreduce_recursive_doubling, NULL, umpi_coll_time_recursive_doubling_reduce,
     "log2 p exchanges of the whole vector, reducing after each (non-powers of two fold in first)",
     umpi_coll_work_allreduce_rd, .pair = umpi_allreduce_pair},
    {"hier", umpi_allreduce_hier, umpi_coll_hier_usable_commutative, umpi_coll_time_hier_allreduce,
     "allreduce inside each node, among node leaders, then broadcast inside each node (commutative ops)"},
    {"ring", umpi_allreduce_ring, umpi_coll_commutative, umpi_coll_time_allreduce_ring,
     "ring reduce-scatter then ring allgather of p blocks: bandwidth-optimal, commutative ops",
     umpi_coll_work_allreduce_ring},
    {"rabenseifner", umpi_allreduce_rabenseifner, umpi_coll_commutative, umpi_coll_time_allreduce_rabenseifner,
     "recursive halving reduce-scatter then recursive doubling allgather: large vectors, commutative ops",
     umpi_coll_work_allreduce_rabenseifner},
    {"reduce_bcast", umpi_allreduce_reduce_bcast, NULL, umpi_coll_time_allreduce_reduce_bcast,
     "binomial reduce to member 0 in rank order, then binomial broadcast", umpi_coll_work_allreduce_reduce_bcast},
    {"hier_large", umpi_allreduce_hier_large, umpi_coll_hier_usable_commutative, umpi_coll_time_hier_allreduce_large,
     "Rabenseifner reduce in each node, ring/Rabenseifner among node leaders, scatter+allgather bcast in each "
     "node: large vectors, commutative ops"},
};

/* One algorithm per kind on intercommunicators, one for the neighbourhood collectives. */
#define UMPI__ONE(name, fn, cost, doc) static const umpi_coll_algo_t umpi__##fn[] = {{name, umpi_##fn, NULL, cost, doc}}
UMPI__ONE("inter_leader", inter_barrier, umpi_coll_time_inter_leader_tree,
          "barrier in each group, leaders exchange a message, binomial release in each group");
UMPI__ONE("inter_leader", inter_bcast, umpi_coll_time_inter_leader_tree,
          "root sends to the other group's rank 0, which broadcasts there along a binomial tree");
UMPI__ONE("inter_linear", inter_gather, umpi_coll_time_inter_linear,
          "every remote process sends its block to the root");
UMPI__ONE("inter_linear", inter_gatherv, umpi_coll_time_inter_linear,
          "every remote process sends its block to the root");
UMPI__ONE("inter_linear", inter_scatter, umpi_coll_time_inter_linear, "the root sends each remote process its block");
UMPI__ONE("inter_linear", inter_scatterv, umpi_coll_time_inter_linear, "the root sends each remote process its block");
UMPI__ONE("inter_linear", inter_allgather, umpi_coll_time_inter_linear,
          "every process sends its block to every process of the other group");
UMPI__ONE("inter_linear", inter_allgatherv, umpi_coll_time_inter_linear,
          "every process sends its block to every process of the other group");
UMPI__ONE("inter_linear", inter_alltoall, umpi_coll_time_inter_linear, "block i to and from remote rank i, one phase");
UMPI__ONE("inter_linear", inter_alltoallv, umpi_coll_time_inter_linear, "block i to and from remote rank i, one phase");
UMPI__ONE("inter_linear", inter_alltoallw, umpi_coll_time_inter_linear, "block i to and from remote rank i, one phase");
UMPI__ONE("inter_leader", inter_reduce, umpi_coll_time_inter_reduce_bcast,
          "linear reduction to the group's rank 0, which sends the result to the root");
UMPI__ONE("inter_leader", inter_allreduce, umpi_coll_time_inter_reduce_bcast,
          "linear reduction to each leader, leaders swap, binomial broadcast in each group");
UMPI__ONE("inter_leader", inter_reduce_scatter, umpi_coll_time_inter_reduce_bcast,
          "linear reduction to each leader, leaders swap, linear scatter in each group");
UMPI__ONE("inter_leader", inter_reduce_scatter_block, umpi_coll_time_inter_reduce_bcast,
          "linear reduction to each leader, leaders swap, linear scatter in each group");
UMPI__ONE("linear", neighbor_linear, umpi_coll_time_neighbor_linear,
          "every receive from an in-neighbour and send to an out-neighbour posted in one phase");
static const umpi_coll_algo_t umpi__gather[] = {
    {"binomial", umpi_gather_binomial, NULL, umpi_coll_time_tree_gather,
     "binomial tree to the root, subtrees' blocks packed: log2 p rounds"},
    {"linear", umpi_gather_linear, NULL, umpi_coll_time_linear_rooted,
     "every process sends to the root, which receives p - 1 messages in one round"},
    {"hier", umpi_gather_hier, umpi_coll_hier_usable, umpi_coll_time_hier_gather,
     "binomial gather to each node leader, leaders send their node's blocks to the root's, blocks placed by rank"},
};

static const umpi_coll_algo_t umpi__gatherv[] = {
    {"linear", umpi_gatherv_linear, NULL, umpi_coll_time_linear_rooted,
     "every process sends to the root, which receives p - 1 messages in one round"},
};

static const umpi_coll_algo_t umpi__scatter[] = {
    {"binomial", umpi_scatter_binomial, NULL, umpi_coll_time_tree_gather,
     "binomial tree from the root, subtrees' blocks packed: log2 p rounds"},
    {"linear", umpi_scatter_linear, NULL, umpi_coll_time_linear_rooted,
     "the root sends every process its block, p - 1 messages in one round"},
    {"hier", umpi_scatter_hier, umpi_coll_hier_usable, umpi_coll_time_hier_gather,
     "root's node leader sends each leader its node's blocks, binomial scatter inside each node"},
};

static const umpi_coll_algo_t umpi__scatterv[] = {
    {"linear", umpi_scatterv_linear, NULL, umpi_coll_time_linear_rooted,
     "the root sends every process its block, p - 1 messages in one round"},
};

static const umpi_coll_algo_t umpi__allgather[] = {
    {"recursive_doubling", umpi_allgather_recursive_doubling, umpi_allgather_recursive_doubling_usable,
     umpi_coll_time_recursive_doubling_gather, "log2 p exchanges of doubling halves (p a power of two)",
     umpi_coll_work_allgather_rd, .pair = umpi_allgather_pair},
    {"bruck", umpi_allgather_bruck, NULL, umpi_coll_time_bruck_gather,
     "ceil(log2 p) rounds sending to rank - 2^k, packed, rotated at the end (any p)", umpi_coll_work_allgather_bruck},
    {"ring", umpi_allgather_ring, NULL, umpi_coll_time_ring,
     "p - 1 rounds passing one block to the right neighbour", umpi_coll_work_rounds},
    {"hier", umpi_allgather_hier, umpi_coll_hier_usable, umpi_coll_time_hier_allgather,
     "gather to each node leader, ring among leaders, node broadcast, blocks placed by rank"},
};

static const umpi_coll_algo_t umpi__allgatherv[] = {
    {"ring", umpi_allgatherv_ring, NULL, umpi_coll_time_ring,
     "p - 1 rounds passing one block to the right neighbour", umpi_coll_work_rounds},
    {"linear", umpi_allgatherv_linear, NULL, umpi_coll_time_linear_all,
     "every process sends its block to every other in one round", umpi_coll_work_linear_all},
};

static const umpi_coll_algo_t umpi__alltoall[] = {
    {"pairwise", umpi_alltoall_pairwise, NULL, umpi_coll_time_pairwise,
     "p - 1 rounds exchanging one block with rank XOR k (power of two) or rank +/- k", umpi_coll_work_rounds,
     .pair = umpi_alltoall_pair},
    {"bruck", umpi_alltoall_bruck, NULL, umpi_coll_time_bruck_alltoall,
     "ceil(log2 p) rounds of about p/2 packed blocks (small messages)", umpi_coll_work_bruck_alltoall},
    {"linear", umpi_alltoall_linear, NULL, umpi_coll_time_linear_all,
     "all p - 1 sends and receives posted in one round", umpi_coll_work_linear_all},
};

/* alltoallw shares the alltoallv builders (they read the per-process datatypes when given) */
static const umpi_coll_algo_t umpi__alltoallv[] = {
    {"pairwise", umpi_alltoallv_pairwise, NULL, umpi_coll_time_pairwise,
     "p - 1 rounds exchanging one block with rank XOR k (power of two) or rank +/- k", umpi_coll_work_rounds},
    {"linear", umpi_alltoallv_linear, NULL, umpi_coll_time_linear_all,
     "all p - 1 sends and receives posted in one round", umpi_coll_work_linear_all},
};

static const umpi_coll_algo_t umpi__reduce[] = {
    {"binomial", umpi_reduce_binomial, NULL, umpi_coll_time_reduce_binomial,
     "binomial tree to the root (to member 0 in rank order, then the root, for non-commutative ops)",
     umpi_coll_work_reduce_binomial, .pair = umpi_reduce_pair},
    {"rabenseifner", umpi_reduce_rabenseifner, umpi_coll_commutative, umpi_coll_time_reduce_rabenseifner,
     "recursive halving reduce-scatter then binomial gather of the blocks: large vectors, commutative ops",
     umpi_coll_work_reduce_rabenseifner},
    {"hier", umpi_reduce_hier, umpi_coll_hier_usable_commutative, umpi_coll_time_hier_reduce,
     "binomial reduce inside each node, among node leaders, then to the root (commutative ops)"},
    {"pipeline", umpi_reduce_pipeline, NULL, umpi_coll_time_reduce_pipeline,
     "chain to the root in segments of UMPI_REDUCE_SEGMENT_SIZE, each reduced and sent on while the next "
     "arrives: large vectors, any op (rank order)",
     umpi_coll_work_reduce_pipeline},
    {"tree_pipeline", umpi_reduce_tree_pipeline, NULL, umpi_coll_time_reduce_tree_pipeline,
     "binomial tree to the root in segments of UMPI_REDUCE_SEGMENT_SIZE, levels working at once: large "
     "vectors, any op (rank order)",
     umpi_coll_work_reduce_tree_pipeline},
};

/* Reduce_scatter and Reduce_scatter_block run the same algorithms. */
static const umpi_coll_algo_t umpi__reduce_scatter[] = {
    {"ring", umpi_reduce_scatter_ring, umpi_coll_commutative, umpi_coll_time_rs_ring,
     "p - 1 ring steps, each passing one running block sum on: large vectors, commutative ops"},
    {"recursive_halving", umpi_reduce_scatter_recursive_halving, umpi_coll_commutative, umpi_coll_time_rs_halving,
     "log2 p rounds exchanging half of the remaining blocks: commutative ops"},
    {"reduce_scatterv", umpi_reduce_scatter_reduce_scatterv, NULL, umpi_coll_time_rs_reduce_scatterv,
     "binomial reduce to member 0 in rank order, then a send of each block: any op"},
};

static const umpi_coll_algo_t umpi__scan[] = {
    {"recursive_doubling", umpi_scan_recursive_doubling, NULL, umpi_coll_time_scan_rd,
     "log2 p exchanges of block partials, folding lower ranks' data first: any op"},
    {"linear", umpi_scan_linear, NULL, umpi_coll_time_scan_linear,
     "a chain: each member adds its data to its predecessor's result and passes it on"},
};

static const umpi_coll_algo_t umpi__exscan[] = {
    {"recursive_doubling", umpi_exscan_recursive_doubling, NULL, umpi_coll_time_scan_rd,
     "log2 p exchanges of block partials, keeping only lower ranks' data in the result: any op"},
    {"linear", umpi_exscan_linear, NULL, umpi_coll_time_scan_linear,
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
    /* intercommunicators ([kind][1]; no scan, exscan) and neighbourhood collectives */
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

/* Oversubscribed, estimates closer than this (relative) are a tie, broken by the work: the
 * candidate with less work gives the shared cores back to the other ranks sooner. The linear
 * barrier ties dissemination so at 4 ranks on 2 cores; releasing member 0 first, it makes a
 * broadcast from it that follows 5-15x faster (median), a reduce or a one-round alltoall 1.3-1.6x,
 * but a 1 KiB recursive-doubling allreduce or allgather, whose members then start staggered,
 * 1.3-1.6x slower (bench/NOTES.md, "segmented reduce, the barrier's exit order, cached pieces"). */
#define UMPI__TIE 0.01
/* Oversubscribed, a call of at most this many bytes keeps all its pieces in the cache, and its
 * critical path moves them at beta_cached (measured with messages of this size): then reduce +
 * bcast beats Rabenseifner for allreduce at 4 ranks and 32-64 KiB, as measured. Larger calls keep
 * beta: at 128-256 KiB the whole-vector algorithms measured out of the cache (binomial reduce, 4
 * ranks, 256 KiB: 3-6x the segmented reduce). The work estimates keep beta, which
 * UMPI__PIECE_CACHED of algo_cost.c was fitted with. */
#define UMPI__CALL_CACHED 65536

/* The algorithm UMPI_<COLL>_ALGORITHM forces for the kind of a, when it can run the call. */
static const umpi_coll_algo_t *umpi__forced(const umpi_coll_algo_t *t, int n, const umpi_coll_view_t *v,
                                            const umpi_coll_args_t *a)
{
    const char **knob = umpi__knob(a->kind);
    const char *forced = knob ? *knob : NULL;
    if (forced == NULL || strcmp(forced, "auto") == 0)
        return NULL;
    for (int i = 0; i < n; i++) {
        if (strcmp(t[i].name, forced) != 0)
            continue;
        if (t[i].usable == NULL || t[i].usable(v, a))
            return &t[i];
        umpi_debug(1, "%s: algorithm %s (forced) cannot run this call; the cost model chooses",
                   umpi__kind_names[a->kind], forced);
        break;
    }
    return NULL;
}

const umpi_coll_algo_t *umpi_coll_select(const umpi_coll_view_t *v, const umpi_coll_args_t *a,
                                         const umpi_coll_shape_t *shape)
{
    int n;
    const umpi_coll_algo_t *t = umpi_coll_algos(a->kind, a->comm->is_inter, &n);
    const umpi_coll_algo_t *forced = umpi__forced(t, n, v, a);
    if (forced != NULL)
        return forced;

    /* The parameters the call is priced with: its link class's, oversubscribed ones when ranks
     * outnumber the cores of a node. Across nodes the members of a node share its network link: a
     * flat algorithm whose members all send at once gets 1 / max_ppn of the bandwidth each (the
     * hierarchical formulas price their leaders' phase, one member per node, with the unshared NET
     * values themselves). */
    umpi_link_t link = umpi_coll_link(a->comm, v);
    int oversubscribed = link == UMPI_LINK_SHM && umpi_progress_oversubscribed;
    umpi_coll_cost_t eff = oversubscribed ? umpi_coll_cost_oversubscribed : umpi_coll_cost[link];
    if (link == UMPI_LINK_NET && shape->max_ppn > 1)
        eff.beta *= shape->max_ppn;
    umpi_coll_cost_t cp_eff = eff; /* the critical path's */
    if (oversubscribed && a->bytes <= UMPI__CALL_CACHED && eff.beta_cached > 0)
        cp_eff.beta = eff.beta_cached;

    const umpi_coll_algo_t *best = NULL;
    double best_t = 0, best_w = 0;
    for (int i = 0; i < n; i++) {
        if (t[i].usable != NULL && !t[i].usable(v, a)) {
            umpi_debug(2, "%s candidate %s: cannot run this call", umpi__kind_names[a->kind], t[i].name);
            continue;
        }
        double est = t[i].cost ? t[i].cost(&cp_eff, v->size, (double) a->bytes, shape) : 0, w = 0;
        /* oversubscribed: the total work over the cores when it is the larger */
        if (t[i].work != NULL && oversubscribed) {
            w = t[i].work(&eff, v->size, (double) a->bytes) / umpi_progress_cores;
            umpi_debug(2, "%s candidate %s: critical path %.3f us, work / %d cores %.3f us",
                       umpi__kind_names[a->kind], t[i].name, est, umpi_progress_cores, w);
            if (w > est)
                est = w;
        }
        umpi_debug(2, "%s candidate %s: estimated %.3f us (%d members, %zu bytes, %d nodes, at most %d per node)",
                   umpi__kind_names[a->kind], t[i].name, est, v->size, a->bytes, shape->nnodes,
                   shape->max_ppn);
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
