/*
 * Collectives (shared/DESIGN.md, "Collectives").
 *
 * Every collective call becomes a schedule (umpi_sched.h) built by one ALGORITHM: a function of
 * one file in src/coll/algo/, with the signature umpi_coll_build_fn. An algorithm adds the steps
 * this process takes over a view (the members it runs over) to the schedule, reading what the
 * call passed from umpi_coll_args_t. The same build serves the blocking call (run to completion),
 * the nonblocking one (a request whose schedule progresses in the background) and the persistent
 * one (built at _init, restarted by MPI_Start).
 *
 * Each collective kind (umpi_coll_kinds.def) has a table of algorithms (algos.def, the one list of
 * them; select.c makes the tables). The cost model picks the cheapest usable one for the call from
 * the number of members, the bytes and the link class between them; UMPI_<COLL>_ALGORITHM=<name>
 * forces one (an algorithm that cannot run the call falls back to the model's choice, with a debug
 * message). UMPI_DEBUG=1 prints every choice.
 */
#ifndef UMPI_COLL_H
#define UMPI_COLL_H

#include "coll/umpi_coll_cost.h"
#include "coll/umpi_coll_mode.h"
#include "coll/umpi_sched.h"
#include "core/umpi_err.h"

/* The collective kinds (umpi_coll_kinds.def). */
typedef enum {
#define UMPI_COLL_KIND(KIND, name, Mpi, knob) UMPI_COLL_##KIND,
#include "core/umpi_coll_kinds.def"
#undef UMPI_COLL_KIND
    UMPI_COLL_NKINDS
} umpi_coll_kind_t;

/*
 * What a collective call passed, as the standard names it; unused fields are zero. Buffers may be
 * MPI_IN_PLACE where the standard allows it (algorithms test sbuf == MPI_IN_PLACE). The v/w
 * arrays are the caller's (widened to MPI_Count / MPI_Aint): an algorithm reads them while it
 * builds and never keeps them. For intercommunicators root is as the caller gave it (MPI_ROOT,
 * MPI_PROC_NULL or a remote rank).
 */
typedef struct umpi_coll_args {
    umpi_coll_kind_t kind;
    umpi_comm_t *comm;
    const void *sbuf;
    void *rbuf;
    MPI_Count scount, rcount;
    umpi_dtype_t *sdt, *rdt;
    const MPI_Count *scounts, *rcounts;  /* v and w variants */
    const MPI_Aint *sdispls, *rdispls;
    umpi_dtype_t **sdts, **rdts;         /* w variants (decoded) */
    umpi_op_t *op;
    int root;
    size_t bytes;                        /* the message size the cost model uses (algo_cost.c: per kind) */
} umpi_coll_args_t;

/* Adds this process's steps of the collective to s. An MPI error code. */
typedef int (*umpi_coll_build_fn)(umpi_sched_t *s, const umpi_coll_view_t *v, const umpi_coll_args_t *a);

typedef struct umpi_coll_algo {
    const char *name;          /* what UMPI_<COLL>_ALGORITHM names it by */
    umpi_coll_build_fn build;
    /* 0 when it cannot run this call (an op that is not commutative, ...); NULL: always usable */
    int (*usable)(const umpi_coll_view_t *v, const umpi_coll_args_t *a);
    /* Estimated time in us: p members, n bytes (args.bytes), link parameters c, the nodes of the
     * communicator (umpi_coll_cost.h). */
    double (*cost)(const umpi_coll_cost_t *c, int p, double n, const umpi_coll_shape_t *shape);
    const char *doc;           /* one line for umpi_info */
    /* The work of ALL members together in us (bytes moved and reduced, messages started, summed
     * over the members), same arguments; NULL: not stated. Oversubscribed the cores are the
     * bottleneck, and select.c prices max(cost, work / cores). */
    double (*work)(const umpi_coll_cost_t *c, int p, double n);
    /* The same messages for a blocking call over two members, sent straight from the call without
     * a schedule (pair.c): 0 when it cannot take the call, else 1 and the MPI error code in *err;
     * NULL: none */
    int (*pair)(const umpi_coll_view_t *v, const umpi_coll_args_t *a, int *err);
} umpi_coll_algo_t;

