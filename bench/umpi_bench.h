/*
 * umpi_bench.h: what the three point-to-point benchmarks share (options, buffers, output).
 *
 * Header-only on purpose: bench/compare builds each benchmark with one command per MPI
 * (`mpicc -O2 osu_bw.c -o osu_bw`), for umpi and for every other MPI it finds, so the
 * benchmarks must not depend on anything but <mpi.h> and libc (dlopen, for -d cuda: in libc
 * since glibc 2.34; add -ldl on older systems).
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
 *
 * Device buffers (`-d cuda`, OSU's option): the buffers of each side of a pair are host (H) or
 * CUDA device (D) memory, `-d cuda D H` meaning D on the first side, H on the second (default
 * D D). Device memory comes from the CUDA driver, opened with dlopen at run time (libcuda.so.1,
 * or the library UMPI_CUDA_LIBRARY names, so that umpi's fake driver works too): nothing here
 * needs CUDA to build. `-c` checks the data that arrived (copied out through the driver for
 * device buffers), outside the timing.
 */
#ifndef UMPI_BENCH_H
#define UMPI_BENCH_H

/* posix_memalign, getopt_long and dlopen under a strict -std=c11 too; include this header first. */
#if !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif

#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <dlfcn.h>

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

/* Where buffers live: host memory, or CUDA device memory (cuMemAlloc) with -d cuda. */
enum bench_mem {
    BENCH_MEM_HOST,
    BENCH_MEM_CUDA,
};

struct bench_opts {
    enum bench_kind kind;
    enum bench_mem mem;     /* this rank's buffers (from place[] and its side of the pair) */
    int accel;              /* -d cuda given */
    char place[2];          /* 'H' or 'D': the first and the second side's buffers */
    int validate;           /* -c: check the data received */
    int copy_baseline;      /* --copy-baseline (osu_bw): cuMemcpyDtoD bandwidth in the same run */
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
    o->place[0] = o->place[1] = 'H';
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
            "  -d cuda [X Y]  CUDA device buffers; X and Y (H or D, default D D) place the\n"
            "               buffers of the first and the second rank of a pair in host or device memory\n"
            "  -c           check the data received (outside the timing); a column says Pass or Fail\n"
            "%s"
            "  -h           this help\n",
            prog, o->min_size, o->max_size, BENCH_LARGE_SIZE, o->iters, o->iters_large,
            o->skip, o->skip_large,
            o->kind == BENCH_LATENCY ? ""
                                     : "  -W WINDOW    messages in flight per iteration (default 64)\n",
            o->kind == BENCH_BW ? "  --copy-baseline  with -d cuda D D: also cuMemcpyDtoD's bandwidth on the first rank's\n"
                                  "               device for the same bytes, and the MPI / copy ratio\n"
                                : "");
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

/* "cuda" is the one accelerator -d knows; the placement letters after it are H or D. */
static inline int bench_parse_place(const char *s, char *out)
{
    if ((s[0] == 'H' || s[0] == 'D') && s[1] == '\0') {
        *out = s[0];
        return 0;
    }
    return -1;
}

