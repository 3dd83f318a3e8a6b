/*
 * Moving bytes between host and device memory with the driver, for the paths that carry device
 * buffers (src/pt2pt/gpu_*.c, the collective schedules). Interface: umpi_cuda_copy.h.
 *
 * Every copy goes on one stream of umpi's own (the pipeline pool's first stream, a blocking stream:
 * umpi_cuda.h, UMPI_CUDA_STREAM_FLAGS, says why) and is waited for with
 * cuStreamSynchronize, or watched with an event by the caller (umpi_cuda_copy_start). The CPU
 * never dereferences a device pointer here.
 *
 * Non-contiguous datatypes on device memory (umpi_cuda_pack / umpi_cuda_unpack): where the host
 * side is memory the GPU reaches (pinned) and umpi has its kernels, one pack kernel moves the whole
 * of it. Otherwise packing copies the span the data covers to host memory in one driver copy and
 * packs there with the CPU engine when the span is at most twice the data (dense types), else one
 * driver copy per contiguous block; unpacking always copies block by block, since writing back a
 * whole span would also write the gaps, which the receive buffer does not own. Both are counted
 * (dtype_staged).
 */
#include "cuda/umpi_cuda_copy.h"
#include "cuda/umpi_cuda_kern.h"
#include "cuda/umpi_cuda_pipe.h"

#include <stdlib.h>
#include <string.h>

/* Primary contexts umpi retained (devices 0..63), released at finalize. */
#define UMPI__MAX_DEVICES 64
static CUcontext umpi__primary[UMPI__MAX_DEVICES];
/* The event umpi_cuda_fence records and waits for, made on first use and kept. */
static CUevent umpi__fence_event;

umpi_status_t umpi_cuda_fail(const char *what, CUresult r)
{
    char buf[160];
    umpi_status_msg("%s failed: %s", what, umpi_cuda_strerror(r, buf, sizeof(buf)));
    return UMPI_ERR_OTHER;
}

umpi_status_t umpi_cuda_ctx_ensure(int device)
{
    CUcontext c = NULL;
    CUresult r = umpi_cuda_drv.cuCtxGetCurrent(&c);
    if (r == UMPI_CUDA_SUCCESS && c != NULL)
        return UMPI_OK;
    /* No context in this thread (the application made none current yet, or this is another
     * thread): the device's primary context, the one the CUDA runtime uses too. */
    if (device < 0 || device >= UMPI__MAX_DEVICES)
        device = 0;
    if (umpi__primary[device] == NULL) {
        CUdevice dev;
        r = umpi_cuda_drv.cuDeviceGet(&dev, device);
        if (r == UMPI_CUDA_SUCCESS)
            r = umpi_cuda_drv.cuDevicePrimaryCtxRetain(&umpi__primary[device], dev);
        if (r != UMPI_CUDA_SUCCESS) {
            umpi__primary[device] = NULL;
            return umpi_cuda_fail("retaining the device's primary context", r);
        }
    }
    r = umpi_cuda_drv.cuCtxSetCurrent(umpi__primary[device]);
    if (r != UMPI_CUDA_SUCCESS)
        return umpi_cuda_fail("making the device's primary context current", r);
    umpi_debug(2, "cuda: no current context in this thread: device %d's primary context made current", device);
    return UMPI_OK;
}

void umpi_cuda_copy_finalize(void)
{
    if (umpi__fence_event != NULL)
        umpi_cuda_drv.cuEventDestroy(umpi__fence_event);
    umpi__fence_event = NULL;
    for (int d = 0; d < UMPI__MAX_DEVICES; d++) {
        CUdevice dev;
        if (umpi__primary[d] != NULL && umpi_cuda_drv.cuDeviceGet(&dev, d) == UMPI_CUDA_SUCCESS)
            umpi_cuda_drv.cuDevicePrimaryCtxRelease(dev);
        umpi__primary[d] = NULL;
    }
}

umpi_status_t umpi_cuda_copy_stream(CUstream *s)
{
    umpi_status_t st = umpi_cuda_ctx_ensure(-1);
    return st == UMPI_OK ? umpi_cuda_stage_streams(1, s) : st;
}

