/*
 * Datatype pack/unpack on the GPU (umpi_cuda_kern_pack/unpack, umpi_cuda_kern.h), from the pack
 * engine's compiled form of the type (umpi_obj.h: "ops", each `count` blocks of `len` bytes
 * `stride` apart, and an outer loop):
 *
 *   contiguous                       one cuMemcpyAsync
 *   one op, no outer loop            umpi_pack_vec<W>: (element, block, word) from the thread
 *   (vector, hvector, a pair type,   number by two divisions; W the widest word (up to 16 bytes)
 *    an array of one struct field)   that divides both addresses, the length and the strides
 *   anything else                    umpi_pack_gen: the ops with their prefix sums, uploaded once
 *   (indexed, struct, subarray,      per type and context and kept in dt->cuda_desc until the type
 *    vectors of structs, ...)        is freed; a block's op found by binary search (directly for
 *                                    indexed blocks of one length); 1 to 32 threads per block
 *                                    by the blocks' mean length
 */
#include "cuda/umpi_cuda_kern.h"
#include "cuda/kern_args.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct umpi_cuda_dtdesc {
    struct umpi_cuda_dtdesc *next, *prev;  /* every uploaded type, for finalize */
    umpi_dtype_t *dt;
    unsigned long long ctx_key;
    CUcontext ctx;
    CUdeviceptr ops;                       /* nops struct umpi_kpack_op */
    uint64_t nops, nblocks, subsize, uniform_len;
    unsigned lanes;
};

static struct umpi_cuda_dtdesc *umpi__descs;
static pthread_mutex_t umpi__dlock = PTHREAD_MUTEX_INITIALIZER;

/* ---- the shape of a type ---------------------------------------------------------------------------- */

struct umpi__shape {
    const umpi_dt_op_t *ops;
    MPI_Count nops, loop;
    MPI_Aint lstride;
    umpi_dt_op_t tmp[2];
};

static umpi_status_t umpi__shape_of(umpi_dtype_t *dt, struct umpi__shape *sh)
{
    sh->loop = 1;
    sh->lstride = 0;
    if (dt->builtin) {
        /* a pair type with a hole: its blocks, joined when they touch */
        int n = 0;
        for (int b = 0; b < dt->nblocks; b++) {
            if (dt->blocks[b].len == 0)
                continue;
            if (n > 0 && sh->tmp[n - 1].disp + sh->tmp[n - 1].len == dt->blocks[b].disp)
                sh->tmp[n - 1].len += dt->blocks[b].len;
            else
                sh->tmp[n++] = (umpi_dt_op_t) {dt->blocks[b].disp, dt->blocks[b].len, 1, 0};
        }
        sh->ops = sh->tmp;
        sh->nops = n;
        return UMPI_OK;
    }
    if (dt->ops == NULL && umpi_dtype_compile(dt) != UMPI_OK)
        return UMPI_ERR_NOMEM;
    sh->ops = dt->ops;
    sh->nops = dt->nops;
    sh->loop = dt->loop_count > 1 ? dt->loop_count : 1;
    sh->lstride = dt->loop_stride;
    return UMPI_OK;
}

/* The widest power of two up to 16 dividing x. */
static unsigned umpi__width(uint64_t x)
{
    unsigned w = 16;
    while (w > 1 && (x & (w - 1)) != 0)
        w /= 2;
    return w;
}

/* ---- the uploaded op tables ---------------------------------------------------------------------------- */

/* Frees desc's device memory in its own context. Called with umpi__dlock held. */
static void umpi__desc_drop(struct umpi_cuda_dtdesc *d)
{
    if (d->prev != NULL)
        d->prev->next = d->next;
    else
        umpi__descs = d->next;
    if (d->next != NULL)
        d->next->prev = d->prev;
    if (umpi_cuda_active) {
        CUcontext cur = NULL;
        umpi_cuda_drv.cuCtxGetCurrent(&cur);
        if (cur != d->ctx)
            umpi_cuda_drv.cuCtxSetCurrent(d->ctx);
        umpi_cuda_drv.cuMemFree(d->ops);
        if (cur != d->ctx)
            umpi_cuda_drv.cuCtxSetCurrent(cur);
    }
    d->dt->cuda_desc = NULL;
    umpi_cuda_kern_stats.dtype_frees++;
    free(d);
}