/* The algorithms of a kind, for intra- (inter = 0) or intercommunicators; *n entries. */
const umpi_coll_algo_t *umpi_coll_algos(umpi_coll_kind_t kind, int inter, int *n);
/* The name of a kind ("allreduce"), as umpi_info and UMPI_DEBUG print it. */
const char *umpi_coll_kind_name(umpi_coll_kind_t kind);
/* The algorithm for a call over v (select.c): the forced one if it can run it, else the cheapest
 * usable one on a communicator of this shape; NULL when none can run it. */
const umpi_coll_algo_t *umpi_coll_select(const umpi_coll_view_t *v, const umpi_coll_args_t *a,
                                         const umpi_coll_shape_t *shape);

/* ---- node structure (hier.c) ------------------------------------------------------------------------ */

/*
 * Which members of a communicator (its local group) share a node, made on its first collective
 * and kept until it is freed. Nodes come from the launcher, or from UMPI_COLL_RANKS_PER_NODE,
 * which declares node boundaries on one machine so that the hierarchical algorithms can be
 * tested and measured there. Hierarchical algorithms run a node phase over `node` (sub-view 1)
 * and an inter-node phase over `leaders` (sub-view 2) within one schedule.
 */
typedef struct umpi_coll_comm {
    int nnodes;               /* nodes the members are on */
    int max_ppn;              /* most members on one node */
    int *node_idx;            /* member -> index of its node (the order of leaders) */
    umpi_coll_view_t node;    /* the members on my node, in rank order */
    umpi_coll_view_t leaders; /* the first member of each node; rank -1 unless I lead mine */
    int *node_world, *node_src, *leader_world, *leader_src;
    /* each kind's last choice (post.c): the same call again skips the cost model */
    struct {
        const umpi_coll_algo_t *algo; /* NULL: none yet */
        size_t bytes;
        int commutative;
    } last[UMPI_COLL_NKINDS];
    struct umpi_coll_nccl *nccl; /* its NCCL communicator (src/coll/nccl.c), NULL until used */
    /* each kind's last blocking schedule and the arguments it was built for: the same call again
     * runs it again instead of building it (post.c); s NULL: none */
    struct umpi_coll_kept {
        struct umpi_sched *s;
        const umpi_coll_algo_t *algo;
        const void *sbuf;
        void *rbuf;
        MPI_Count scount, rcount;
        umpi_dtype_t *sdt, *rdt;
        umpi_op_t *op;
        int root;
        int busy; /* running */
    } kept[UMPI_COLL_NKINDS];
} umpi_coll_comm_t;

/* c's structure (made on first use); NULL when out of memory. */
umpi_coll_comm_t *umpi_coll_comm(umpi_comm_t *c);
/* Frees all of it (post.c: the kept schedules, NCCL's part, then the node structure). */
void umpi_coll_comm_free(umpi_coll_comm_t *cc);
/* Frees the node structure and cc itself (hier.c). */
void umpi_coll_nodes_free(umpi_coll_comm_t *cc);
/* The node of a world rank (UMPI_COLL_RANKS_PER_NODE or the launcher's). */
int umpi_coll_node_of(int world_rank);

/*
 * For umpi_info (exported, it is a separate program): algorithm i of collective kind `kind` (0 ..
 * UMPI_COLL_NKINDS - 1) for intra- (inter = 0) or intercommunicators. Returns its one-line doc and
 * sets *name, or returns NULL (and *name = NULL) past the kind's last algorithm; *kind_name is the
 * kind's name ("allreduce"), NULL past the last kind.
 */
const char *umpi_coll_algo_describe(int kind, int inter, int i, const char **kind_name, const char **name)
    __attribute__((visibility("default")));

