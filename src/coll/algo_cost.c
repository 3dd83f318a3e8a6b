/*
 * Each algorithm's estimated time and total work (umpi_coll_cost.h), from the link parameters of
 * link_cost.c: a message of n bytes costs alpha + n * beta, reducing n bytes n * gamma.
 *
 * Time is the critical path of the algorithm's rounds for p members and a message of n bytes, n
 * as the kind defines it (args.bytes): Bcast, Reduce, Allreduce, Scan, Exscan the vector; Gather,
 * Scatter, Allgather(v), Alltoall one process's block; Reduce_scatter(_block) the whole vector each
 * member contributes; Barrier 0; intercommunicators the block of one process, p the members of
 * my group; neighbourhoods everything this process sends.
 *
 * Flat against hierarchical: on a communicator spanning nodes a flat algorithm's formula gets the
 * NET parameters with beta multiplied by max_ppn (select.c: the members of a node share its
 * network link and, in the bandwidth-bound algorithms, all send at once), so every round is
 * charged as if it crossed the network. A hierarchical formula adds its node phases (max_ppn
 * members, SHM parameters) and its leaders' phase (nnodes members, NET parameters unshared) from
 * the shape of the communicator; it does not read c, the parameters of the whole communicator.
 *
 * Work (the end of the file) is what all members do together, which is what the wall clock sees
 * when the node has fewer cores than ranks; select.c prices max(time, work / cores) then.
 */
#include "coll/umpi_coll.h"

/* ceil(log2 p): the rounds of the tree and dissemination algorithms */
static double umpi__lg(int p)
{
    return p > 1 ? (double) umpi_coll_log2(umpi_coll_pow2_ceil(p)) : 0.0;
}

/* floor(log2 p): the rounds among the largest power of two of members, which the algorithms that
 * fold the others in first (recursive doubling, Rabenseifner) run; ceil(log2 p) would count one
 * round too many for every p not a power of two */
static double umpi__lg_floor(int p)
{
    return p > 1 ? (double) umpi_coll_log2(p) : 0.0;
}

static int umpi__pof2_floor(int p)
{
    int q = umpi_coll_pow2_ceil(p);
    return q > p ? q / 2 : q;
}

/* a fold of a non-power-of-two size: one more exchange of the whole vector and its reduction */
static double umpi__fold(const umpi_coll_cost_t *c, int p, double n, double gamma)
{
    return (p & (p - 1)) ? c->alpha + n * c->beta + n * gamma : 0;
}

/* ---- barrier ------------------------------------------------------------------------------------ */

UMPI_COLL_TIME(umpi_coll_time_dissemination)
{
    return umpi__lg(p) * c->alpha;
}

UMPI_COLL_TIME(umpi_coll_time_barrier_rd)
{
    return (umpi_coll_log2(p) + ((p & (p - 1)) ? 2 : 0)) * c->alpha;
}

/* Two hand-offs (the last signal to member 0, its release to the others) and member 0 posting
 * p - 1 releases one after another. */
UMPI_COLL_TIME(umpi_coll_time_barrier_linear)
{
    return p > 1 ? 2 * c->alpha + (p - 2) * c->post : 0;
}

/* ---- broadcast ---------------------------------------------------------------------------------- */

UMPI_COLL_TIME(umpi_coll_time_binomial)
{
    return umpi__lg(p) * (c->alpha + n * c->beta);
}

UMPI_COLL_TIME(umpi_coll_time_bcast_scatter_allgather)
{
    return (umpi__lg(p) + p - 1) * c->alpha + 2.0 * n * (p - 1) / p * c->beta;
}

UMPI_COLL_TIME(umpi_coll_time_bcast_pipeline)
{
    double seg = n < 65536 ? n : 65536, nseg = n <= 65536 ? 1 : n / 65536;
    return (p - 2 + nseg) * (c->alpha + seg * c->beta);
}

/* p - 1 sends from the root in one round (umpi_coll_time_linear_all's start-ups) */
UMPI_COLL_TIME(umpi_coll_time_bcast_linear)
{
    return p > 1 ? c->alpha + (p - 2) * c->post + (p - 1) * n * c->beta : 0;
}

/* ---- gather, scatter, allgather, alltoall: n is ONE process's block --------------------------- */

UMPI_COLL_TIME(umpi_coll_time_tree_gather)
{
    /* log2 p rounds; the root takes in the other p - 1 blocks */
    return umpi__lg(p) * c->alpha + (p - 1) * n * c->beta;
}

