/*
 * Neighbourhood collectives (allgather, allgatherv, alltoall, alltoallv, alltoallw) in blocking,
 * nonblocking and persistent forms on Cartesian grids (periodic and not: MPI_PROC_NULL neighbours
 * leave their blocks alone), a graph (a ring, whose neighbours repeat at 1 and 2 processes) and a
 * distributed graph, with a derived send datatype; every block checked against what the sender
 * must have put there. Also: MPI_ERR_TOPOLOGY on a communicator without a topology.
 */
#include "mtest.h"

enum { K = 3, GAP = 2, SENTINEL = -7 }; /* elements per block, holes between v blocks */

typedef struct {
    int nin, nout;
    int in[16], out[16];
    int src_block[16]; /* for in-neighbour i: the sender's block that lands here (alltoall forms) */
} nbrs_t;

/* Value k of block j that process r sends (allgather: j = 0). */
static int val(int r, int j, int k)
{
    return r * 1000 + j * 100 + k + 1;
}

/* Graph / dist graph: the k-th receive from a process matches its k-th send to me. */
static void match_in_order(nbrs_t *nb, int me, int (*out_of)(int r, int *out))
{
    for (int i = 0; i < nb->nin; i++) {
        int src = nb->in[i], m = 0, o[16], no = out_of(src, o);
        for (int k = 0; k < i; k++)
            m += nb->in[k] == src;
        nb->src_block[i] = -1;
        for (int j = 0; j < no; j++)
            if (o[j] == me && m-- == 0) {
                nb->src_block[i] = j;
                break;
            }
    }
}

static int ring_size;
static int ring_out(int r, int *out)
{
    out[0] = (r + 1) % ring_size;
    out[1] = (r - 1 + ring_size) % ring_size;
    return 2;
}
static int dist_out(int r, int *out)
{
    out[0] = (r + 1) % ring_size;
    out[1] = (r + 2) % ring_size;
    return 2;
}

static void check_block(const int *got, int src, int j, int cnt, const char *what, int mode)
{
    for (int k = 0; k < cnt; k++) {
        int want = src == MPI_PROC_NULL ? SENTINEL : val(src, j, k);
        MT_CHECK(got[k] == want, "%s mode %d: from %d block %d elt %d: %d want %d", what, mode, src, j, k, got[k],
                 want);
    }
}

/* Runs op (blocking, I- or _init + 2 starts) and waits. */
#define RUN3(mode, blocking, nonblocking, init)                                                       \
    do {                                                                                              \
        MPI_Request req_;                                                                             \
        if ((mode) == 0) {                                                                            \
            blocking;                                                                                 \
        } else if ((mode) == 1) {                                                                     \
            nonblocking;                                                                              \
            MPI_Wait(&req_, MPI_STATUS_IGNORE);                                                       \
        } else {                                                                                      \
            init;                                                                                     \
            for (int s_ = 0; s_ < 2; s_++) {                                                          \
                MPI_Start(&req_);                                                                     \
                MPI_Wait(&req_, MPI_STATUS_IGNORE);                                                   \
            }                                                                                         \
            MPI_Request_free(&req_);                                                                  \
        }                                                                                             \
    } while (0)

