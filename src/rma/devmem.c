/*
 * Device memory in one-sided communication (umpi_rma.h, "Device memory"): origin buffers packed
 * from and unpacked into GPU memory through host memory, and the target's copies between its
 * device window memory and the host copies its requests are applied to. The CPU never touches a
 * device pointer here; every copy is a driver copy on umpi's copy stream (src/cuda/copy.c).
 */
#include "rma/umpi_rma.h"
#include "core/umpi_err.h"
#include "cuda/umpi_cuda_copy.h"

int umpi_rma_classify_slow(const void *buf, size_t len, int errclass, const char *arg, int *dev)
{
    struct umpi_cuda_buf_info bi;
    umpi_status_t st = umpi_cuda_classify(buf, len, &bi);
    if (st != UMPI_OK)
        return umpi_err_create(errclass, "%s %p (%zu bytes): %s", arg, buf, len, umpi_status_last_msg());
    /* managed and pinned host memory the CPU may touch: host for us */
    *dev = bi.type == UMPI_CUDA_MEM_DEVICE;
    return MPI_SUCCESS;
}

int umpi_rma_pack(const umpi_dtype_t *dt, const void *buf, MPI_Count count, int dev, void *dst, size_t bytes)
{
    if (!dev) {
        umpi_dtype_pack(dt, buf, count, dst);
        return MPI_SUCCESS;
    }
    umpi_cuda_slow_path(UMPI_CUDA_STAT_rma_staged, "rma: %zu bytes of origin data copied from device memory "
                        "to pack them into a one-sided request", bytes);
    umpi_status_t st = umpi_cuda_pack(dt, buf, count, dst, bytes);
    return st == UMPI_OK ? MPI_SUCCESS : umpi_err_from_status(st, "copying one-sided origin data from device memory");
}

int umpi_rma_unpack(const umpi_dtype_t *dt, void *buf, MPI_Count count, int dev, const void *src, size_t bytes)
{
    if (!dev) {
        umpi_dtype_unpack(dt, src, (MPI_Count) bytes, buf);
        return MPI_SUCCESS;
    }
    umpi_cuda_slow_path(UMPI_CUDA_STAT_rma_staged, "rma: %zu bytes of fetched one-sided data copied into "
                        "device memory", bytes);
    umpi_status_t st = umpi_cuda_unpack(dt, buf, count, src, bytes);
    return st == UMPI_OK ? MPI_SUCCESS : umpi_err_from_status(st, "copying fetched one-sided data into device memory");
}

/* One driver copy per block on the copy stream, one wait for them all. */
static umpi_status_t umpi__blocks(char *mem, const umpi_rma_block_t *b, uint64_t n, char *host, int to_device)
{
    CUstream s;
    umpi_status_t st = umpi_cuda_copy_stream(&s);
    if (st != UMPI_OK)
        return st;
    CUresult r = UMPI_CUDA_SUCCESS;
    for (uint64_t i = 0; i < n && r == UMPI_CUDA_SUCCESS; i++) {
        CUdeviceptr d = (CUdeviceptr) (uintptr_t) (mem + b[i].off), h = (CUdeviceptr) (uintptr_t) host;
        r = to_device ? umpi_cuda_drv.cuMemcpyAsync(d, h, (size_t) b[i].len, s)
                      : umpi_cuda_drv.cuMemcpyAsync(h, d, (size_t) b[i].len, s);
        host += b[i].len;
    }
    /* also after a failed copy: those queued use the buffers */
    CUresult w = umpi_cuda_drv.cuStreamSynchronize(s);
    if (r != UMPI_CUDA_SUCCESS)
        return umpi_cuda_fail("cuMemcpyAsync of one-sided data at device window memory", r);
    return w == UMPI_CUDA_SUCCESS ? UMPI_OK : umpi_cuda_fail("cuStreamSynchronize after one-sided copies", w);
}

void umpi_rma_dev_gather(umpi_win_t *w, char *mem, const umpi_rma_block_t *b, uint64_t n, char *out)
{
    umpi_status_t st = umpi__blocks(mem, b, n, out, 0);
    if (st != UMPI_OK)
        umpi_die(1, "window 0x%x: reading device window memory at %p failed: %s", (unsigned) w->handle, (void *) mem,
                 umpi_status_last_msg());
}

void umpi_rma_dev_scatter(umpi_win_t *w, char *mem, const umpi_rma_block_t *b, uint64_t n, const char *in)
{
    umpi_status_t st = umpi__blocks(mem, b, n, (char *) in, 1);
    if (st != UMPI_OK)
        umpi_die(1, "window 0x%x: writing device window memory at %p failed: %s", (unsigned) w->handle, (void *) mem,
                 umpi_status_last_msg());
}
