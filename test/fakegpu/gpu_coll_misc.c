/*
 * Collectives on device buffers that the converted tests (coll_basic, coll_gather, coll_reduce)
 * do not reach: MPI_Reduce_local with device operands (predefined and user ops, a vector type
 * whose gaps must survive), neighbourhood collectives on a periodic ring, and collectives on an
 * intercommunicator. Buffers are device memory when MPITEST_MEMTYPE says device (or mix: even
 * ranks); results are checked on host copies.
 */
#include "../mpi/mtest.h"

static void user_max(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void) type;
    for (int i = 0; i < *len; i++)
        if (((double *) in)[i] > ((double *) inout)[i])
            ((double *) inout)[i] = ((double *) in)[i];
}

static void reduce_local(void)
{
    enum { N = 1000 };
    MPI_Op op;
    MPI_Op_create(user_max, 1, &op);
    for (int kinds = 0; kinds < 4; kinds++) {
        mt_buf_t a, b;
        mt_buf_init_kind(&a, N * sizeof(double), kinds & 1 ? mt_mem_device() : 0);
        mt_buf_init_kind(&b, N * sizeof(double), kinds & 2 ? mt_mem_device() : 0);
        double *x = a.h, *y = b.h;
        for (int i = 0; i < N; i++) {
            x[i] = i;
            y[i] = 2.0 * (N - i);
        }
        mt_push(&a);
        mt_push(&b);
        MPI_Reduce_local(a.d, b.d, N, MPI_DOUBLE, MPI_SUM);
        mt_pull(&b);
        int bad = 0;
        for (int i = 0; i < N; i++)
            bad += y[i] != i + 2.0 * (N - i);
        MT_CHECK(bad == 0, "Reduce_local MPI_SUM (in %s, inout %s): %d wrong", kinds & 1 ? "device" : "host",
                 kinds & 2 ? "device" : "host", bad);
        MPI_Reduce_local(a.d, b.d, N, MPI_DOUBLE, op);
        mt_pull(&b);
        bad = 0;
        for (int i = 0; i < N; i++)
            bad += y[i] != (i > i + 2.0 * (N - i) ? i : i + 2.0 * (N - i));
        MT_CHECK(bad == 0, "Reduce_local user op: %d wrong", bad);
        mt_buf_free(&a);
        mt_buf_free(&b);
    }
    MPI_Op_free(&op);

    /* a vector of ints: 2 of every 3, the third a marker that must survive */
    MPI_Datatype v;
    MPI_Type_vector(N, 2, 3, MPI_INT, &v);
    MPI_Type_commit(&v);
    mt_buf_t a, b;
    mt_buf_init(&a, 3 * N * sizeof(int));
    mt_buf_init(&b, 3 * N * sizeof(int));
    int *p = a.h, *q = b.h;
    for (int i = 0; i < 3 * N; i++) {
        p[i] = i;
        q[i] = i % 3 == 2 ? -5 : 1;
    }
    mt_push(&a);
    mt_push(&b);
    MPI_Reduce_local(a.d, b.d, 1, v, MPI_SUM);
    mt_pull(&b);
    int bad = 0;
    for (int i = 0; i < 3 * N; i++)
        bad += q[i] != (i % 3 == 2 ? -5 : i + 1);
    MT_CHECK(bad == 0, "Reduce_local on a vector type: %d wrong (gaps must stay -5)", bad);
    mt_buf_free(&a);
    mt_buf_free(&b);
    MPI_Type_free(&v);
}

static void neighbors(void)
{
    MPI_Comm ring;
    int dims = mt_size, periods = 1, rank, left, right;
    MPI_Cart_create(MPI_COMM_WORLD, 1, &dims, &periods, 0, &ring);
    MPI_Comm_rank(ring, &rank);
    MPI_Cart_shift(ring, 0, 1, &left, &right);
    enum { N = 5000 };
    for (int mode = 0; mode < 2; mode++) {
        mt_buf_t s, r;
        mt_buf_init(&s, 2 * N * sizeof(int));
        mt_buf_init(&r, 2 * N * sizeof(int));
        int *sp = s.h, *rp = r.h;
        for (int i = 0; i < 2 * N; i++)
            sp[i] = rank * 100000 + i;
        mt_push(&s);
        MPI_Request req;
        /* allgather: my first N ints to both neighbours; from left into block 0, right into block 1 */
        if (mode == 0) {
            MPI_Neighbor_allgather(s.d, N, MPI_INT, r.d, N, MPI_INT, ring);
        } else {
            MPI_Ineighbor_allgather(s.d, N, MPI_INT, r.d, N, MPI_INT, ring, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        mt_pull(&r);
        int bad = 0;
        for (int i = 0; i < N; i++)
            bad += (rp[i] != left * 100000 + i) + (rp[N + i] != right * 100000 + i);
        MT_CHECK(bad == 0, "neighbor_allgather mode %d: %d wrong", mode, bad);
        /* alltoall: block 0 goes left, block 1 right */
        if (mode == 0) {
            MPI_Neighbor_alltoall(s.d, N, MPI_INT, r.d, N, MPI_INT, ring);
        } else {
            MPI_Ineighbor_alltoall(s.d, N, MPI_INT, r.d, N, MPI_INT, ring, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        mt_pull(&r);
        bad = 0;
        for (int i = 0; i < N; i++) /* from the left its block 1, from the right its block 0 */
            bad += (rp[i] != left * 100000 + N + i) + (rp[N + i] != right * 100000 + i);
        MT_CHECK(mt_size < 3 || bad == 0, "neighbor_alltoall mode %d: %d wrong", mode, bad);
        mt_buf_free(&s);
        mt_buf_free(&r);
    }
    MPI_Comm_free(&ring);
}

static void intercomm(void)
{
    if (mt_size < 2)
        return;
    MPI_Comm local, inter;
    int color = mt_rank % 2, lrank, rsize;
    MPI_Comm_split(MPI_COMM_WORLD, color, mt_rank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color == 0 ? 1 : 0, 7, &inter);
    MPI_Comm_rank(local, &lrank);
    MPI_Comm_remote_size(inter, &rsize);
    enum { N = 20000 };
    mt_buf_t s, r;
    mt_buf_init(&s, N * sizeof(long));
    mt_buf_init(&r, N * sizeof(long));
    long *sp = s.h, *rp = r.h;
    for (int i = 0; i < N; i++)
        sp[i] = (color + 1) * 1000 + i;
    mt_push(&s);
    /* allreduce on an intercommunicator: each group gets the other group's sum */
    MPI_Allreduce(s.d, r.d, N, MPI_LONG, MPI_SUM, inter);
    mt_pull(&r);
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += rp[i] != (long) rsize * ((2 - color) * 1000 + i);
    MT_CHECK(bad == 0, "intercommunicator allreduce: %d wrong", bad);
    /* bcast from group 0's rank 0 to group 1 */
    if (color == 0) {
        MPI_Bcast(s.d, N, MPI_LONG, lrank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);
    } else {
        MPI_Bcast(r.d, N, MPI_LONG, 0, inter);
        mt_pull(&r);
        bad = 0;
        for (int i = 0; i < N; i++)
            bad += rp[i] != 1000 + i;
        MT_CHECK(bad == 0, "intercommunicator bcast: %d wrong", bad);
    }
    mt_buf_free(&s);
    mt_buf_free(&r);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    reduce_local();
    neighbors();
    intercomm();
    return mt_finish();
}
