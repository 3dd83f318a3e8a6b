/*
 * What the GPU itself costs for the small operations umpi's device paths are made of, measured by
 * every rank at the same time: the floor under a device message's latency, and how it changes
 * when several processes share one GPU (each has a CUDA context of its own; the GPU switches
 * between them). Run it with 1 rank and with as many ranks as the device benchmarks use:
 *
 *   mpirun -n 1 cuda_latency        mpirun -n 2 cuda_latency        mpirun -n 4 cuda_latency
 *
 * Each row is the median (and the 10th and 90th percentile) over the iterations, in microseconds,
 * of one operation on an idle stream of the rank's own (a blocking stream, as umpi's), waited for
 * with cuStreamSynchronize, or with cuEventQuery polled in a loop (the way umpi's progress engine
 * waits for its copies):
 *
 *   dtoh_pinned   8 bytes device -> pinned host (cuMemHostAlloc)
 *   dtoh_pageable 8 bytes device -> malloc'ed host
 *   htod_pinned   8 bytes pinned host -> device
 *   htod_pageable 8 bytes malloc'ed host -> device
 *   dtod          8 bytes device -> device
 *   event_sync    cuEventRecord on the stream + cuEventSynchronize (umpi's fence)
 *   dtoh_polled   dtoh_pinned, waited for by polling an event
 *   htod_polled   htod_pinned, waited for by polling an event
 *
 * The driver is opened like the benchmarks open it (UMPI_CUDA_LIBRARY, else libcuda.so.1); the
 * rank's device is its node-local rank modulo the devices. Options: -i ITERATIONS (default 2000),
 * -x WARMUP (default 200). Any MPI runs it (MPI is only the launcher and the barrier).
 */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef unsigned long long devptr;

static struct {
    int (*init)(unsigned);
    int (*device_count)(int *);
    int (*device_get)(int *, int);
    int (*ctx_retain)(void **, int);
    int (*ctx_set)(void *);
    int (*alloc)(devptr *, size_t);
    int (*free)(devptr);
    int (*host_alloc)(void **, size_t, unsigned);
    int (*free_host)(void *);
    int (*stream_create)(void **, unsigned);
    int (*stream_sync)(void *);
    int (*dtoh_async)(void *, devptr, size_t, void *);
    int (*htod_async)(devptr, const void *, size_t, void *);
    int (*dtod_async)(devptr, devptr, size_t, void *);
    int (*event_create)(void **, unsigned);
    int (*event_record)(void *, void *);
    int (*event_query)(void *);
    int (*event_sync)(void *);
} cu;

static void *stream, *event;
static devptr dbuf, dbuf2;
static void *pinned, *pageable;

