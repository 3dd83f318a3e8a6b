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

/* ---- the tables (algos.def) and the kinds (umpi_coll_kinds.def) ----------------------------------- */

enum { UMPI__INTRA, UMPI__INTER };

/* one array per table: umpi__<KIND>_<COMM> */
#define UMPI_COLL_TABLE(KIND, COMM, ...) static const umpi_coll_algo_t umpi__##KIND##_##COMM[] = {__VA_ARGS__};
#define UMPI_COLL_TABLE_OF(KIND, COMM, OTHER)
#define UMPI_COLL_ALGO(name_, fn_, usable_, time_, work_, pair_, doc_)                                          \
    {.name = name_, .build = fn_, .usable = usable_, .cost = time_, .doc = doc_, .work = work_, .pair = pair_},
#include "coll/algos.def"
#undef UMPI_COLL_TABLE
#undef UMPI_COLL_TABLE_OF
#undef UMPI_COLL_ALGO

#define UMPI__TABLE(t) {t, sizeof(t) / sizeof(t[0])}

/* [kind][INTRA or INTER]; {NULL, 0} where the kind has no table */
static const struct {
    const umpi_coll_algo_t *algos;
    int n;
} umpi__tables[UMPI_COLL_NKINDS][2] = {
#define UMPI_COLL_TABLE(KIND, COMM, ...) [UMPI_COLL_##KIND][UMPI__##COMM] = UMPI__TABLE(umpi__##KIND##_##COMM),
#define UMPI_COLL_TABLE_OF(KIND, COMM, OTHER) [UMPI_COLL_##KIND][UMPI__##COMM] = UMPI__TABLE(umpi__##OTHER##_##COMM),
#include "coll/algos.def"
#undef UMPI_COLL_TABLE
#undef UMPI_COLL_TABLE_OF
};

static const char *const umpi__kind_names[UMPI_COLL_NKINDS] = {
#define UMPI_COLL_KIND(KIND, name, Mpi, knob) [UMPI_COLL_##KIND] = #name,
#include "core/umpi_coll_kinds.def"
#undef UMPI_COLL_KIND
};

/* The knob forcing each kind's algorithm (umpi_config.<name>_algorithm), NULL for the kinds without one. */
#define UMPI__KNOB_0(name) NULL
#define UMPI__KNOB_1(name) &umpi_config.name##_algorithm
static const char **const umpi__knobs[UMPI_COLL_NKINDS] = {
#define UMPI_COLL_KIND(KIND, name, Mpi, knob) [UMPI_COLL_##KIND] = UMPI__KNOB_##knob(name),
#include "core/umpi_coll_kinds.def"
#undef UMPI_COLL_KIND
};

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
    const char **knob = umpi__knobs[a->kind];
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
