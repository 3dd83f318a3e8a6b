/*
 * umpi's GPU kernels on a real GPU (src/cuda/kern.c, kernels.cu), through umpi's own driver table
 * (no CUDA toolkit needed to build this):
 *
 *  - the embedded image loads on this GPU (or its PTX is compiled for it);
 *  - every predefined op x type, at several counts and alignments, against the host kernels:
 *    byte for byte, except that a NaN the GPU computes may carry another payload than the CPU's
 *    (float and double arithmetic only; long double is emulated bit for bit);
 *  - reductions on derived types;
 *  - pack/unpack of vector, indexed, struct and random datatypes on device memory against the
 *    host pack engine, unpacking leaving the holes alone;
 *  - prints (never judges) the bandwidth of MPI_SUM on 256 MiB of double and of packing a vector.
 *
 * Exits 77 (skipped) without a GPU, or when umpi was built without nvcc (no kernels to test).
 */
#include "core/umpi_op.h"
#include "cuda/umpi_cuda_kern.h"
#include "kern_testdata.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct umpi_cuda_driver *d = &umpi_cuda_drv;

#define CU(call) cu_ok((call), #call)
static int cu_ok(CUresult r, const char *what)
{
    char buf[160];
    CHECK(r == UMPI_CUDA_SUCCESS, "%s: %s", what, umpi_cuda_strerror(r, buf, sizeof(buf)));
    return r == UMPI_CUDA_SUCCESS;
}

static char *dmalloc(size_t n)
{
    CUdeviceptr p = 0;
    if (!CU(d->cuMemAlloc(&p, n ? n : 1)))
        exit(unit_done("gpu_kern"));
    return (char *) (uintptr_t) p;
}

static void dfree(void *p)
{
    CU(d->cuMemFree((CUdeviceptr) (uintptr_t) p));
}

static void h2d(void *dst, const void *src, size_t n)
{
    CU(d->cuMemcpyHtoDAsync((CUdeviceptr) (uintptr_t) dst, src, n, NULL));
    CU(d->cuStreamSynchronize(NULL));
}

static void d2h(void *dst, const void *src, size_t n)
{
    CU(d->cuMemcpyDtoHAsync(dst, (CUdeviceptr) (uintptr_t) src, n, NULL));
    CU(d->cuStreamSynchronize(NULL));
}

/* float and double parts of a type, where NaN payloads may differ: 4, 8, or 0 (compare bytes) */
static int nan_part(const umpi_dtype_t *dt)
{
    MPI_Datatype h = dt->handle;
    if (h == MPI_FLOAT || h == MPI_REAL || h == MPI_REAL4 || h == MPI_C_FLOAT_COMPLEX ||
        h == MPI_CXX_FLOAT_COMPLEX || h == MPI_COMPLEX || h == MPI_COMPLEX8)
        return 4;
    if (h == MPI_DOUBLE || h == MPI_DOUBLE_PRECISION || h == MPI_REAL8 || h == MPI_C_DOUBLE_COMPLEX ||
        h == MPI_CXX_DOUBLE_COMPLEX || h == MPI_DOUBLE_COMPLEX || h == MPI_COMPLEX16)
        return 8;
    return 0;
}

/* The first differing byte, or -1 (NaN == NaN for float and double parts). */
static long differs(const umpi_dtype_t *dt, const char *a, const char *b, size_t n)
{
    int part = nan_part(dt);
    for (size_t o = 0; o < n; o += part ? (size_t) part : n) {
        size_t len = part ? (size_t) part : n;
        if (memcmp(a + o, b + o, len) == 0)
            continue;
        if (part == 4) {
            float x, y;
            memcpy(&x, a + o, 4);
            memcpy(&y, b + o, 4);
            if (x != x && y != y)
                continue;
        } else if (part == 8) {
            double x, y;
            memcpy(&x, a + o, 8);
            memcpy(&y, b + o, 8);
            if (x != x && y != y)
                continue;
        }
        for (size_t i = o; i < o + len; i++)
            if (a[i] != b[i])
                return (long) i;
    }
    return -1;
}

