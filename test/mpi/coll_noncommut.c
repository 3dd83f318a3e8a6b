/*
 * Reductions with a user operation that is not commutative (MPI_Op_create, commute = 0): the
 * product of 2x2 integer matrices, one matrix per element (a contiguous type of 4 ints). MPI must
 * combine the ranks' data in rank order (a0 op a1 op ... ), whichever algorithm is forced by the
 * testlist (those that cannot keep the order must give way to one that can). Every reduction
 * kind, blocking, nonblocking and persistent, MPI_IN_PLACE, every root.
 */
#include "mtest.h"

#define MOD 1000003

typedef struct {
    int m[4]; /* row-major 2x2 */
} mat_t;

static void mul(const mat_t *a, const mat_t *b, mat_t *c)
{
    mat_t r;
    r.m[0] = (int) (((long long) a->m[0] * b->m[0] + (long long) a->m[1] * b->m[2]) % MOD);
    r.m[1] = (int) (((long long) a->m[0] * b->m[1] + (long long) a->m[1] * b->m[3]) % MOD);
    r.m[2] = (int) (((long long) a->m[2] * b->m[0] + (long long) a->m[3] * b->m[2]) % MOD);
    r.m[3] = (int) (((long long) a->m[2] * b->m[1] + (long long) a->m[3] * b->m[3]) % MOD);
    *c = r;
}

/* inout[i] = in[i] * inout[i]: the lower rank's data on the left */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void) dt;
    for (int i = 0; i < *len; i++)
        mul((mat_t *) in + i, (mat_t *) inout + i, (mat_t *) inout + i);
}

static mat_t input(int r, int i)
{
    mat_t a = {{r + 1 + i % 3, 1, 1, 0}};
    return a;
}

static mat_t ref(int lo, int hi, int i)
{
    mat_t x = input(lo, i);
    for (int r = lo + 1; r <= hi; r++) {
        mat_t y = input(r, i);
        mul(&x, &y, &x);
    }
    return x;
}

static MPI_Datatype mt_mat;
static MPI_Op op;

static void fill(mat_t *b, int n, int r)
{
    for (int i = 0; i < n; i++)
        b[i] = input(r, i);
}

static void check(const mat_t *b, int n, int lo, int hi, int off, const char *what, int mode)
{
    for (int i = 0; i < n && mt_errs < 20; i++) {
        mat_t w = ref(lo, hi, off + i);
        MT_CHECK(memcmp(&w, &b[i], sizeof(w)) == 0, "%s mode %d n=%d [%d]: {%d %d %d %d} want {%d %d %d %d}", what,
                 mode, n, i, b[i].m[0], b[i].m[1], b[i].m[2], b[i].m[3], w.m[0], w.m[1], w.m[2], w.m[3]);
    }
}

#define RUN(mode, blocking, nonblocking, persistent)                                                        \
    do {                                                                                                   \
        MPI_Request req_;                                                                                  \
        if ((mode) == 0) {                                                                                 \
            blocking;                                                                                      \
        } else if ((mode) == 1) {                                                                          \
            nonblocking;                                                                                   \
            MPI_Wait(&req_, MPI_STATUS_IGNORE);                                                            \
        } else {                                                                                           \
            persistent;                                                                                    \
            MPI_Start(&req_);                                                                              \
            MPI_Wait(&req_, MPI_STATUS_IGNORE);                                                            \
            MPI_Request_free(&req_);                                                                       \
        }                                                                                                  \
    } while (0)

static void run(MPI_Comm comm, int n, int mode, int ip)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int total = n * size;
    mat_t *in = malloc(sizeof(mat_t) * (size_t) (total + 1)), *out = malloc(sizeof(mat_t) * (size_t) (total + 1));
    for (int root = 0; root < size; root++) {
        fill(in, n, rank);
        fill(out, n, rank);
        const void *sb = ip && rank == root ? MPI_IN_PLACE : in;
        RUN(mode, MPI_Reduce(sb, out, n, mt_mat, op, root, comm), MPI_Ireduce(sb, out, n, mt_mat, op, root, comm, &req_),
            MPI_Reduce_init(sb, out, n, mt_mat, op, root, comm, MPI_INFO_NULL, &req_));
        if (rank == root)
            check(out, n, 0, size - 1, 0, "reduce", mode);
    }
    const void *sb = ip ? MPI_IN_PLACE : in;
    fill(out, n, rank);
    RUN(mode, MPI_Allreduce(sb, out, n, mt_mat, op, comm), MPI_Iallreduce(sb, out, n, mt_mat, op, comm, &req_),
        MPI_Allreduce_init(sb, out, n, mt_mat, op, comm, MPI_INFO_NULL, &req_));
    check(out, n, 0, size - 1, 0, "allreduce", mode);
    fill(out, n, rank);
    RUN(mode, MPI_Scan(sb, out, n, mt_mat, op, comm), MPI_Iscan(sb, out, n, mt_mat, op, comm, &req_),
        MPI_Scan_init(sb, out, n, mt_mat, op, comm, MPI_INFO_NULL, &req_));
    check(out, n, 0, rank, 0, "scan", mode);
    fill(out, n, rank);
    RUN(mode, MPI_Exscan(sb, out, n, mt_mat, op, comm), MPI_Iexscan(sb, out, n, mt_mat, op, comm, &req_),
        MPI_Exscan_init(sb, out, n, mt_mat, op, comm, MPI_INFO_NULL, &req_));
    if (rank > 0)
        check(out, n, 0, rank - 1, 0, "exscan", mode);
    /* reduce_scatter_block: block r of the vector of n * size elements */
    for (int i = 0; i < total; i++)
        in[i] = out[i] = input(rank, i);
    RUN(mode, MPI_Reduce_scatter_block(sb, out, n, mt_mat, op, comm),
        MPI_Ireduce_scatter_block(sb, out, n, mt_mat, op, comm, &req_),
        MPI_Reduce_scatter_block_init(sb, out, n, mt_mat, op, comm, MPI_INFO_NULL, &req_));
    check(out, n, 0, size - 1, rank * n, "reduce_scatter_block", mode);
    int *counts = malloc(sizeof(int) * (size_t) size), before = 0, sum = 0;
    for (int i = 0; i < size; i++) {
        counts[i] = (n + i) % (n + 1);
        before += i < rank ? counts[i] : 0;
        sum += counts[i];
    }
    for (int i = 0; i < sum; i++)
        in[i] = out[i] = input(rank, i);
    RUN(mode, MPI_Reduce_scatter(sb, out, counts, mt_mat, op, comm),
        MPI_Ireduce_scatter(sb, out, counts, mt_mat, op, comm, &req_),
        MPI_Reduce_scatter_init(sb, out, counts, mt_mat, op, comm, MPI_INFO_NULL, &req_));
    check(out, counts[rank], 0, size - 1, before, "reduce_scatter", mode);
    free(counts);
    free(in);
    free(out);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Type_contiguous(4, MPI_INT, &mt_mat);
    MPI_Type_commit(&mt_mat);
    MPI_Op_create(matmul, 0, &op);
    int commute = 1;
    MPI_Op_commutative(op, &commute);
    MT_CHECK(commute == 0, "MPI_Op_commutative says %d", commute);
    static const int counts[] = {0, 1, 3, 500};
    for (unsigned c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
        for (int mode = 0; mode < 3; mode++)
            for (int ip = 0; ip < 2; ip++)
                run(MPI_COMM_WORLD, counts[c], mode, ip);
    MPI_Op_free(&op);
    MPI_Type_free(&mt_mat);
    return mt_finish();
}
