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
    double f = (double) (p - 1) / p;
    return 2 * umpi__lg(p) * c->alpha + 2 * n * f * c->beta + n * f * c->gamma + umpi__fold(c, p, n, c->gamma) +
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

/* ---- tables --------------------------------------------------------------------------------------- */

static const umpi_coll_algo_t umpi__barrier[] = {
    {"dissemination", umpi_barrier_dissemination, NULL, umpi__cost_dissemination,
     "ceil(log2 p) rounds, each member signals rank + 2^k and waits for rank - 2^k"},
    /* part c2 */
    {"recursive_doubling", umpi_barrier_recursive_doubling, NULL, umpi__cost_barrier_rd,
     "log2 p pairwise exchanges among a power of two; the members above it fold in before and after"},
};

static const umpi_coll_algo_t umpi__bcast[] = {
    {"binomial", umpi_bcast_binomial, NULL, umpi__cost_binomial,
     "binomial tree from the root: log2 p rounds of the whole message"},
    /* part c2 */
    {"scatter_allgather", umpi_bcast_scatter_allgather, NULL, umpi__cost_bcast_scatter_allgather,
     "binomial scatter of p blocks, then a ring allgather (van de Geijn): large messages"},
    {"pipeline", umpi_bcast_pipeline, NULL, umpi__cost_bcast_pipeline,
     "chain from the root in 64 KiB segments, forwarding one while receiving the next: large messages"},
};

static const umpi_coll_algo_t umpi__allreduce[] = {
    {"recursive_doubling", umpi_allreduce_recursive_doubling, NULL, umpi__cost_recursive_doubling_reduce,
     "log2 p exchanges of the whole vector, reducing after each (non-powers of two fold in first)"},
    /* part c2 */
    {"ring", umpi_allreduce_ring, umpi_coll_commutative, umpi__cost_allreduce_ring,
     "ring reduce-scatter then ring allgather of p blocks: bandwidth-optimal, commutative ops"},
    {"rabenseifner", umpi_allreduce_rabenseifner, umpi_coll_commutative, umpi__cost_allreduce_rabenseifner,
     "recursive halving reduce-scatter then recursive doubling allgather: large vectors, commutative ops"},
    {"reduce_bcast", umpi_allreduce_reduce_bcast, NULL, umpi__cost_allreduce_reduce_bcast,
     "binomial reduce to member 0 in rank order, then binomial broadcast"},
};

static const umpi_coll_algo_t umpi__reduce[] = {
    {"binomial", umpi_reduce_binomial, NULL, umpi__cost_reduce_binomial,
     "binomial tree to the root (to member 0 in rank order, then the root, for non-commutative ops)"},
    {"rabenseifner", umpi_reduce_rabenseifner, umpi_coll_commutative, umpi__cost_reduce_rabenseifner,
     "recursive halving reduce-scatter then binomial gather of the blocks: large vectors, commutative ops"},
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
    [UMPI_COLL_BARRIER] = {UMPI__TABLE(umpi__barrier)},
    [UMPI_COLL_BCAST] = {UMPI__TABLE(umpi__bcast)},
    [UMPI_COLL_ALLREDUCE] = {UMPI__TABLE(umpi__allreduce)},
    [UMPI_COLL_REDUCE] = {UMPI__TABLE(umpi__reduce)},
    [UMPI_COLL_REDUCE_SCATTER] = {UMPI__TABLE(umpi__reduce_scatter)},
    [UMPI_COLL_REDUCE_SCATTER_BLOCK] = {UMPI__TABLE(umpi__reduce_scatter)},
    [UMPI_COLL_SCAN] = {UMPI__TABLE(umpi__scan)},
    [UMPI_COLL_EXSCAN] = {UMPI__TABLE(umpi__exscan)},
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