UMPI_COLL_TIME(umpi_coll_time_linear_rooted)
{
    /* the root handles p - 1 messages one after the other */
    return (p - 1) * (c->alpha + n * c->beta);
}

UMPI_COLL_TIME(umpi_coll_time_ring)
{
    return (p - 1) * (c->alpha + n * c->beta);
}

UMPI_COLL_TIME(umpi_coll_time_recursive_doubling_gather)
{
    return umpi__lg(p) * c->alpha + (p - 1) * n * c->beta;
}

UMPI_COLL_TIME(umpi_coll_time_bruck_gather)
{
    /* log2 p rounds moving p - 1 blocks in all, plus packing in and rotating out (2 p blocks) */
    return umpi__lg(p) * c->alpha + (p - 1) * n * c->beta + 2 * p * n * c->beta;
}

UMPI_COLL_TIME(umpi_coll_time_pairwise)
{
    return (p - 1) * (c->alpha + n * c->beta);
}

UMPI_COLL_TIME(umpi_coll_time_linear_all)
{
    /* all 2 (p - 1) messages at once: one wait for the peers, the start-ups one after another,
     * and the transfers congest */
    return c->alpha + (p - 2) * c->post + (p - 1) * n * c->beta + (p > 2 ? (p - 1) * n * c->beta : 0);
}

UMPI_COLL_TIME(umpi_coll_time_bruck_alltoall)
{
    /* log2 p rounds of about p/2 blocks, each block packed and unpacked in every round */
    return umpi__lg(p) * (c->alpha + (p / 2.0) * n * 3 * c->beta) + 2 * p * n * c->beta;
}

/* ---- reductions ----------------------------------------------------------------------------------- */

UMPI_COLL_TIME(umpi_coll_time_recursive_doubling_reduce)
{
    /* log p exchanges of n bytes, each followed by a reduction; a non-power-of-two size adds a
     * step before and after */
    double extra = (p & (p - 1)) ? 2 * (c->alpha + n * c->beta) + n * c->gamma : 0;
    return umpi__lg_floor(p) * (c->alpha + n * c->beta + n * c->gamma) + extra;
}

UMPI_COLL_TIME(umpi_coll_time_reduce_binomial)
{
    return umpi__lg(p) * (c->alpha + n * c->beta + n * c->gamma);
}

UMPI_COLL_TIME(umpi_coll_time_reduce_rabenseifner)
{
    /* halving + gather, then the result to a root that is not new rank 0 (counted always) */
    double f = (double) (p - 1) / p;
    return 2 * umpi__lg(p) * c->alpha + 2 * n * f * c->beta + n * f * c->gamma + umpi__fold(c, p, n, c->gamma) +
           c->alpha + n * c->beta;
}

/*
 * The segmented reduce: k segments of s bytes (UMPI_REDUCE_SEGMENT_SIZE; the whole vector when 0
 * or larger). A step is one segment received, reduced and sent on; the busiest member (the root)
 * takes it in from each of its children. Chain: p - 2 + k steps (the last segment leaves the far
 * end after k, and climbs p - 2 more). Binomial, lg = ceil(log2 p): lg - 1 steps bring the deepest
 * child's first segment up, then the root takes in k segments from lg children each, waiting once
 * per segment (it posts all their receives at once). Streamed segments stay in the cache and move
 * at beta_cached; one segment (k = 1) is the unsegmented chain or tree, priced like the binomial
 * reduce's rounds with beta. At 2 ranks and 1 MiB this prices binomial at 115.7 us and the 64 KiB
 * chain at 65, where forced runs measure 96.5 and 45.0 (bench/NOTES.md, "segmented reduce, the
 * barrier's exit order, cached pieces").
 */
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

UMPI_COLL_TIME(umpi_coll_time_reduce_pipeline)
{
    double seg, k;
    umpi__segments(n, &seg, &k);
    return (p - 2 + k) * umpi__seg_step(c, seg, k);
}

UMPI_COLL_TIME(umpi_coll_time_reduce_tree_pipeline)
{
    double seg, k, lg = umpi__lg(p);
    umpi__segments(n, &seg, &k);
    return (lg - 1) * umpi__seg_step(c, seg, k) + k * umpi__seg_step(c, lg * seg, k);
}

UMPI_COLL_TIME(umpi_coll_time_allreduce_ring)
{
    double f = (double) (p - 1) / p;
    return 2 * (p - 1) * c->alpha + 2 * n * f * c->beta + n * f * c->gamma;
}

