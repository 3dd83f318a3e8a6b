/*
 * win_bench.h: the time to create a window and to free it, one flavor per program (win_create.c,
 * win_allocate.c, win_allocate_shared.c, win_create_dynamic.c), any number of ranks.
 *
 * The program that includes this defines WIN_FLAVOR (one of the WIN_* below). For each size (default
 * 4 KiB and 16 MiB per rank; the dynamic flavor has no memory: one row, size 0), `skip` untimed then
 * `iters` timed iterations, each:
 *
 *     MPI_Barrier; t0; MPI_Win_<flavor>(size); t1; MPI_Barrier; t2; MPI_Win_free; t3
 *
 * so neither call starts before every rank has arrived. A call's time in one iteration is the
 * slowest rank's (the window exists when the last rank has it), gathered after the loop; the row
 * gives the minimum and the median over the iterations of creation and of free, in us:
 *
 *     # Size   Create min(us)   Free min(us)   Create median(us)   Free median(us)
 *
 * MPI_Win_create gets memory malloc'd and written once before the loop (the same buffer every
 * iteration); MPI_Win_allocate and MPI_Win_allocate_shared allocate theirs inside the timed call.
 * The shared flavor runs on MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) (the whole job on one node).
 *
 * Options: -m A,B,C (sizes in bytes), -m MIN:MAX (powers of two), -i ITER (default 100), -x SKIP
 * (default 50: umpi's and MPICH's first 40-50 windows after MPI_Init take 2-3 times as long as the
 * later ones, bench/NOTES.md), -h. Standard MPI only: bench/compare builds it with every MPI's mpicc.
 */
#ifndef WIN_BENCH_H
#define WIN_BENCH_H

#include "coll_bench.h"

enum { WIN_CREATE, WIN_ALLOCATE, WIN_SHARED, WIN_DYNAMIC };

static const char *const win_call[] = { "MPI_Win_create", "MPI_Win_allocate", "MPI_Win_allocate_shared",
                                        "MPI_Win_create_dynamic" };

static int win_cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