/* Two-member blocking paths (pair.c), one per algorithm they stand for. */
#define UMPI_COLL_PAIR(fn) int fn(const umpi_coll_view_t *v, const umpi_coll_args_t *a, int *err)
UMPI_COLL_PAIR(umpi_barrier_pair);      /* dissemination */
UMPI_COLL_PAIR(umpi_bcast_pair);        /* binomial */
UMPI_COLL_PAIR(umpi_allreduce_pair);    /* recursive_doubling */
UMPI_COLL_PAIR(umpi_reduce_pair);       /* binomial */
UMPI_COLL_PAIR(umpi_allgather_pair);    /* recursive_doubling */
UMPI_COLL_PAIR(umpi_alltoall_pair);     /* pairwise */

/* ---- helpers for algorithms --------------------------------------------------------------------- */

/* The smallest power of two >= n (1 for n <= 1), and floor(log2(n)) for n >= 1. */
static inline int umpi_coll_pow2_ceil(int n)
{
    int p = 1;
    while (p < n)
        p <<= 1;
    return p;
}
static inline int umpi_coll_log2(int n)
{
    int l = 0;
    while ((1 << (l + 1)) <= n)
        l++;
    return l;
}
/* Returns the error of a step that failed (builders add many steps in a row). */
#define UMPI_COLL_TRY(call)                                                                                \
    do {                                                                                                   \
        int umpi_err_ = (call);                                                                            \
        if (umpi_unlikely(umpi_err_ != MPI_SUCCESS))                                                       \
            return umpi_err_;                                                                              \
    } while (0)

/* Address of element i of a buffer of dt (extent steps). */
static inline void *umpi_coll_at(const void *buf, MPI_Count i, const umpi_dtype_t *dt)
{
    return (char *) buf + i * dt->extent;
}

/* ---- the algorithms (src/coll/algo/, one per file), listed in algos.def ---------------------------- */

/* An algorithm's build function (umpi_coll_build_fn): UMPI_COLL_BUILD(umpi_x) { ... } in algo/x.c. */
#define UMPI_COLL_BUILD(fn) int fn(umpi_sched_t *s, const umpi_coll_view_t *v, const umpi_coll_args_t *a)
#define UMPI_COLL_TABLE(KIND, COMM, ...) __VA_ARGS__
#define UMPI_COLL_TABLE_OF(KIND, COMM, OTHER)
#define UMPI_COLL_ALGO(name, fn, usable, time, work, pair, doc) UMPI_COLL_BUILD(fn);
#include "coll/algos.def"
#undef UMPI_COLL_TABLE
#undef UMPI_COLL_TABLE_OF
#undef UMPI_COLL_ALGO

/* usable() of the hierarchical algorithms: a communicator spanning nodes with several members on one;
 * _commutative: and a commutative op (they combine node by node, not in rank order) */
int umpi_coll_hier_usable(const umpi_coll_view_t *v, const umpi_coll_args_t *a);
int umpi_coll_hier_usable_commutative(const umpi_coll_view_t *v, const umpi_coll_args_t *a);
/* usable() of allgather recursive_doubling: p a power of two */
int umpi_allgather_recursive_doubling_usable(const umpi_coll_view_t *v, const umpi_coll_args_t *a);
/* The segmented reduce of the pipeline and tree_pipeline algorithms (algo/reduce_segmented.c):
 * segments of UMPI_REDUCE_SEGMENT_SIZE up a chain or a binomial tree. */
enum { UMPI_COLL_SEG_CHAIN, UMPI_COLL_SEG_BINOMIAL };
int umpi_coll_reduce_segmented(umpi_sched_t *s, const umpi_coll_view_t *v, const umpi_coll_args_t *a, int shape);

/* The neighbours of my process in c's topology, in the standard's order (MPI_PROC_NULL where a
 * Cartesian grid ends): *in / *out are malloc'ed (the caller frees them); MPI_ERR_TOPOLOGY when c
 * carries no topology. */
