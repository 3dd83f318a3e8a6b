/*
 * Barrier, Bcast and Allreduce in their three forms (blocking, nonblocking, persistent) on
 * MPI_COMM_WORLD and a split communicator, for several sizes, roots and MPI_IN_PLACE; every
 * result is compared with what the ranks' inputs say it must be. Buffers of the memory kind under
 * test (MPITEST_MEMTYPE, mtest.h).
 */
#include "mtest.h"

static void check_bcast(MPI_Comm comm, int n, int root, int mode)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    int *buf = mt_malloc((size_t) (n ? n : 1) * sizeof(int));
    for (int i = 0; i < n; i++)
        buf[i] = rank == root ? i * 7 + root : -1;
    mt_put(buf);
    MPI_Request req;
    if (mode == 0) {
        MPI_Bcast(mt_d(buf), n, MPI_INT, root, comm);
    } else if (mode == 1) {
        MPI_Ibcast(mt_d(buf), n, MPI_INT, root, comm, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        MPI_Bcast_init(mt_d(buf), n, MPI_INT, root, comm, MPI_INFO_NULL, &req);
        for (int k = 0; k < 3; k++) {
            if (rank == root)
                for (int i = 0; i < n; i++)
                    buf[i] = i * 7 + root + k;
            mt_put(buf);
            MPI_Start(&req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            mt_get(buf);
            for (int i = 0; i < n; i++)
                MT_CHECK(buf[i] == i * 7 + root + k, "bcast_init round %d n=%d root=%d: buf[%d]=%d", k, n, root, i,
                         buf[i]);
        }
        MPI_Request_free(&req);
        mt_mfree(buf);
        return;
    }
    mt_get(buf);
    for (int i = 0; i < n; i++)
        MT_CHECK(buf[i] == i * 7 + root, "bcast mode %d n=%d root=%d: buf[%d]=%d", mode, n, root, i, buf[i]);
    mt_mfree(buf);
}

static void check_allreduce(MPI_Comm comm, int n, int mode, int in_place)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    double *in = mt_malloc((size_t) (n ? n : 1) * sizeof(double));
    double *out = mt_malloc((size_t) (n ? n : 1) * sizeof(double));
    for (int i = 0; i < n; i++) {
        in[i] = rank + i;
        out[i] = in_place ? in[i] : -1;
    }
    mt_put(in);
    mt_put(out);
    const void *sbuf = in_place ? MPI_IN_PLACE : mt_d(in);
    MPI_Request req;
    if (mode == 0) {
        MPI_Allreduce(sbuf, mt_d(out), n, MPI_DOUBLE, MPI_SUM, comm);
    } else if (mode == 1) {
        MPI_Iallreduce(sbuf, mt_d(out), n, MPI_DOUBLE, MPI_SUM, comm, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        MPI_Allreduce_init(sbuf, mt_d(out), n, MPI_DOUBLE, MPI_SUM, comm, MPI_INFO_NULL, &req);
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Request_free(&req);
    }
    mt_get(out);
    for (int i = 0; i < n; i++) {
        double want = (double) size * (size - 1) / 2 + (double) size * i;
        MT_CHECK(out[i] == want, "allreduce mode %d n=%d in_place=%d: out[%d]=%g want %g", mode, n, in_place, i,
                 out[i], want);
    }
    /* MPI_MAX on ints: the largest rank's value */
    int x = rank * 3, y = -1;
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_MAX, comm);
    MT_CHECK(y == (size - 1) * 3, "allreduce max: %d", y);
    mt_mfree(in);
    mt_mfree(out);
}

static void run(MPI_Comm comm)
{
    int size;
    MPI_Comm_size(comm, &size);
    static const int counts[] = {0, 1, 7, 1000, 70000};
    for (int mode = 0; mode < 3; mode++) {
        MPI_Barrier(comm);
        for (unsigned c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
            for (int root = 0; root < size; root++)
                check_bcast(comm, counts[c], root, mode);
            check_allreduce(comm, counts[c], mode, 0);
            check_allreduce(comm, counts[c], mode, 1);
        }
    }
    MPI_Request req;
    MPI_Ibarrier(comm, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Barrier_init(comm, MPI_INFO_NULL, &req);
    for (int k = 0; k < 4; k++) {
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&req);
}

/* Several nonblocking collectives in flight at once, completed in reverse order. */
static void overlap(MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    enum { K = 6 };
    int *vals = mt_malloc(K * sizeof(int)), *sums = mt_malloc(K * sizeof(int)), *bc = mt_malloc(K * sizeof(int));
    MPI_Request reqs[2 * K];
    for (int k = 0; k < K; k++) {
        vals[k] = rank + k;
        bc[k] = rank == k % size ? 100 + k : -1;
    }
    mt_put(vals);
    mt_put(bc);
    for (int k = 0; k < K; k++) {
        MPI_Iallreduce(mt_d(&vals[k]), mt_d(&sums[k]), 1, MPI_INT, MPI_SUM, comm, &reqs[2 * k]);
        MPI_Ibcast(mt_d(&bc[k]), 1, MPI_INT, k % size, comm, &reqs[2 * k + 1]);
    }
    for (int k = 2 * K - 1; k >= 0; k--)
        MPI_Wait(&reqs[k], MPI_STATUS_IGNORE);
    mt_get(sums);
    mt_get(bc);
    for (int k = 0; k < K; k++) {
        MT_CHECK(sums[k] == size * (size - 1) / 2 + size * k, "overlapped iallreduce %d: %d", k, sums[k]);
        MT_CHECK(bc[k] == 100 + k, "overlapped ibcast %d: %d", k, bc[k]);
    }
    mt_mfree(vals);
    mt_mfree(sums);
    mt_mfree(bc);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    run(MPI_COMM_WORLD);
    overlap(MPI_COMM_WORLD);
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, -mt_rank, &half);
    run(half);
    overlap(half);
    MPI_Comm_free(&half);
    return mt_finish();
}
