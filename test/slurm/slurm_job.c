/*
 * The job the Slurm test bed runs across nodes: slurm_job NODES RANKS_PER_NODE
 *
 * Checks, with the expected layout given on the command line:
 *   - the world has NODES * RANKS_PER_NODE ranks;
 *   - a token passed around the ring comes back as the sum of the ranks;
 *   - MPI_Comm_split_type(SHARED) finds NODES nodes of RANKS_PER_NODE ranks each, and its nodes
 *     are the hosts: ranks sharing a node have one hostname, different nodes different ones;
 *   - MPI_Allreduce of a small and of a large vector (the large one leaves eager sizes);
 * Rank 0 prints one line per node ("node HOST: ranks a,b") and "No Errors" when all checks pass.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HOSTLEN 64
#define BIG (1 << 20)   /* doubles in the large allreduce: 8 MiB */

static int errs;

#define CHECK(cond, ...)                                                         \
    do {                                                                         \
        if (!(cond)) {                                                           \
            errs++;                                                              \
            fprintf(stderr, "rank %d: ", world_rank);                            \
            fprintf(stderr, __VA_ARGS__);                                        \
            fputc('\n', stderr);                                                 \
        }                                                                        \
    } while (0)

int main(int argc, char **argv)
{
    int world_rank, world_size, nodes, ppn;
    int node_rank, node_size, is_leader, nleaders, total_errs;
    char host[HOSTLEN] = "";
    char *hosts;
    int *leader_of;
    MPI_Comm node;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (argc != 3 || (nodes = atoi(argv[1])) < 1 || (ppn = atoi(argv[2])) < 1) {
        if (world_rank == 0)
            fprintf(stderr, "usage: %s NODES RANKS_PER_NODE\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    gethostname(host, sizeof(host) - 1);
    CHECK(world_size == nodes * ppn, "world size %d, expected %d x %d", world_size, nodes, ppn);

    /* Ring first, point-to-point only: the first messages between nodes (a transport that cannot
     * reach the other node fails here, in MPI_Send). Each rank adds its rank to the token. */
    {
        int token = 0, next = (world_rank + 1) % world_size;
        int prev = (world_rank + world_size - 1) % world_size;

        if (world_rank == 0) {
            MPI_Send(&token, 1, MPI_INT, next, 7, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(token == world_size * (world_size - 1) / 2, "ring token %d, expected %d", token,
                  world_size * (world_size - 1) / 2);
        } else {
            MPI_Recv(&token, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token += world_rank;
            MPI_Send(&token, 1, MPI_INT, next, 7, MPI_COMM_WORLD);
        }
    }

    /* Nodes as MPI sees them. */
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &node_rank);
    MPI_Comm_size(node, &node_size);
    is_leader = node_rank == 0;
    MPI_Allreduce(&is_leader, &nleaders, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(nleaders == nodes, "MPI_COMM_TYPE_SHARED finds %d nodes, expected %d", nleaders, nodes);
    CHECK(node_size == ppn, "%d ranks on my node (%s), expected %d", node_size, host, ppn);

    /* ... against the hosts: every rank learns each rank's host and node leader (in world ranks). */
    hosts = calloc((size_t)world_size, HOSTLEN);
    leader_of = calloc((size_t)world_size, sizeof(int));
    {
        int my_leader = world_rank;

        MPI_Bcast(&my_leader, 1, MPI_INT, 0, node);
        MPI_Allgather(host, HOSTLEN, MPI_CHAR, hosts, HOSTLEN, MPI_CHAR, MPI_COMM_WORLD);
        MPI_Allgather(&my_leader, 1, MPI_INT, leader_of, 1, MPI_INT, MPI_COMM_WORLD);
    }
    for (int r = 0; r < world_size; r++) {
        int same_node = leader_of[r] == leader_of[world_rank];
        int same_host = strcmp(hosts + (size_t)r * HOSTLEN, host) == 0;

        CHECK(same_node == same_host, "rank %d is on host %s and %s my node; I am on %s", r,
              hosts + (size_t)r * HOSTLEN, same_node ? "in" : "not in", host);
    }

    /* Allreduce, small and large. */
    {
        long v = world_rank + 1, sum = 0;
        double *in = malloc(BIG * sizeof(double)), *out = malloc(BIG * sizeof(double));
        int bad = 0;

        MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        CHECK(sum == (long)world_size * (world_size + 1) / 2, "allreduce sum %ld, expected %ld", sum,
              (long)world_size * (world_size + 1) / 2);
        for (int i = 0; i < BIG; i++)
            in[i] = (double)(world_rank + i % 7);
        MPI_Allreduce(in, out, BIG, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < BIG; i++) {
            double want = (double)world_size * (world_size - 1) / 2 + (double)world_size * (i % 7);

            if (out[i] != want && bad++ < 3)
                CHECK(0, "large allreduce [%d] = %g, expected %g", i, out[i], want);
        }
        free(in);
        free(out);
    }

    if (world_rank == 0) {
        for (int r = 0; r < world_size; r++) {
            if (leader_of[r] != r)
                continue;
            printf("node %s: ranks", hosts + (size_t)r * HOSTLEN);
            for (int q = 0, first = 1; q < world_size; q++) {
                if (leader_of[q] == r) {
                    printf("%s%d", first ? " " : ",", q);
                    first = 0;
                }
            }
            printf("\n");
        }
    }
    MPI_Reduce(&errs, &total_errs, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (world_rank == 0) {
        if (total_errs == 0)
            printf(" No Errors\n");
        else
            printf(" Found %d errors\n", total_errs);
    }
    free(hosts);
    free(leader_of);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return 0;
}