/* Returns 0 to run, 1 when help was asked for, -1 on a bad option (message printed by rank 0). */
static inline int bench_parse_args(int argc, char **argv, struct bench_opts *o, int rank)
{
    const char *optstr = o->kind == BENCH_LATENCY ? "+m:i:x:d:ch" : "+m:i:x:W:d:ch";
    static const struct option longopts[] = {
        {"accelerator", required_argument, NULL, 'd'},
        {"validation", no_argument, NULL, 'c'},
        {"copy-baseline", no_argument, NULL, 'B'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *why = "bad option or value";
    long a, b;
    int has_b, c, nplace = 0;

    opterr = 0;
    for (;;) {
        /* placement letters may stand between options ("-d cuda D D -c") */
        while (optind < argc && nplace < 2 && bench_parse_place(argv[optind], &o->place[nplace]) == 0) {
            nplace++;
            optind++;
        }
        if ((c = getopt_long(argc, argv, optstr, longopts, NULL)) == -1)
            break;
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
        case 'd':
            if (strcmp(optarg, "cuda") != 0) {
                why = "-d: the only accelerator known is cuda";
                goto bad;
            }
            o->accel = 1;
            break;
        case 'c':
            o->validate = 1;
            break;
        case 'B':
            if (o->kind != BENCH_BW)
                goto bad;
            o->copy_baseline = 1;
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
    if (nplace == 1) {
        why = "the buffer placement takes two letters (D D, D H, H D or H H)";
        goto bad;
    }
    if (nplace == 0 && o->accel)
        o->place[0] = o->place[1] = 'D';
    if (!o->accel && (o->place[0] == 'D' || o->place[1] == 'D')) {
        why = "device buffers (D) need -d cuda";
        goto bad;
    }
    if (o->copy_baseline && (o->place[0] != 'D' || o->place[1] != 'D')) {
        why = "--copy-baseline compares with a device-to-device copy: it needs -d cuda D D";
        goto bad;
    }
    /* A zero-byte bandwidth is meaningless: start those at 1 B. */
    if (o->kind != BENCH_LATENCY && o->min_size == 0)
        o->min_size = 1;
    return 0;

bad:
    if (rank == 0) {
        fprintf(stderr, "%s: %s\n", argv[0], why);
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

/* ---- CUDA device memory, through the driver opened at run time ------------------------------ */

/* The few driver calls the benchmarks make (the CUDA driver API's versioned symbols, the ones
 * cuda.h maps its names to); handles are opaque, device pointers 64-bit integers. */
struct bench_cuda {
    void *lib;
    int (*init)(unsigned);
    int (*device_count)(int *);
    int (*device_get)(int *, int);
    int (*ctx_retain)(void **, int);
    int (*ctx_set)(void *);
    int (*alloc)(unsigned long long *, size_t);
    int (*free)(unsigned long long);
    int (*htod)(unsigned long long, const void *, size_t);
    int (*dtoh)(void *, unsigned long long, size_t);
    int (*dtod_async)(unsigned long long, unsigned long long, size_t, void *);
    int (*memset8)(unsigned long long, unsigned char, size_t);
    int (*stream_sync)(void *);
    int (*error_string)(int, const char **);
    int device;
};
static struct bench_cuda bench_cu;

/* "cuMemAlloc: out of memory (2)" for a failed driver call. */
static inline const char *bench_cuda_err(const char *call, int rc)
{
    static char buf[256];
    const char *s = NULL;
    if (bench_cu.error_string == NULL || bench_cu.error_string(rc, &s) != 0 || s == NULL)
        s = "error";
    snprintf(buf, sizeof(buf), "%s: %s (CUresult %d)", call, s, rc);
    return buf;
}

/* Opens the driver and makes device `local % count`'s primary context current. 0, or -1 with
 * the reason in why. */
static inline int bench_cuda_open(int local, char *why, size_t len)
{
    const char *name = getenv("UMPI_CUDA_LIBRARY");
    int count = 0, dev = 0, rc;
    void *ctx = NULL;

    if (name == NULL || *name == '\0')
        name = "libcuda.so.1";
    bench_cu.lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (bench_cu.lib == NULL) {
        snprintf(why, len, "-d cuda: cannot load the CUDA driver %s (%s): no NVIDIA driver on this machine?", name,
                 dlerror());
        return -1;
    }
#define BENCH_CU_SYM(field, sym) *(void **)&bench_cu.field = dlsym(bench_cu.lib, sym)
    BENCH_CU_SYM(init, "cuInit");
    BENCH_CU_SYM(device_count, "cuDeviceGetCount");
    BENCH_CU_SYM(device_get, "cuDeviceGet");
    BENCH_CU_SYM(ctx_retain, "cuDevicePrimaryCtxRetain");
    BENCH_CU_SYM(ctx_set, "cuCtxSetCurrent");
    BENCH_CU_SYM(alloc, "cuMemAlloc_v2");
    BENCH_CU_SYM(free, "cuMemFree_v2");
    BENCH_CU_SYM(htod, "cuMemcpyHtoD_v2");
    BENCH_CU_SYM(dtoh, "cuMemcpyDtoH_v2");
    BENCH_CU_SYM(dtod_async, "cuMemcpyDtoDAsync_v2");
    BENCH_CU_SYM(memset8, "cuMemsetD8_v2");
    BENCH_CU_SYM(stream_sync, "cuStreamSynchronize");
    BENCH_CU_SYM(error_string, "cuGetErrorString");
#undef BENCH_CU_SYM
    if (!bench_cu.init || !bench_cu.device_count || !bench_cu.device_get || !bench_cu.ctx_retain || !bench_cu.ctx_set
        || !bench_cu.alloc || !bench_cu.free || !bench_cu.htod || !bench_cu.dtoh || !bench_cu.dtod_async
        || !bench_cu.memset8 || !bench_cu.stream_sync) {
        snprintf(why, len, "-d cuda: %s lacks a CUDA driver function the benchmark needs", name);
        return -1;
    }
    if ((rc = bench_cu.init(0)) != 0) {
        snprintf(why, len, "-d cuda: %s: no usable GPU", bench_cuda_err("cuInit", rc));
        return -1;
    }
    if ((rc = bench_cu.device_count(&count)) != 0 || count < 1) {
        snprintf(why, len, "-d cuda: %s", rc ? bench_cuda_err("cuDeviceGetCount", rc) : "the driver reports no GPU");
        return -1;
    }
    if ((rc = bench_cu.device_get(&dev, local % count)) != 0 || (rc = bench_cu.ctx_retain(&ctx, dev)) != 0
        || (rc = bench_cu.ctx_set(ctx)) != 0) {
        snprintf(why, len, "-d cuda: %s", bench_cuda_err("making the GPU's context current", rc));
        return -1;
    }
    bench_cu.device = local % count;
    return 0;
}

/* Stops the run when a driver call fails (no sensible result can follow). */
static inline void bench_cuda_check(const char *call, int rc)
{
    if (rc != 0) {
        fprintf(stderr, "umpi bench: %s\n", bench_cuda_err(call, rc));
        MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
    }
}

/* The one place that allocates benchmark buffers: page-aligned host memory, or device memory
 * (cuMemAlloc aligns to 256 bytes at least). Returns 0 or -1. */
static inline int bench_buf_alloc(void **buf, size_t len, enum bench_mem mem)
{
    long page = sysconf(_SC_PAGESIZE);
    void *p = NULL;
    unsigned long long d = 0;

    *buf = NULL;
    if (page <= 0)
        page = 4096;
    switch (mem) {
    case BENCH_MEM_HOST:
        /* Never 0 bytes: a zero-size sweep still hands MPI a valid pointer. */
        if (posix_memalign(&p, (size_t)page, len ? len : 1) != 0)
            return -1;
        break;
    case BENCH_MEM_CUDA:
        if (bench_cu.alloc(&d, len ? len : 1) != 0)
            return -1;
        p = (void *)(uintptr_t)d;
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
    case BENCH_MEM_CUDA:
        if (len > 0) {
            bench_cuda_check("cuMemsetD8", bench_cu.memset8((unsigned long long)(uintptr_t)buf, (unsigned char)byte, len));
            bench_cuda_check("cuStreamSynchronize", bench_cu.stream_sync(NULL));
        }
        break;
    }
}

/* The first len bytes of buf, in host memory (device buffers copied out into scratch). */
static inline const unsigned char *bench_buf_host_view(const void *buf, size_t len, enum bench_mem mem, void *scratch)
{
    if (mem == BENCH_MEM_HOST || len == 0)
        return buf;
    bench_cuda_check("cuMemcpyDtoH", bench_cu.dtoh(scratch, (unsigned long long)(uintptr_t)buf, len));
    return scratch;
}

/* -c: the number of bytes of buf that are not `byte`. */
static inline size_t bench_buf_check(const void *buf, int byte, size_t len, enum bench_mem mem)
{
    void *scratch = mem == BENCH_MEM_HOST ? NULL : malloc(len ? len : 1);
    size_t bad = 0;

    if (mem != BENCH_MEM_HOST && scratch == NULL) {
        fprintf(stderr, "umpi bench: out of memory checking %zu bytes\n", len);
        MPI_Abort(MPI_COMM_WORLD, EXIT_FAILURE);
    }
    const unsigned char *h = bench_buf_host_view(buf, len, mem, scratch);
    for (size_t i = 0; i < len; i++)
        bad += h[i] != (unsigned char)byte;
    free(scratch);
    return bad;
}

static inline void bench_buf_free(void *buf, enum bench_mem mem)
{
    switch (mem) {
    case BENCH_MEM_HOST:
        free(buf);
        break;
    case BENCH_MEM_CUDA:
        if (buf != NULL)
            bench_cu.free((unsigned long long)(uintptr_t)buf);
        break;
    }
}

/* The byte each side sends at a size under -c: differs between sizes and sides, never the
 * receive buffer's prefill (bench_pattern ^ 0xff). */
static inline int bench_pattern(size_t size, int first_side)
{
    int v = (int)((size * 37u + (first_side ? 11u : 23u)) & 0xffu);
    return v;
}

/* Where a buffer kind is named in output: "device" or "host". */
static inline const char *bench_mem_name(enum bench_mem m)
{
    return m == BENCH_MEM_CUDA ? "device" : "host";
}

static inline void bench_print_header(const struct bench_opts *o)
{
    printf("# " BENCH_NAME_PREFIX " MPI %s v" BENCH_VERSION "\n", bench_title(o->kind));
    if (o->accel) {
        printf("# Send Buffer on %s and Receive Buffer on %s", o->place[0] == 'D' ? "DEVICE (D)" : "HOST (H)",
               o->place[1] == 'D' ? "DEVICE (D)" : "HOST (H)");
        if (bench_cu.lib != NULL)
            printf(" (this rank's CUDA device: %d)", bench_cu.device);
        printf("\n");
    }
    if (o->kind == BENCH_LATENCY)
        printf("# %-*s%*s", BENCH_SIZE_WIDTH + 4, "Size", BENCH_FIELD_WIDTH - 6, "Latency (us)");
    else
        printf("# %-*s%*s", BENCH_SIZE_WIDTH, "Size", BENCH_FIELD_WIDTH - 2, "Bandwidth (MB/s)");
    if (o->copy_baseline)
        printf("%*s%*s", BENCH_FIELD_WIDTH, "DtoD copy (MB/s)", BENCH_FIELD_WIDTH, "MPI / copy");
    if (o->validate)
        printf("%*s", BENCH_FIELD_WIDTH, "Validation");
    printf("\n");
    fflush(stdout);
}

/* One row: the size and the value, then (-c) whether the data was right. */
static inline void bench_print_row(size_t size, double value)
{
    printf("%-*zu%*.*f\n", BENCH_SIZE_WIDTH, size, BENCH_FIELD_WIDTH, BENCH_PRECISION, value);
    fflush(stdout);
}

static inline void bench_print_row_ext(const struct bench_opts *o, size_t size, double value, double copy,
                                       int valid)
{
    printf("%-*zu%*.*f", BENCH_SIZE_WIDTH, size, BENCH_FIELD_WIDTH, BENCH_PRECISION, value);
    if (o->copy_baseline)
        printf("%*.*f%*.*f", BENCH_FIELD_WIDTH, BENCH_PRECISION, copy, BENCH_FIELD_WIDTH, BENCH_PRECISION,
               copy > 0 ? value / copy : 0.0);
    if (o->validate)
        printf("%*s", BENCH_FIELD_WIDTH, valid ? "Pass" : "Fail");
    printf("\n");
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

/* Opens the CUDA driver on the ranks that need device memory (need != 0), on the GPU that
 * matches the rank's position on its node. Collective over MPI_COMM_WORLD: 0 when every rank is
 * ready, -1 everywhere (the first failing rank says why) otherwise. */
static inline int bench_cuda_setup(int need, int rank, const char *prog)
{
    char why[512] = "";
    int local = 0, failed, first;
    MPI_Comm node;

    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
    failed = need && bench_cuda_open(local, why, sizeof(why)) != 0;
    MPI_Allreduce(&failed, &first, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!first)
        return 0;
    int me = failed ? rank : INT_MAX, lowest;
    MPI_Allreduce(&me, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == lowest)
        fprintf(stderr, "%s: rank %d: %s\n", prog, rank, why);
    return -1;
}

/* Common start: MPI_Init, an even number of ranks (pairs), options, the CUDA driver for -d cuda.
 * Returns 0 to run, nonzero to stop (with MPI finalized and *exit_code set). */
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
    if (rc == 0) {
        /* this rank's side of the pair decides where its buffers live */
        o->mem = o->place[bench_first(*rank) ? 0 : 1] == 'D' ? BENCH_MEM_CUDA : BENCH_MEM_HOST;
        if (o->accel && bench_cuda_setup(o->mem == BENCH_MEM_CUDA, *rank, (*argv)[0]) != 0)
            rc = -1;
    }
    if (rc != 0) {
        MPI_Finalize();
        *exit_code = rc > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
        return 1;
    }
    return 0;
}

#endif /* UMPI_BENCH_H */
