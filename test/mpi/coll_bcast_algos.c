/*
 * Broadcast and barrier algorithms (the testlist forces each one with UMPI_BCAST_ALGORITHM /
 * UMPI_BARRIER_ALGORITHM): Bcast in its three forms for every root, counts from 0 to beyond the
 * 64 KiB pipeline segment and odd ones, a derived datatype at the root against plain ints
 * elsewhere (and the other way round: only the type signatures must match), on MPI_COMM_WORLD
 * and a split communicator; Barrier in its three forms holds everyone until the last arrives.
 */
#include "mtest.h"

static int value(int root, int i, int k)
{
    return root * 100003 + i * 7 + k;
}

static void bcast_once(MPI_Comm comm, void *buf, int count, MPI_Datatype t, int root, int mode)
{
    MPI_Request req;
    if (mode == 0) {
        MPI_Bcast(buf, count, t, root, comm);
    } else if (mode == 1) {
        MPI_Ibcast(buf, count, t, root, comm, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        MPI_Bcast_init(buf, count, t, root, comm, MPI_INFO_NULL, &req);
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Request_free(&req);
    }
}

static void test_bcast(MPI_Comm comm, int n, int root, int mode)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    int *buf = malloc(sizeof(int) * (size_t) (n + 1));
    for (int i = 0; i < n; i++)
        buf[i] = rank == root ? value(root, i, mode) : -1;
    bcast_once(comm, buf, n, MPI_INT, root, mode);
    for (int i = 0; i < n && mt_errs < 20; i++)
        MT_CHECK(buf[i] == value(root, i, mode), "bcast mode %d n=%d root=%d: [%d]=%d", mode, n, root, i, buf[i]);
    free(buf);
}

/* n pairs of ints; pairs are laid out with a gap (a resized vector) at the root when root_derived,
 * elsewhere otherwise; the other side uses 2n plain ints. */
static void test_bcast_derived(MPI_Comm comm, int n, int root, int mode, int root_derived)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    MPI_Datatype v, pair;
    MPI_Type_vector(1, 2, 3, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, 3 * sizeof(int), &pair);
    MPI_Type_commit(&pair);
    MPI_Type_free(&v);
    int derived = (rank == root) == root_derived;
    int *buf = malloc(sizeof(int) * (size_t) (3 * n + 1));
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 2; k++) {
            int x = rank == root ? value(root, 2 * i + k, mode) : -1;
            if (derived)
                buf[3 * i + k] = x;
            else
                buf[2 * i + k] = x;
        }
        if (derived)
            buf[3 * i + 2] = 4242;
    }
    if (derived)
        bcast_once(comm, buf, n, pair, root, mode);
    else
        bcast_once(comm, buf, 2 * n, MPI_INT, root, mode);
    for (int i = 0; i < n && mt_errs < 20; i++) {
        for (int k = 0; k < 2; k++) {
            int got = derived ? buf[3 * i + k] : buf[2 * i + k];
            MT_CHECK(got == value(root, 2 * i + k, mode), "bcast derived(%d) mode %d n=%d root=%d: [%d]=%d",
                     root_derived, mode, n, root, 2 * i + k, got);
        }
        if (derived)
            MT_CHECK(buf[3 * i + 2] == 4242, "bcast derived: gap %d overwritten", i);
    }
    free(buf);
    MPI_Type_free(&pair);
}

/* Rank `late` enters late; nobody may leave before it entered. The ranks share a node, so their
 * MPI_Wtime clocks agree: the late rank's entry time must precede everyone's exit time. */
static void test_barrier(MPI_Comm comm, int late, int mode)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Request req;
    if (mode == 2)
        MPI_Barrier_init(comm, MPI_INFO_NULL, &req);
    double entered = 0;
    if (rank == late) {
        mt_sleep_ms(20);
        entered = MPI_Wtime();
    }
    if (mode == 0) {
        MPI_Barrier(comm);
    } else {
        if (mode == 1)
            MPI_Ibarrier(comm, &req);
        else
            MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    double left = MPI_Wtime();
    if (rank == late) {
        for (int i = 0; i < size; i++)
            if (i != late)
                MPI_Send(&entered, 1, MPI_DOUBLE, i, 9, comm);
    } else {
        MPI_Recv(&entered, 1, MPI_DOUBLE, late, 9, comm, MPI_STATUS_IGNORE);
        MT_CHECK(left >= entered, "barrier mode %d: left at %.6f before rank %d entered at %.6f", mode, left, late,
                 entered);
    }
    if (mode == 2)
        MPI_Request_free(&req);
}

static void run(MPI_Comm comm)
{
    int size;
    MPI_Comm_size(comm, &size);
    static const int counts[] = {0, 1, 5, 1001, 40000};
    for (int mode = 0; mode < 3; mode++) {
        for (unsigned c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
            for (int root = 0; root < size; root++)
                test_bcast(comm, counts[c], root, mode);
        for (int root = 0; root < size; root++) {
            test_bcast_derived(comm, 3, root, mode, root % 2);
            test_bcast_derived(comm, 20000, root, mode, (root + 1) % 2);
        }
        test_barrier(comm, mode % size, mode);
        test_barrier(comm, size - 1, mode);
    }
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    run(MPI_COMM_WORLD);
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, mt_rank % 2, -mt_rank, &half);
    run(half);
    MPI_Comm_free(&half);
    return mt_finish();
}
