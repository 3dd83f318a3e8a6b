/*
 * coll_params: measures the collective cost model's parameters on this machine (src/coll/link_cost.c,
 * umpi_coll_cost[]): a message of n bytes costs alpha + n * beta, reducing n bytes costs n * gamma.
 *
 *   alpha (us)    half the round trip of an 8-byte ping-pong (MPI_Send/MPI_Recv): start-up of
 *                 one message through the whole library, sender and receiver included;
 *   beta  (us/B)  (half round trip of a LARGE-byte ping-pong - alpha) / LARGE: time per byte
 *                 moved, the inverse of the bandwidth one message stream sees;
 *   gamma (us/B)  a local loop `inout[i] += in[i]` over doubles (what MPI_SUM on MPI_DOUBLE
 *                 does), per byte of the vector, on vectors of REDUCE_BYTES (cache-resident, as
 *                 a pipelined algorithm's chunks are). A plain loop rather than MPI_Reduce_local
 *                 so that every MPI (and a umpi without it) measures the same thing.
 *
 * Each is measured `-r R` times (default 7) and the smallest value kept: the machine is shared,
 * and other work only ever adds time. Needs exactly 2 ranks, on one node for the shared-memory
 * class (run it across two nodes for the network class). Standard MPI only.
 */
#include "umpi_bench.h"

#define SMALL        8
#define LARGE        (4 << 20)
#define REDUCE_BYTES (256 << 10)
#define TAG          7

static double pingpong(int rank, char *buf, int size, int iters)
{
    int peer = 1 - rank;
    double t0 = 0.0;

    bench_sync(peer);
    for (int i = 0; i < iters + iters / 10 + 1; i++) {
        if (i == iters / 10 + 1)
            t0 = MPI_Wtime(); /* after the warm-up tenth */
        if (rank == 0) {
            MPI_Send(buf, size, MPI_CHAR, peer, TAG, MPI_COMM_WORLD);
            MPI_Recv(buf, size, MPI_CHAR, peer, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, size, MPI_CHAR, peer, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, size, MPI_CHAR, peer, TAG, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
}

/* us per byte of `inout += in` on doubles. */
static double reduce_loop(double *in, double *inout, int iters)
{
    size_t n = REDUCE_BYTES / sizeof(double);
    double t0 = MPI_Wtime();

    for (int it = 0; it < iters; it++) {
        for (size_t i = 0; i < n; i++)
            inout[i] += in[i];
        /* Keep the compiler from folding iterations together. */
        __asm__ __volatile__("" : : "r"(inout) : "memory");
    }
    return (MPI_Wtime() - t0) * 1e6 / ((double)iters * REDUCE_BYTES);
}

int main(int argc, char **argv)
{
    int rank, size, repeats = 7, c;
    char *buf = NULL;
    double *in = NULL, *inout = NULL;
    double alpha = 1e30, large = 1e30, gamma = 1e30;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    opterr = 0;
    while ((c = getopt(argc, argv, "r:h")) != -1) {
        if (c == 'r' && atoi(optarg) > 0) {
            repeats = atoi(optarg);
        } else {
            if (rank == 0)
                fprintf(stderr, "usage: %s [-r REPEATS]   (run with exactly 2 ranks; default 7 "
                                "repeats, the best kept)\n", argv[0]);
            MPI_Finalize();
            return c == 'h' ? EXIT_SUCCESS : EXIT_FAILURE;
        }
    }
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "%s: needs exactly 2 ranks (got %d)\n", argv[0], size);
        MPI_Finalize();
        return EXIT_FAILURE;
    }
    if (bench_buf_alloc((void **)&buf, LARGE, BENCH_MEM_HOST) != 0
        || bench_buf_alloc((void **)&in, REDUCE_BYTES, BENCH_MEM_HOST) != 0
        || bench_buf_alloc((void **)&inout, REDUCE_BYTES, BENCH_MEM_HOST) != 0) {
        fprintf(stderr, "%s: out of memory\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
    }
    bench_buf_fill(buf, 'a', LARGE, BENCH_MEM_HOST);
    for (size_t i = 0; i < REDUCE_BYTES / sizeof(double); i++) {
        in[i] = 1e-9 * (double)i;
        inout[i] = 0.0;
    }

    for (int r = 0; r < repeats; r++) {
        double a = pingpong(rank, buf, SMALL, 10000);
        double l = pingpong(rank, buf, LARGE, 50);
        double g = reduce_loop(in, inout, 200);
        alpha = a < alpha ? a : alpha;
        large = l < large ? l : large;
        gamma = g < gamma ? g : gamma;
    }
    double beta = (large - alpha) / LARGE;

    if (rank == 0) {
        printf("# " BENCH_NAME_PREFIX " collective cost-model parameters v" BENCH_VERSION
               " (2 ranks, best of %d)\n", repeats);
        printf("alpha  %12.4f us      half round trip, %d B ping-pong\n", alpha, SMALL);
        printf("beta   %12.4e us/B    (half round trip %d B - alpha) / %d: %.0f MB/s\n", beta, LARGE,
               LARGE, 1.0 / beta);
        printf("gamma  %12.4e us/B    inout[i] += in[i] on doubles, %d KiB vectors: %.0f MB/s\n", gamma,
               REDUCE_BYTES >> 10, 1.0 / gamma);
        printf("# as link_cost.c's initializer:\n");
        printf("{.alpha = %.3f, .beta = 1.0 / %.0f, .gamma = 1.0 / %.0f}\n", alpha, 1.0 / beta, 1.0 / gamma);
    }
    bench_buf_free(buf, BENCH_MEM_HOST);
    bench_buf_free(in, BENCH_MEM_HOST);
    bench_buf_free(inout, BENCH_MEM_HOST);
    MPI_Finalize();
    return EXIT_SUCCESS;
}
