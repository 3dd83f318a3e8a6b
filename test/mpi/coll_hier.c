/*
 * The hierarchical collectives: Reduce, Allreduce (small and large vectors),
 * Gather, Scatter, Allgather and Bcast, blocking, nonblocking and persistent, on MPI_COMM_WORLD
 * and on two communicators whose ranks do not follow the world's (reversed, and evens before
 * odds, so that with UMPI_COLL_RANKS_PER_NODE the nodes hold interleaved ranks), every root,
 * MPI_IN_PLACE, and a strided (derived) datatype. The testlist runs it with node boundaries
 * declared and the hierarchical algorithms forced or chosen by the model; results are checked
 * against values computed locally. Standard MPI only.
 */
#include "mtest.h"

enum { BLOCKING, NONBLOCKING, PERSISTENT, NMODES };
static const char *mode_name[NMODES] = {"blocking", "nonblocking", "persistent"};

/* Completes the request of a nonblocking call, or starts and completes a persistent one. */
static void complete(int mode, MPI_Request *req)
{
    if (mode == PERSISTENT) {
        MPI_Start(req);
        MPI_Wait(req, MPI_STATUS_IGNORE);
        MPI_Request_free(req);
    } else if (mode == NONBLOCKING) {
        MPI_Wait(req, MPI_STATUS_IGNORE);
    }
}

static int val(int rank, int i)
{
    return rank * 1000 + i;
}

static void test_reduce(MPI_Comm comm, int mode, int n)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *in = malloc(n * sizeof(int)), *out = malloc(n * sizeof(int));
    for (int root = 0; root < size; root++) {
        for (int inplace = 0; inplace < 2; inplace++) {
            MPI_Request req;
            for (int i = 0; i < n; i++) {
                in[i] = val(rank, i);
                out[i] = rank == root && inplace ? in[i] : -1;
            }
            const void *sb = rank == root && inplace ? MPI_IN_PLACE : in;
            if (mode == BLOCKING)
                MPI_Reduce(sb, out, n, MPI_INT, MPI_SUM, root, comm);
            else if (mode == NONBLOCKING)
                MPI_Ireduce(sb, out, n, MPI_INT, MPI_SUM, root, comm, &req);
            else
                MPI_Reduce_init(sb, out, n, MPI_INT, MPI_SUM, root, comm, MPI_INFO_NULL, &req);
            complete(mode, &req);
            if (rank != root)
                continue;
            for (int i = 0; i < n; i++) {
                int want = 1000 * size * (size - 1) / 2 + size * i;
                MT_CHECK(out[i] == want, "%s reduce n=%d root %d inplace %d: [%d] = %d, want %d", mode_name[mode], n,
                         root, inplace, i, out[i], want);
                if (out[i] != want)
                    break;
            }
        }
    }
    free(in);
    free(out);
}

static void test_allreduce(MPI_Comm comm, int mode, int n)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    double *in = malloc(n * sizeof(double)), *out = malloc(n * sizeof(double));
    for (int inplace = 0; inplace < 2; inplace++) {
        MPI_Request req;
        for (int i = 0; i < n; i++) {
            in[i] = val(rank, i);
            out[i] = inplace ? in[i] : -1;
        }
        const void *sb = inplace ? MPI_IN_PLACE : in;
        if (mode == BLOCKING)
            MPI_Allreduce(sb, out, n, MPI_DOUBLE, MPI_SUM, comm);
        else if (mode == NONBLOCKING)
            MPI_Iallreduce(sb, out, n, MPI_DOUBLE, MPI_SUM, comm, &req);
        else
            MPI_Allreduce_init(sb, out, n, MPI_DOUBLE, MPI_SUM, comm, MPI_INFO_NULL, &req);
        complete(mode, &req);
        for (int i = 0; i < n; i++) {
            double want = 1000.0 * size * (size - 1) / 2 + (double) size * i;
            MT_CHECK(out[i] == want, "%s allreduce n=%d inplace %d: [%d] = %g, want %g", mode_name[mode], n, inplace, i,
                     out[i], want);
            if (out[i] != want)
                break;
        }
    }
    free(in);
    free(out);
}

/* Gather, Scatter and Allgather of n ints per process; with strided, each process's block is received
 * into every other int of the receive buffer (a vector type resized to 2 ints: n of them per block). */