UMPI_COLL_TIME(umpi_coll_time_allreduce_rabenseifner)
{
    /* halving and doubling among q = 2^floor(log2 p), the others folded in before and out after */
    int q = p > 1 ? 1 << umpi_coll_log2(p) : 1;
    double f = (double) (q - 1) / q;
    return 2 * umpi__lg_floor(p) * c->alpha + 2 * n * f * c->beta + n * f * c->gamma + umpi__fold(c, p, n, c->gamma) +
           umpi__fold(c, p, n, 0);
}

UMPI_COLL_TIME(umpi_coll_time_allreduce_reduce_bcast)
{
    return umpi__lg(p) * (2 * c->alpha + 2 * n * c->beta + n * c->gamma);
}

UMPI_COLL_TIME(umpi_coll_time_rs_ring)
{
    return (p - 1) * c->alpha + n * (p - 1) / p * (c->beta + c->gamma);
}

UMPI_COLL_TIME(umpi_coll_time_rs_halving)
{
    return umpi__lg(p) * c->alpha + n * (p - 1) / p * (c->beta + c->gamma) + umpi__fold(c, p, n, c->gamma) +
           ((p & (p - 1)) ? c->alpha + n / p * c->beta : 0);
}

UMPI_COLL_TIME(umpi_coll_time_rs_reduce_scatterv)
{
    return umpi_coll_time_reduce_binomial(c, p, n, shape) + (p - 1) * (c->alpha + n / p * c->beta);
}

UMPI_COLL_TIME(umpi_coll_time_scan_rd)
{
    return umpi__lg(p) * (c->alpha + n * c->beta + 2 * n * c->gamma);
}

UMPI_COLL_TIME(umpi_coll_time_scan_linear)
{
    return (p - 1) * (c->alpha + n * c->beta + n * c->gamma);
}

/* ---- intercommunicators (p: the members of my group) and neighbourhoods ----------------------- */

/* Root to every remote process (or back), one message each: p messages of n bytes in sequence. */
UMPI_COLL_TIME(umpi_coll_time_inter_linear)
{
    return p * (c->alpha + n * c->beta);
}

/* Leader exchange plus a binomial tree in the group. */
UMPI_COLL_TIME(umpi_coll_time_inter_leader_tree)
{
    return (1 + umpi__lg(p)) * (c->alpha + n * c->beta);
}

/* Linear reduction to the leader, leader exchange, binomial broadcast back. */
UMPI_COLL_TIME(umpi_coll_time_inter_reduce_bcast)
{
    return (p - 1) * (c->alpha + n * c->beta + n * c->gamma) + (1 + umpi__lg(p)) * (c->alpha + n * c->beta);
}

/* One phase whose messages overlap: n is everything this process sends. */
UMPI_COLL_TIME(umpi_coll_time_neighbor_linear)
{
    return c->alpha + n * c->beta;
}

/* ---- hierarchical -----------------------------------------------------------------------------------
 * A node phase among max_ppn members over shared memory, an inter-node phase among the nnodes
 * leaders over the network, and (for results everyone needs) a node phase again, each phase priced
 * by its flat formula. */
#define UMPI__SHM (&umpi_coll_cost[UMPI_LINK_SHM])
#define UMPI__NET (&umpi_coll_cost[UMPI_LINK_NET])

UMPI_COLL_TIME(umpi_coll_time_hier_barrier)
{
    return 2 * umpi_coll_time_dissemination(UMPI__SHM, shape->max_ppn, n, shape) +
           umpi_coll_time_dissemination(UMPI__NET, shape->nnodes, n, shape);
}

UMPI_COLL_TIME(umpi_coll_time_hier_bcast)
{
    return (UMPI__SHM->alpha + n * UMPI__SHM->beta) + umpi_coll_time_binomial(UMPI__NET, shape->nnodes, n, shape) +
           umpi_coll_time_binomial(UMPI__SHM, shape->max_ppn, n, shape);
}

UMPI_COLL_TIME(umpi_coll_time_hier_allreduce)
{
    return umpi_coll_time_recursive_doubling_reduce(UMPI__SHM, shape->max_ppn, n, shape) +
           umpi_coll_time_recursive_doubling_reduce(UMPI__NET, shape->nnodes, n, shape) +
           umpi_coll_time_binomial(UMPI__SHM, shape->max_ppn, n, shape);
}

