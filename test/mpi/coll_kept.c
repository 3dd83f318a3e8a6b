/*
 * Blocking collectives called again with the same arguments (umpi keeps each kind's last small
 * schedule per communicator and runs it again: src/coll/post.c). What must not leak from one
 * call into the next: the data (the buffers change between calls, the schedule reads them when
 * it runs), the root, the counts, MPI_IN_PLACE, a datatype or user op freed and replaced by a new
 * one (which may get the same handle), a communicator freed and another made in its place.
 * Every result is checked against a reference computed locally.
 */
#include "mtest.h"

#define N 7
#define ITERS 12

static int val(int rank, int it, int i)
{
    return (rank + 1) * 100 + it * 10 + i;
}

/* Allreduce and Reduce with the same buffers, new data every call, in place every other call. */
static void same_buffers(MPI_Comm comm, const char *what)
{
    int rank, size, sbuf[N], rbuf[N];
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int it = 0; it < ITERS; it++) {
        int inplace = it % 2;
        for (int i = 0; i < N; i++)
            (inplace ? rbuf : sbuf)[i] = val(rank, it, i);
        MPI_Allreduce(inplace ? MPI_IN_PLACE : sbuf, rbuf, N, MPI_INT, MPI_SUM, comm);
        for (int i = 0; i < N; i++) {
            int want = 0;
            for (int r = 0; r < size; r++)
                want += val(r, it, i);
            MT_CHECK(rbuf[i] == want, "%s: allreduce call %d (%s) element %d: %d, expected %d", what, it,
                     inplace ? "in place" : "separate buffers", i, rbuf[i], want);
        }
        int root = it % size;
        for (int i = 0; i < N; i++) {
            sbuf[i] = val(rank, it, i);
            rbuf[i] = -1;
        }
        MPI_Reduce(sbuf, rbuf, N, MPI_INT, MPI_MAX, root, comm);
        if (rank == root)
            for (int i = 0; i < N; i++)
                MT_CHECK(rbuf[i] == val(size - 1, it, i), "%s: reduce call %d to root %d element %d: %d, expected %d",
                         what, it, root, i, rbuf[i], val(size - 1, it, i));
    }
}

/* Bcast, Scatter and Gather from a root that changes from call to call, the same buffers. */
static void moving_root(MPI_Comm comm)
{
    int rank, size, buf[N], *all = NULL, one;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    all = malloc(sizeof(int) * (size_t) size);
    for (int it = 0; it < ITERS; it++) {
        int root = (it * 3) % size;
        for (int i = 0; i < N; i++)
            buf[i] = rank == root ? val(root, it, i) : -1;
        MPI_Bcast(buf, N, MPI_INT, root, comm);
        for (int i = 0; i < N; i++)
            MT_CHECK(buf[i] == val(root, it, i), "bcast call %d from root %d element %d: %d, expected %d", it, root,
                     i, buf[i], val(root, it, i));
        for (int r = 0; r < size; r++)
            all[r] = rank == root ? val(r, it, 0) : -1;
        one = -1;
        MPI_Scatter(all, 1, MPI_INT, &one, 1, MPI_INT, root, comm);
        MT_CHECK(one == val(rank, it, 0), "scatter call %d from root %d: %d, expected %d", it, root, one,
                 val(rank, it, 0));
        for (int r = 0; r < size; r++)
            all[r] = -1;
        one = val(rank, it, 1);
        MPI_Gather(&one, 1, MPI_INT, all, 1, MPI_INT, root, comm);
        if (rank == root)
            for (int r = 0; r < size; r++)
                MT_CHECK(all[r] == val(r, it, 1), "gather call %d to root %d block %d: %d, expected %d", it, root, r,
                         all[r], val(r, it, 1));
    }
    free(all);
}

