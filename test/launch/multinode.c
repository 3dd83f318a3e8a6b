/* What the ranks of a job across nodes see: each prints its node's members (from
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)) and the number of nodes; a ring and allreduces
 * (one small, one large enough for the hierarchical large-vector algorithms) are checked, and
 * rank 0 prints "No Errors" when every check of every rank passed. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define LARGE 100000

int main(int argc, char **argv)
{
    int rank, size, nrank, nsize, leader, nnodes, errs = 0, total = 0, left, right, got = -1;
    MPI_Comm node;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(node, &nsize);
    int *members = malloc(sizeof(int) * (size_t)nsize);
    MPI_Allgather(&rank, 1, MPI_INT, members, 1, MPI_INT, node);
    leader = nrank == 0;
    MPI_Allreduce(&leader, &nnodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    char line[4096];
    int off = snprintf(line, sizeof(line), "rank %d of %d: node members", rank, size);
    for (int i = 0; i < nsize && off < (int)sizeof(line) - 16; i++)
        off += snprintf(line + off, sizeof(line) - (size_t)off, "%s%d", i ? "," : " ", members[i]);
    printf("%s; nodes %d\n", line, nnodes);

    /* ring */
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    MPI_Sendrecv(&rank, 1, MPI_INT, right, 7, &got, 1, MPI_INT, left, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    if (got != left) {
        printf("rank %d: ring gave %d, expected %d\n", rank, got, left);
        errs++;
    }

    /* allreduce: small and large */
    long sum = 0;
    long mine = rank + 1;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (sum != (long)size * (size + 1) / 2) {
        printf("rank %d: allreduce gave %ld\n", rank, sum);
        errs++;
    }
    double *in = malloc(sizeof(double) * LARGE), *out = malloc(sizeof(double) * LARGE);
    for (int i = 0; i < LARGE; i++)
        in[i] = rank + i;
    MPI_Allreduce(in, out, LARGE, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < LARGE; i++) {
        double want = (double)size * (size - 1) / 2 + (double)size * i;
        if (out[i] != want) {
            printf("rank %d: large allreduce [%d] = %g, expected %g\n", rank, i, out[i], want);
            errs++;
            break;
        }
    }

    MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0 && total == 0)
        printf(" No Errors\n");
    free(in);
    free(out);
    free(members);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return 0;
}
