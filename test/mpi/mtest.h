/*
 * What every MPI test program shares: counting failed checks and the final verdict.
 *
 * A program checks everything it can, reports each failure on stderr with its rank and line, and
 * mt_finish() sums the failures on rank 0, which prints " No Errors" when there are none (the
 * harness, test/runtests, looks for that line). Only point-to-point and environment functions are
 * used here, so that the tests run on an MPI that has no collectives yet. Standard C API only: the
 * programs are validated against MPICH and Open MPI too.
 */
#ifndef MTEST_H
#define MTEST_H

#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* Tags at or above this are the helpers' own; tests use smaller ones. */
#define MT_TAG_SYNC 32000

static int mt_rank, mt_size, mt_errs;

/* Counts a failed check and says where and why; the program goes on so one run shows every problem. */
#define MT_CHECK(cond, ...)                                                                  \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            mt_errs++;                                                                       \
            fprintf(stderr, "[%d] %s:%d: check `%s` failed: ", mt_rank, __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                                    \
            fputc('\n', stderr);                                                             \
        }                                                                                    \
    } while (0)

/* Fills mt_rank/mt_size after MPI_Init or MPI_Init_thread. */
static inline void mt_setup(void)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mt_size);
}

static inline void mt_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    mt_setup();
}

/* Seconds on a monotonic clock: bounds on waits in tests (never timing verdicts). */
static inline double mt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline void mt_sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* A barrier made of point-to-point messages: everyone reports to rank 0, which releases them. */
static inline void mt_barrier(void)
{
    if (mt_rank == 0) {
        for (int i = 1; i < mt_size; i++)
            MPI_Recv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, MT_TAG_SYNC, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 1; i < mt_size; i++)
            MPI_Send(NULL, 0, MPI_BYTE, i, MT_TAG_SYNC + 1, MPI_COMM_WORLD);
    } else {
        MPI_Send(NULL, 0, MPI_BYTE, 0, MT_TAG_SYNC, MPI_COMM_WORLD);
        MPI_Recv(NULL, 0, MPI_BYTE, 0, MT_TAG_SYNC + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

/* ---- buffers of the memory kind under test (MPITEST_MEMTYPE) ---------------------------------------
 *
 * MPITEST_MEMTYPE says where the buffers that tests hand to MPI live: host (the default), device
 * (GPU memory from cuMemAlloc), or mix (even ranks device, odd ranks host: messages between ranks
 * of different parity cross between host and device). Device memory comes from the CUDA driver the
 * MPI library loads too (UMPI_CUDA_LIBRARY, else libcuda.so.1), opened here with dlopen, so the
 * programs need no CUDA toolkit and still build and run (host memory) on any MPI.
 *
 * A test keeps its data in host memory and lets MPI see a buffer of the kind under test:
 *     mt_buf_t b; mt_buf_init(&b, bytes);   b.h: host copy the test reads and writes
 *     mt_push(&b); MPI_Send(b.d, ...);       b.d: what MPI gets (== b.h for host memory)
 *     MPI_Recv(b.d, ...); mt_pull(&b);       then check b.h
 * The CPU never touches b.d itself when it is device memory (with test/fakecuda's driver that
 * would crash, as on a GPU it would read garbage).
 */
static struct {
    int kind;           /* -1 until decided; 0 host, 1 device */
    void *lib;
    int (*alloc)(unsigned long long *, size_t);
    int (*dfree)(unsigned long long);
    int (*htod)(unsigned long long, const void *, size_t);
    int (*dtoh)(void *, unsigned long long, size_t);
    void (*fake_counts)(void *);
} mt_mem = { -1 };

static inline void mt_mem_die(const char *what)
{
    fprintf(stderr, "[%d] MPITEST_MEMTYPE: %s\n", mt_rank, what);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static inline void mt_mem_driver(void);

/* 1 when this rank's buffers are device memory. */
static inline int mt_mem_device(void)
{
    if (mt_mem.kind >= 0)
        return mt_mem.kind;
    const char *t = getenv("MPITEST_MEMTYPE");
    mt_mem.kind = 0;
    if (t == NULL || *t == '\0' || strcmp(t, "host") == 0)
        return 0;
    if (strcmp(t, "device") == 0)
        mt_mem.kind = 1;
    else if (strcmp(t, "mix") == 0)
        mt_mem.kind = mt_rank % 2 == 0;
    else
        mt_mem_die("not host, device or mix");
    mt_mem_driver();
    return mt_mem.kind;
}

/* Whether MPITEST_MEMTYPE asks for device memory on some rank (device or mix): tests that need
 * device memory of their own (host/device combinations) run only then. */
static inline int mt_mem_any_device(void)
{
    const char *t = getenv("MPITEST_MEMTYPE");
    return t != NULL && (strcmp(t, "device") == 0 || strcmp(t, "mix") == 0);
}

/* Loads the driver and makes device 0's primary context current (once). */
static inline void mt_mem_driver(void)
{
    if (mt_mem.lib != NULL)
        return;
    const char *lib = getenv("UMPI_CUDA_LIBRARY");
    mt_mem.lib = dlopen(lib && *lib ? lib : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (mt_mem.lib == NULL)
        mt_mem_die(dlerror());
    int (*init)(unsigned) = (int (*)(unsigned)) dlsym(mt_mem.lib, "cuInit");
    int (*get)(int *, int) = (int (*)(int *, int)) dlsym(mt_mem.lib, "cuDeviceGet");
    int (*retain)(void **, int) = (int (*)(void **, int)) dlsym(mt_mem.lib, "cuDevicePrimaryCtxRetain");
    int (*setcur)(void *) = (int (*)(void *)) dlsym(mt_mem.lib, "cuCtxSetCurrent");
    *(void **) &mt_mem.alloc = dlsym(mt_mem.lib, "cuMemAlloc_v2");
    *(void **) &mt_mem.dfree = dlsym(mt_mem.lib, "cuMemFree_v2");
    *(void **) &mt_mem.htod = dlsym(mt_mem.lib, "cuMemcpyHtoD_v2");
    *(void **) &mt_mem.dtoh = dlsym(mt_mem.lib, "cuMemcpyDtoH_v2");
    *(void **) &mt_mem.fake_counts = dlsym(mt_mem.lib, "fakecuda_counts");
    int dev = 0;
    void *ctx = NULL;
    if (!init || !get || !retain || !setcur || !mt_mem.alloc || !mt_mem.dfree || !mt_mem.htod || !mt_mem.dtoh ||
        init(0) != 0 || get(&dev, 0) != 0 || retain(&ctx, dev) != 0 || setcur(ctx) != 0)
        mt_mem_die("the CUDA driver is incomplete or has no device");
}

/* A buffer of this rank's memory kind (at least 1 byte), and its release. */
static inline void *mt_alloc(size_t n)
{
    if (!mt_mem_device())
        return calloc(n ? n : 1, 1);
    unsigned long long d = 0;
    if (mt_mem.alloc(&d, n ? n : 1) != 0)
        mt_mem_die("cuMemAlloc failed");
    return (void *) (uintptr_t) d;
}

static inline void mt_free(void *p)
{
    if (!mt_mem_device())
        free(p);
    else if (p != NULL)
        mt_mem.dfree((unsigned long long) (uintptr_t) p);
}

/* n bytes from host memory into an mt_alloc'ed buffer, and back out. */
static inline void mt_copy_in(void *dst, const void *src, size_t n)
{
    if (!mt_mem_device())
        memcpy(dst, src, n);
    else if (n > 0 && mt_mem.htod((unsigned long long) (uintptr_t) dst, src, n) != 0)
        mt_mem_die("cuMemcpyHtoD failed");
}

static inline void mt_copy_out(void *dst, const void *src, size_t n)
{
    if (!mt_mem_device())
        memcpy(dst, src, n);
    else if (n > 0 && mt_mem.dtoh(dst, (unsigned long long) (uintptr_t) src, n) != 0)
        mt_mem_die("cuMemcpyDtoH failed");
}

typedef struct {
    void *h;  /* the test's host copy */
    void *d;  /* what MPI sees: h itself for host memory */
    size_t n;
} mt_buf_t;

/* kind: 1 device memory, 0 host memory, -1 this rank's kind (MPITEST_MEMTYPE). */
static inline void mt_buf_init_kind(mt_buf_t *b, size_t n, int kind)
{
    b->n = n;
    b->h = calloc(n ? n : 1, 1);
    b->d = b->h;
    if (kind < 0 ? mt_mem_device() : kind) {
        unsigned long long d = 0;
        mt_mem_driver();
        if (mt_mem.alloc(&d, n ? n : 1) != 0)
            mt_mem_die("cuMemAlloc failed");
        b->d = (void *) (uintptr_t) d;
        if (n > 0 && mt_mem.htod(d, b->h, n) != 0)
            mt_mem_die("cuMemcpyHtoD failed");
    }
}

static inline void mt_buf_init(mt_buf_t *b, size_t n)
{
    mt_buf_init_kind(b, n, -1);
}

static inline void mt_push(mt_buf_t *b)
{
    if (b->d != b->h && b->n > 0 && mt_mem.htod((unsigned long long) (uintptr_t) b->d, b->h, b->n) != 0)
        mt_mem_die("cuMemcpyHtoD failed");
}

static inline void mt_pull(mt_buf_t *b)
{
    if (b->d != b->h && b->n > 0 && mt_mem.dtoh(b->h, (unsigned long long) (uintptr_t) b->d, b->n) != 0)
        mt_mem_die("cuMemcpyDtoH failed");
}

static inline void mt_buf_free(mt_buf_t *b)
{
    if (b->d != b->h)
        mt_mem.dfree((unsigned long long) (uintptr_t) b->d);
    free(b->h);
    b->h = b->d = NULL;
}

/* Mirrored buffers, for converting tests with many buffers: mt_malloc gives the test a host
 * buffer and keeps a mirror of the kind under test; mt_d(p) is what MPI gets for p (also for a
 * pointer inside it; p itself with host memory or for MPI_IN_PLACE / NULL); mt_put(p) / mt_get(p)
 * copy the whole buffer p was allocated as to / from its mirror. */
typedef struct mt_mirror {
    struct mt_mirror *next;
    char *h, *d;
    size_t n;
} mt_mirror_t;
static mt_mirror_t *mt_mirrors;

static inline void *mt_malloc(size_t n)
{
    mt_mirror_t *m = malloc(sizeof(*m));
    m->n = n;
    m->h = calloc(n ? n : 1, 1);
    m->d = mt_mem_device() ? mt_alloc(n) : m->h;
    m->next = mt_mirrors;
    mt_mirrors = m;
    return m->h;
}

static inline mt_mirror_t *mt_mirror_of(const void *p)
{
    for (mt_mirror_t *m = mt_mirrors; m != NULL; m = m->next)
        if ((const char *) p >= m->h && (const char *) p <= m->h + m->n)
            return m;
    return NULL;
}

static inline void *mt_d(const void *p)
{
    mt_mirror_t *m = p == NULL || p == MPI_IN_PLACE ? NULL : mt_mirror_of(p);
    return m == NULL ? (void *) p : m->d + ((const char *) p - m->h);
}

static inline void mt_put(const void *p)
{
    mt_mirror_t *m = mt_mirror_of(p);
    if (m != NULL && m->d != m->h)
        mt_copy_in(m->d, m->h, m->n);
}

static inline void mt_get(const void *p)
{
    mt_mirror_t *m = mt_mirror_of(p);
    if (m != NULL && m->d != m->h)
        mt_copy_out(m->h, m->d, m->n);
}

/* Every mirrored buffer to / from its mirror (around a call that uses all of them). */
static inline void mt_put_all(void)
{
    for (mt_mirror_t *m = mt_mirrors; m != NULL; m = m->next)
        if (m->d != m->h)
            mt_copy_in(m->d, m->h, m->n);
}

static inline void mt_get_all(void)
{
    for (mt_mirror_t *m = mt_mirrors; m != NULL; m = m->next)
        if (m->d != m->h)
            mt_copy_out(m->h, m->d, m->n);
}

static inline void mt_mfree(void *p)
{
    for (mt_mirror_t **pp = &mt_mirrors; *pp != NULL; pp = &(*pp)->next) {
        mt_mirror_t *m = *pp;
        if (m->h == p) {
            *pp = m->next;
            if (m->d != m->h)
                mt_free(m->d);
            free(m->h);
            free(m);
            return;
        }
    }
    free(p);
}

/* After MPI_Finalize with test/fakecuda's driver: what the MPI library left behind (its IPC
 * mappings, streams, events, pinned buffers). Returns the number of problems, printed. */
static inline int mt_mem_leaks(void)
{
    struct { long device, pinned, registered, managed, imports, streams, events, copies, opens, closes; } c;
    if (mt_mem.lib == NULL || mt_mem.fake_counts == NULL)
        return 0;
    mt_mem.fake_counts(&c);
    int bad = (c.imports != 0) + (c.streams != 0) + (c.events != 0) + (c.pinned != 0);
    if (bad)
        fprintf(stderr, "[%d] after MPI_Finalize the fake CUDA driver still has %ld IPC mappings, %ld streams, "
                "%ld events, %ld pinned buffers\n", mt_rank, c.imports, c.streams, c.events, c.pinned);
    return bad;
}

/* Sums the failures on rank 0, prints the verdict there and finalizes. Returns the exit status. */
static inline int mt_finish(void)
{
    int total = mt_errs;
    if (mt_rank == 0) {
        for (int i = 1; i < mt_size; i++) {
            int e = 0;
            MPI_Recv(&e, 1, MPI_INT, i, MT_TAG_SYNC + 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            total += e;
        }
        if (total == 0)
            printf(" No Errors\n");
        else
            printf(" Found %d errors\n", total);
        fflush(stdout);
    } else {
        MPI_Send(&mt_errs, 1, MPI_INT, 0, MT_TAG_SYNC + 2, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    if (mt_mem_leaks() != 0)
        return 1;
    return total == 0 ? 0 : 1;
}

/* The MPI error class of code, and whether MPI_Error_string(code) contains each of the given words
 * (case-insensitive; a word "a|b" accepts either). */
static inline int mt_class(int code)
{
    int cls = -1;
    MPI_Error_class(code, &cls);
    return cls;
}

static inline int mt_msg_has(int code, const char *words)
{
    char msg[MPI_MAX_ERROR_STRING], buf[256];
    int len = 0;
    MPI_Error_string(code, msg, &len);
    snprintf(buf, sizeof(buf), "%s", words);
    for (char *save = NULL, *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        int found = 0;
        for (char *s2 = NULL, *alt = strtok_r(w, "|", &s2); alt; alt = strtok_r(NULL, "|", &s2))
            for (const char *p = msg; *p && !found; p++)
                found = strncasecmp(p, alt, strlen(alt)) == 0;
        if (!found)
            return 0;
    }
    return 1;
}

static inline const char *mt_errstr(int code)
{
    static char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(code, msg, &len);
    return msg;
}

/* The status every completion of a null or inactive request returns (MPI 4.1, 3.7.3). */
static inline int mt_is_empty_status(const MPI_Status *st)
{
    int count = -1, cancelled = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    MPI_Test_cancelled(st, &cancelled);
    return st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && count == 0 && !cancelled;
}

#endif
