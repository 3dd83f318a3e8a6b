/*
 * What a launcher told MPI_Init, checked by MPI: argv[1] is the node of every rank as the launch
 * placed them ("0,1,0,1,0"; the ids need not match umpi's, only the grouping). Checks the size, a
 * message ring, an allreduce, and MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): every rank's node
 * communicator must hold exactly the ranks of its node, in rank order. Where Hydra says it
 * (MPI_LOCALRANKID, MPI_LOCALNRANKS), the local rank and size must agree with it too. Rank 0 prints
 * "No Errors" when all ranks passed.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int errors;

#define CHECK(cond, ...)                                                                          \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            errors++;                                                                             \
            printf("rank %d: ", rank);                                                            \
            printf(__VA_ARGS__);                                                                  \
            printf("\n");                                                                         \
        }                                                                                         \
    } while (0)

int main(int argc, char **argv)
{
    int rank, size, n = 0, token, sum = 0, total = 0, srank, ssize;
    int node[256];
    const char *lr = getenv("MPI_LOCALRANKID"), *ls = getenv("MPI_LOCALNRANKS");
    MPI_Comm shared;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) {
        if (rank == 0)
            printf("usage: pmi_nodes NODE,NODE,... (the node of every rank)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (char *s = strtok(argv[1], ","); s != NULL && n < 256; s = strtok(NULL, ","))
        node[n++] = atoi(s);
    CHECK(size == n, "MPI_COMM_WORLD has %d ranks, the launch placed %d", size, n);
    if (size != n)
        n = 0;

    /* a ring of messages */
    if (size > 1) {
        if (rank == 0) {
            token = 1;
            MPI_Send(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(token == size, "the token came back as %d, not %d", token, size);
        } else {
            MPI_Recv(&token, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token++;
            MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD);
        }
    }
    sum = rank + 1;
    MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == size * (size + 1) / 2, "allreduce gave %d, not %d", sum, size * (size + 1) / 2);

    /* the node communicator: the ranks of my node, in rank order */
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
    MPI_Comm_rank(shared, &srank);
    MPI_Comm_size(shared, &ssize);
    if (n > 0) {
        int want_rank = 0, want_size = 0, *members = malloc((size_t)ssize * sizeof(int)), k = 0;

        for (int r = 0; r < size; r++) {
            if (node[r] == node[rank]) {
                want_size++;
                want_rank += r < rank;
            }
        }
        CHECK(ssize == want_size && srank == want_rank, "shared communicator: rank %d of %d, expected %d of %d",
              srank, ssize, want_rank, want_size);
        MPI_Allgather(&rank, 1, MPI_INT, members, 1, MPI_INT, shared);
        for (int r = 0; r < size && k <= ssize; r++) {
            if (node[r] == node[rank]) {
                CHECK(k < ssize && members[k] == r, "shared communicator member %d is rank %d, expected %d", k,
                      k < ssize ? members[k] : -1, r);
                k++;
            }
        }
        free(members);
        if (lr != NULL && ls != NULL)
            CHECK(atoi(lr) == srank && atoi(ls) == ssize, "Hydra says local rank %s of %s, MPI %d of %d", lr, ls,
                  srank, ssize);
    }
    MPI_Comm_free(&shared);

    MPI_Reduce(&errors, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total == 0)
            printf(" No Errors\n");
        else
            printf(" Found %d errors\n", total);
    }
    MPI_Finalize();
    return 0;
}