int umpi_coll_neighbors(const umpi_comm_t *c, int **in, int *nin, int **out, int *nout);
/* Inter helpers (src/coll/inter.c), over the local group view lv of an intercommunicator: the
 * reduction of every member's count elements of sbuf (in rank order) into acc at member 0, which
 * must be scratch there (other members pass NULL); and the first member's buf to all members. */
int umpi_coll_inter_reduce_local(umpi_sched_t *s, const umpi_coll_view_t *lv, const void *sbuf, void *acc,
                                 MPI_Count count, umpi_dtype_t *dt, umpi_op_t *op);
int umpi_coll_inter_bcast_local(umpi_sched_t *s, const umpi_coll_view_t *lv, void *buf, MPI_Count count,
                                umpi_dtype_t *dt);
/* Reduce_scatter (counts[i] elements for member i) or its block form (counts NULL: count each). */
int umpi_coll_inter_reduce_scatter_counts(umpi_sched_t *s, const umpi_coll_view_t *v, const umpi_coll_args_t *a,
                                          const MPI_Count *counts, MPI_Count count);

/* Reduce_scatter and Reduce_scatter_block share their algorithms: member i's element count. */
static inline MPI_Count umpi_coll_rs_count(const umpi_coll_args_t *a, int i)
{
    return a->rcounts ? a->rcounts[i] : a->rcount;
}
/* usable() of the algorithms that combine data out of rank order. */
int umpi_coll_commutative(const umpi_coll_view_t *v, const umpi_coll_args_t *a);

/*
 * Rabenseifner's building blocks (algo/halving.c). With pof2 the largest power of two <= p and
 * rem = p - pof2, members 2i and 2i+1 (i < rem) fold into new rank i (the odd one keeps going),
 * member r >= 2 * rem becomes r - rem. The vector is cut into pof2 blocks by element displacements
 * disp[0..pof2] (block i of new rank i).
 */
static inline int umpi_coll_fold_member(int newrank, int rem)
{
    return newrank < rem ? 2 * newrank + 1 : newrank + rem;
}
/* The fold: member 2i sends its buf to 2i+1, which reduces it into its own (tmp receives it), for
 * i < rem; sets *newrank (-1 for the members that sent) and ends with a fence. */
int umpi_coll_fold(umpi_sched_t *s, const umpi_coll_view_t *v, void *buf, void *tmp, MPI_Count n,
                   umpi_dtype_t *dt, umpi_op_t *op, int rem, int *newrank);
/* Recursive halving among the new ranks: afterwards block newrank of buf holds the reduction of
 * every new rank's buf; tmp has room for half the vector. Commutative ops only. */
int umpi_coll_halving(umpi_sched_t *s, const umpi_coll_view_t *v, void *buf, void *tmp, const MPI_Count *disp,
                      int pof2, int rem, int newrank, umpi_dtype_t *dt, umpi_op_t *op);
/* Recursive doubling allgather of those blocks among the new ranks. */
int umpi_coll_doubling_allgather(umpi_sched_t *s, const umpi_coll_view_t *v, void *buf, const MPI_Count *disp,
                                 int pof2, int rem, int newrank, umpi_dtype_t *dt);
/* Fills disp[0..k] cutting n elements into k blocks as equal as can be. */
static inline void umpi_coll_even_blocks(MPI_Count *disp, int k, MPI_Count n)
{
    MPI_Count q = n / k, r = n % k;
    for (int i = 0; i <= k; i++)
        disp[i] = (MPI_Count) i * q + (i < r ? i : r);
}
/* Scratch for an algorithm's bookkeeping during the build (freed with the schedule). */
static inline MPI_Count *umpi_coll_counts(umpi_sched_t *s, int k)
{
    return umpi_sched_buf(s, (size_t) k * sizeof(MPI_Count));
}

#endif
