/*
 * The cost model of the collectives (shared/DESIGN.md, "Collectives"): what a message costs on
 * each class of link (link_cost.c) and, from that, each algorithm's estimated time and total work
 * (algo_cost.c), which select.c compares to choose an algorithm for a call.
 */
#ifndef UMPI_COLL_COST_H
#define UMPI_COLL_COST_H

#include "coll/umpi_sched.h"

/*
 * Cost model parameters of one link class, measured on this machine (bench/NOTES.md says how):
 *   alpha  us   start-up time of one message (latency), sender and receiver included
 *   beta   us/B time per byte moved (1 / bandwidth)
 *   gamma  us/B time per byte reduced by a predefined op (local computation)
 *   post   us   the part of alpha that messages posted in one round pay one after another (the
 *               per-message software cost); the rest of alpha (waiting for the peer) overlaps:
 *               equal to alpha except when oversubscribed
 *   beta_cached us/B  beta for pieces that stay in the cache (the segments of the pipelined
 *               algorithms; measured with 64 KiB ping-pongs); 0: as beta
 */
typedef struct umpi_coll_cost {
    double alpha, beta, gamma, post;
    double beta_cached;
} umpi_coll_cost_t;

typedef enum { UMPI_LINK_SHM, UMPI_LINK_NET, UMPI_LINK_NCLASSES } umpi_link_t;

/* The nodes the members of a communicator are on (umpi_coll_comm_t), which the formulas of the
 * hierarchical algorithms price their node and leaders' phases by. */
typedef struct {
    int nnodes, max_ppn;
} umpi_coll_shape_t;

/* ---- link_cost.c ------------------------------------------------------------------------------- */

extern umpi_coll_cost_t umpi_coll_cost[UMPI_LINK_NCLASSES];
/* SHM when the node runs more ranks than it has cores. */
extern const umpi_coll_cost_t umpi_coll_cost_oversubscribed;
/* Link class between the members of v (SHM when all of them share a node). */
umpi_link_t umpi_coll_link(const umpi_comm_t *c, const umpi_coll_view_t *v);
/* Sets the NET parameters from UMPI_COLL_NET_COST (by default UCX's estimate for world rank 0's
 * link to another node, which rank 0 publishes); called by MPI_Init after the address exchange, by
 * every process. */
int umpi_coll_net_setup(int world_rank, int world_size);

/* ---- algo_cost.c: the formulas ------------------------------------------------------------------ */

/* Estimated time in us of an algorithm's critical path for p members and n bytes (args.bytes) over
 * a link of parameters c; shape: the formulas of hierarchical algorithms price their phases by it
 * (the flat ones do not read it). */
#define UMPI_COLL_TIME(fn) double fn(const umpi_coll_cost_t *c, int p, double n, const umpi_coll_shape_t *shape)
/* The work of all members together in us (messages started, bytes moved and reduced, summed over
 * the members), same arguments: what oversubscribed cores take (select.c). */
#define UMPI_COLL_WORK(fn) double fn(const umpi_coll_cost_t *c, int p, double n)

UMPI_COLL_TIME(umpi_coll_time_dissemination);
UMPI_COLL_TIME(umpi_coll_time_barrier_rd);
UMPI_COLL_TIME(umpi_coll_time_barrier_linear);
UMPI_COLL_TIME(umpi_coll_time_binomial);
UMPI_COLL_TIME(umpi_coll_time_bcast_scatter_allgather);
UMPI_COLL_TIME(umpi_coll_time_bcast_pipeline);
UMPI_COLL_TIME(umpi_coll_time_bcast_linear);
UMPI_COLL_TIME(umpi_coll_time_tree_gather);
UMPI_COLL_TIME(umpi_coll_time_linear_rooted);
UMPI_COLL_TIME(umpi_coll_time_ring);
UMPI_COLL_TIME(umpi_coll_time_recursive_doubling_gather);
UMPI_COLL_TIME(umpi_coll_time_bruck_gather);
UMPI_COLL_TIME(umpi_coll_time_pairwise);
UMPI_COLL_TIME(umpi_coll_time_linear_all);
UMPI_COLL_TIME(umpi_coll_time_bruck_alltoall);
UMPI_COLL_TIME(umpi_coll_time_recursive_doubling_reduce);
UMPI_COLL_TIME(umpi_coll_time_reduce_binomial);
UMPI_COLL_TIME(umpi_coll_time_reduce_rabenseifner);
UMPI_COLL_TIME(umpi_coll_time_reduce_pipeline);
UMPI_COLL_TIME(umpi_coll_time_reduce_tree_pipeline);
UMPI_COLL_TIME(umpi_coll_time_allreduce_ring);
UMPI_COLL_TIME(umpi_coll_time_allreduce_rabenseifner);
UMPI_COLL_TIME(umpi_coll_time_allreduce_reduce_bcast);
UMPI_COLL_TIME(umpi_coll_time_rs_ring);
UMPI_COLL_TIME(umpi_coll_time_rs_halving);
UMPI_COLL_TIME(umpi_coll_time_rs_reduce_scatterv);
UMPI_COLL_TIME(umpi_coll_time_scan_rd);
UMPI_COLL_TIME(umpi_coll_time_scan_linear);
UMPI_COLL_TIME(umpi_coll_time_inter_linear);
UMPI_COLL_TIME(umpi_coll_time_inter_leader_tree);
UMPI_COLL_TIME(umpi_coll_time_inter_reduce_bcast);
UMPI_COLL_TIME(umpi_coll_time_neighbor_linear);
UMPI_COLL_TIME(umpi_coll_time_hier_barrier);
UMPI_COLL_TIME(umpi_coll_time_hier_bcast);
UMPI_COLL_TIME(umpi_coll_time_hier_allreduce);
UMPI_COLL_TIME(umpi_coll_time_hier_reduce);
UMPI_COLL_TIME(umpi_coll_time_hier_gather);
UMPI_COLL_TIME(umpi_coll_time_hier_allgather);
UMPI_COLL_TIME(umpi_coll_time_hier_allreduce_large);

UMPI_COLL_WORK(umpi_coll_work_barrier_dissemination);
UMPI_COLL_WORK(umpi_coll_work_barrier_rd);
UMPI_COLL_WORK(umpi_coll_work_barrier_linear);
UMPI_COLL_WORK(umpi_coll_work_reduce_binomial);
UMPI_COLL_WORK(umpi_coll_work_reduce_rabenseifner);
UMPI_COLL_WORK(umpi_coll_work_reduce_pipeline);
UMPI_COLL_WORK(umpi_coll_work_reduce_tree_pipeline);
UMPI_COLL_WORK(umpi_coll_work_allreduce_rd);
UMPI_COLL_WORK(umpi_coll_work_allreduce_ring);
UMPI_COLL_WORK(umpi_coll_work_allreduce_rabenseifner);
UMPI_COLL_WORK(umpi_coll_work_allreduce_reduce_bcast);
UMPI_COLL_WORK(umpi_coll_work_allgather_rd);
UMPI_COLL_WORK(umpi_coll_work_allgather_bruck);
UMPI_COLL_WORK(umpi_coll_work_rounds);
UMPI_COLL_WORK(umpi_coll_work_linear_all);
UMPI_COLL_WORK(umpi_coll_work_bruck_alltoall);

#endif