static void test_comm(MPI_Comm comm, const nbrs_t *nb, const char *name)
{
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me); /* the topology communicators keep world ranks */
    int nin = nb->nin, nout = nb->nout;
    int sbuf[16 * K * 3], rbuf[16 * (K + GAP)], scounts[16], rcounts[16];
    MPI_Aint sd[16], rd[16];
    int sdi[16], rdi[16];
    MPI_Datatype st[16], rt[16];
    for (int j = 0; j < 16; j++) {
        scounts[j] = rcounts[j] = K;
        sdi[j] = j * K;
        rdi[j] = j * (K + GAP);
        sd[j] = (MPI_Aint) sdi[j] * (MPI_Aint) sizeof(int);
        rd[j] = (MPI_Aint) rdi[j] * (MPI_Aint) sizeof(int);
        st[j] = rt[j] = MPI_INT;
    }
    for (int mode = 0; mode < 3; mode++) {
        /* allgather */
        for (int k = 0; k < K; k++)
            sbuf[k] = val(me, 0, k);
        for (int i = 0; i < 16 * (K + GAP); i++)
            rbuf[i] = SENTINEL;
        RUN3(mode, MPI_Neighbor_allgather(sbuf, K, MPI_INT, rbuf, K, MPI_INT, comm),
             MPI_Ineighbor_allgather(sbuf, K, MPI_INT, rbuf, K, MPI_INT, comm, &req_),
             MPI_Neighbor_allgather_init(sbuf, K, MPI_INT, rbuf, K, MPI_INT, comm, MPI_INFO_NULL, &req_));
        for (int i = 0; i < nin; i++)
            check_block(rbuf + i * K, nb->in[i], 0, K, name, mode);
        /* allgatherv: blocks with holes between them */
        for (int i = 0; i < 16 * (K + GAP); i++)
            rbuf[i] = SENTINEL;
        RUN3(mode, MPI_Neighbor_allgatherv(sbuf, K, MPI_INT, rbuf, rcounts, rdi, MPI_INT, comm),
             MPI_Ineighbor_allgatherv(sbuf, K, MPI_INT, rbuf, rcounts, rdi, MPI_INT, comm, &req_),
             MPI_Neighbor_allgatherv_init(sbuf, K, MPI_INT, rbuf, rcounts, rdi, MPI_INT, comm, MPI_INFO_NULL, &req_));
        for (int i = 0; i < nin; i++) {
            check_block(rbuf + rdi[i], nb->in[i], 0, K, name, mode);
            for (int g = 0; g < GAP; g++)
                MT_CHECK(rbuf[rdi[i] + K + g] == SENTINEL, "%s allgatherv hole overwritten", name);
        }
        /* alltoall, alltoallv, alltoallw */
        for (int j = 0; j < nout; j++)
            for (int k = 0; k < K; k++)
                sbuf[j * K + k] = val(me, j, k);
        for (int form = 0; form < 3; form++) {
            for (int i = 0; i < 16 * (K + GAP); i++)
                rbuf[i] = SENTINEL;
            if (form == 0)
                RUN3(mode, MPI_Neighbor_alltoall(sbuf, K, MPI_INT, rbuf, K, MPI_INT, comm),
                     MPI_Ineighbor_alltoall(sbuf, K, MPI_INT, rbuf, K, MPI_INT, comm, &req_),
                     MPI_Neighbor_alltoall_init(sbuf, K, MPI_INT, rbuf, K, MPI_INT, comm, MPI_INFO_NULL, &req_));
            else if (form == 1)
                RUN3(mode, MPI_Neighbor_alltoallv(sbuf, scounts, sdi, MPI_INT, rbuf, rcounts, rdi, MPI_INT, comm),
                     MPI_Ineighbor_alltoallv(sbuf, scounts, sdi, MPI_INT, rbuf, rcounts, rdi, MPI_INT, comm, &req_),
                     MPI_Neighbor_alltoallv_init(sbuf, scounts, sdi, MPI_INT, rbuf, rcounts, rdi, MPI_INT, comm,
                                                 MPI_INFO_NULL, &req_));
            else
                RUN3(mode, MPI_Neighbor_alltoallw(sbuf, scounts, sd, st, rbuf, rcounts, rd, rt, comm),
                     MPI_Ineighbor_alltoallw(sbuf, scounts, sd, st, rbuf, rcounts, rd, rt, comm, &req_),
                     MPI_Neighbor_alltoallw_init(sbuf, scounts, sd, st, rbuf, rcounts, rd, rt, comm, MPI_INFO_NULL,
                                                 &req_));
            for (int i = 0; i < nin; i++)
                check_block(rbuf + (form == 0 ? i * K : rdi[i]), nb->in[i], nb->src_block[i], K, name, mode);
        }
    }
    /* A derived send datatype: every other int of a strided buffer, received contiguous. */
    MPI_Datatype vec;
    MPI_Type_vector(K, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int strided[2 * K];
    for (int k = 0; k < K; k++) {
        strided[2 * k] = val(me, 0, k);
        strided[2 * k + 1] = -1;
    }
    for (int i = 0; i < 16 * (K + GAP); i++)
        rbuf[i] = SENTINEL;
    MPI_Neighbor_allgather(strided, 1, vec, rbuf, K, MPI_INT, comm);
    for (int i = 0; i < nin; i++)
        check_block(rbuf + i * K, nb->in[i], 0, K, name, 9);
    MPI_Type_free(&vec);
}

static void cart(int ndims, const int *periods)
{
    int dims[3] = {0, 0, 0};
    MPI_Dims_create(mt_size, ndims, dims);
    MPI_Comm comm;
    MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &comm);
    nbrs_t nb = {.nin = 2 * ndims, .nout = 2 * ndims};
    for (int d = 0; d < ndims; d++) {
        MPI_Cart_shift(comm, d, 1, &nb.in[2 * d], &nb.in[2 * d + 1]);
        nb.out[2 * d] = nb.in[2 * d];
        nb.out[2 * d + 1] = nb.in[2 * d + 1];
        nb.src_block[2 * d] = 2 * d + 1; /* my -d neighbour sent me its +d block */
        nb.src_block[2 * d + 1] = 2 * d;
    }
    test_comm(comm, &nb, "cart");
    MPI_Comm_free(&comm);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    ring_size = mt_size;

    int p1[1] = {1}, p0[1] = {0}, p2[2] = {1, 0}, p3[3] = {1, 1, 0};
    cart(1, p1);
    cart(1, p0);
    cart(2, p2);
    cart(3, p3);

    /* graph: a ring, neighbours (r+1, r-1) */
    int index[16], edges[32];
    for (int r = 0; r < mt_size; r++) {
        index[r] = 2 * (r + 1);
        ring_out(r, &edges[2 * r]);
    }
    MPI_Comm g;
    MPI_Graph_create(MPI_COMM_WORLD, mt_size, index, edges, 0, &g);
    nbrs_t nb = {.nin = 2, .nout = 2};
    ring_out(mt_rank, nb.in);
    ring_out(mt_rank, nb.out);
    match_in_order(&nb, mt_rank, ring_out);
    test_comm(g, &nb, "graph");
    MPI_Comm_free(&g);

    /* distributed graph: to r+1, r+2, from r-1, r-2 */
    nbrs_t dn = {.nin = 2, .nout = 2};
    dist_out(mt_rank, dn.out);
    dn.in[0] = (mt_rank - 1 + mt_size) % mt_size;
    dn.in[1] = (mt_rank - 2 + 2 * mt_size) % mt_size;
    match_in_order(&dn, mt_rank, dist_out);
    MPI_Comm dg;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, dn.in, MPI_UNWEIGHTED, 2, dn.out, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &dg);
    test_comm(dg, &dn, "dist_graph");
    MPI_Comm_free(&dg);

    /* no topology: MPI_ERR_TOPOLOGY */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    int x = 0, y = 0, cls = -1;
    int err = MPI_Neighbor_allgather(&x, 1, MPI_INT, &y, 1, MPI_INT, dup);
    MPI_Error_class(err, &cls);
    MT_CHECK(cls == MPI_ERR_TOPOLOGY, "neighbor_allgather without topology: class %d", cls);
    MPI_Comm_free(&dup);
    return mt_finish();
}