umpi_status_t umpi_cuda_copy_start(void *dst, const void *src, size_t n, CUevent ev)
{
    CUstream s;
    umpi_status_t st = umpi_cuda_copy_stream(&s);
    if (st != UMPI_OK)
        return st;
    CUresult r = umpi_cuda_drv.cuMemcpyAsync((CUdeviceptr) (uintptr_t) dst, (CUdeviceptr) (uintptr_t) src, n, s);
    if (r != UMPI_CUDA_SUCCESS)
        return umpi_cuda_fail("cuMemcpyAsync", r);
    r = umpi_cuda_drv.cuEventRecord(ev, s);
    if (r != UMPI_CUDA_SUCCESS) {
        umpi_cuda_drv.cuStreamSynchronize(s);
        return umpi_cuda_fail("cuEventRecord after a copy", r);
    }
    return UMPI_OK;
}

static int umpi__fence_needed(void)
{
    /* a host-side query: with nothing left on the legacy stream, no event needs a round trip
     * through the GPU */
    return umpi_cuda_drv.cuStreamQuery(UMPI_CU_STREAM_LEGACY) != UMPI_CUDA_SUCCESS;
}

static umpi_status_t umpi__fence_start(CUevent ev)
{
    CUstream s;
    umpi_status_t st = umpi_cuda_copy_stream(&s);
    if (st != UMPI_OK)
        return st;
    CUresult r = umpi_cuda_drv.cuEventRecord(ev, s);
    return r == UMPI_CUDA_SUCCESS ? UMPI_OK : umpi_cuda_fail("cuEventRecord (a fence on the legacy stream's work)", r);
}

umpi_status_t umpi_cuda_fence(void)
{
    if (!umpi__fence_needed())
        return UMPI_OK;
    if (umpi__fence_event == NULL) {
        umpi_status_t st = umpi_cuda_ctx_ensure(-1);
        if (st != UMPI_OK)
            return st;
        CUresult r = umpi_cuda_drv.cuEventCreate(&umpi__fence_event, UMPI_CU_EVENT_DISABLE_TIMING);
        if (r != UMPI_CUDA_SUCCESS) {
            umpi__fence_event = NULL;
            return umpi_cuda_fail("cuEventCreate for a fence", r);
        }
    }
    umpi_status_t st = umpi__fence_start(umpi__fence_event);
    if (st != UMPI_OK)
        return st;
    CUresult r = umpi_cuda_drv.cuEventSynchronize(umpi__fence_event);
    return r == UMPI_CUDA_SUCCESS ? UMPI_OK : umpi_cuda_fail("cuEventSynchronize (a fence on the legacy stream's work)", r);
}

/* Waits for everything queued on the copy stream. */
static umpi_status_t umpi__sync(CUstream s)
{
    CUresult r = umpi_cuda_drv.cuStreamSynchronize(s);
    return r == UMPI_CUDA_SUCCESS ? UMPI_OK : umpi_cuda_fail("cuStreamSynchronize after a copy", r);
}

umpi_status_t umpi_cuda_copy(void *dst, const void *src, size_t n)
{
    if (n == 0)
        return UMPI_OK;
    CUstream s;
    umpi_status_t st = umpi_cuda_copy_stream(&s);
    if (st != UMPI_OK)
        return st;
    CUresult r = umpi_cuda_drv.cuMemcpyAsync((CUdeviceptr) (uintptr_t) dst, (CUdeviceptr) (uintptr_t) src, n, s);
    if (r != UMPI_CUDA_SUCCESS)
        return umpi_cuda_fail("cuMemcpyAsync", r);
    return umpi__sync(s);
}

/* ---- datatypes on device memory ------------------------------------------------------------- */

/* Why a datatype's data goes through host copies instead of the pack kernel (for the slow-path line). */
static const char *umpi__no_kernel(const umpi_dtype_t *dt, MPI_Count count, size_t bytes)
{
    return bytes != (size_t) (count * dt->size) ? "only part of the data is moved" : umpi_cuda_kern_why_unavailable();
}

/* The blocks of count elements of dt in type-map (packed) order, adjacent ones merged: each is
 * handed to the copy as (offset from buf, length, offset in the packed stream). */
struct umpi__blockwalk {
    CUstream s;
    char *dev;        /* the typed buffer */
    char *host;       /* the packed bytes */
    int unpack;
    MPI_Aint pend_off; /* the pending merged block */
    MPI_Count pend_len, packed;
    MPI_Count limit;  /* packed bytes to move */
    unsigned long copies;
    CUresult err;
};