UMPI_COLL_TIME(umpi_coll_time_hier_reduce)
{
    /* node reduce, leaders' reduce, the result to a root that does not lead its node (counted always) */
    return umpi_coll_time_reduce_binomial(UMPI__SHM, shape->max_ppn, n, shape) +
           umpi_coll_time_reduce_binomial(UMPI__NET, shape->nnodes, n, shape) + UMPI__SHM->alpha + n * UMPI__SHM->beta;
}

UMPI_COLL_TIME(umpi_coll_time_hier_gather)
{
    /* node gather of max_ppn blocks, nnodes - 1 pieces of max_ppn blocks into the root's leader,
     * the p blocks to the root and into place */
    int ppn = shape->max_ppn;
    return umpi_coll_time_tree_gather(UMPI__SHM, ppn, n, shape) +
           umpi_coll_time_linear_rooted(UMPI__NET, shape->nnodes, ppn * n, shape) + UMPI__SHM->alpha +
           2 * p * n * UMPI__SHM->beta;
}

UMPI_COLL_TIME(umpi_coll_time_hier_allgather)
{
    /* node gather, leaders' ring of node pieces, node broadcast of all p blocks, into place */
    int ppn = shape->max_ppn;
    return umpi_coll_time_tree_gather(UMPI__SHM, ppn, n, shape) +
           umpi_coll_time_ring(UMPI__NET, shape->nnodes, ppn * n, shape) +
           umpi_coll_time_binomial(UMPI__SHM, ppn, p * n, shape) + p * n * UMPI__SHM->beta;
}

UMPI_COLL_TIME(umpi_coll_time_hier_allreduce_large)
{
    int ppn = shape->max_ppn, k = shape->nnodes;
    double net = (k & (k - 1)) == 0 ? umpi_coll_time_allreduce_rabenseifner(UMPI__NET, k, n, shape)
                                    : umpi_coll_time_allreduce_ring(UMPI__NET, k, n, shape);
    return umpi_coll_time_reduce_rabenseifner(UMPI__SHM, ppn, n, shape) + net +
           umpi_coll_time_bcast_scatter_allgather(UMPI__SHM, ppn, n, shape);
}

/* ---- total work -------------------------------------------------------------------------------------
 * Oversubscribed (more ranks than cores on the node), the cores are the bottleneck: what the wall
 * clock sees is the work of all members together divided by the cores, not only the critical path.
 * These functions give that total (same arguments as the formulas above, the oversubscribed
 * parameters): every message costs its software start-up (post) and n beta of copying, every
 * reduced byte gamma, and every time a member waits for a peer between rounds it gives its core
 * away and takes it back. That switch is not measured on its own: half the hand-off the
 * oversubscribed alpha adds to post, the most that keeps the measured 8-byte choices (allreduce:
 * recursive doubling 4.6 us, reduce + bcast 5.4) and enough to see the 1.5x that posting every
 * alltoall block at once gains over p - 1 rounds at 64 KiB and 1 MiB. Only the kinds whose large
 * messages were measured oversubscribed have them (reduce, allreduce, allgather(v), alltoall(v),
 * barrier; bench/NOTES.md, "oversubscribed large messages, total work in the cost model"). */

/* Pieces larger than this (a quarter of the 1 MiB L2 each core of the development VM has) do not
 * stay in the cache with their destination and the vector they are reduced into; oversubscribed,
 * the share of such a piece beyond it (1 - this / piece) costs twice beta: fitted, not measured on
 * its own, to allreduce at 1 MiB and 4 ranks, where the ring (256 KiB pieces) beats Rabenseifner
 * (512 KiB pieces in two of its four rounds, the same bytes in all) by 1.5x and reduce + bcast (1
 * MiB pieces) by 4x. Reductions only: where pieces are only copied into place the measurements
 * show no such effect (allgather at 1 MiB: recursive doubling with 1 and 2 MiB pieces as fast as
 * the ring with 1 MiB pieces). */
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

/* Dissemination and recursive doubling send and wait p ceil(log2 p) times in all (recursive
 * doubling: log2 q per member of the power of two q, 2 per folded pair); the linear barrier sends
 * 2 (p - 1) messages and each member waits once. */
UMPI_COLL_WORK(umpi_coll_work_barrier_dissemination)
{
    return umpi__w(c, p * umpi__lg(p), 0, 0, p * umpi__lg(p));
}

UMPI_COLL_WORK(umpi_coll_work_barrier_rd)
{
    int q = umpi__pof2_floor(p), r = p - q;
    double m = q * umpi__lg(q) + 4.0 * r;
    return umpi__w(c, m, 0, 0, m);
}