/* The same buffers with a count that changes, and kinds interleaved (each keeps its own). */
static void counts_and_kinds(MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *sbuf = malloc(sizeof(int) * N * (size_t) size), *rbuf = malloc(sizeof(int) * N * (size_t) size);
    for (int it = 0; it < ITERS; it++) {
        int n = 1 + it % N;
        for (int i = 0; i < n * size; i++)
            sbuf[i] = val(rank, it, i);
        MPI_Alltoall(sbuf, n, MPI_INT, rbuf, n, MPI_INT, comm);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < n; i++)
                MT_CHECK(rbuf[r * n + i] == val(r, it, rank * n + i),
                         "alltoall call %d (%d per pair) from %d element %d: %d, expected %d", it, n, r, i,
                         rbuf[r * n + i], val(r, it, rank * n + i));
        MPI_Barrier(comm);
        MPI_Allgather(sbuf, n, MPI_INT, rbuf, n, MPI_INT, comm);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < n; i++)
                MT_CHECK(rbuf[r * n + i] == val(r, it, i), "allgather call %d (%d each) block %d element %d: %d, expected %d",
                         it, n, r, i, rbuf[r * n + i], val(r, it, i));
        MPI_Scan(sbuf, rbuf, n, MPI_INT, MPI_SUM, comm);
        for (int i = 0; i < n; i++) {
            int want = 0;
            for (int r = 0; r <= rank; r++)
                want += val(r, it, i);
            MT_CHECK(rbuf[i] == want, "scan call %d element %d: %d, expected %d", it, i, rbuf[i], want);
        }
    }
    free(sbuf);
    free(rbuf);
}

/* A datatype freed and another made (often with the same handle), the same buffers and counts:
 * a vector of every other int, then a contiguous pair. */
static void replaced_type(MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int sbuf[8], *rbuf = malloc(sizeof(int) * 8 * (size_t) size);
    for (int it = 0; it < 4; it++) {
        MPI_Datatype t;
        int vec = it % 2 == 0;
        if (vec)
            MPI_Type_vector(2, 1, 2, MPI_INT, &t); /* ints 0 and 2 of 3, extent 3 ints */
        else
            MPI_Type_contiguous(2, MPI_INT, &t);
        MPI_Type_commit(&t);
        for (int i = 0; i < 8; i++)
            sbuf[i] = val(rank, it, i);
        for (int i = 0; i < 8 * size; i++)
            rbuf[i] = -1;
        MPI_Allgather(sbuf, 1, t, rbuf, 2, MPI_INT, comm);
        for (int r = 0; r < size; r++) {
            int w0 = val(r, it, 0), w1 = val(r, it, vec ? 2 : 1);
            MT_CHECK(rbuf[2 * r] == w0 && rbuf[2 * r + 1] == w1,
                     "allgather with a %s type freed and replaced (round %d), block %d: %d %d, expected %d %d",
                     vec ? "vector" : "contiguous", it, r, rbuf[2 * r], rbuf[2 * r + 1], w0, w1);
        }
        MPI_Type_free(&t);
    }
    free(rbuf);
}

static void op_min(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void) dt;
    for (int i = 0; i < *len; i++)
        if (((int *) in)[i] < ((int *) inout)[i])
            ((int *) inout)[i] = ((int *) in)[i];
}

static void op_bor(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void) dt;
    for (int i = 0; i < *len; i++)
        ((int *) inout)[i] |= ((int *) in)[i];
}

/* A user op freed and another made in its place, the same buffers. */
static void replaced_op(MPI_Comm comm)
{
    int rank, size, sbuf[N], rbuf[N];
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int it = 0; it < 4; it++) {
        MPI_Op op;
        int is_min = it % 2 == 0;
        MPI_Op_create(is_min ? op_min : op_bor, 1, &op);
        for (int i = 0; i < N; i++)
            sbuf[i] = is_min ? val(rank, it, i) : 1 << ((rank + i) % 20);
        MPI_Allreduce(sbuf, rbuf, N, MPI_INT, op, comm);
        for (int i = 0; i < N; i++) {
            int want = is_min ? val(0, it, i) : 0;
            if (!is_min)
                for (int r = 0; r < size; r++)
                    want |= 1 << ((r + i) % 20);
            MT_CHECK(rbuf[i] == want, "allreduce with a user op (%s) freed and replaced (round %d) element %d: %d, expected %d",
                     is_min ? "min" : "bitwise or", it, i, rbuf[i], want);
        }
        MPI_Op_free(&op);
    }
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    same_buffers(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    moving_root(MPI_COMM_WORLD);
    counts_and_kinds(MPI_COMM_WORLD);
    replaced_type(MPI_COMM_WORLD);
    replaced_op(MPI_COMM_WORLD);
    /* communicators made, used and freed over and over (each keeps schedules of its own) */
    for (int k = 0; k < 20; k++) {
        MPI_Comm c;
        MPI_Comm_split(MPI_COMM_WORLD, k % 2 ? 0 : mt_rank % 2, mt_size - mt_rank, &c);
        same_buffers(c, k % 2 ? "a reversed split" : "a split in two");
        MPI_Comm_free(&c);
    }
    return mt_finish();
}