static void umpi__flush_block(struct umpi__blockwalk *w)
{
    if (w->pend_len == 0 || w->err != UMPI_CUDA_SUCCESS)
        return;
    CUdeviceptr d = (CUdeviceptr) (uintptr_t) (w->dev + w->pend_off);
    char *h = w->host + w->packed;
    w->err = w->unpack ? umpi_cuda_drv.cuMemcpyAsync(d, (CUdeviceptr) (uintptr_t) h, (size_t) w->pend_len, w->s)
                       : umpi_cuda_drv.cuMemcpyAsync((CUdeviceptr) (uintptr_t) h, d, (size_t) w->pend_len, w->s);
    w->copies++;
    w->packed += w->pend_len;
    w->pend_len = 0;
}

/* Adds a block; returns 0 once `limit` packed bytes are covered. */
static int umpi__block(struct umpi__blockwalk *w, MPI_Aint off, MPI_Aint len)
{
    MPI_Count left = w->limit - w->packed - w->pend_len;
    if (len > left)
        len = (MPI_Aint) left;
    if (len <= 0)
        return 0;
    if (w->pend_len > 0 && w->pend_off + w->pend_len == off) {
        w->pend_len += len;
    } else {
        umpi__flush_block(w);
        w->pend_off = off;
        w->pend_len = len;
    }
    return w->packed + w->pend_len < w->limit;
}

static void umpi__walk(const umpi_dtype_t *dt, MPI_Count count, struct umpi__blockwalk *w)
{
    for (MPI_Count e = 0; e < count; e++) {
        MPI_Aint base = (MPI_Aint) e * dt->extent;
        if (dt->builtin) {
            if (dt->contig) {
                if (!umpi__block(w, base + dt->true_lb, (MPI_Aint) dt->size))
                    return;
                continue;
            }
            for (int k = 0; k < dt->nblocks; k++)
                if (!umpi__block(w, base + dt->blocks[k].disp, dt->blocks[k].len))
                    return;
            continue;
        }
        for (MPI_Count l = 0; l < dt->loop_count; l++) {
            MPI_Aint lb = base + (MPI_Aint) l * dt->loop_stride;
            for (MPI_Count k = 0; k < dt->nops; k++) {
                const umpi_dt_op_t *op = &dt->ops[k];
                for (MPI_Count j = 0; j < op->count; j++)
                    if (!umpi__block(w, lb + op->disp + (MPI_Aint) j * op->stride, op->len))
                        return;
            }
        }
    }
}

static umpi_status_t umpi__blockwise(const umpi_dtype_t *dt, void *buf, MPI_Count count, void *host, size_t bytes,
                                     int unpack)
{
    struct umpi__blockwalk w = { .dev = buf, .host = host, .unpack = unpack, .limit = (MPI_Count) bytes };
    umpi_status_t st = umpi_cuda_copy_stream(&w.s);
    if (st != UMPI_OK)
        return st;
    umpi__walk(dt, count, &w);
    umpi__flush_block(&w);
    umpi_status_t sync = umpi__sync(w.s); /* also after a failed copy: the queued ones use the buffers */
    if (w.err != UMPI_CUDA_SUCCESS)
        return umpi_cuda_fail(unpack ? "cuMemcpyAsync unpacking a datatype to device memory"
                                     : "cuMemcpyAsync packing a datatype from device memory", w.err);
    umpi_cuda_slow_path(UMPI_CUDA_STAT_dtype_staged, "cuda: %s %zu bytes of datatype %s %s device memory in %lu "
                        "driver copies (no GPU pack kernel: %s)", unpack ? "unpacked" : "packed", bytes,
                        dt->name && dt->name[0] ? dt->name : "(derived)", unpack ? "into" : "from", w.copies,
                        umpi__no_kernel(dt, count, bytes));
    return sync;
}

/* Packs (unpack 0) or unpacks the whole of count x dt between the device buffer buf and host
 * memory with umpi's pack kernel: straight into or out of the host buffer where the GPU reaches it
 * (pinned), else through a pinned staging buffer of the pipeline's pool and a CPU copy. UMPI_OK when
 * done, UMPI_ERR_NOT_FOUND when no kernel serves (no image, only part of the data wanted), other
 * codes when the driver failed. */