UMPI_COLL_WORK(umpi_coll_work_barrier_linear)
{
    return umpi__w(c, 2.0 * (p - 1), 0, 0, p);
}

UMPI_COLL_WORK(umpi_coll_work_reduce_binomial)
{
    /* p - 1 messages of the whole vector, each reduced by its receiver, which waits for it */
    return umpi__w(c, p - 1, (p - 1) * n, umpi__big(n, (p - 1) * n), p - 1) + (p - 1) * n * c->gamma;
}

UMPI_COLL_WORK(umpi_coll_work_reduce_rabenseifner)
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

/* The segmented reduces: p - 1 edges carrying the vector in k messages each, every segment reduced
 * by its receiver; the pieces are segments (no out-of-cache share when small). A member with
 * children waits once per phase, for all of them at once: k waits at each of them (chain: p - 1
 * members wait, binomial: floor(p / 2); the leaves only send). */
static double umpi__work_segmented(const umpi_coll_cost_t *c, int p, double n, double waiting)
{
    double seg, k;
    umpi__segments(n, &seg, &k);
    double m = (p - 1) * k;
    return umpi__w(c, m, (p - 1) * n, umpi__big(seg, (p - 1) * n), waiting * k) + (p - 1) * n * c->gamma;
}

UMPI_COLL_WORK(umpi_coll_work_reduce_pipeline)
{
    return umpi__work_segmented(c, p, n, p - 1);
}

UMPI_COLL_WORK(umpi_coll_work_reduce_tree_pipeline)
{
    return umpi__work_segmented(c, p, n, p / 2);
}

UMPI_COLL_WORK(umpi_coll_work_allreduce_rd)
{
    int q = umpi__pof2_floor(p), r = p - q;
    double lq = umpi__lg(q);
    double bytes = (q * lq + 2 * r) * n;
    return umpi__w(c, q * lq + 2 * r, bytes, umpi__big(n, bytes), q * lq + 2 * r) + (q * lq + r) * n * c->gamma;
}

UMPI_COLL_WORK(umpi_coll_work_allreduce_ring)
{
    /* every member: 2 (p - 1) messages of n / p, p - 1 of them reduced */
    return umpi__w(c, 2.0 * p * (p - 1), 2.0 * (p - 1) * n, umpi__big(n / p, 2.0 * (p - 1) * n), 2.0 * p * (p - 1)) +
           (p - 1) * n * c->gamma;
}

UMPI_COLL_WORK(umpi_coll_work_allreduce_rabenseifner)
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

UMPI_COLL_WORK(umpi_coll_work_allreduce_reduce_bcast)
{
    return umpi__w(c, 2 * (p - 1), 2.0 * (p - 1) * n, umpi__big(n, 2.0 * (p - 1) * n), 2 * (p - 1)) +
           (p - 1) * n * c->gamma;
}

/* gathers to all, n one member's block: every member ends with the p - 1 others' blocks */
UMPI_COLL_WORK(umpi_coll_work_allgather_rd)
{
    return umpi__w(c, p * umpi__lg(p), (double) p * (p - 1) * n, 0, p * umpi__lg(p));
}

UMPI_COLL_WORK(umpi_coll_work_allgather_bruck)
{
    /* as recursive doubling, plus each member's packing in and rotating out (2 p blocks) */
    return umpi__w(c, p * umpi__lg(p), (double) p * (p - 1) * n + 2.0 * p * p * n, 0, p * umpi__lg(p));
}

/* p (p - 1) blocks, one message each, in p - 1 rounds (ring, pairwise) */
UMPI_COLL_WORK(umpi_coll_work_rounds)
{
    return umpi__w(c, (double) p * (p - 1), (double) p * (p - 1) * n, 0, (double) p * (p - 1));
}

/* p (p - 1) blocks, one message each, all in one round: one wait per member */
UMPI_COLL_WORK(umpi_coll_work_linear_all)
{
    return umpi__w(c, (double) p * (p - 1), (double) p * (p - 1) * n, 0, p);
}

UMPI_COLL_WORK(umpi_coll_work_bruck_alltoall)
{
    /* every member: the critical path's bytes (log2 p rounds of p/2 blocks, 3 copies each, the
     * packing in and out) */
    double lg = umpi__lg(p);
    return umpi__w(c, p * lg, p * (lg * (p / 2.0) * n * 3 + 2.0 * p * n), 0, p * lg);
}
