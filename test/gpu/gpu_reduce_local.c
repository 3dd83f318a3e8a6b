/*
 * MPI_Reduce_local on GPU buffers, as a program sees it: device memory from the CUDA driver (opened
 * here with dlopen, so that no CUDA toolkit is needed to build this), reduced by MPI_Reduce_local
 * with both buffers on the GPU (umpi's kernel), one on the host (through host copies), with
 * predefined and user-defined ops, on predefined and derived datatypes; every result checked on
 * the host. Prints (does not judge) the time of a 1 MiB and a 64 MiB MPI_SUM on the GPU.
 */
#include "../mpi/mtest.h"

#include <complex.h>
#include <dlfcn.h>
#include <stdint.h>
#include <time.h>

typedef unsigned long long devptr;
static int (*cuInit)(unsigned);
static int (*cuDeviceGet)(int *, int);
static int (*cuDevicePrimaryCtxRetain)(void **, int);
static int (*cuCtxSetCurrent)(void *);
static int (*cuMemAlloc)(devptr *, size_t);
static int (*cuMemFree)(devptr);
static int (*cuMemcpyHtoD)(devptr, const void *, size_t);
static int (*cuMemcpyDtoH)(void *, devptr, size_t);

static int load_cuda(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (lib == NULL)
        return 0;
    *(void **) &cuInit = dlsym(lib, "cuInit");
    *(void **) &cuDeviceGet = dlsym(lib, "cuDeviceGet");
    *(void **) &cuDevicePrimaryCtxRetain = dlsym(lib, "cuDevicePrimaryCtxRetain");
    *(void **) &cuCtxSetCurrent = dlsym(lib, "cuCtxSetCurrent");
    *(void **) &cuMemAlloc = dlsym(lib, "cuMemAlloc_v2");
    *(void **) &cuMemFree = dlsym(lib, "cuMemFree_v2");
    *(void **) &cuMemcpyHtoD = dlsym(lib, "cuMemcpyHtoD_v2");
    *(void **) &cuMemcpyDtoH = dlsym(lib, "cuMemcpyDtoH_v2");
    int dev;
    void *ctx;
    return cuInit && cuMemcpyDtoH && cuInit(0) == 0 && cuDeviceGet(&dev, 0) == 0 &&
           cuDevicePrimaryCtxRetain(&ctx, dev) == 0 && cuCtxSetCurrent(ctx) == 0;
}

static void *gpu(size_t n)
{
    devptr p = 0;
    MT_CHECK(cuMemAlloc(&p, n) == 0, "cuMemAlloc(%zu)", n);
    return (void *) (uintptr_t) p;
}

static void put(void *g, const void *h, size_t n)
{
    MT_CHECK(cuMemcpyHtoD((devptr) (uintptr_t) g, h, n) == 0, "cuMemcpyHtoD");
}

static void get(void *h, const void *g, size_t n)
{
    MT_CHECK(cuMemcpyDtoH(h, (devptr) (uintptr_t) g, n) == 0, "cuMemcpyDtoH");
}