static umpi_status_t umpi__kernel_pack(const umpi_dtype_t *dt, void *buf, MPI_Count count, void *host, size_t bytes,
                                       int unpack)
{
    struct umpi_cuda_buf_info bi;
    if (bytes != (size_t) (count * dt->size) || !umpi_cuda_kernels_available())
        return UMPI_ERR_NOT_FOUND;
    umpi_status_t st = umpi_cuda_classify(host, bytes, &bi);
    if (st != UMPI_OK)
        return st;
    struct umpi_cuda_stage *stage = NULL;
    void *reach = host;
    if (bi.type == UMPI_CUDA_MEM_HOST) {
        if ((st = umpi_cuda_stage_get(bytes, &stage)) != UMPI_OK)
            return st;
        reach = stage->host;
        if (unpack)
            memcpy(reach, host, bytes);
    }
    CUstream s;
    st = umpi_cuda_copy_stream(&s);
    if (st == UMPI_OK) {
        umpi_dtype_t *t = (umpi_dtype_t *) dt; /* the kernels keep the type's uploaded blocks in it */
        st = unpack ? umpi_cuda_kern_unpack(t, count, reach, buf, s) : umpi_cuda_kern_pack(t, count, buf, reach, s);
        if (st != UMPI_ERR_NOT_FOUND) {
            umpi_status_t w = umpi__sync(s); /* also after a failed launch: what was queued uses the buffers */
            if (st == UMPI_OK)
                st = w;
        }
    }
    if (stage != NULL) {
        if (st == UMPI_OK && !unpack)
            memcpy(host, reach, bytes);
        umpi_cuda_stage_put(stage);
    }
    return st;
}

umpi_status_t umpi_cuda_pack(const umpi_dtype_t *dt, const void *buf, MPI_Count count, void *dst, size_t bytes)
{
    if (bytes == 0)
        return UMPI_OK;
    if (dt->contig)
        return umpi_cuda_copy(dst, (const char *) buf + dt->true_lb, bytes);
    umpi_status_t kst = umpi__kernel_pack(dt, (void *) buf, count, dst, bytes, 0);
    if (kst != UMPI_ERR_NOT_FOUND)
        return kst;
    /* The span the data covers: one copy and a CPU pack when it is dense enough. */
    MPI_Aint ext = dt->extent < 0 ? -dt->extent : dt->extent;
    MPI_Aint span = dt->true_extent + (MPI_Aint) (count - 1) * ext;
    MPI_Aint lo = dt->true_lb + (dt->extent < 0 ? (MPI_Aint) (count - 1) * dt->extent : 0);
    if (span > 0 && (size_t) span <= 2 * bytes) {
        char *tmp = malloc((size_t) span);
        if (tmp == NULL) {
            umpi_status_msg("no memory for a %zd-byte staging copy of a device buffer", (ssize_t) span);
            return UMPI_ERR_NOMEM;
        }
        umpi_status_t st = umpi_cuda_copy(tmp, (const char *) buf + lo, (size_t) span);
        if (st == UMPI_OK) {
            umpi_dtype_pack_range(dt, tmp - lo, count, 0, dst, (MPI_Count) bytes);
            umpi_cuda_slow_path(UMPI_CUDA_STAT_dtype_staged, "cuda: packed %zu bytes of datatype %s from device "
                                "memory through a host copy of its %zd-byte span (no GPU pack kernel: %s)", bytes,
                                dt->name && dt->name[0] ? dt->name : "(derived)", (ssize_t) span, umpi__no_kernel(dt, count, bytes));
        }
        free(tmp);
        return st;
    }
    return umpi__blockwise(dt, (void *) buf, count, dst, bytes, 0);
}

umpi_status_t umpi_cuda_unpack(const umpi_dtype_t *dt, void *buf, MPI_Count count, const void *src, size_t bytes)
{
    if (bytes == 0)
        return UMPI_OK;
    if (dt->contig)
        return umpi_cuda_copy((char *) buf + dt->true_lb, src, bytes);
    umpi_status_t kst = umpi__kernel_pack(dt, buf, count, (void *) src, bytes, 1);
    if (kst != UMPI_ERR_NOT_FOUND)
        return kst;
    return umpi__blockwise(dt, buf, count, (void *) src, bytes, 1);
}

int umpi_cuda_is_device_buf(const void *ptr, size_t len, int *device, umpi_status_t *st)
{
    struct umpi_cuda_buf_info bi;
    *st = umpi_cuda_classify(ptr, len, &bi);
    if (device != NULL)
        *device = bi.device;
    return *st == UMPI_OK && bi.type == UMPI_CUDA_MEM_DEVICE;
}
