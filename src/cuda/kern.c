/*
 * The GPU kernels from the host: the image loaded once per CUDA context, the kernel table
 * generated from the op enumeration, launch geometry, one reduction launch (umpi_cuda_kern.h).
 * What uses them: packing (kern_pack.c), reductions of any datatype (kern_reduce.c),
 * MPI_Reduce_local on device buffers (kern_local.c).
 *
 *   umpi_cuda_kern_reduce(op, dt, in, inout, count, stream)
 *     -> kernel id of (op, leaf type of dt)          umpi__ktable, from UMPI_OP_TYPES
 *     -> module of the current context               loaded at the first launch there
 *     -> cuLaunchKernel(umpi_red_<OP>_<ktype>, {in, inout, n, pair stride, index offset})
 */
#include "config.h"
#include "core/umpi_err.h"
#include "core/umpi_knobs.h"
#include "core/umpi_op_enum.h"
#include "cuda/kern_args.h"
#include "cuda/umpi_cuda_kern.h"

#include <float.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct umpi_cuda_kern_stats umpi_cuda_kern_stats;

/* ---- the kernels, from the one enumeration ---------------------------------------------------------- */

enum umpi__kid {
#define UMPI__KID_S(OP, ktype, unused) UMPI__KID_##OP##_##ktype,
#define UMPI__KID_SROW(ktype, ctype, CLASS) UMPI_OPS_##CLASS(UMPI__KID_S, ktype, ~)
#define UMPI__KID_P(ktype, V, I) UMPI__KID_MINLOC_##ktype, UMPI__KID_MAXLOC_##ktype,
#define UMPI__KID_VEC(W) UMPI__KID_VEC##W,
    UMPI_OP_CTYPES(UMPI__KID_SROW)
    UMPI_OP_PAIRS(UMPI__KID_P)
    UMPI_KPACK_VEC_WIDTHS(UMPI__KID_VEC)
    UMPI__KID_GEN,
    UMPI__NKERNELS
};