/* umpi_dtype_release_slow calls this for a type that has a table on a GPU. */
static void umpi__dtype_forget(umpi_dtype_t *dt)
{
    pthread_mutex_lock(&umpi__dlock);
    if (dt->cuda_desc != NULL)
        umpi__desc_drop(dt->cuda_desc);
    pthread_mutex_unlock(&umpi__dlock);
}

/* dt's table in the current context, uploaded on first use. */
static umpi_status_t umpi__desc_get(umpi_dtype_t *dt, const struct umpi__shape *sh, unsigned long long key,
                                    struct umpi_cuda_dtdesc *out)
{
    umpi_status_t st = UMPI_OK;
    pthread_mutex_lock(&umpi__dlock);
    struct umpi_cuda_dtdesc *d = dt->cuda_desc;
    if (d != NULL && d->ctx_key != key) {   /* uploaded in another context: move it here */
        umpi__desc_drop(d);
        d = NULL;
    }
    if (d == NULL) {
        struct umpi_kpack_op *t = malloc((size_t) sh->nops * sizeof(*t));
        d = calloc(1, sizeof(*d));
        if (t == NULL || d == NULL) {
            free(t);
            free(d);
            pthread_mutex_unlock(&umpi__dlock);
            return UMPI_ERR_NOMEM;
        }
        uint64_t blocks = 0, bytes = 0, ulen = (uint64_t) sh->ops[0].len;
        for (MPI_Count k = 0; k < sh->nops; k++) {
            const umpi_dt_op_t *o = &sh->ops[k];
            t[k] = (struct umpi_kpack_op) {o->disp, o->len, o->count, o->stride, blocks, bytes};
            blocks += (uint64_t) o->count;
            bytes += (uint64_t) (o->count * o->len);
            if (o->count != 1 || (uint64_t) o->len != ulen)
                ulen = 0;
        }
        d->dt = dt;
        d->ctx_key = key;
        d->nops = (uint64_t) sh->nops;
        d->nblocks = blocks;
        d->subsize = bytes;
        d->uniform_len = ulen;
        /* threads per block: one for short blocks, up to a warp, one 16-byte word each */
        uint64_t mean = bytes / blocks;
        d->lanes = 1;
        while (d->lanes < 32 && (uint64_t) d->lanes * 16 < mean)
            d->lanes *= 2;
        CUresult r = umpi_cuda_drv.cuCtxGetCurrent(&d->ctx);
        if (r == UMPI_CUDA_SUCCESS)
            r = umpi_cuda_drv.cuMemAlloc(&d->ops, (size_t) sh->nops * sizeof(*t));
        if (r == UMPI_CUDA_SUCCESS) {
            r = umpi_cuda_drv.cuMemcpyHtoD(d->ops, t, (size_t) sh->nops * sizeof(*t));
            if (r != UMPI_CUDA_SUCCESS)
                umpi_cuda_drv.cuMemFree(d->ops);
        }
        free(t);
        if (r != UMPI_CUDA_SUCCESS) {
            free(d);
            pthread_mutex_unlock(&umpi__dlock);
            return umpi_cuda_kern_fail("uploading a datatype's blocks to the GPU", r);
        }
        d->next = umpi__descs;
        d->prev = NULL;
        if (umpi__descs != NULL)
            umpi__descs->prev = d;
        umpi__descs = d;
        dt->cuda_desc = d;
        umpi_dtype_cuda_forget = umpi__dtype_forget;
        umpi_cuda_kern_stats.dtype_uploads++;
        umpi_debug(2, "cuda: datatype 0x%x: %ld blocks in %ld runs uploaded for the GPU pack kernel",
                   (unsigned) dt->handle, (long) blocks, (long) sh->nops);
    }
    *out = *d;
    pthread_mutex_unlock(&umpi__dlock);
    return st;
}

