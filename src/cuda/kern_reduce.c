/*
 * A reduction on the GPU for any predefined op and any datatype (umpi_cuda_kern_reduce): a
 * predefined or contiguous type in one launch (kern.c); any other packed into scratch memory
 * (kern_pack.c), reduced there and unpacked; MPI_REPLACE as a copy.
 */
#include "core/umpi_err.h"
#include "core/umpi_op.h"
#include "cuda/kern_args.h"
#include "cuda/umpi_cuda_kern.h"

#include <stdint.h>

/* Device scratch memory ordered on stream: the stream-ordered allocator where the driver and the
 * GPU have it, else cuMemAlloc (*async says which, for the free). */
static umpi_status_t umpi__scratch(CUdeviceptr *p, size_t bytes, CUstream stream, int *async)
{
    *async = umpi_cuda_drv.cuMemAllocAsync != NULL &&
             umpi_cuda_drv.cuMemAllocAsync(p, bytes, stream) == UMPI_CUDA_SUCCESS;
    if (*async)
        return UMPI_OK;
    CUresult r = umpi_cuda_drv.cuMemAlloc(p, bytes);
    return r == UMPI_CUDA_SUCCESS ? UMPI_OK : umpi_cuda_kern_fail("allocating GPU scratch memory", r);
}

static void umpi__scratch_free(CUdeviceptr p, CUstream stream, int async)
{
    if (async) {
        umpi_cuda_drv.cuMemFreeAsync(p, stream);
        return;
    }
    umpi_cuda_drv.cuStreamSynchronize(stream);   /* the kernels using it are done */
    umpi_cuda_drv.cuMemFree(p);
}

/* A non-contiguous type: both buffers packed into scratch memory, reduced, inout unpacked back
 * (MPI_REPLACE: in packed and unpacked into inout). */
static umpi_status_t umpi__reduce_packed(struct umpi_cuda_kmod *km, int kid, umpi_dtype_t *dt, const void *in,
                                         void *inout, MPI_Count count, const umpi_dtype_t *leaf, CUstream stream)
{
    size_t bytes = (size_t) (count * dt->size);
    CUdeviceptr tmp;
    int async;
    umpi_status_t st = umpi__scratch(&tmp, kid >= 0 ? 2 * bytes : bytes, stream, &async);
    if (st != UMPI_OK)
        return st;
    void *a = (void *) (uintptr_t) tmp, *b = (char *) a + bytes;
    st = umpi_cuda_kern_pack(dt, count, in, a, stream);
    if (st == UMPI_OK && kid >= 0) {
        st = umpi_cuda_kern_pack(dt, count, inout, b, stream);
        if (st == UMPI_OK)
            st = umpi_cuda_kern_reduce_run(km, kid, tmp, tmp + bytes, bytes / (size_t) leaf->size, 1, stream);
    }
    if (st == UMPI_OK)
        st = umpi_cuda_kern_unpack(dt, count, kid >= 0 ? b : a, inout, stream);
    umpi__scratch_free(tmp, stream, async);
    __atomic_fetch_add(&umpi_cuda_kern_stats.reduce_packed, 1, __ATOMIC_RELAXED);
    return st;
}

/* The device the buffer lives on, for a thread with no current context. */
static int umpi__device_of(const void *p, size_t len)
{
    struct umpi_cuda_buf_info info;
    return umpi_cuda_classify(p, len, &info) == UMPI_OK ? info.device : 0;
}

umpi_status_t umpi_cuda_kern_reduce(const umpi_op_t *op, umpi_dtype_t *dt, const void *in, void *inout, MPI_Count count,
                               CUstream stream)
{
    if (count <= 0 || dt->size == 0 || op->kind == UMPI_OP_NO_OP)
        return UMPI_OK;
    if (op->kind == UMPI_OP_USER)
        return umpi_cuda_kern_unavailable("user-defined operations run on the CPU");
    if (!umpi_cuda_kernels_available())
        return umpi_cuda_kern_unavailable(umpi_cuda_kern_why_unavailable());
    const umpi_dtype_t *leaf = op->kind == UMPI_OP_REPLACE ? NULL : umpi_op_leaf(dt);
    int kid = leaf != NULL ? umpi_cuda_kern_kid(op->kind, leaf) : UMPI_CUDA_KID_NONE;
    if (op->kind != UMPI_OP_REPLACE && kid < 0)
        return umpi_cuda_kern_unavailable("no GPU kernel for this operation on this datatype");
    if (!dt->builtin && dt->ops == NULL && umpi_dtype_compile(dt) != UMPI_OK)
        return UMPI_ERR_NOMEM;

    if (op->kind == UMPI_OP_REPLACE && dt->contig) {
        CUresult r = umpi_cuda_drv.cuMemcpyAsync((CUdeviceptr) (uintptr_t) ((char *) inout + dt->true_lb),
                                                 (CUdeviceptr) (uintptr_t) ((const char *) in + dt->true_lb),
                                                 (size_t) (count * dt->size), stream);
        return r == UMPI_CUDA_SUCCESS ? UMPI_OK : umpi_cuda_kern_fail("cuMemcpyAsync", r);
    }
    struct umpi_cuda_kmod *km;
    unsigned long long key;
    umpi_status_t st = umpi_cuda_kmod_current(umpi__device_of(inout, 1), &km, &key);
    if (st != UMPI_OK)
        return st;
    if (dt->builtin && kid >= 0)
        return umpi_cuda_kern_reduce_run(km, kid, (CUdeviceptr) (uintptr_t) in, (CUdeviceptr) (uintptr_t) inout,
                                (uint64_t) count, 0, stream);
    if (dt->contig && kid >= 0)   /* one run of leaf elements, packed layout */
        return umpi_cuda_kern_reduce_run(km, kid, (CUdeviceptr) (uintptr_t) ((const char *) in + dt->true_lb),
                                (CUdeviceptr) (uintptr_t) ((char *) inout + dt->true_lb),
                                (uint64_t) (count * dt->size / leaf->size), 1, stream);
    return umpi__reduce_packed(km, kid, dt, in, inout, count, leaf, stream);
}

