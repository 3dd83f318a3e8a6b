/*
 * win_shared_mem: plain loads and stores on the memory of MPI_Win_allocate_shared against the same
 * loops on malloc'd memory. A shared window's memory is ordinary memory mapped into every process
 * of the node: once MPI_Win_shared_query has given its address, a program reads and writes it
 * without any MPI call, and should see the speed of its own malloc'd memory.
 *
 * Every rank of the node (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)) gets SIZE bytes of one shared
 * window and SIZE bytes of malloc, and then, for each size, all ranks at once, each phase between
 * barriers (MPI_Win_sync and MPI_Barrier outside the timing, inside one MPI_Win_lock_all epoch):
 *
 *   stores then loads over its own segment of the window    ("own")
 *   stores then loads over its neighbour's segment (rank + 1 on the node, via MPI_Win_shared_query)
 *   stores then loads over its malloc'd buffer              ("malloc")
 *
 * Stores write 8-byte words (p[i] = v + i), loads sum them; one timed pass runs the loop over the
 * size enough times to move at least 64 MiB. The same out-of-line function runs every loop, so the
 * compiler treats the three memories alike. A phase's rate is each rank's bytes over its own time,
 * averaged over the ranks (GB/s per rank, GB = 1e9 B; with more ranks than cores the ranks take
 * turns, and the best of short passes is one that a rank ran through on a core). The row gives the
 * best of `-i` repetitions (default 7), the phases interleaved within each repetition, and the
 * shared window's worse rate (own or neighbour) over the malloc one, for stores and for loads (1.00:
 * as fast as plain memory):
 *
 *   # Size  Store own  Load own  Store nbr  Load nbr  Store malloc  Load malloc  Store ratio  Load ratio
 *
 * Options: -m A,B,C (bytes per rank; default 65536,1048576,67108864), -m MIN:MAX, -i REPS, -h.
 * Standard MPI only: bench/compare builds it with every MPI's mpicc.
 */
#include "coll_bench.h"

#if defined(__GNUC__)
#define SHM_NOINLINE __attribute__((noinline))
#else
#define SHM_NOINLINE
#endif

#define SHM_MIN_BYTES (64UL << 20) /* bytes one timed pass moves at least */

enum { SHM_OWN, SHM_NBR, SHM_MALLOC, SHM_NMEM };

static volatile uint64_t shm_sink;

static SHM_NOINLINE void shm_store(uint64_t *p, size_t n, uint64_t v)
{
    for (size_t i = 0; i < n; i++)
        p[i] = v + i;
}

static SHM_NOINLINE uint64_t shm_load(const uint64_t *p, size_t n)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += p[i];
    return s;
}

/* One phase on every rank of comm: the loop `times` times over size bytes at p; returns each
 * rank's rate in GB/s averaged over the ranks. */
static double shm_phase(MPI_Win win, MPI_Comm comm, int store, uint64_t *p, size_t size, long times)
{
    size_t n = size / sizeof(uint64_t);
    uint64_t s = 0;
    double t, rate, sum;
    int nranks;

    MPI_Win_sync(win);
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    for (long k = 0; k < times; k++) {
        if (store)
            shm_store(p, n, (uint64_t) k);
        else
            s += shm_load(p, n);
    }
    t = MPI_Wtime() - t0;
    shm_sink = s;
    rate = t > 0 ? (double) size * (double) times / t / 1e9 : 0.0;
    MPI_Allreduce(&rate, &sum, 1, MPI_DOUBLE, MPI_SUM, comm);
    MPI_Comm_size(comm, &nranks);
    return sum / nranks;
}