static void user_max(void *in, void *io, int *n, MPI_Datatype *t)
{
    double *a = in, *b = io;
    for (int i = 0; i < *n; i++)
        b[i] = a[i] > b[i] ? a[i] : b[i];
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

enum { N = 100000 };

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MT_CHECK(load_cuda(), "the CUDA driver does not start here (the gpu suite runs only where it does)");
    if (mt_errs) {
        mt_finish();
        return 1;
    }
    double *h_in = malloc(N * 8), *h_io = malloc(N * 8), *res = malloc(N * 8);
    double *g_in = gpu(N * 8), *g_io = gpu(N * 8);
    for (int i = 0; i < N; i++)
        h_in[i] = i, h_io[i] = 3.0 - i;

    /* MPI_SUM and MPI_MAX, device + device, host + device, device + host */
    struct {
        const char *what;
        int in_gpu, io_gpu;
    } where[] = {{"device, device", 1, 1}, {"host, device", 0, 1}, {"device, host", 1, 0}};
    MPI_Op ops[2] = {MPI_SUM, MPI_MAX};
    MPI_Op user;
    MPI_Op_create(user_max, 1, &user);
    for (int w = 0; w < 3; w++) {
        for (int o = 0; o < 3; o++) {
            MPI_Op op = o < 2 ? ops[o] : user;
            double *in = where[w].in_gpu ? g_in : h_in, *io = where[w].io_gpu ? g_io : res;
            if (where[w].in_gpu)
                put(g_in, h_in, N * 8);
            if (where[w].io_gpu)
                put(g_io, h_io, N * 8);
            else
                memcpy(res, h_io, N * 8);
            MT_CHECK(MPI_Reduce_local(in, io, N, MPI_DOUBLE, op) == MPI_SUCCESS, "%s, op %d", where[w].what, o);
            if (where[w].io_gpu)
                get(res, g_io, N * 8);
            int bad = 0;
            for (int i = 0; i < N; i++) {
                double want = o == 0 ? 3.0 : (h_in[i] > h_io[i] ? h_in[i] : h_io[i]);
                bad += res[i] != want;
            }
            MT_CHECK(bad == 0, "%s, op %d: %d wrong elements", where[w].what, o, bad);
        }
    }

    /* MPI_MAXLOC on MPI_DOUBLE_INT, device + device */
    struct { double v; int i; } pin[1000], pio[1000], pres[1000];
    for (int i = 0; i < 1000; i++) {
        pin[i].v = i % 7, pin[i].i = i;
        pio[i].v = i % 5, pio[i].i = 2000 - i;
    }
    void *gp_in = gpu(sizeof(pin)), *gp_io = gpu(sizeof(pio));
    put(gp_in, pin, sizeof(pin));
    put(gp_io, pio, sizeof(pio));
    MT_CHECK(MPI_Reduce_local(gp_in, gp_io, 1000, MPI_DOUBLE_INT, MPI_MAXLOC) == MPI_SUCCESS, "MAXLOC");
    get(pres, gp_io, sizeof(pres));
    for (int i = 0; i < 1000; i++) {
        double v = pin[i].v > pio[i].v ? pin[i].v : pio[i].v;
        int idx = pin[i].v > pio[i].v ? pin[i].i : pin[i].v < pio[i].v ? pio[i].i : (pin[i].i < pio[i].i ? pin[i].i : pio[i].i);
        MT_CHECK(pres[i].v == v && pres[i].i == idx, "MAXLOC[%d]: (%g, %d), want (%g, %d)", i, pres[i].v, pres[i].i, v, idx);
    }

    /* a vector datatype (every other double) on the GPU: the holes stay */
    MPI_Datatype vec;
    MPI_Type_vector(N / 2, 1, 2, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    put(g_in, h_in, N * 8);
    put(g_io, h_io, N * 8);
    MT_CHECK(MPI_Reduce_local(g_in, g_io, 1, vec, MPI_SUM) == MPI_SUCCESS, "vector");
    get(res, g_io, N * 8);
    for (int i = 0; i < N; i++)
        MT_CHECK(res[i] == (i % 2 == 0 ? 3.0 : h_io[i]), "vector[%d] = %g", i, res[i]);
    MPI_Type_free(&vec);

    /* complex product, device + device */
    double _Complex cin[512], cio[512], cres[512];
    for (int i = 0; i < 512; i++)
        cin[i] = i + 1.0 * I * (i % 3), cio[i] = 0.5 - 2.0 * I;
    void *gc_in = gpu(sizeof(cin)), *gc_io = gpu(sizeof(cio));
    put(gc_in, cin, sizeof(cin));
    put(gc_io, cio, sizeof(cio));
    MT_CHECK(MPI_Reduce_local(gc_in, gc_io, 512, MPI_C_DOUBLE_COMPLEX, MPI_PROD) == MPI_SUCCESS, "PROD complex");
    get(cres, gc_io, sizeof(cres));
    for (int i = 0; i < 512; i++) {
        double _Complex want = cin[i] * cio[i];
        MT_CHECK(cres[i] == want, "complex[%d]", i);
    }

    /* the time of MPI_SUM on the GPU, for the record */
    size_t big = 8u << 20;
    double *ga = gpu(big * 8), *gb = gpu(big * 8);
    for (size_t bytes = 1u << 20; bytes <= big * 8; bytes *= 64) {
        MPI_Reduce_local(ga, gb, (int) (bytes / 8), MPI_DOUBLE, MPI_SUM);
        double t0 = now();
        for (int r = 0; r < 20; r++)
            MPI_Reduce_local(ga, gb, (int) (bytes / 8), MPI_DOUBLE, MPI_SUM);
        if (mt_rank == 0)
            printf("MPI_Reduce_local MPI_SUM of %zu MiB on the GPU: %.1f us\n", bytes >> 20, (now() - t0) / 20 * 1e6);
    }
    cuMemFree((devptr) (uintptr_t) ga);
    cuMemFree((devptr) (uintptr_t) gb);
    MPI_Op_free(&user);
    cuMemFree((devptr) (uintptr_t) g_in);
    cuMemFree((devptr) (uintptr_t) g_io);
    free(h_in);
    free(h_io);
    free(res);
    return mt_finish();
}
