/*
 * umpi_bench.h: what the three point-to-point benchmarks share (options, buffers, output).
 *
 * Header-only on purpose: bench/compare builds each benchmark with one command per MPI
 * (`mpicc -O2 osu_bw.c -o osu_bw`), for umpi and for every other MPI it finds, so the
 * benchmarks must not depend on anything but <mpi.h> and libc.
 *
 * Methodology (the OSU micro-benchmark one, so numbers compare with OSU's):
 *   - two ranks, or any even number run as pairs (OSU's multi-pair way: rank i of the first
 *     half with rank i + n/2), all pairs at once; rank 0 reports what its pair measured;
 *   - sizes are powers of two from MIN to MAX (default 1 B .. 4 MiB);
 *   - every size starts with a barrier (bench_sync), then `skip` untimed warm-up iterations;
 *   - messages larger than BENCH_LARGE_SIZE run fewer iterations and warm-ups;
 *   - buffers are page-aligned and written before timing, so first-touch page faults and
 *     registration of fresh pages stay out of the measurement;
 *   - latency = half the round-trip time; bandwidth in MB/s with MB = 1e6 bytes.
 */
#ifndef UMPI_BENCH_H
#define UMPI_BENCH_H

/* posix_memalign and getopt under a strict -std=c11 too; include this header first. */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <getopt.h>
#include <limits.h>

#define BENCH_NAME_PREFIX "umpi bench"
#define BENCH_VERSION     "1.0"

/* Above this size a message counts as large: fewer iterations (OSU's threshold). */
#define BENCH_LARGE_SIZE  8192
#define BENCH_MAX_DEFAULT (4UL << 20)

/* Columns as OSU prints them: size left-aligned in 10, value right-aligned in 18. */
#define BENCH_SIZE_WIDTH  10
#define BENCH_FIELD_WIDTH 18
#define BENCH_PRECISION   2

enum bench_kind {
    BENCH_LATENCY,
    BENCH_BW,
    BENCH_BIBW,
};

/* Where buffers live. Only host memory for now; a device kind (`-d cuda`) comes later and
 * only bench_buf_alloc/bench_buf_fill/bench_buf_free need to learn it. */
enum bench_mem {
    BENCH_MEM_HOST,
};

struct bench_opts {
    enum bench_kind kind;
    enum bench_mem mem;
    size_t min_size;
    size_t max_size;
    int iters, iters_large; /* timed iterations, small / large messages */
    int skip, skip_large;   /* untimed warm-up iterations */
    int window;             /* messages in flight per iteration (bw, bibw) */
};

/* OSU's defaults for each kind: enough iterations for stable small-message numbers, few
 * enough that a full run of the three benchmarks takes seconds on one node. */
static inline void bench_opts_default(struct bench_opts *o, enum bench_kind kind)
{
    memset(o, 0, sizeof(*o));
    o->kind = kind;
    o->mem = BENCH_MEM_HOST;
    o->min_size = 1;
    o->max_size = BENCH_MAX_DEFAULT;
    o->window = 64;
    if (kind == BENCH_LATENCY) {
        o->iters = 10000;
        o->iters_large = 1000;
        o->skip = 100;
        o->skip_large = 10;
    } else {
        o->iters = 100;
        o->iters_large = 20;
        o->skip = 10;
        o->skip_large = 2;
    }
}

static const char *bench_title(enum bench_kind kind)
{
    switch (kind) {
    case BENCH_LATENCY: return "Latency Test";
    case BENCH_BW:      return "Bandwidth Test";
    case BENCH_BIBW:    return "Bi-Directional Bandwidth Test";
    }
    return "?";
}