/* The minimum and the median of v[0..n) (sorts v). */
static void win_min_median(double *v, int n, double *min, double *median)
{
    qsort(v, (size_t) n, sizeof(*v), win_cmp_double);
    *min = v[0];
    *median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int win_parse(int argc, char **argv, struct coll_opts *o)
{
    static const struct coll_bench b = { "", 0, 1, 0, 0 };
    long a, c;
    int has_c, ch;

    memset(o, 0, sizeof(*o));
    o->nsizes = 2;
    o->sizes[0] = 4096;
    o->sizes[1] = 16UL << 20;
    o->max_size = o->sizes[1];
    o->iters = 100;
    o->skip = 50;
    opterr = 0;
    while ((ch = getopt(argc, argv, "+m:i:x:h")) != -1) {
        switch (ch) {
        case 'm':
            if (coll_parse_sizes(optarg, o, &b) != 0)
                return -1;
            break;
        case 'i':
        case 'x':
            if (bench_parse_pair(optarg, &a, &c, &has_c) != 0 || a > INT_MAX || (ch == 'i' && a < 1))
                return -1;
            *(ch == 'i' ? &o->iters : &o->skip) = (int) a; /* ITER:LARGE: LARGE ignored */
            break;
        case 'h':
            return 1;
        default:
            return -1;
        }
    }
    return optind == argc ? 0 : -1;
}

/* One iteration's window; base is the memory of MPI_Win_create. */
static void win_make(size_t size, void *base, MPI_Comm comm, MPI_Win *win)
{
    void *mem;
    switch (WIN_FLAVOR) {
    case WIN_CREATE: MPI_Win_create(base, (MPI_Aint) size, 1, MPI_INFO_NULL, comm, win); break;
    case WIN_ALLOCATE: MPI_Win_allocate((MPI_Aint) size, 1, MPI_INFO_NULL, comm, &mem, win); break;
    case WIN_SHARED: MPI_Win_allocate_shared((MPI_Aint) size, 1, MPI_INFO_NULL, comm, &mem, win); break;
    case WIN_DYNAMIC: MPI_Win_create_dynamic(MPI_INFO_NULL, comm, win); break;
    }
}

int main(int argc, char **argv)
{
    struct coll_opts o;
    MPI_Comm comm = MPI_COMM_WORLD;
    int rank, nranks, rc;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    rc = win_parse(argc, argv, &o);
    if (rc != 0) {
        if (rank == 0)
            fprintf(stderr, "usage: %s [-m A,B,C | -m MIN:MAX] [-i ITER] [-x SKIP]   (any number of ranks)\n"
                            "  times %s then MPI_Win_free; sizes per rank in bytes (default 4096,16777216)\n",
                    argv[0], win_call[WIN_FLAVOR]);
        MPI_Finalize();
        return rc > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
    }
    if (WIN_FLAVOR == WIN_DYNAMIC) {
        o.nsizes = 1; /* no memory at creation */
        o.sizes[0] = o.max_size = 0;
    }
    if (WIN_FLAVOR == WIN_SHARED) {
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &comm);
        int nnode;
        MPI_Comm_size(comm, &nnode);
        if (nnode != nranks && rank == 0)
            fprintf(stderr, "%s: the job spans nodes: shared windows over each node's %d ranks\n", argv[0], nnode);
    }
    int n = o.iters + o.skip;
    double *mine = malloc(2 * (size_t) n * sizeof(double)), *slowest = malloc(2 * (size_t) n * sizeof(double));
    char *base = NULL;
    if (WIN_FLAVOR == WIN_CREATE && o.max_size > 0)
        base = malloc(o.max_size);
    if (mine == NULL || slowest == NULL || (WIN_FLAVOR == WIN_CREATE && o.max_size > 0 && base == NULL)) {
        fprintf(stderr, "%s: out of memory\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
    }
    if (base != NULL)
        memset(base, 1, o.max_size); /* the pages exist before timing */
    if (rank == 0) {
        printf("# " BENCH_NAME_PREFIX " %s + MPI_Win_free Time Test v" BENCH_VERSION " (%d ranks, %d iterations)\n",
               win_call[WIN_FLAVOR], nranks, o.iters);
        printf("# %-*s%*s%*s%*s%*s\n", BENCH_SIZE_WIDTH - 2, "Size", BENCH_FIELD_WIDTH, "Create min(us)",
               BENCH_FIELD_WIDTH, "Free min(us)", BENCH_FIELD_WIDTH + 2, "Create median(us)", BENCH_FIELD_WIDTH,
               "Free median(us)");
        fflush(stdout);
    }
    for (int k = 0; k < o.nsizes; k++) {
        size_t size = o.sizes[k];
        for (int i = 0; i < n; i++) {
            MPI_Win win;
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            win_make(size, base, comm, &win);
            double t1 = MPI_Wtime();
            MPI_Barrier(MPI_COMM_WORLD);
            double t2 = MPI_Wtime();
            MPI_Win_free(&win);
            double t3 = MPI_Wtime();
            mine[i] = t1 - t0;
            mine[n + i] = t3 - t2;
        }
        MPI_Reduce(mine, slowest, 2 * n, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            double cmin, cmed, fmin, fmed;
            win_min_median(slowest + o.skip, o.iters, &cmin, &cmed);
            win_min_median(slowest + n + o.skip, o.iters, &fmin, &fmed);
            printf("%-*zu%*.*f%*.*f%*.*f%*.*f\n", BENCH_SIZE_WIDTH, size, BENCH_FIELD_WIDTH, BENCH_PRECISION,
                   cmin * 1e6, BENCH_FIELD_WIDTH, BENCH_PRECISION, fmin * 1e6, BENCH_FIELD_WIDTH + 2,
                   BENCH_PRECISION, cmed * 1e6, BENCH_FIELD_WIDTH, BENCH_PRECISION, fmed * 1e6);
            fflush(stdout);
        }
    }
    if (comm != MPI_COMM_WORLD)
        MPI_Comm_free(&comm);
    free(base);
    free(mine);
    free(slowest);
    MPI_Finalize();
    return EXIT_SUCCESS;
}

#endif /* WIN_BENCH_H */
