/*
 * MPI_Reduce_local on buffers of any memory kind (umpi_cuda_kern_reduce_local, umpi_cuda_kern.h):
 *
 *   both host memory                    -> 0: the caller reduces on the CPU
 *   both on one GPU, a predefined op    -> umpi_cuda_kern_reduce on the default stream, waited for
 *   anything else (a user op, one       -> the GPU buffers' spans copied to the host, reduced
 *   buffer on the host, two GPUs, no       there, inout's span copied back; counted (reduce_staged)
 *   kernel for it)                         and said at UMPI_DEBUG=1
 */
#include "cuda/umpi_cuda_kern.h"
#include "core/umpi_err.h"

#include <stdio.h>
#include <stdlib.h>

/* The bytes count elements of dt span from buf: [buf + *first, + span). */
static size_t umpi__span(const umpi_dtype_t *dt, MPI_Count count, MPI_Aint *first)
{
    MPI_Aint reach = (MPI_Aint) (count - 1) * dt->extent;
    *first = dt->true_lb + (reach < 0 ? reach : 0);
    return (size_t) ((reach < 0 ? -reach : reach) + dt->true_extent);
}

/* Host copy of a GPU buffer's span. */
static umpi_status_t umpi__to_host(const void *buf, MPI_Aint first, size_t span, char **out)
{
    char *h = malloc(span ? span : 1);
    if (h == NULL)
        return UMPI_ERR_NOMEM;
    CUresult r = umpi_cuda_drv.cuMemcpyDtoHAsync(h, (CUdeviceptr) (uintptr_t) ((const char *) buf + first), span, NULL);
    if (r == UMPI_CUDA_SUCCESS)
        r = umpi_cuda_drv.cuStreamSynchronize(NULL);
    if (r != UMPI_CUDA_SUCCESS) {
        free(h);
        return umpi_cuda_kern_fail("copying a GPU buffer to the host", r);
    }
    *out = h;
    return UMPI_OK;
}

/*
 * Through host memory: the spans of the GPU buffers copied to the host, reduced there, inout's span
 * copied back whole (its holes included: they hold what was just read from them).
 */
static umpi_status_t umpi__reduce_staged(const umpi_op_t *op, const void *in, void *inout, MPI_Count count,
                                         umpi_dtype_t *dt, int in_gpu, int io_gpu)
{
    MPI_Aint first;
    size_t span = umpi__span(dt, count, &first);
    char *hin = NULL, *hio = NULL;
    umpi_status_t st = UMPI_OK;
    if (in_gpu)
        st = umpi__to_host(in, first, span, &hin);
    if (st == UMPI_OK && io_gpu)
        st = umpi__to_host(inout, first, span, &hio);
    if (st == UMPI_OK) {
        umpi_op_apply(op, in_gpu ? hin - first : in, io_gpu ? hio - first : inout, count, dt);
        if (io_gpu) {
            CUresult r = umpi_cuda_drv.cuMemcpyHtoDAsync((CUdeviceptr) (uintptr_t) ((char *) inout + first), hio,
                                                         span, NULL);
            if (r == UMPI_CUDA_SUCCESS)
                r = umpi_cuda_drv.cuStreamSynchronize(NULL);
            if (r != UMPI_CUDA_SUCCESS)
                st = umpi_cuda_kern_fail("copying the result back to the GPU", r);
        }
    }
    free(hin);
    free(hio);
    return st;
}

int umpi_cuda_kern_reduce_local(const umpi_op_t *op, const void *in, void *inout, MPI_Count count, umpi_dtype_t *dt,
                           int *err)
{
    struct umpi_cuda_buf_info ii, io;
    MPI_Aint first;
    size_t span = umpi__span(dt, count, &first);
    umpi_status_t st = umpi_cuda_classify((const char *) in + first, span, &ii);
    if (st == UMPI_OK)
        st = umpi_cuda_classify((char *) inout + first, span, &io);
    if (st != UMPI_OK) {
        *err = umpi_err_from_status(st, "cannot tell where the buffers of MPI_Reduce_local are");
        return 1;
    }
    int in_gpu = umpi_cuda_is_gpu(&ii), io_gpu = umpi_cuda_is_gpu(&io);
    if (!in_gpu && !io_gpu)
        return 0;

    char why[256] = "one buffer is in host memory";
    if (in_gpu && io_gpu && ii.device != io.device)
        snprintf(why, sizeof(why), "the buffers are on two GPUs (%d and %d)", ii.device, io.device);
    if (in_gpu && io_gpu && ii.device == io.device) {
        CUcontext saved = NULL;
        int switched;
        st = umpi_cuda_kern_enter_device(io.device, &saved, &switched);
        if (st == UMPI_OK) {
            st = umpi_cuda_kern_reduce(op, dt, in, inout, count, NULL);
            if (st == UMPI_OK) {
                CUresult r = umpi_cuda_drv.cuStreamSynchronize(NULL);
                if (r != UMPI_CUDA_SUCCESS)
                    st = umpi_cuda_kern_fail("cuStreamSynchronize after the reduction kernel", r);
            }
        }
        if (switched)
            umpi_cuda_drv.cuCtxSetCurrent(saved);
        if (st != UMPI_ERR_NOT_FOUND) {
            *err = st == UMPI_OK ? MPI_SUCCESS : umpi_err_from_status(st, "MPI_Reduce_local on GPU buffers");
            return 1;
        }
        umpi_strlcpy(why, umpi_status_last_msg(), sizeof(why));
    }
    umpi_cuda_slow_path(UMPI_CUDA_STAT_reduce_staged, "cuda: a reduction of %ld x %s on device memory computed by the CPU through host copies: %s",
                        (long) count, dt->builtin ? dt->name : "a derived datatype", why);
    st = umpi__reduce_staged(op, in, inout, count, dt, in_gpu, io_gpu);
    *err = st == UMPI_OK ? MPI_SUCCESS : umpi_err_from_status(st, "MPI_Reduce_local through host memory");
    return 1;
}

