/*
 * coll_bench.h: what the collective benchmarks share (options, size sweep, timing loop, output).
 *
 * Header-only, standard MPI only, like umpi_bench.h (whose buffer helpers it reuses): bench/compare
 * builds each benchmark with every MPI's own `mpicc`.
 *
 * Methodology (the OSU collective one, so numbers compare with OSU's):
 *   - any number of ranks; sizes are powers of two from MIN to MAX (default 1 B .. 1 MiB; a
 *     reduction starts at one element), or an explicit list (-m 8,1024,65536);
 *   - every size starts with MPI_Barrier, then `skip` untimed iterations, then `iters` timed ones;
 *     each iteration times the collective alone on every rank and ends with MPI_Barrier (so one
 *     iteration's late ranks do not overlap the next one's early ones);
 *   - sizes over 8 KiB run fewer iterations (OSU's 1000 / 100 timed, 200 / 10 warm-up);
 *   - the value printed is the average over the ranks of each rank's mean time per call, in us.
 */
#ifndef COLL_BENCH_H
#define COLL_BENCH_H

#include "umpi_bench.h"

#define COLL_BENCH_MAX_SIZES 64

struct coll_opts {
    int accel;           /* -d cuda: every buffer in CUDA device memory (benchmarks that take it) */
    int validate;        /* -c: check the results */
    int staged;          /* --staged-baseline: also time the device data staged through host memory */
    size_t sizes[COLL_BENCH_MAX_SIZES]; /* the sweep, ascending */
    int nsizes;
    size_t max_size;
    int iters, iters_large;
    int skip, skip_large;
};

/* What one benchmark runs: once per call of op() with `size` bytes, on buffers of max_size. */
struct coll_bench {
    const char *title;   /* "Allreduce Latency Test" */
    size_t min_default;  /* smallest size (one element for reductions) */
    size_t unit;         /* sizes are rounded down to a multiple of this (element size) */
    int no_sizes;        /* barrier: one row, size 0 */
    int device_ok;       /* takes -d cuda, -c and --staged-baseline (osu_allreduce) */
};

static inline void coll_usage(const char *prog, const struct coll_opts *o, const struct coll_bench *b)
{
    fprintf(stderr,
            "usage: %s [options]   (any number of ranks)\n"
            "  -m MIN:MAX   message sizes in bytes, powers of two from MIN to MAX (-m MAX: only the\n"
            "               maximum; default %zu:%zu); -m A,B,C runs exactly the sizes listed\n"
            "  -i ITER[:LARGE]  timed iterations per size; LARGE for sizes > %d B (default %d:%d)\n"
            "  -x SKIP[:LARGE]  warm-up iterations per size, not timed (default %d:%d)\n"
            "%s"
            "  -h           this help\n",
            prog, b->min_default, o->max_size, BENCH_LARGE_SIZE, o->iters, o->iters_large, o->skip,
            o->skip_large,
            b->device_ok ? "  -d cuda      every buffer in CUDA device memory\n"
                           "  -c           check the results (outside the timing); a column says Pass or Fail\n"
                           "  --staged-baseline  with -d cuda: also time copying the data to host memory, the\n"
                           "               same collective on host buffers, and copying the result back\n"
                         : "");
}

static inline int coll_parse_sizes(const char *s, struct coll_opts *o, const struct coll_bench *b)
{
    long a, c;
    int has_c;

    o->nsizes = 0;
    if (strchr(s, ',') != NULL) {
        char *end;
        const char *p = s;
        while (*p != '\0') {
            long v = strtol(p, &end, 10);
            if (end == p || v < 0 || v > INT_MAX || o->nsizes == COLL_BENCH_MAX_SIZES
                || (o->nsizes > 0 && (size_t)v <= o->sizes[o->nsizes - 1]))
                return -1;
            o->sizes[o->nsizes++] = (size_t)v;
            p = *end == ',' ? end + 1 : end;
            if (*end != ',' && *end != '\0')
                return -1;
        }
        o->max_size = o->sizes[o->nsizes - 1];
        return o->nsizes > 0 ? 0 : -1;
    }
    if (bench_parse_pair(s, &a, &c, &has_c) != 0)
        return -1;
    size_t min = has_c ? (size_t)a : b->min_default, max = has_c ? (size_t)c : (size_t)a;
    if (max < min || max > (size_t)INT_MAX)
        return -1;
    for (size_t sz = bench_first_size(min); sz <= max && o->nsizes < COLL_BENCH_MAX_SIZES;
         sz = bench_next_size(sz))
        o->sizes[o->nsizes++] = sz;
    o->max_size = max;
    return 0;
}