static void test_gathers(MPI_Comm comm, int mode, int n, int strided)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Datatype vec, rt = MPI_INT;
    int stride = strided ? 2 : 1;
    if (strided) {
        MPI_Type_vector(1, 1, 2, MPI_INT, &vec);
        MPI_Type_create_resized(vec, 0, 2 * sizeof(int), &rt);
        MPI_Type_free(&vec);
        MPI_Type_commit(&rt);
    }
    int *mine = malloc(n * sizeof(int)), *all = malloc((size_t) size * n * stride * sizeof(int));
    MPI_Request req;
    for (int root = 0; root < size; root++) {
        for (int inplace = 0; inplace < 2; inplace++) {
            /* gather: block r of the root's buffer holds rank r's values */
            for (int i = 0; i < n; i++)
                mine[i] = val(rank, i);
            for (int i = 0; i < size * n * stride; i++)
                all[i] = -1;
            int ip = inplace && rank == root;
            if (ip)
                for (int i = 0; i < n; i++)
                    all[(rank * n + i) * stride] = val(rank, i);
            const void *sb = ip ? MPI_IN_PLACE : mine;
            if (mode == BLOCKING)
                MPI_Gather(sb, n, MPI_INT, all, n, rt, root, comm);
            else if (mode == NONBLOCKING)
                MPI_Igather(sb, n, MPI_INT, all, n, rt, root, comm, &req);
            else
                MPI_Gather_init(sb, n, MPI_INT, all, n, rt, root, comm, MPI_INFO_NULL, &req);
            complete(mode, &req);
            if (rank == root)
                for (int i = 0; i < size * n; i++) {
                    int want = val(i / n, i % n);
                    MT_CHECK(all[i * stride] == want, "%s gather n=%d root %d inplace %d strided %d: [%d] = %d, want %d",
                             mode_name[mode], n, root, inplace, strided, i, all[i * stride], want);
                    if (all[i * stride] != want)
                        break;
                }

            /* scatter: the root's block r goes to rank r */
            for (int i = 0; i < size * n * stride; i++)
                all[i] = rank == root ? val(i / stride / n, i / stride % n) : -1;
            for (int i = 0; i < n; i++)
                mine[i] = -1;
            void *rb = ip ? MPI_IN_PLACE : mine;
            if (mode == BLOCKING)
                MPI_Scatter(all, n, rt, rb, n, MPI_INT, root, comm);
            else if (mode == NONBLOCKING)
                MPI_Iscatter(all, n, rt, rb, n, MPI_INT, root, comm, &req);
            else
                MPI_Scatter_init(all, n, rt, rb, n, MPI_INT, root, comm, MPI_INFO_NULL, &req);
            complete(mode, &req);
            if (!ip)
                for (int i = 0; i < n; i++) {
                    MT_CHECK(mine[i] == val(rank, i), "%s scatter n=%d root %d inplace %d strided %d: [%d] = %d, want %d",
                             mode_name[mode], n, root, inplace, strided, i, mine[i], val(rank, i));
                    if (mine[i] != val(rank, i))
                        break;
                }
            if (ip)
                for (int i = 0; i < size * n; i++)
                    MT_CHECK(all[i * stride] == val(i / n, i % n), "scatter in place changed the root's sendbuf");
        }
    }

    /* allgather */
    for (int inplace = 0; inplace < 2; inplace++) {
        for (int i = 0; i < n; i++)
            mine[i] = val(rank, i);
        for (int i = 0; i < size * n * stride; i++)
            all[i] = -1;
        if (inplace)
            for (int i = 0; i < n; i++)
                all[(rank * n + i) * stride] = val(rank, i);
        const void *sb = inplace ? MPI_IN_PLACE : mine;
        if (mode == BLOCKING)
            MPI_Allgather(sb, n, MPI_INT, all, n, rt, comm);
        else if (mode == NONBLOCKING)
            MPI_Iallgather(sb, n, MPI_INT, all, n, rt, comm, &req);
        else
            MPI_Allgather_init(sb, n, MPI_INT, all, n, rt, comm, MPI_INFO_NULL, &req);
        complete(mode, &req);
        for (int i = 0; i < size * n; i++) {
            int want = val(i / n, i % n);
            MT_CHECK(all[i * stride] == want, "%s allgather n=%d inplace %d strided %d: [%d] = %d, want %d",
                     mode_name[mode], n, inplace, strided, i, all[i * stride], want);
            if (all[i * stride] != want)
                break;
        }
    }
    if (strided)
        MPI_Type_free(&rt);
    free(mine);
    free(all);
}

static void test_bcast_barrier(MPI_Comm comm, int mode)
{
    int rank, size, buf[5];
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int root = 0; root < size; root++) {
        MPI_Request req;
        for (int i = 0; i < 5; i++)
            buf[i] = rank == root ? val(root, i) : -1;
        if (mode == BLOCKING)
            MPI_Bcast(buf, 5, MPI_INT, root, comm);
        else if (mode == NONBLOCKING)
            MPI_Ibcast(buf, 5, MPI_INT, root, comm, &req);
        else
            MPI_Bcast_init(buf, 5, MPI_INT, root, comm, MPI_INFO_NULL, &req);
        complete(mode, &req);
        for (int i = 0; i < 5; i++)
            MT_CHECK(buf[i] == val(root, i), "%s bcast root %d: [%d] = %d", mode_name[mode], root, i, buf[i]);
        if (mode == BLOCKING)
            MPI_Barrier(comm);
        else if (mode == NONBLOCKING)
            MPI_Ibarrier(comm, &req);
        else
            MPI_Barrier_init(comm, MPI_INFO_NULL, &req);
        complete(mode, &req);
    }
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm comms[3];
    comms[0] = MPI_COMM_WORLD;
    MPI_Comm_split(MPI_COMM_WORLD, 0, mt_size - mt_rank, &comms[1]);             /* reversed */
    MPI_Comm_split(MPI_COMM_WORLD, 0, (mt_rank % 2) * mt_size + mt_rank, &comms[2]); /* evens, then odds */
    for (int c = 0; c < 3; c++) {
        for (int mode = 0; mode < NMODES; mode++) {
            test_reduce(comms[c], mode, 3);
            test_allreduce(comms[c], mode, 3);
            test_allreduce(comms[c], mode, 10007);
            test_gathers(comms[c], mode, 2, 0);
            test_gathers(comms[c], mode, 3, 1);
            test_bcast_barrier(comms[c], mode);
        }
        test_gathers(comms[c], BLOCKING, 0, 0); /* zero counts */
        test_reduce(comms[c], BLOCKING, 0);
    }
    MPI_Comm_free(&comms[1]);
    MPI_Comm_free(&comms[2]);
    return mt_finish();
}
