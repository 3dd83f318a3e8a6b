/*
 * Algorithm tables, the cost model, and the collective driver (umpi_coll.h).
 *
 * The model: a message of n bytes between two members costs alpha + n * beta; reducing n bytes
 * costs n * gamma. Each algorithm states its cost for p members as the critical path of its
 * rounds (the formulas below, with n the message size the kind defines: args.bytes). alpha, beta
 * and gamma belong to the link class the members share (same node: shared memory through UCX;
 * several nodes: the network); the values are measured on this machine (bench/NOTES.md).
 */
#include "coll/umpi_coll.h"
#include "core/umpi_err.h"
#include "pmi/umpi_pmi.h"

#include <string.h>

/* Measured 2026-11-22 on the 2-core CI-class VM (bench/NOTES.md, "cost model"): alpha from the
 * 8-byte ping-pong half round trip plus matching overhead, beta from 1 MiB bandwidth, gamma from
 * MPI_SUM on doubles. Network values: a typical 100 Gb/s InfiniBand link. */
umpi_coll_cost_t umpi_coll_cost[UMPI_LINK_NCLASSES] = {
    [UMPI_LINK_SHM] = {.alpha = 0.25, .beta = 1.0 / 13000.0, .gamma = 1.0 / 6000.0},
    [UMPI_LINK_NET] = {.alpha = 2.0, .beta = 1.0 / 11000.0, .gamma = 1.0 / 6000.0},
};

static double umpi__lg(int p)
{
    return p > 1 ? (double) umpi_coll_log2(umpi_coll_pow2_ceil(p)) : 0.0;
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
    return umpi__lg(p) * (c->alpha + n * c->beta + n * c->gamma) + extra;
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
    /* all 2 (p - 1) messages at once: start-ups overlap with transfers but congest */
    return (p - 1) * (c->alpha + n * c->beta) + (p > 2 ? (p - 1) * n * c->beta : 0);
}

static double umpi__cost_bruck_alltoall(const umpi_coll_cost_t *c, int p, double n)
{
    /* log2 p rounds of about p/2 blocks, each block packed and unpacked in every round */
    return umpi__lg(p) * (c->alpha + (p / 2.0) * n * 3 * c->beta) + 2 * p * n * c->beta;
}

/* ---- tables --------------------------------------------------------------------------------------- */

static const umpi_coll_algo_t umpi__barrier[] = {
    {"dissemination", umpi_barrier_dissemination, NULL, umpi__cost_dissemination,
     "ceil(log2 p) rounds, each member signals rank + 2^k and waits for rank - 2^k"},
};

static const umpi_coll_algo_t umpi__bcast[] = {
    {"binomial", umpi_bcast_binomial, NULL, umpi__cost_binomial,
     "binomial tree from the root: log2 p rounds of the whole message"},
};

static const umpi_coll_algo_t umpi__allreduce[] = {
    {"recursive_doubling", umpi_allreduce_recursive_doubling, NULL, umpi__cost_recursive_doubling_reduce,
     "log2 p exchanges of the whole vector, reducing after each (non-powers of two fold in first)"},
};

/* part c1 */
static const umpi_coll_algo_t umpi__gather[] = {
    {"binomial", umpi_gather_binomial, NULL, umpi__cost_tree_gather,
     "binomial tree to the root, subtrees' blocks packed: log2 p rounds"},
    {"linear", umpi_gather_linear, NULL, umpi__cost_linear_rooted,
     "every process sends to the root, which receives p - 1 messages in one round"},
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
};

static const umpi_coll_algo_t umpi__scatterv[] = {
    {"linear", umpi_scatterv_linear, NULL, umpi__cost_linear_rooted,
     "the root sends every process its block, p - 1 messages in one round"},
};

static const umpi_coll_algo_t umpi__allgather[] = {
    {"recursive_doubling", umpi_allgather_recursive_doubling, umpi_allgather_recursive_doubling_usable,
     umpi__cost_recursive_doubling_gather, "log2 p exchanges of doubling halves (p a power of two)"},
    {"bruck", umpi_allgather_bruck, NULL, umpi__cost_bruck_gather,
     "ceil(log2 p) rounds sending to rank - 2^k, packed, rotated at the end (any p)"},
    {"ring", umpi_allgather_ring, NULL, umpi__cost_ring,
     "p - 1 rounds passing one block to the right neighbour"},
};