static inline void bench_usage(const char *prog, const struct bench_opts *o)
{
    fprintf(stderr,
            "usage: %s [options]   (run with 2 ranks, or pairs: any even number)\n"
            "  -m MIN:MAX   message sizes in bytes, powers of two from MIN to MAX\n"
            "               (-m MAX alone sets only the maximum; default %zu:%zu)\n"
            "  -i ITER[:LARGE]  timed iterations per size; LARGE for sizes > %d B\n"
            "               (default %d:%d; -i ITER alone uses ITER for every size)\n"
            "  -x SKIP[:LARGE]  warm-up iterations per size, not timed (default %d:%d)\n"
            "%s"
            "  -h           this help\n",
            prog, o->min_size, o->max_size, BENCH_LARGE_SIZE, o->iters, o->iters_large,
            o->skip, o->skip_large,
            o->kind == BENCH_LATENCY ? ""
                                     : "  -W WINDOW    messages in flight per iteration (default 64)\n");
}

/* Parse "A" or "A:B" as non-negative integers; *has_b tells whether B was given. */
static inline int bench_parse_pair(const char *s, long *a, long *b, int *has_b)
{
    char *end;

    *has_b = 0;
    *a = strtol(s, &end, 10);
    if (end == s || *a < 0)
        return -1;
    if (*end == ':') {
        const char *t = end + 1;
        *b = strtol(t, &end, 10);
        if (end == t || *b < 0)
            return -1;
        *has_b = 1;
    }
    return *end == '\0' ? 0 : -1;
}

/* Returns 0 to run, 1 when help was asked for, -1 on a bad option (message printed by rank 0). */
static inline int bench_parse_args(int argc, char **argv, struct bench_opts *o, int rank)
{
    const char *optstr = o->kind == BENCH_LATENCY ? "m:i:x:h" : "m:i:x:W:h";
    long a, b;
    int has_b, c;

    opterr = 0;
    while ((c = getopt(argc, argv, optstr)) != -1) {
        switch (c) {
        case 'm':
            if (bench_parse_pair(optarg, &a, &b, &has_b) != 0)
                goto bad;
            if (has_b) {
                o->min_size = (size_t)a;
                o->max_size = (size_t)b;
            } else {
                o->max_size = (size_t)a;
            }
            if (o->max_size < o->min_size || o->max_size > (size_t)INT_MAX)
                goto bad;
            break;
        case 'i':
            if (bench_parse_pair(optarg, &a, &b, &has_b) != 0 || a < 1 || a > INT_MAX
                || (has_b && (b < 1 || b > INT_MAX)))
                goto bad;
            o->iters = (int)a;
            o->iters_large = has_b ? (int)b : (int)a;
            break;
        case 'x':
            if (bench_parse_pair(optarg, &a, &b, &has_b) != 0 || a > INT_MAX || (has_b && b > INT_MAX))
                goto bad;
            o->skip = (int)a;
            o->skip_large = has_b ? (int)b : (int)a;
            break;
        case 'W':
            a = strtol(optarg, NULL, 10);
            if (a < 1 || a > 1 << 20)
                goto bad;
            o->window = (int)a;
            break;
        case 'h':
            if (rank == 0)
                bench_usage(argv[0], o);
            return 1;
        default:
            goto bad;
        }
    }
    if (optind != argc)
        goto bad;
    /* A zero-byte bandwidth is meaningless: start those at 1 B. */
    if (o->kind != BENCH_LATENCY && o->min_size == 0)
        o->min_size = 1;
    return 0;

bad:
    if (rank == 0) {
        fprintf(stderr, "%s: bad option or value\n", argv[0]);
        bench_usage(argv[0], o);
    }
    return -1;
}

/* The sweep: an optional 0, then powers of two (0 -> 1 -> 2 -> 4 ...). */
static inline size_t bench_next_size(size_t size)
{
    return size == 0 ? 1 : size * 2;
}

/* The smallest size of the sweep that is at least min. */
static inline size_t bench_first_size(size_t min)
{
    size_t s = 1;

    if (min == 0)
        return 0;
    while (s < min)
        s *= 2;
    return s;
}

static inline int bench_iters(const struct bench_opts *o, size_t size)
{
    return size > BENCH_LARGE_SIZE ? o->iters_large : o->iters;
}

