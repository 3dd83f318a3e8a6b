/* The steps of a collective schedule on device buffers, through host memory (design:
 * umpi_coll_device.h): which buffers are device memory, packs, unpacks, copies and reductions. */
#include "coll/umpi_coll_device.h"
#include "core/umpi_err.h"
#include "cuda/umpi_cuda_copy.h"
#include "cuda/umpi_cuda_kern.h"

#include <stdlib.h>
#include <string.h>

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

int umpi_coll_dev_reduce(const umpi_op_t *op, const void *in, void *inout, MPI_Count count, umpi_dtype_t *dt,
                         int flags)
{
    int err = MPI_SUCCESS;
    (void) flags;   /* the kernels' entry classifies the buffers itself */
    if (count == 0 || dt->size == 0)
        return MPI_SUCCESS;
    /* both operands on one GPU: our reduction kernel there; otherwise (or no kernel for this op and
     * type) through host copies, counted as reduce_staged */
    if (!umpi_cuda_kern_reduce_local(op, in, inout, count, dt, &err))
        umpi_op_apply(op, in, inout, count, dt);   /* not device memory after all */
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

