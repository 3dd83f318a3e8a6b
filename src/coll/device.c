/* Collective steps on device buffers through host memory (design: umpi_coll_device.h). */
#include "coll/umpi_coll_device.h"
#include "core/umpi_err.h"
#include "cuda/umpi_cuda_copy.h"

#include <stdlib.h>

int umpi_coll_dev_flag(const void *buf, MPI_Count count, const umpi_dtype_t *dt, int flag, int *err)
{
    umpi_status_t st;
    size_t bytes = (size_t) (count * dt->size);
    int dev;
    *err = MPI_SUCCESS;
    if (buf == MPI_IN_PLACE || bytes == 0)
        return 0;
    if (umpi_cuda_is_device_buf((const char *) buf + dt->true_lb, dt->contig ? bytes : 1, &dev, &st)) {
        st = umpi_cuda_ctx_ensure(dev);
        if (st == UMPI_OK)
            return flag;
    }
    if (st != UMPI_OK)
        *err = umpi_err_create(MPI_ERR_BUFFER, "collective buffer %p: %s", buf, umpi_status_last_msg());
    return 0;
}

static int umpi__err(umpi_status_t st, const char *what)
{
    return st == UMPI_OK ? MPI_SUCCESS : umpi_err_from_status(st, what);
}

int umpi_coll_dev_pack(const void *buf, MPI_Count count, umpi_dtype_t *dt, void *bounce)
{
    size_t bytes = (size_t) (count * dt->size);
    umpi_cuda_slow_path(UMPI_CUDA_STAT_coll_staged, "cuda: a collective sends %zu bytes of device memory through "
                        "a host bounce", bytes);
    return umpi__err(umpi_cuda_pack(dt, buf, count, bounce, bytes), "copying a collective's device buffer to host");
}

int umpi_coll_dev_unpack(void *buf, MPI_Count count, umpi_dtype_t *dt, const void *bounce, size_t bytes)
{
    umpi_cuda_slow_path(UMPI_CUDA_STAT_coll_staged, "cuda: a collective receives %zu bytes into device memory "
                        "through a host bounce", bytes);
    return umpi__err(umpi_cuda_unpack(dt, buf, count, bounce, bytes), "copying a collective's data to device memory");
}

/* Host copy of the span that count elements of dt at buf cover; *shift: subtract from the copy's
 * address to get a buffer laid out as buf. */
static int umpi__span_in(const void *buf, MPI_Count count, const umpi_dtype_t *dt, char **tmp, MPI_Aint *lo)
{
    MPI_Aint ext = dt->extent < 0 ? -dt->extent : dt->extent;
    MPI_Aint span = dt->true_extent + (MPI_Aint) (count - 1) * ext;
    *lo = dt->true_lb + (dt->extent < 0 ? (MPI_Aint) (count - 1) * dt->extent : 0);
    *tmp = malloc(span > 0 ? (size_t) span : 1);
    if (*tmp == NULL)
        return umpi_err_create(MPI_ERR_NO_MEM, "out of memory staging %zd bytes of a device buffer", (ssize_t) span);
    umpi_status_t st = span > 0 ? umpi_cuda_copy(*tmp, (const char *) buf + *lo, (size_t) span) : UMPI_OK;
    if (st != UMPI_OK) {
        free(*tmp);
        *tmp = NULL;
    }
    return umpi__err(st, "copying a reduction operand from device memory");
}

int umpi_coll_dev_reduce(const umpi_op_t *op, const void *in, void *inout, MPI_Count count, umpi_dtype_t *dt,
                         int flags)
{
    size_t bytes = (size_t) (count * dt->size);
    if (bytes == 0)
        return MPI_SUCCESS;
    umpi_cuda_slow_path(UMPI_CUDA_STAT_reduce_staged, "cuda: a reduction of %zu bytes on device memory computed "
                        "by the CPU (GPU reduction kernels: later)", bytes);
    char *a = NULL, *b = NULL, *packed = NULL;
    MPI_Aint alo = 0, blo = 0;
    int err = MPI_SUCCESS;
    if (flags & UMPI_COLL_DEV_IN)
        err = umpi__span_in(in, count, dt, &a, &alo);
    if (err == MPI_SUCCESS && (flags & UMPI_COLL_DEV_OUT))
        err = umpi__span_in(inout, count, dt, &b, &blo);
    if (err != MPI_SUCCESS)
        goto out;
    const void *hin = a != NULL ? (const void *) (a - alo) : in;
    void *hout = b != NULL ? (void *) (b - blo) : inout;
    umpi_op_apply(op, hin, hout, count, dt);
    if (b != NULL) {
        /* back to the device: the whole span when contiguous, else only the type map's bytes (the
         * gaps are not the buffer's) */
        if (dt->contig) {
            err = umpi__err(umpi_cuda_copy((char *) inout + dt->true_lb, (char *) hout + dt->true_lb, bytes),
                            "copying a reduction's result to device memory");
        } else {
            packed = malloc(bytes);
            if (packed == NULL) {
                err = umpi_err_create(MPI_ERR_NO_MEM, "out of memory staging a reduction's result");
                goto out;
            }
            umpi_dtype_pack(dt, hout, count, packed);
            err = umpi__err(umpi_cuda_unpack(dt, inout, count, packed, bytes),
                            "copying a reduction's result to device memory");
        }
    }
out:
    free(a);
    free(b);
    free(packed);
    return err;
}

int umpi_coll_dev_copy(const void *src, MPI_Count scount, umpi_dtype_t *sdt, void *dst, MPI_Count rcount,
                       umpi_dtype_t *rdt, int flags)
{
    MPI_Count bytes = scount * sdt->size, room = rcount * rdt->size;
    if (bytes > room)
        bytes = room;
    if (bytes == 0)
        return MPI_SUCCESS;
    umpi_cuda_slow_path(UMPI_CUDA_STAT_coll_staged, "cuda: a collective copies %lld bytes %s device memory",
                        (long long) bytes, flags == (UMPI_COLL_DEV_IN | UMPI_COLL_DEV_OUT) ? "within"
                                           : flags & UMPI_COLL_DEV_IN ? "out of" : "into");
    if (sdt->contig && rdt->contig)
        return umpi__err(umpi_cuda_copy((char *) dst + rdt->true_lb, (const char *) src + sdt->true_lb, (size_t) bytes),
                         "copying a collective's data");
    char *tmp = malloc((size_t) bytes);
    if (tmp == NULL)
        return umpi_err_create(MPI_ERR_NO_MEM, "out of memory staging a %lld-byte copy", (long long) bytes);
    umpi_status_t st = UMPI_OK;
    if (flags & UMPI_COLL_DEV_IN)
        st = umpi_cuda_pack(sdt, src, scount, tmp, (size_t) bytes);
    else
        umpi_dtype_pack_range(sdt, src, scount, 0, tmp, bytes);
    if (st == UMPI_OK && (flags & UMPI_COLL_DEV_OUT))
        st = umpi_cuda_unpack(rdt, dst, rcount, tmp, (size_t) bytes);
    else if (st == UMPI_OK)
        umpi_dtype_unpack_range(rdt, dst, rcount, 0, tmp, bytes);
    free(tmp);
    return umpi__err(st, "copying a collective's data through host memory");
}