static const char *const umpi__knames[UMPI__NKERNELS] = {
#define UMPI__KNAME_S(OP, ktype, unused) [UMPI__KID_##OP##_##ktype] = UMPI_KRED_NAME(OP, ktype),
#define UMPI__KNAME_SROW(ktype, ctype, CLASS) UMPI_OPS_##CLASS(UMPI__KNAME_S, ktype, ~)
#define UMPI__KNAME_P(ktype, V, I)                                                                \
    [UMPI__KID_MINLOC_##ktype] = UMPI_KRED_NAME(MINLOC, ktype),                                   \
    [UMPI__KID_MAXLOC_##ktype] = UMPI_KRED_NAME(MAXLOC, ktype),
#define UMPI__KNAME_VEC(W) [UMPI__KID_VEC##W] = UMPI_KPACK_VEC_NAME(W),
    UMPI_OP_CTYPES(UMPI__KNAME_SROW)
    UMPI_OP_PAIRS(UMPI__KNAME_P)
    UMPI_KPACK_VEC_WIDTHS(UMPI__KNAME_VEC)
    [UMPI__KID_GEN] = UMPI_KPACK_GEN_NAME,
};

/* Kernels on long double: the device emulates the x87's 80-bit format, so only where long double
 * is that format (x86-64); elsewhere those types go through the host. */
#define UMPI__IS_LDBL(ctype) _Generic((ctype) 0, long double: 1, long double _Complex: 1, default: 0)
static int umpi__kid_x87(int kid)
{
#define UMPI__X87_S(OP, ktype, ctype) || (kid == UMPI__KID_##OP##_##ktype && UMPI__IS_LDBL(ctype))
#define UMPI__X87_SROW(ktype, ctype, CLASS) UMPI_OPS_##CLASS(UMPI__X87_S, ktype, ctype)
#define UMPI__X87_P(ktype, V, I)                                                                  \
    || ((kid == UMPI__KID_MINLOC_##ktype || kid == UMPI__KID_MAXLOC_##ktype) && UMPI__IS_LDBL(V))
    return 0 UMPI_OP_CTYPES(UMPI__X87_SROW) UMPI_OP_PAIRS(UMPI__X87_P);
}

/* Pairs: the C struct's layout (natural) and the pack engine's (packed: no padding). */
#define UMPI__PAIR_STRUCT(ktype, V, I) struct umpi__pair_##ktype { V v; I i; };
UMPI_OP_PAIRS(UMPI__PAIR_STRUCT)
static const struct {
    unsigned short stride, ioff, pstride, pioff;
} umpi__pair_geom[UMPI__NKERNELS] = {
#define UMPI__PAIR_GEOM1(kid, ktype, V, I)                                                        \
    [kid] = {sizeof(struct umpi__pair_##ktype), offsetof(struct umpi__pair_##ktype, i), sizeof(V) + sizeof(I), \
             sizeof(V)},
#define UMPI__PAIR_GEOM(ktype, V, I)                                                              \
    UMPI__PAIR_GEOM1(UMPI__KID_MINLOC_##ktype, ktype, V, I) UMPI__PAIR_GEOM1(UMPI__KID_MAXLOC_##ktype, ktype, V, I)
    UMPI_OP_PAIRS(UMPI__PAIR_GEOM)
};

/* (op, predefined datatype) -> kernel id + 1 (0: none). Slots as op_kernels.c: builtin handles by
 * their low byte, MPICH's pair types (direct handles 0..4) after them. */
#define UMPI__NSLOTS (256 + 5)
#define UMPI__SLOT(h)                                                                             \
    (UMPI_HANDLE_KIND(h) == UMPI_KIND_BUILTIN ? ((uint32_t) (h) & 0xff) : 256 + UMPI_HANDLE_INDEX(h))
#define UMPI__KENTRY(OP, h, ktype) [UMPI_OP_##OP][UMPI__SLOT(h)] = UMPI__KID_##OP##_##ktype + 1,
#define UMPI__KROW(h, CLASS, ktype) UMPI_OPS_##CLASS(UMPI__KENTRY, h, ktype)
static const unsigned short umpi__ktable[UMPI_OP_NBUILTIN][UMPI__NSLOTS] = {
    UMPI_OP_TYPES(UMPI__KROW)
};

int umpi_cuda_kern_kid(int kind, const umpi_dtype_t *dt)
{
    if (kind < 1 || kind >= UMPI_OP_NBUILTIN || !dt->builtin)
        return UMPI_CUDA_KID_NONE;
    unsigned s = UMPI__SLOT(dt->handle);
    int kid = s < UMPI__NSLOTS ? (int) umpi__ktable[kind][s] - 1 : UMPI_CUDA_KID_NONE;
    if (kid >= 0 && LDBL_MANT_DIG != 64 && umpi__kid_x87(kid))
        return UMPI_CUDA_KID_NONE;
    return kid;
}

const char *umpi_cuda_kern_name(int op_kind, const umpi_dtype_t *dt)
{
    int kid = umpi_cuda_kern_kid(op_kind, dt);
    return kid >= 0 ? umpi__knames[kid] : NULL;
}

int umpi_cuda_kern_count(void)
{
    return UMPI__NKERNELS;
}

const char *umpi_cuda_kern_name_at(int i)
{
    return i >= 0 && i < UMPI__NKERNELS ? umpi__knames[i] : NULL;
}

int umpi_cuda_kid_pack_vec(unsigned width)
{
    switch (width) {
    case 1: return UMPI__KID_VEC1;
    case 2: return UMPI__KID_VEC2;
    case 4: return UMPI__KID_VEC4;
    case 8: return UMPI__KID_VEC8;
    default: return UMPI__KID_VEC16;
    }
}

int umpi_cuda_kid_pack_gen(void)
{
    return UMPI__KID_GEN;
}

/* ---- the image and its modules ------------------------------------------------------------------------ */

/*
 * One module per CUDA context (a module belongs to the context it was loaded in). Contexts are
 * told apart by cuCtxGetId where the driver has it (CUDA 12: ids are never reused, so a context
 * destroyed and another created at the same address is not mistaken for it), else by address.
 * A context whose load failed is remembered, so that the failure is reported once.
 */
#define UMPI__MAX_CTX 16
#define UMPI__MAX_DEV 64

struct umpi_cuda_kmod {
    unsigned long long key;
    CUcontext ctx;      /* the context it was loaded in (made current again to unload it) */
    CUmodule mod;       /* NULL: the image does not load in this context */
    int sms;            /* multiprocessors of the context's device */
    CUfunction fn[UMPI__NKERNELS];
};

static struct umpi_cuda_kmod umpi__kmods[UMPI__MAX_CTX];
static int umpi__nkmods;
static unsigned char umpi__retained[UMPI__MAX_DEV];   /* primary contexts umpi retained */
static const void *umpi__image_override;
static int umpi__image_overridden;
static pthread_mutex_t umpi__klock = PTHREAD_MUTEX_INITIALIZER;

static void umpi__lock(void)
{
    if (umpi_unlikely(umpi_global.is_multi))
        pthread_mutex_lock(&umpi__klock);
}

static void umpi__unlock(void)
{
    if (umpi_unlikely(umpi_global.is_multi))
        pthread_mutex_unlock(&umpi__klock);
}

static const void *umpi__image(void)
{
    size_t size;
    return umpi__image_overridden ? umpi__image_override : umpi_cuda_kern_image(&size);
}

void umpi_cuda_kern_set_image(const void *image)
{
    umpi__image_override = image;
    umpi__image_overridden = 1;
}

void umpi_cuda_kern_use_builtin_image(void)
{
    umpi__image_overridden = 0;
}

int umpi_cuda_kernels_built(void)
{
    size_t size;
    return umpi_cuda_kern_image(&size) != NULL;
}

const char *umpi_cuda_kernels_archs(void)
{
#ifdef UMPI_CUDA_ARCHS
    if (umpi_cuda_kernels_built())
        return UMPI_CUDA_ARCHS;
#endif
    return "";
}

umpi_status_t umpi_cuda_kern_fail(const char *what, CUresult r)
{
    char buf[160];
    umpi_status_msg("%s failed: %s", what, umpi_cuda_strerror(r, buf, sizeof(buf)));
    return UMPI_ERR_OTHER;
}

umpi_status_t umpi_cuda_kern_unavailable(const char *why)
{
    umpi_status_msg("%s", why);
    return UMPI_ERR_NOT_FOUND;
}

/* The module of the current context, NULL when the image cannot be loaded there. */
static struct umpi_cuda_kmod *umpi__kmod_find(CUcontext ctx, unsigned long long *key_out)
{
    unsigned long long key = (unsigned long long) (uintptr_t) ctx, id;
    if (umpi_cuda_drv.cuCtxGetId != NULL && umpi_cuda_drv.cuCtxGetId(ctx, &id) == UMPI_CUDA_SUCCESS)
        key = id;
    *key_out = key;
    for (int i = 0; i < umpi__nkmods; i++)
        if (umpi__kmods[i].key == key)
            return &umpi__kmods[i];
    return NULL;
}

static struct umpi_cuda_kmod *umpi__kmod_load(CUcontext ctx, unsigned long long key)
{
    char buf[160];
    if (umpi__nkmods == UMPI__MAX_CTX) {
        umpi_log("warning", "cuda: GPU kernels are loaded in %d CUDA contexts already, not in another one",
                 UMPI__MAX_CTX);
        return NULL;
    }
    struct umpi_cuda_kmod *km = &umpi__kmods[umpi__nkmods++];
    memset(km, 0, sizeof(*km));
    km->key = key;
    km->ctx = ctx;
    CUresult r = umpi_cuda_drv.cuModuleLoadData(&km->mod, umpi__image());
    if (r != UMPI_CUDA_SUCCESS) {
        int major = 0, minor = 0;
        CUdevice dev;
        if (umpi_cuda_drv.cuCtxGetDevice(&dev) == UMPI_CUDA_SUCCESS) {
            umpi_cuda_drv.cuDeviceGetAttribute(&major, UMPI_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
            umpi_cuda_drv.cuDeviceGetAttribute(&minor, UMPI_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
        }
        km->mod = NULL;
        umpi_cuda_kern_stats.module_failures++;
        umpi_log("warning", "cuda: umpi's GPU kernels (built for %s) do not load on this GPU (compute capability "
                 "%d.%d): %s; device buffers are reduced and packed through host memory",
                 umpi_cuda_kernels_archs(), major, minor, umpi_cuda_strerror(r, buf, sizeof(buf)));
        return km;
    }
    umpi_cuda_kern_stats.modules_loaded++;
    CUdevice dev;
    if (umpi_cuda_drv.cuCtxGetDevice(&dev) != UMPI_CUDA_SUCCESS ||
        umpi_cuda_drv.cuDeviceGetAttribute(&km->sms, UMPI_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) !=
            UMPI_CUDA_SUCCESS)
        km->sms = 0;
    umpi_debug(1, "cuda: GPU kernels loaded (%s), %d multiprocessors", umpi_cuda_kernels_archs(), km->sms);
    return km;
}

/* Makes the primary context of `device` current (retained once, released at finalize). */
static umpi_status_t umpi__primary_current(int device, CUcontext *ctx)
{
    CUdevice dev;
    CUresult r;
    if (device < 0)
        device = 0;
    if ((r = umpi_cuda_drv.cuDeviceGet(&dev, device)) != UMPI_CUDA_SUCCESS)
        return umpi_cuda_kern_fail("cuDeviceGet", r);
    if ((r = umpi_cuda_drv.cuDevicePrimaryCtxRetain(ctx, dev)) != UMPI_CUDA_SUCCESS)
        return umpi_cuda_kern_fail("cuDevicePrimaryCtxRetain", r);
    if (device < UMPI__MAX_DEV && !umpi__retained[device])
        umpi__retained[device] = 1;
    else
        umpi_cuda_drv.cuDevicePrimaryCtxRelease(dev);   /* one reference is enough */
    if ((r = umpi_cuda_drv.cuCtxSetCurrent(*ctx)) != UMPI_CUDA_SUCCESS)
        return umpi_cuda_kern_fail("cuCtxSetCurrent", r);
    return UMPI_OK;
}

umpi_status_t umpi_cuda_kmod_current(int device, struct umpi_cuda_kmod **out, unsigned long long *ctx_key)
{
    CUcontext ctx = NULL;
    CUresult r = umpi_cuda_drv.cuCtxGetCurrent(&ctx);
    if (r != UMPI_CUDA_SUCCESS)
        return umpi_cuda_kern_fail("cuCtxGetCurrent", r);
    umpi__lock();
    umpi_status_t st = UMPI_OK;
    if (ctx == NULL)   /* no context yet on this thread: the one the CUDA runtime would use */
        st = umpi__primary_current(device, &ctx);
    struct umpi_cuda_kmod *km = NULL;
    if (st == UMPI_OK) {
        km = umpi__kmod_find(ctx, ctx_key);
        if (km == NULL)
            km = umpi__kmod_load(ctx, *ctx_key);
    }
    umpi__unlock();
    if (st != UMPI_OK)
        return st;
    if (km == NULL || km->mod == NULL)
        return umpi_cuda_kern_unavailable("the GPU kernels could not be loaded in this CUDA context");
    *out = km;
    return UMPI_OK;
}

int umpi_cuda_kernels_available(void)
{
    if (!umpi_cuda_active || !umpi_config.cuda_kernels || umpi__image() == NULL)
        return 0;
    CUcontext ctx = NULL;
    if (umpi_cuda_drv.cuCtxGetCurrent(&ctx) != UMPI_CUDA_SUCCESS)
        return 0;
    if (ctx == NULL)
        return 1;   /* loaded at the first launch */
    unsigned long long key;
    umpi__lock();
    struct umpi_cuda_kmod *km = umpi__kmod_find(ctx, &key);
    int ok = km == NULL || km->mod != NULL;
    umpi__unlock();
    return ok;
}

const char *umpi_cuda_kern_why_unavailable(void)
{
    return !umpi_cuda_active            ? "CUDA is not in use"
           : !umpi_config.cuda_kernels  ? "UMPI_CUDA_KERNELS=0"
           : umpi__image() == NULL      ? "umpi was built without GPU kernels (no nvcc)"
                                        : "the GPU kernels do not load on this GPU";
}

/* Makes the primary context of `device` current when the current one is on another device (or
 * there is none); *saved: what to restore. */
umpi_status_t umpi_cuda_kern_enter_device(int device, CUcontext *saved, int *switched)
{
    CUcontext cur = NULL, ctx;
    CUdevice dev;
    *switched = 0;
    if (umpi_cuda_drv.cuCtxGetCurrent(&cur) == UMPI_CUDA_SUCCESS && cur != NULL &&
        umpi_cuda_drv.cuCtxGetDevice(&dev) == UMPI_CUDA_SUCCESS && dev == device)
        return UMPI_OK;
    *saved = cur;
    umpi__lock();
    umpi_status_t st = umpi__primary_current(device, &ctx);
    umpi__unlock();
    *switched = st == UMPI_OK;
    return st;
}

/* ---- launching ------------------------------------------------------------------------------------------ */

/* Blocks per multiprocessor: 8 x 256 threads is a full multiprocessor on every architecture we
 * build for, enough to keep memory busy; the grid-stride loops cover the rest. */
#define UMPI__BLOCKS_PER_SM 8
#define UMPI__DEFAULT_SMS 80

void umpi_cuda_kern_geometry(uint64_t items, int sms, unsigned *grid, unsigned *block)
{
    uint64_t cap = (uint64_t) (sms > 0 ? sms : UMPI__DEFAULT_SMS) * UMPI__BLOCKS_PER_SM;
    uint64_t need = (items + UMPI_KERN_THREADS - 1) / UMPI_KERN_THREADS;
    *block = UMPI_KERN_THREADS;
    *grid = (unsigned) (need < cap ? need : cap);
}

umpi_status_t umpi_cuda_kern_launch(struct umpi_cuda_kmod *km, int kid, void *args, uint64_t items, CUstream stream)
{
    unsigned grid, block;
    CUresult r;
    umpi_cuda_kern_geometry(items, km->sms, &grid, &block);
    if (grid == 0)
        return UMPI_OK;
    CUfunction f = __atomic_load_n(&km->fn[kid], __ATOMIC_ACQUIRE);
    if (f == NULL) {
        r = umpi_cuda_drv.cuModuleGetFunction(&f, km->mod, umpi__knames[kid]);
        if (r != UMPI_CUDA_SUCCESS) {
            char what[96];
            snprintf(what, sizeof(what), "cuModuleGetFunction(%s)", umpi__knames[kid]);
            return umpi_cuda_kern_fail(what, r);
        }
        __atomic_store_n(&km->fn[kid], f, __ATOMIC_RELEASE);
    }
    void *params[1] = {args};
    r = umpi_cuda_drv.cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, stream, params, NULL);
    if (r != UMPI_CUDA_SUCCESS) {
        char what[96];
        snprintf(what, sizeof(what), "cuLaunchKernel(%s)", umpi__knames[kid]);
        return umpi_cuda_kern_fail(what, r);
    }
    __atomic_fetch_add(&umpi_cuda_kern_stats.launches, 1, __ATOMIC_RELAXED);
    return UMPI_OK;
}

/* ---- reductions: one launch ------------------------------------------------------------------------- */

/* n elements of leaf at in/inout: natural pairs when `packed` is 0, the pack engine's layout else. */
umpi_status_t umpi_cuda_kern_reduce_run(struct umpi_cuda_kmod *km, int kid, CUdeviceptr in, CUdeviceptr inout,
                                        uint64_t n, int packed, CUstream stream)
{
    struct umpi_kred_args a = {in, inout, n, 0, 0};
    if (umpi__pair_geom[kid].stride != 0) {
        a.stride = packed ? umpi__pair_geom[kid].pstride : umpi__pair_geom[kid].stride;
        a.ioff = packed ? umpi__pair_geom[kid].pioff : umpi__pair_geom[kid].ioff;
    }
    return umpi_cuda_kern_launch(km, kid, &a, n, stream);
}

/* ---- finalize -------------------------------------------------------------------------------------------- */

void umpi_cuda_kern_unload(void)
{
    if (umpi_config.debug >= 2 && umpi_cuda_kern_stats.launches + umpi_cuda_kern_stats.module_failures > 0)
        umpi_log("debug", "cuda kernels: %lu launches, %lu modules loaded, %lu failed, %lu datatype uploads, "
                 "%lu packed reductions", umpi_cuda_kern_stats.launches, umpi_cuda_kern_stats.modules_loaded,
                 umpi_cuda_kern_stats.module_failures, umpi_cuda_kern_stats.dtype_uploads,
                 umpi_cuda_kern_stats.reduce_packed);
    CUcontext cur = NULL;
    if (umpi__nkmods > 0)
        umpi_cuda_drv.cuCtxGetCurrent(&cur);
    for (int i = 0; i < umpi__nkmods; i++) {
        if (umpi__kmods[i].mod == NULL)
            continue;
        /* in its own context; fails harmlessly if the application destroyed that context */
        if (umpi_cuda_drv.cuCtxSetCurrent(umpi__kmods[i].ctx) == UMPI_CUDA_SUCCESS)
            umpi_cuda_drv.cuModuleUnload(umpi__kmods[i].mod);
    }
    if (umpi__nkmods > 0)
        umpi_cuda_drv.cuCtxSetCurrent(cur);
    umpi__nkmods = 0;
    for (int d = 0; d < UMPI__MAX_DEV; d++) {
        CUdevice dev;
        if (umpi__retained[d] && umpi_cuda_drv.cuDeviceGet != NULL && umpi_cuda_drv.cuDeviceGet(&dev, d) == 0)
            umpi_cuda_drv.cuDevicePrimaryCtxRelease(dev);
        umpi__retained[d] = 0;
    }
    memset(&umpi_cuda_kern_stats, 0, sizeof(umpi_cuda_kern_stats));
}
