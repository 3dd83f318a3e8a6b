/*
 * Barrier, Bcast and Allreduce on intercommunicators, blocking, nonblocking and persistent: for
 * every split of MPI_COMM_WORLD into a low group (ranks < k) and a high one, every root of either
 * group (MPI_ROOT / MPI_PROC_NULL / the remote rank), zero counts, a derived (strided) datatype,
 * and allreduce ops from a table; results checked against what the other group's inputs say.
 * At 1 process there is no intercommunicator: it only says " No Errors".
 */
#include "mtest.h"

/* Runs a collective in one of three forms and waits for it. */
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
            MPI_Start(&req_);                                                                         \
            MPI_Wait(&req_, MPI_STATUS_IGNORE);                                                       \
            MPI_Request_free(&req_);                                                                  \
        }                                                                                             \
    } while (0)

static int k_split, low; /* ranks < k_split form the low group; am I in it */

static int wrank_of(int in_low, int r)
{
    return in_low ? r : k_split + r;
}

static void check_bcast(MPI_Comm inter, int lrank, int rsize, int mode, int n, MPI_Datatype dt)
{
    /* root in the low group (root_low) or the high one */
    for (int root_low = 0; root_low < 2; root_low++) {
        int rootsize = root_low ? k_split : mt_size - k_split;
        for (int r = 0; r < rootsize; r++) {
            int mine = low == root_low, root = mine ? (lrank == r ? MPI_ROOT : MPI_PROC_NULL) : r;
            int buf[64];
            for (int i = 0; i < 64; i++)
                buf[i] = root == MPI_ROOT ? 1000 * r + i : -1;
            RUN3(mode, MPI_Bcast(buf, n, dt, root, inter), MPI_Ibcast(buf, n, dt, root, inter, &req_),
                 MPI_Bcast_init(buf, n, dt, root, inter, MPI_INFO_NULL, &req_));
            for (int i = 0; i < 64; i++) {
                int sent = dt == MPI_INT ? i < n : i < 3 * n && i % 3 != 1; /* strided: extent 3, ints 0 and 2 */
                int want = root == MPI_ROOT ? 1000 * r + i : (!mine && sent ? 1000 * r + i : -1);
                MT_CHECK(buf[i] == want, "bcast mode %d n=%d root %d (low %d): buf[%d]=%d want %d", mode, n, root,
                         root_low, i, buf[i], want);
            }
        }
    }
    (void) rsize;
}

typedef struct {
    MPI_Op op;
    const char *name;
    long (*fold)(long acc, long x);
} op_row_t;
static long fsum(long a, long x)
{
    return a + x;
}
static long fmax_(long a, long x)
{
    return x > a ? x : a;
}
static long fmin_(long a, long x)
{
    return x < a ? x : a;
}
static long fprod(long a, long x)
{
    return a * x;
}
static const op_row_t ops[] = {
    {MPI_SUM, "sum", fsum}, {MPI_MAX, "max", fmax_}, {MPI_MIN, "min", fmin_}, {MPI_PROD, "prod", fprod}};

static int input(int wrank, int i)
{
    return (wrank * 3 + i) % 7 + 1;
}

static void check_allreduce(MPI_Comm inter, int mode, int n)
{
    int rsize;
    MPI_Comm_remote_size(inter, &rsize);
    for (unsigned o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
        int in[100], out[100];
        double din[100], dout[100];
        for (int i = 0; i < n; i++) {
            in[i] = input(mt_rank, i);
            din[i] = in[i];
            out[i] = -1;
            dout[i] = -1;
        }
        RUN3(mode, MPI_Allreduce(in, out, n, MPI_INT, ops[o].op, inter),
             MPI_Iallreduce(in, out, n, MPI_INT, ops[o].op, inter, &req_),
             MPI_Allreduce_init(in, out, n, MPI_INT, ops[o].op, inter, MPI_INFO_NULL, &req_));
        RUN3(mode, MPI_Allreduce(din, dout, n, MPI_DOUBLE, ops[o].op, inter),
             MPI_Iallreduce(din, dout, n, MPI_DOUBLE, ops[o].op, inter, &req_),
             MPI_Allreduce_init(din, dout, n, MPI_DOUBLE, ops[o].op, inter, MPI_INFO_NULL, &req_));
        for (int i = 0; i < n; i++) {
            long want = input(wrank_of(!low, 0), i);
            for (int r = 1; r < rsize; r++)
                want = ops[o].fold(want, input(wrank_of(!low, r), i));
            MT_CHECK(out[i] == want, "allreduce %s int mode %d n=%d: out[%d]=%d want %ld", ops[o].name, mode, n, i,
                     out[i], want);
            MT_CHECK(dout[i] == (double) want, "allreduce %s double mode %d n=%d: out[%d]=%g want %ld", ops[o].name,
                     mode, n, i, dout[i], want);
        }
    }
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Datatype strided; /* two ints, every other one */
    MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    for (k_split = 1; k_split < mt_size; k_split++) {
        low = mt_rank < k_split;
        MPI_Comm local, inter;
        MPI_Comm_split(MPI_COMM_WORLD, low, mt_rank, &local);
        MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? k_split : 0, 7, &inter);
        int lrank, rsize;
        MPI_Comm_rank(inter, &lrank);
        MPI_Comm_remote_size(inter, &rsize);
        for (int mode = 0; mode < 3; mode++) {
            RUN3(mode, MPI_Barrier(inter), MPI_Ibarrier(inter, &req_), MPI_Barrier_init(inter, MPI_INFO_NULL, &req_));
            check_bcast(inter, lrank, rsize, mode, 0, MPI_INT);
            check_bcast(inter, lrank, rsize, mode, 5, MPI_INT);
            check_bcast(inter, lrank, rsize, mode, 3, strided);
            check_allreduce(inter, mode, 0);
            check_allreduce(inter, mode, 1);
            check_allreduce(inter, mode, 100);
        }
        /* Errors: a root that is no remote rank, nor MPI_ROOT / MPI_PROC_NULL */
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        int x = 1, cls = MPI_SUCCESS;
        int err = MPI_Bcast(&x, 1, MPI_INT, rsize + 3, inter);
        MPI_Error_class(err, &cls);
        MT_CHECK(cls == MPI_ERR_ROOT, "bcast with root %d on an intercommunicator: class %d", rsize + 3, cls);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&local);
    }
    MPI_Type_free(&strided);
    return mt_finish();
}