/* MPI_Init, options. Returns 0 to run, nonzero to stop (MPI finalized, *exit_code set). */
static inline int coll_init(int *argc, char ***argv, struct coll_opts *o, const struct coll_bench *b,
                            int *rank, int *exit_code)
{
    static const struct option longopts[] = {
        {"accelerator", required_argument, NULL, 'd'},
        {"validation", no_argument, NULL, 'c'},
        {"staged-baseline", no_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *why = "bad option or value";
    long a, c;
    int has_c, ch, rc = 0;

    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    memset(o, 0, sizeof(*o));
    o->max_size = 1UL << 20;
    o->iters = 1000;
    o->iters_large = 100;
    o->skip = 200;
    o->skip_large = 10;
    {
        char def[64];
        snprintf(def, sizeof(def), "%zu:%zu", b->min_default, o->max_size);
        coll_parse_sizes(def, o, b);
    }

    opterr = 0;
    while (rc == 0 && (ch = getopt_long(*argc, *argv, "+m:i:x:d:ch", longopts, NULL))
                          != -1) {
        switch (ch) {
        case 'd':
        case 'c':
        case 'S':
            if (!b->device_ok) {
                why = "-d, -c and --staged-baseline: of the collective benchmarks only osu_allreduce takes them";
                rc = -1;
                break;
            }
            if (ch == 'c') {
                o->validate = 1;
                break;
            }
            if (ch == 'S') {
                o->staged = 1;
                break;
            }
            if (strcmp(optarg, "cuda") != 0) {
                why = "-d: the only accelerator known is cuda";
                rc = -1;
            }
            o->accel = 1;
            break;
        case 'm':
            if (coll_parse_sizes(optarg, o, b) != 0)
                rc = -1;
            break;
        case 'i':
            if (bench_parse_pair(optarg, &a, &c, &has_c) != 0 || a < 1 || a > INT_MAX
                || (has_c && (c < 1 || c > INT_MAX)))
                rc = -1;
            o->iters = (int)a;
            o->iters_large = has_c ? (int)c : (int)a;
            break;
        case 'x':
            if (bench_parse_pair(optarg, &a, &c, &has_c) != 0 || a > INT_MAX || (has_c && c > INT_MAX))
                rc = -1;
            o->skip = (int)a;
            o->skip_large = has_c ? (int)c : (int)a;
            break;
        case 'h':
            rc = 1;
            break;
        default:
            rc = -1;
        }
    }
    if (rc == 0 && optind != *argc)
        rc = -1;
    if (rc == 0 && o->staged && !o->accel) {
        why = "--staged-baseline stages device buffers: it needs -d cuda";
        rc = -1;
    }
    if (rc == 0 && o->accel && bench_cuda_setup(1, *rank, (*argv)[0]) != 0)
        rc = -2;
    if (rc != 0) {
        if (*rank == 0 && rc != -2) {
            if (rc < 0)
                fprintf(stderr, "%s: %s\n", (*argv)[0], why);
            coll_usage((*argv)[0], o, b);
        }
        MPI_Finalize();
        *exit_code = rc > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
        return 1;
    }
    if (b->no_sizes) {
        o->nsizes = 1;
        o->sizes[0] = 0;
        o->max_size = 0;
    }
    return 0;
}

static inline int coll_iters(const struct coll_opts *o, size_t size)
{
    return size > BENCH_LARGE_SIZE ? o->iters_large : o->iters;
}

static inline int coll_skip(const struct coll_opts *o, size_t size)
{
    return size > BENCH_LARGE_SIZE ? o->skip_large : o->skip;
}

static inline void coll_print_header(const struct coll_bench *b)
{
    printf("# " BENCH_NAME_PREFIX " MPI %s v" BENCH_VERSION "\n", b->title);
    printf("# %-*s%*s\n", BENCH_SIZE_WIDTH - 2, "Size", BENCH_FIELD_WIDTH, "Avg Latency(us)");
    fflush(stdout);
}

/* Mean over the ranks of a per-rank value (us), valid at rank 0. Allreduce rather than Reduce:
 * the one reduction every MPI (and umpi in the making) has. */
static inline double coll_avg_ranks(double v)
{
    double sum = 0.0;
    int n;

    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Allreduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return sum / n;
}

/* One call of the collective being measured, on `size` bytes. */
typedef void (*coll_call_fn)(void *ctx, size_t size);

/* The OSU loop: returns this rank's mean time per call in us (the indirect call costs a few ns,
 * far below the resolution that matters here). */
static inline double coll_time(const struct coll_opts *o, size_t size, coll_call_fn call, void *ctx)
{
    int iters = coll_iters(o, size), skip = coll_skip(o, size);
    double sum = 0.0;

    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < iters + skip; i++) {
        double t0 = MPI_Wtime();
        call(ctx, size);
        double t1 = MPI_Wtime();
        if (i >= skip)
            sum += t1 - t0;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    return sum * 1e6 / iters;
}

/* The whole benchmark for the blocking collectives: header, the sweep, one row per size. */
static inline void coll_run_sweep(const struct coll_opts *o, const struct coll_bench *b, int rank,
                                  coll_call_fn call, void *ctx)
{
    if (rank == 0)
        coll_print_header(b);
    for (int k = 0; k < o->nsizes; k++) {
        size_t size = o->sizes[k] / b->unit * b->unit;
        if (size == 0 && !b->no_sizes && o->sizes[k] != 0)
            continue; /* smaller than one element */
        double avg = coll_avg_ranks(coll_time(o, size, call, ctx));
        if (rank == 0)
            bench_print_row(size, avg);
    }
}

#endif /* COLL_BENCH_H */