static int reduce_case(int kind, umpi_dtype_t *dt, MPI_Count n, size_t skew, int verbose)
{
    size_t bytes = (size_t) (n * dt->extent);
    char *hin = malloc(bytes + 1), *hio = malloc(bytes + 1), *got = malloc(bytes + 1);
    char *din = dmalloc(bytes + 32), *dio = dmalloc(bytes + 32);
    rand_buf(dt, hin, n);
    rand_buf(dt, hio, n);
    h2d(din + skew, hin, bytes);
    h2d(dio + skew, hio, bytes);
    umpi_op_apply(&umpi_op_builtin[kind], hin, hio, n, dt);
    umpi_status_t st = umpi_cuda_kern_reduce(&umpi_op_builtin[kind], dt, din + skew, dio + skew, n, NULL);
    CU(d->cuStreamSynchronize(NULL));
    d2h(got, dio + skew, bytes);
    long at = st == UMPI_OK ? differs(dt, hio, got, bytes) : 0;
    if (at >= 0 && verbose)
        printf("FAIL op %d on %s x %ld (skew %zu): status %d; byte %ld of element %ld: host %02x GPU %02x\n", kind,
               dt->name, (long) n, skew, st, at % (long) dt->extent, at / (long) dt->extent,
               (unsigned char) hio[at], (unsigned char) got[at]);
    free(hin);
    free(hio);
    free(got);
    dfree(din);
    dfree(dio);
    return at >= 0;
}

/* count elements of dt at a device buffer and its host twin: pack both, unpack other bytes into
 * both (over random contents, so that a write into a hole shows). */