/* The kernels' finalize: the uploaded datatypes (here), then the modules and contexts (kern.c). */
void umpi_cuda_kern_finalize(void)
{
    pthread_mutex_lock(&umpi__dlock);
    while (umpi__descs != NULL)
        umpi__desc_drop(umpi__descs);
    pthread_mutex_unlock(&umpi__dlock);
    umpi_cuda_kern_unload();
}

/* ---- pack and unpack ------------------------------------------------------------------------------------ */

static umpi_status_t umpi__pack(umpi_dtype_t *dt, MPI_Count count, char *typed, char *packed, int unpack,
                                CUstream stream)
{
    if (count <= 0 || dt->size == 0)
        return UMPI_OK;
    if (dt->contig) {
        char *t = typed + dt->true_lb;
        CUresult r = umpi_cuda_drv.cuMemcpyAsync((CUdeviceptr) (uintptr_t) (unpack ? t : packed),
                                                 (CUdeviceptr) (uintptr_t) (unpack ? packed : t),
                                                 (size_t) (count * dt->size), stream);
        return r == UMPI_CUDA_SUCCESS ? UMPI_OK : umpi_cuda_kern_fail("cuMemcpyAsync", r);
    }
    if (!umpi_cuda_kernels_available()) {
        umpi_status_msg("no GPU pack kernel: %s", umpi_cuda_kern_why_unavailable());
        return UMPI_ERR_NOT_FOUND;
    }
    struct umpi__shape sh;
    umpi_status_t st = umpi__shape_of(dt, &sh);
    if (st != UMPI_OK)
        return st;
    struct umpi_cuda_kmod *km;
    unsigned long long key;
    struct umpi_cuda_buf_info info;
    int device = umpi_cuda_classify(typed + dt->true_lb, 1, &info) == UMPI_OK ? info.device : 0;
    st = umpi_cuda_kmod_current(device, &km, &key);
    if (st != UMPI_OK)
        return st;

    if (sh.nops == 1 && sh.loop == 1) {
        const umpi_dt_op_t *o = &sh.ops[0];
        struct umpi_kpack_vec a = {(uint64_t) (uintptr_t) (typed + o->disp), (uint64_t) (uintptr_t) packed,
                                   (uint64_t) count, (uint64_t) o->count, (uint64_t) o->len, o->stride, dt->extent,
                                   (uint32_t) unpack, 0};
        if (o->count == 1 || o->count * o->stride == dt->extent) {
            /* the blocks of all elements are one evenly spaced run */
            a.bstride = o->count == 1 ? dt->extent : o->stride;
            a.nblk = (uint64_t) (count * o->count);
            a.nelem = 1;
            a.estride = 0;
        }
        unsigned w = umpi__width(a.typed | a.packed | a.blen | (uint64_t) a.bstride | (uint64_t) a.estride);
        return umpi_cuda_kern_launch(km, umpi_cuda_kid_pack_vec(w), &a, a.nelem * a.nblk * (a.blen / w), stream);
    }

    struct umpi_cuda_dtdesc d = {.ops = 0};
    st = umpi__desc_get(dt, &sh, key, &d);
    if (st != UMPI_OK)
        return st;
    struct umpi_kpack_gen g = {
        (uint64_t) (uintptr_t) typed, (uint64_t) (uintptr_t) packed, d.ops, d.nops,
        (uint64_t) (count * sh.loop), (uint64_t) sh.loop, dt->extent, sh.lstride, d.nblocks, d.subsize,
        d.uniform_len, d.lanes, (uint32_t) unpack,
    };
    return umpi_cuda_kern_launch(km, umpi_cuda_kid_pack_gen(), &g, g.nsub * g.nblocks * g.lanes, stream);
}

umpi_status_t umpi_cuda_kern_pack(umpi_dtype_t *dt, MPI_Count count, const void *typed, void *packed, CUstream stream)
{
    return umpi__pack(dt, count, (char *) typed, packed, 0, stream);
}

umpi_status_t umpi_cuda_kern_unpack(umpi_dtype_t *dt, MPI_Count count, const void *packed, void *typed, CUstream stream)
{
    return umpi__pack(dt, count, typed, (char *) packed, 1, stream);
}