static const umpi_coll_algo_t umpi__allgatherv[] = {
    {"ring", umpi_allgatherv_ring, NULL, umpi__cost_ring,
     "p - 1 rounds passing one block to the right neighbour"},
    {"linear", umpi_allgatherv_linear, NULL, umpi__cost_linear_all,
     "every process sends its block to every other in one round"},
};

static const umpi_coll_algo_t umpi__alltoall[] = {
    {"pairwise", umpi_alltoall_pairwise, NULL, umpi__cost_pairwise,
     "p - 1 rounds exchanging one block with rank XOR k (power of two) or rank +/- k"},
    {"bruck", umpi_alltoall_bruck, NULL, umpi__cost_bruck_alltoall,
     "ceil(log2 p) rounds of about p/2 packed blocks (small messages)"},
    {"linear", umpi_alltoall_linear, NULL, umpi__cost_linear_all,
     "all p - 1 sends and receives posted in one round"},
};

/* alltoallw shares the alltoallv builders (they read the per-process datatypes when given) */
static const umpi_coll_algo_t umpi__alltoallv[] = {
    {"pairwise", umpi_alltoallv_pairwise, NULL, umpi__cost_pairwise,
     "p - 1 rounds exchanging one block with rank XOR k (power of two) or rank +/- k"},
    {"linear", umpi_alltoallv_linear, NULL, umpi__cost_linear_all,
     "all p - 1 sends and receives posted in one round"},
};

#define UMPI__TABLE(t) {t, sizeof(t) / sizeof(t[0])}

static const struct {
    const umpi_coll_algo_t *algos;
    int n;
} umpi__tables[UMPI_COLL_NKINDS][2] = {
    [UMPI_COLL_BARRIER] = {UMPI__TABLE(umpi__barrier)},
    [UMPI_COLL_BCAST] = {UMPI__TABLE(umpi__bcast)},
    [UMPI_COLL_ALLREDUCE] = {UMPI__TABLE(umpi__allreduce)},
    [UMPI_COLL_GATHER] = {UMPI__TABLE(umpi__gather)},
    [UMPI_COLL_GATHERV] = {UMPI__TABLE(umpi__gatherv)},
    [UMPI_COLL_SCATTER] = {UMPI__TABLE(umpi__scatter)},
    [UMPI_COLL_SCATTERV] = {UMPI__TABLE(umpi__scatterv)},
    [UMPI_COLL_ALLGATHER] = {UMPI__TABLE(umpi__allgather)},
    [UMPI_COLL_ALLGATHERV] = {UMPI__TABLE(umpi__allgatherv)},
    [UMPI_COLL_ALLTOALL] = {UMPI__TABLE(umpi__alltoall)},
    [UMPI_COLL_ALLTOALLV] = {UMPI__TABLE(umpi__alltoallv)},
    [UMPI_COLL_ALLTOALLW] = {UMPI__TABLE(umpi__alltoallv)},
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

umpi_link_t umpi_coll_link(const umpi_comm_t *c, const umpi_coll_view_t *v)
{
    (void) c;
    int node = -1;
    for (int i = 0; i < v->size; i++) {
        int n = umpi_pmi_node_of(v->world ? v->world[i] : i);
        if (i > 0 && n != node)
            return UMPI_LINK_NET;
        node = n;
    }
    return UMPI_LINK_SHM;
}

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
    const umpi_coll_cost_t *cost = &umpi_coll_cost[umpi_coll_link(a->comm, v)];
    const umpi_coll_algo_t *best = NULL;
    double best_t = 0;
    for (int i = 0; i < n; i++) {
        if (t[i].usable != NULL && !t[i].usable(v, a))
            continue;
        double est = t[i].cost ? t[i].cost(cost, v->size, (double) a->bytes) : 0;
        if (best == NULL || est < best_t) {
            best = &t[i];
            best_t = est;
        }
    }
    return best;
}

int umpi_coll_post(umpi_coll_args_t *a, int mode, MPI_Request *request)
{
    umpi_coll_view_t v;
    umpi_coll_view_local(&v, a->comm);
    const umpi_coll_algo_t *algo = umpi__select(&v, a);
    if (algo == NULL)
        return umpi_err_create(MPI_ERR_INTERN, "no %s algorithm can run on this %s", umpi__kind_names[a->kind],
                               a->comm->is_inter ? "intercommunicator" : "communicator");
    umpi_debug(1, "%s%s on %s (size %d, %zu bytes): algorithm %s",
               mode == UMPI_COLL_NONBLOCKING ? "i" : "", umpi__kind_names[a->kind],
               a->comm->name[0] ? a->comm->name : "a communicator", a->comm->size, a->bytes, algo->name);
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