static int pack_case(umpi_dtype_t *dt, MPI_Count count, int verbose)
{
    MPI_Aint first;
    size_t span = kt_span(dt, count, &first), bytes = (size_t) (count * dt->size);
    char *hmem = malloc(span + 1), *dmem = dmalloc(span + 1), *hp = malloc(bytes + 1), *got = malloc(span + bytes + 1);
    char *dp = dmalloc(bytes + 1);
    char *ht = hmem - first, *dtp = dmem - first;
    for (size_t i = 0; i < span; i++)
        hmem[i] = (char) rnd64();
    h2d(dmem, hmem, span);
    int bad = 0;
    umpi_dtype_pack(dt, ht, count, hp);
    umpi_status_t st = umpi_cuda_kern_pack(dt, count, dtp, dp, NULL);
    CU(d->cuStreamSynchronize(NULL));
    d2h(got, dp, bytes);
    if (st != UMPI_OK || memcmp(got, hp, bytes) != 0) {
        bad = 1;
        if (verbose)
            printf("FAIL pack of %ld x (size %ld, extent %ld, %ld runs): status %d\n", (long) count, (long) dt->size,
                   (long) dt->extent, (long) dt->nops, st);
    }
    for (size_t i = 0; i < bytes; i++)
        hp[i] = (char) rnd64();
    h2d(dp, hp, bytes);
    umpi_dtype_unpack(dt, hp, (MPI_Count) bytes, ht);
    st = umpi_cuda_kern_unpack(dt, count, dp, dtp, NULL);
    CU(d->cuStreamSynchronize(NULL));
    d2h(got, dmem, span);
    if (st != UMPI_OK || (!kt_overlaps(dt, count) && memcmp(got, hmem, span) != 0)) {
        bad = 1;
        if (verbose)
            printf("FAIL unpack of %ld x (size %ld, extent %ld): status %d\n", (long) count, (long) dt->size,
                   (long) dt->extent, st);
    }
    free(hmem);
    free(hp);
    free(got);
    dfree(dmem);
    dfree(dp);
    return bad;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

int main(void)
{
    CUcontext ctx;
    CUdevice dev;
    umpi_config.cuda = "1";
    if (umpi_cuda_init() != UMPI_OK) {
        printf("SKIP: %s\n", umpi_status_last_msg());
        return 77;
    }
    if (!umpi_cuda_kernels_built()) {
        printf("SKIP: umpi was built without nvcc: there are no GPU kernels to test\n");
        return 77;
    }
    if (!CU(d->cuDeviceGet(&dev, 0)) || !CU(d->cuDevicePrimaryCtxRetain(&ctx, dev)) || !CU(d->cuCtxSetCurrent(ctx)))
        return unit_done("gpu_kern");
    int major = 0, minor = 0, sms = 0;
    char name[128] = "?";
    d->cuDeviceGetName(name, sizeof(name), dev);
    d->cuDeviceGetAttribute(&major, UMPI_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    d->cuDeviceGetAttribute(&minor, UMPI_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    d->cuDeviceGetAttribute(&sms, UMPI_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
    printf("  %s, compute capability %d.%d, %d multiprocessors; image: %s\n", name, major, minor, sms,
           umpi_cuda_kernels_archs());
    collect_types();

    SECTION("the image loads on this GPU")
    {
        char *a = dmalloc(64), *b = dmalloc(64);
        umpi_status_t st = umpi_cuda_kern_reduce(&umpi_op_builtin[UMPI_OP_SUM], umpi_dtype_get(MPI_INT), a, b, 16, NULL);
        CHECK(st == UMPI_OK && umpi_cuda_kernels_available(), "status %d: %s", st, umpi_status_last_msg());
        CU(d->cuStreamSynchronize(NULL));
        dfree(a);
        dfree(b);
        if (st != UMPI_OK)
            return unit_done("gpu_kern");
    }

    SECTION("every op x type = the host kernels")
    {
        static const MPI_Count counts[] = {1, 3, 17, 1000, 4099, 100003};
        int cases = 0, bad = 0;
        for (int k = 1; k < UMPI_OP_NBUILTIN; k++) {
            for (int i = 0; i < n_all_types; i++) {
                umpi_dtype_t *dt = all_types[i];
                if (umpi_cuda_kern_name(k, dt) == NULL)
                    continue;
                for (size_t c = 0; c < UMPI_ARRAY_SIZE(counts); c++) {
                    size_t skews[3] = {0, (size_t) dt->extent % 16, 1};
                    for (int s = 0; s < 3; s++) {
                        bad += reduce_case(k, dt, counts[c], skews[s], bad < 10);
                        cases++;
                    }
                }
            }
        }
        CHECK(bad == 0, "%d of %d cases differ", bad, cases);
        printf("  %d cases\n", cases);
    }

    SECTION("reductions on derived types")
    {
        umpi_dtype_t *dbl = umpi_dtype_get(MPI_DOUBLE), *di = umpi_dtype_get(MPI_DOUBLE_INT),
                     *ii = umpi_dtype_get(MPI_2INT);
        MPI_Count vc[3] = {5, 2, 3}, cc[1] = {3};
        umpi_dtype_t *types[] = {make(MPI_COMBINER_VECTOR, vc, 3, NULL, 0, &dbl, 1),
                                 make(MPI_COMBINER_CONTIGUOUS, cc, 1, NULL, 0, &di, 1),
                                 make(MPI_COMBINER_CONTIGUOUS, cc, 1, NULL, 0, &ii, 1)};
        int kinds[] = {UMPI_OP_SUM, UMPI_OP_MAXLOC, UMPI_OP_MINLOC};
        for (int t = 0; t < 3; t++) {
            MPI_Count count = 1001;
            MPI_Aint first;
            size_t span = kt_span(types[t], count, &first), bytes = (size_t) (count * types[t]->size);
            const umpi_dtype_t *leaf = umpi_op_leaf(types[t]);
            MPI_Count n = count * types[t]->size / leaf->size;
            char *hin = malloc(span), *hio = malloc(span), *got = malloc(span), *vals = malloc((size_t) (n * leaf->extent)),
                 *packed = malloc(bytes);
            char *din = dmalloc(span), *dio = dmalloc(span);
            for (int side = 0; side < 2; side++) {
                char *h = side ? hio : hin;
                for (size_t i = 0; i < span; i++)
                    h[i] = (char) rnd64();
                rand_buf(leaf, vals, n);
                umpi_dtype_pack(leaf, vals, n, packed);
                umpi_dtype_unpack(types[t], packed, (MPI_Count) bytes, h - first);
            }
            h2d(din, hin, span);
            h2d(dio, hio, span);
            umpi_op_apply(&umpi_op_builtin[kinds[t]], hin - first, hio - first, count, types[t]);
            umpi_status_t st = umpi_cuda_kern_reduce(&umpi_op_builtin[kinds[t]], types[t], din - first, dio - first, count, NULL);
            CU(d->cuStreamSynchronize(NULL));
            d2h(got, dio, span);
            CHECK(st == UMPI_OK && memcmp(got, hio, span) == 0, "type %d: status %d (%s)", t, st,
                  st ? umpi_status_last_msg() : "results differ");
            free(hin);
            free(hio);
            free(got);
            free(vals);
            free(packed);
            dfree(din);
            dfree(dio);
            umpi_dtype_release(types[t]);
        }
    }

    SECTION("pack/unpack: vector, indexed, struct, random types = the host engine")
    {
        umpi_dtype_t *dbl = umpi_dtype_get(MPI_DOUBLE), *in = umpi_dtype_get(MPI_INT), *chr = umpi_dtype_get(MPI_CHAR);
        MPI_Count vc[3] = {1000, 1, 2}, ix[7] = {3, 1, 2, 3, 0, 5, 9}, ib[6] = {4, 3, 0, 10, 20, 7};
        MPI_Count sc[7] = {3, 1, 2, 5, 0, 8, 20};
        umpi_dtype_t *st_types[3] = {dbl, in, chr};
        umpi_dtype_t *fixed[] = {
            make(MPI_COMBINER_VECTOR, vc, 3, NULL, 0, &dbl, 1),
            make(MPI_COMBINER_INDEXED, ix, 7, NULL, 0, &dbl, 1),
            make(MPI_COMBINER_INDEXED_BLOCK, ib, 6, NULL, 0, &in, 1),
            make(MPI_COMBINER_STRUCT, sc, 7, NULL, 0, st_types, 3),
        };
        int bad = 0, cases = 0;
        for (size_t t = 0; t < UMPI_ARRAY_SIZE(fixed); t++) {
            for (MPI_Count count = 1; count <= 10000; count *= 10, cases++)
                bad += pack_case(fixed[t], count, bad < 5);
            umpi_dtype_release(fixed[t]);
        }
        for (int i = 0; i < 300; i++) {
            umpi_dtype_t *dt = random_type(3);
            if (dt->size > 0 && dt->size * 50 < 4000000 && !dt->builtin)
                for (MPI_Count count = 1; count <= 50; count *= 7, cases++)
                    bad += pack_case(dt, count, bad < 5);
            umpi_dtype_release(dt);
        }
        CHECK(bad == 0, "%d of %d cases differ", bad, cases);
        printf("  %d cases\n", cases);
    }

    /* Bandwidths, for the record (not judged). */
    {
        size_t n = 32u << 20;   /* doubles: 256 MiB */
        char *a = dmalloc(n * 8), *b = dmalloc(n * 8), *p = dmalloc(n * 4);
        umpi_dtype_t *dbl = umpi_dtype_get(MPI_DOUBLE);
        umpi_cuda_kern_reduce(&umpi_op_builtin[UMPI_OP_SUM], dbl, a, b, (MPI_Count) n, NULL);
        CU(d->cuStreamSynchronize(NULL));
        double t0 = now();
        for (int i = 0; i < 10; i++)
            umpi_cuda_kern_reduce(&umpi_op_builtin[UMPI_OP_SUM], dbl, a, b, (MPI_Count) n, NULL);
        CU(d->cuStreamSynchronize(NULL));
        double t = (now() - t0) / 10;
        printf("  MPI_SUM on %zu MiB of double: %.3f ms, %.0f GB/s (3 x the bytes moved)\n", n * 8 >> 20, t * 1e3,
               3.0 * (double) (n * 8) / t / 1e9);
        MPI_Count vc[3] = {(MPI_Count) n / 2, 1, 2};
        umpi_dtype_t *v = make(MPI_COMBINER_VECTOR, vc, 3, NULL, 0, &dbl, 1);
        umpi_cuda_kern_pack(v, 1, a, p, NULL);
        CU(d->cuStreamSynchronize(NULL));
        t0 = now();
        for (int i = 0; i < 10; i++)
            umpi_cuda_kern_pack(v, 1, a, p, NULL);
        CU(d->cuStreamSynchronize(NULL));
        t = (now() - t0) / 10;
        printf("  packing every other double of %zu MiB: %.3f ms, %.0f GB/s of packed data\n", n * 8 >> 20, t * 1e3,
               (double) (n * 4) / t / 1e9);
        umpi_dtype_release(v);
        dfree(a);
        dfree(b);
        dfree(p);
    }
    umpi_cuda_kern_finalize();
    umpi_cuda_finalize();
    return unit_done("gpu_kern");
}
