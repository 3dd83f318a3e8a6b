/*
 * hello_ring: a token goes once around all ranks with MPI_Send/MPI_Recv; each rank adds its
 * number and prints one line as the token passes. Rank 0 checks the sum when the token is back.
 *
 *   mpicc hello_ring.c -o hello_ring && mpirun -n 4 ./hello_ring
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, len, token;
    char host[MPI_MAX_PROCESSOR_NAME];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(host, &len);

    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int rc = 0;

    if (size == 1) {
        printf("rank 0 of 1 on %s: alone, no ring to pass\n", host);
    } else if (rank == 0) {
        token = 0;
        printf("rank 0 of %d on %s: sending token %d to rank %d\n", size, host, token, next);
        fflush(stdout);
        MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
        MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        /* Every rank r > 0 added r: the token must come back as 1 + 2 + ... + (size - 1). */
        const int expect = size * (size - 1) / 2;
        printf("rank 0 of %d on %s: token came back as %d (%s)\n", size, host, token,
               token == expect ? "correct" : "WRONG");
        rc = token == expect ? 0 : 1;
    } else {
        MPI_Recv(&token, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        token += rank;
        printf("rank %d of %d on %s: got the token from rank %d, passing %d to rank %d\n", rank,
               size, host, prev, token, next);
        fflush(stdout);
        MPI_Send(&token, 1, MPI_INT, next, 0, MPI_COMM_WORLD);
    }

    MPI_Finalize();
    return rc;
}