int main(int argc, char **argv)
{
    static const struct coll_bench b = { "", 8, 8, 0, 0 };
    struct coll_opts o;
    MPI_Comm node;
    MPI_Win win;
    int rank, nrank, nnode, nranks, reps = 7, ch, rc = 0, has_c;
    long a, c;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    memset(&o, 0, sizeof(o));
    coll_parse_sizes("65536,1048576,67108864", &o, &b);
    opterr = 0;
    while (rc == 0 && (ch = getopt(argc, argv, "+m:i:h")) != -1) {
        if (ch == 'm')
            rc = coll_parse_sizes(optarg, &o, &b);
        else if (ch == 'i')
            rc = bench_parse_pair(optarg, &a, &c, &has_c) != 0 || a < 1 || a > INT_MAX ? -1 : (reps = (int) a, 0);
        else
            rc = ch == 'h' ? 1 : -1;
    }
    if (rc == 0 && optind != argc)
        rc = -1;
    if (rc != 0) {
        if (rank == 0)
            fprintf(stderr, "usage: %s [-m A,B,C | -m MIN:MAX] [-i REPS]   (any number of ranks)\n"
                            "  loads and stores on MPI_Win_allocate_shared memory against malloc'd memory;\n"
                            "  sizes in bytes per rank (default 65536,1048576,67108864), best of REPS (7)\n",
                    argv[0]);
        MPI_Finalize();
        return rc > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
    }

    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(node, &nnode);
    size_t len = o.max_size / sizeof(uint64_t) * sizeof(uint64_t);
    uint64_t *mem[SHM_NMEM], *own;
    MPI_Aint qsize;
    int qdisp;
    if (MPI_Win_allocate_shared((MPI_Aint) len, 8, MPI_INFO_NULL, node, &own, &win) != MPI_SUCCESS) {
        fprintf(stderr, "%s: cannot allocate a shared window of %zu bytes per rank\n", argv[0], len);
        MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
    }
    mem[SHM_OWN] = own;
    MPI_Win_shared_query(win, (nrank + 1) % nnode, &qsize, &qdisp, &mem[SHM_NBR]);
    mem[SHM_MALLOC] = malloc(len);
    if (mem[SHM_MALLOC] == NULL) {
        fprintf(stderr, "%s: cannot malloc %zu bytes\n", argv[0], len);
        MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
    }
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    /* the pages exist before timing: each rank writes its own segment and its malloc'd buffer */
    memset(own, 1, len);
    memset(mem[SHM_MALLOC], 1, len);
    if (rank == 0) {
        printf("# " BENCH_NAME_PREFIX " MPI_Win_allocate_shared Load/Store Test v" BENCH_VERSION
               " (%d ranks on rank 0's node, all at once, GB/s per rank, best of %d)\n", nnode, reps);
        printf("# %-*s%*s%*s%*s%*s%*s%*s%*s%*s\n", BENCH_SIZE_WIDTH - 2, "Size", 12, "Store own", 12, "Load own",
               12, "Store nbr", 12, "Load nbr", 14, "Store malloc", 13, "Load malloc", 13, "Store ratio", 12,
               "Load ratio");
        fflush(stdout);
    }
    for (int k = 0; k < o.nsizes; k++) {
        size_t size = o.sizes[k] / sizeof(uint64_t) * sizeof(uint64_t);
        long times = (long) (SHM_MIN_BYTES / size) + (SHM_MIN_BYTES % size != 0);
        double best[2][SHM_NMEM] = { { 0 } };
        for (int r = 0; r < reps; r++)
            for (int store = 1; store >= 0; store--)
                for (int m = 0; m < SHM_NMEM; m++) {
                    double v = shm_phase(win, node, store, mem[m], size, times);
                    if (v > best[store][m])
                        best[store][m] = v;
                }
        if (rank == 0) {
            double ws = best[1][SHM_OWN] < best[1][SHM_NBR] ? best[1][SHM_OWN] : best[1][SHM_NBR];
            double wl = best[0][SHM_OWN] < best[0][SHM_NBR] ? best[0][SHM_OWN] : best[0][SHM_NBR];
            printf("%-*zu%12.2f%12.2f%12.2f%12.2f%14.2f%13.2f%13.2f%12.2f\n", BENCH_SIZE_WIDTH, size,
                   best[1][SHM_OWN], best[0][SHM_OWN], best[1][SHM_NBR], best[0][SHM_NBR], best[1][SHM_MALLOC],
                   best[0][SHM_MALLOC], ws / best[1][SHM_MALLOC], wl / best[0][SHM_MALLOC]);
            fflush(stdout);
        }
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
    free(mem[SHM_MALLOC]);
    MPI_Finalize();
    return EXIT_SUCCESS;
}