static void die(const char *what, int rc)
{
    fprintf(stderr, "cuda_latency: %s failed (CUresult %d)\n", what, rc);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

#define CU(call)                                                                                  \
    do {                                                                                          \
        int rc_ = (call);                                                                         \
        if (rc_ != 0)                                                                             \
            die(#call, rc_);                                                                      \
    } while (0)

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e6 * (double) ts.tv_sec + 1e-3 * (double) ts.tv_nsec;
}

static void wait_sync(void)
{
    CU(cu.stream_sync(stream));
}

static void wait_polled(void)
{
    int rc;
    CU(cu.event_record(event, stream));
    while ((rc = cu.event_query(event)) == 600) /* CUDA_ERROR_NOT_READY */
        ;
    if (rc != 0)
        die("cuEventQuery", rc);
}

enum { DTOH_PINNED, DTOH_PAGEABLE, HTOD_PINNED, HTOD_PAGEABLE, DTOD, EVENT_SYNC, DTOH_POLLED, HTOD_POLLED, NOPS };
static const char *names[NOPS] = { "dtoh_pinned", "dtoh_pageable", "htod_pinned", "htod_pageable",
                                   "dtod", "event_sync", "dtoh_polled", "htod_polled" };

static void one(int op)
{
    switch (op) {
    case DTOH_PINNED: CU(cu.dtoh_async(pinned, dbuf, 8, stream)); wait_sync(); break;
    case DTOH_PAGEABLE: CU(cu.dtoh_async(pageable, dbuf, 8, stream)); wait_sync(); break;
    case HTOD_PINNED: CU(cu.htod_async(dbuf, pinned, 8, stream)); wait_sync(); break;
    case HTOD_PAGEABLE: CU(cu.htod_async(dbuf, pageable, 8, stream)); wait_sync(); break;
    case DTOD: CU(cu.dtod_async(dbuf2, dbuf, 8, stream)); wait_sync(); break;
    case EVENT_SYNC: CU(cu.event_record(event, stream)); CU(cu.event_sync(event)); break;
    case DTOH_POLLED: CU(cu.dtoh_async(pinned, dbuf, 8, stream)); wait_polled(); break;
    case HTOD_POLLED: CU(cu.htod_async(dbuf, pinned, 8, stream)); wait_polled(); break;
    }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int rank, size, iters = 2000, warmup = 200, opt;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    while ((opt = getopt(argc, argv, "i:x:")) != -1) {
        if (opt == 'i')
            iters = atoi(optarg);
        else if (opt == 'x')
            warmup = atoi(optarg);
        else {
            if (rank == 0)
                fprintf(stderr, "usage: cuda_latency [-i iterations] [-x warmup]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (iters < 10)
        iters = 10;

    const char *name = getenv("UMPI_CUDA_LIBRARY");
    void *lib = dlopen(name && *name ? name : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "cuda_latency: cannot load the CUDA driver: %s\n", dlerror());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
#define SYM(field, sym)                                                                           \
    if ((*(void **) &cu.field = dlsym(lib, sym)) == NULL) {                                       \
        fprintf(stderr, "cuda_latency: the driver has no %s\n", sym);                           \
        MPI_Abort(MPI_COMM_WORLD, 1);                                                             \
    }
    SYM(init, "cuInit");
    SYM(device_count, "cuDeviceGetCount");
    SYM(device_get, "cuDeviceGet");
    SYM(ctx_retain, "cuDevicePrimaryCtxRetain");
    SYM(ctx_set, "cuCtxSetCurrent");
    SYM(alloc, "cuMemAlloc_v2");
    SYM(free, "cuMemFree_v2");
    SYM(host_alloc, "cuMemHostAlloc");
    SYM(free_host, "cuMemFreeHost");
    SYM(stream_create, "cuStreamCreate");
    SYM(stream_sync, "cuStreamSynchronize");
    SYM(dtoh_async, "cuMemcpyDtoHAsync_v2");
    SYM(htod_async, "cuMemcpyHtoDAsync_v2");
    SYM(dtod_async, "cuMemcpyDtoDAsync_v2");
    SYM(event_create, "cuEventCreate");
    SYM(event_record, "cuEventRecord");
    SYM(event_query, "cuEventQuery");
    SYM(event_sync, "cuEventSynchronize");
#undef SYM

    MPI_Comm node;
    int local, ndev, dev;
    void *ctx;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    CU(cu.init(0));
    CU(cu.device_count(&ndev));
    CU(cu.device_get(&dev, local % ndev));
    CU(cu.ctx_retain(&ctx, dev));
    CU(cu.ctx_set(ctx));
    CU(cu.alloc(&dbuf, 4096));
    CU(cu.alloc(&dbuf2, 4096));
    CU(cu.host_alloc(&pinned, 4096, 1));
    pageable = calloc(1, 4096);
    CU(cu.stream_create(&stream, 0));      /* blocking, as umpi's */
    CU(cu.event_create(&event, 2));        /* CU_EVENT_DISABLE_TIMING */

    double *t = malloc((size_t) iters * sizeof(*t));
    if (rank == 0) {
        printf("# cuda_latency: %d rank(s), %d device(s) on rank 0's node, %d iterations\n", size, ndev, iters);
        printf("# %-14s %10s %10s %10s %10s   (us: rank 0's median, p10, p90; the largest median of any rank)\n",
               "operation", "median", "p10", "p90", "max");
    }
    for (int op = 0; op < NOPS; op++) {
        for (int i = 0; i < warmup; i++)
            one(op);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < iters; i++) {
            double t0 = now_us();
            one(op);
            t[i] = now_us() - t0;
        }
        qsort(t, (size_t) iters, sizeof(*t), cmp);
        double med = t[iters / 2], worst;
        MPI_Reduce(&med, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("%-16s %10.2f %10.2f %10.2f %10.2f\n", names[op], med, t[iters / 10], t[iters - 1 - iters / 10],
                   worst);
    }
    free(t);
    free(pageable);
    cu.free_host(pinned);
    cu.free(dbuf);
    cu.free(dbuf2);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return 0;
}