static inline int bench_skip(const struct bench_opts *o, size_t size)
{
    return size > BENCH_LARGE_SIZE ? o->skip_large : o->skip;
}

/* The one place that allocates benchmark buffers: page-aligned host memory for now.
 * Returns 0 or -1. */
static inline int bench_buf_alloc(void **buf, size_t len, enum bench_mem mem)
{
    long page = sysconf(_SC_PAGESIZE);
    void *p = NULL;

    *buf = NULL;
    if (page <= 0)
        page = 4096;
    switch (mem) {
    case BENCH_MEM_HOST:
        /* Never 0 bytes: a zero-size sweep still hands MPI a valid pointer. */
        if (posix_memalign(&p, (size_t)page, len ? len : 1) != 0)
            return -1;
        break;
    default:
        return -1;
    }
    *buf = p;
    return 0;
}

/* Write every byte before timing so the pages exist and sit in this rank's memory. */
static inline void bench_buf_fill(void *buf, int byte, size_t len, enum bench_mem mem)
{
    switch (mem) {
    case BENCH_MEM_HOST:
        memset(buf, byte, len);
        break;
    }
}

static inline void bench_buf_free(void *buf, enum bench_mem mem)
{
    switch (mem) {
    case BENCH_MEM_HOST:
        free(buf);
        break;
    }
}

static inline void bench_print_header(const struct bench_opts *o)
{
    printf("# " BENCH_NAME_PREFIX " MPI %s v" BENCH_VERSION "\n", bench_title(o->kind));
    if (o->kind == BENCH_LATENCY)
        printf("# %-*s%*s\n", BENCH_SIZE_WIDTH + 4, "Size", BENCH_FIELD_WIDTH - 6, "Latency (us)");
    else
        printf("# %-*s%*s\n", BENCH_SIZE_WIDTH, "Size", BENCH_FIELD_WIDTH - 2, "Bandwidth (MB/s)");
    fflush(stdout);
}

static inline void bench_print_row(size_t size, double value)
{
    printf("%-*zu%*.*f\n", BENCH_SIZE_WIDTH, size, BENCH_FIELD_WIDTH, BENCH_PRECISION, value);
    fflush(stdout);
}

/* A barrier between the two ranks built from point-to-point alone (OSU calls MPI_Barrier):
 * the benchmarks then run on an MPI, or a umpi in the making, that has only point-to-point.
 * Each rank leaves only after the other has entered. */
#define BENCH_TAG_SYNC 999

/* Pairs: rank i of the first half of MPI_COMM_WORLD with rank i + n/2 (set by bench_init). */
static int bench_nranks = 2;

static inline int bench_peer(int rank)
{
    return rank < bench_nranks / 2 ? rank + bench_nranks / 2 : rank - bench_nranks / 2;
}

/* The side of a pair that plays rank 0's part (sends first). */
static inline int bench_first(int rank)
{
    return rank < bench_nranks / 2;
}

static inline void bench_sync(int peer)
{
    char out = 0, in;

    MPI_Sendrecv(&out, 0, MPI_CHAR, peer, BENCH_TAG_SYNC, &in, 0, MPI_CHAR, peer, BENCH_TAG_SYNC,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* Common start: MPI_Init, an even number of ranks (pairs), options. Returns 0 to run, nonzero to stop
 * (with MPI finalized and *exit_code set). */
static inline int bench_init(int *argc, char ***argv, struct bench_opts *o, int *rank, int *exit_code)
{
    int size, rc;

    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rc = bench_parse_args(*argc, *argv, o, *rank);
    if (rc == 0 && (size < 2 || size % 2 != 0)) {
        if (*rank == 0)
            fprintf(stderr, "%s: this benchmark needs an even number of ranks (got %d)\n", (*argv)[0], size);
        rc = -1;
    }
    bench_nranks = size;
    if (rc != 0) {
        MPI_Finalize();
        *exit_code = rc > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
        return 1;
    }
    return 0;
}

#endif /* UMPI_BENCH_H */
