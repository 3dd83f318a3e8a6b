/* Collective steps on device buffers through host memory (design: umpi_coll_device.h). */
#include "coll/umpi_coll_device.h"
#include "core/umpi_err.h"
#include "cuda/umpi_cuda_copy.h"
#include "cuda/umpi_cuda_kern.h"
#include "cuda/umpi_cuda_bounce.h"

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

int umpi_coll_dev_offload(umpi_coll_args_t *a, umpi_coll_comm_t *cc, int mode, int *err)
{
    /* Each way asks the members first (one small host exchange), so a call is offered to one way
     * only: within one node the members reach each other's buffers by CUDA IPC (no library, no
     * staging); NCCL serves communicators that span nodes, and one node when
     * UMPI_CUDA_COLL_IPC=0. Both decide the same at every member. */
    *err = MPI_SUCCESS;
    if (cc->nnodes == 1 && umpi_coll_ipc_enabled())
        return umpi_coll_ipc_try(a, cc, mode, err);
    return umpi_coll_nccl_run(a, mode, err);
}

/* ---- small collectives run whole on host copies ---------------------------------------------- */

/* What a call does with its buffers at this process, in elements of its datatypes. */
struct umpi__whole {
    MPI_Count sn, rn; /* elements at sbuf (read), at rbuf (read and/or written) */
    MPI_Count rout;   /* elements written from rbuf's start (rn, or fewer: reduce_scatter_block in place) */
    int rin;          /* rbuf's contents are read (MPI_IN_PLACE, a bcast root) */
};

/* 1 when the kind is served here (and *w filled), 0 otherwise. */
static int umpi__whole_shape(const umpi_coll_args_t *a, struct umpi__whole *w)
{
    int p = a->comm->size, me = a->comm->rank, root = a->root == me, in_place = a->sbuf == MPI_IN_PLACE;
    memset(w, 0, sizeof(*w));
    switch (a->kind) {
    case UMPI_COLL_BCAST:
        w->rn = a->rcount;
        w->rin = root;
        w->rout = root ? 0 : a->rcount;
        return 1;
    case UMPI_COLL_ALLREDUCE:
    case UMPI_COLL_SCAN:
    case UMPI_COLL_EXSCAN:
        w->sn = in_place ? 0 : a->scount;
        w->rn = w->rout = a->rcount;
        /* Exscan leaves rank 0's recvbuf undefined: whatever the host call does there, the
         * device buffer gets back what it held */
        w->rin = in_place || (a->kind == UMPI_COLL_EXSCAN && me == 0);
        return 1;
    case UMPI_COLL_REDUCE:
        w->sn = in_place ? 0 : a->scount;
        if (root) {
            w->rn = w->rout = a->rcount;
            w->rin = in_place;
        }
        return 1;
    case UMPI_COLL_ALLGATHER:
        w->sn = in_place ? 0 : a->scount;
        w->rn = w->rout = a->rcount * p;
        w->rin = in_place;
        return 1;
    case UMPI_COLL_ALLTOALL:
        w->sn = in_place ? 0 : a->scount * p;
        w->rn = w->rout = a->rcount * p;
        w->rin = in_place;
        return 1;
    case UMPI_COLL_GATHER:
        w->sn = in_place || a->sdt == NULL ? 0 : a->scount;
        if (root) {
            w->rn = w->rout = a->rcount * p;
            w->rin = in_place;
        }
        return 1;
    case UMPI_COLL_SCATTER:
        w->sn = root ? a->scount * p : 0;
        w->rn = w->rout = a->rbuf == MPI_IN_PLACE || a->rdt == NULL ? 0 : a->rcount;
        return 1;
    case UMPI_COLL_REDUCE_SCATTER_BLOCK:
        w->sn = in_place ? 0 : a->scount;
        w->rn = in_place ? a->scount : a->rcount;
        w->rout = a->rcount;
        w->rin = in_place;
        return 1;
    default:
        return 0;
    }
}

static int umpi__flat_type(const umpi_dtype_t *dt)
{
    return dt != NULL && dt->contig && dt->extent == (MPI_Aint) dt->size;
}

/* Whether n elements of dt at buf are device memory (*dev its device); an MPI error in *err when
 * the buffer cannot be classified. */
static int umpi__on_device(const void *buf, MPI_Count n, const umpi_dtype_t *dt, int *dev, int *err)
{
    umpi_status_t st;
    if (n <= 0 || buf == NULL || buf == MPI_IN_PLACE)
        return 0;
    int d = umpi_cuda_is_device_buf((const char *) buf + dt->true_lb, (size_t) (n * dt->size), dev, &st);
    if (st != UMPI_OK)
        *err = umpi_err_create(MPI_ERR_BUFFER, "collective buffer %p: %s", buf, umpi_status_last_msg());
    return d;
}

int umpi_coll_dev_whole(umpi_coll_args_t *a, int mode, int *host_only, int *err)
{
    struct umpi__whole w;
    int sdev = 0, rdev = 0, dev = -1;
    *err = MPI_SUCCESS;
    *host_only = a->kind == UMPI_COLL_BARRIER;
    if (a->comm->is_inter || !umpi__whole_shape(a, &w))
        return 0;
    if ((w.sn > 0 && !umpi__flat_type(a->sdt)) || (w.rn > 0 && !umpi__flat_type(a->rdt)))
        return 0; /* derived datatypes: the schedule stages them step by step */
    sdev = umpi__on_device(a->sbuf, w.sn, a->sdt, &dev, err);
    if (*err == MPI_SUCCESS)
        rdev = umpi__on_device(a->rbuf, w.rn, a->rdt, sdev ? NULL : &dev, err);
    if (*err != MPI_SUCCESS)
        return 1;
    if (!sdev && !rdev) {
        *host_only = 1;
        return 0;
    }
    size_t sbytes = sdev ? (size_t) (w.sn * a->sdt->size) : 0, rbytes = rdev ? (size_t) (w.rn * a->rdt->size) : 0;
    if (mode != UMPI_COLL_BLOCKING || sbytes + rbytes > (size_t) umpi_config.cuda_coll_stage_max)
        return 0;

    void *sh = NULL, *rh = NULL;
    const char *sdata = sdev ? (const char *) a->sbuf + a->sdt->true_lb : NULL;
    char *rdata = rdev ? (char *) a->rbuf + a->rdt->true_lb : NULL;
    umpi_status_t st = umpi_cuda_ctx_ensure(dev);
    if (st == UMPI_OK && sdev)
        st = umpi_cuda_bounce_get(sbytes, &sh);
    if (st == UMPI_OK && rdev)
        st = umpi_cuda_bounce_get(rbytes, &rh);
    if (st == UMPI_OK && sdev)
        st = umpi_cuda_copy(sh, sdata, sbytes);
    if (st == UMPI_OK && rdev && w.rin)
        st = umpi_cuda_copy(rh, rdata, rbytes);
    if (st == UMPI_OK) {
        umpi_cuda_slow_path(UMPI_CUDA_STAT_coll_whole, "cuda: %s with %zu bytes of device buffers run whole on "
                            "host copies", umpi_coll_kind_name(a->kind), sbytes + rbytes);
        umpi_coll_args_t h = *a;
        if (sdev)
            h.sbuf = (char *) sh - a->sdt->true_lb;
        if (rdev)
            h.rbuf = (char *) rh - a->rdt->true_lb;
        *err = umpi_coll_post_host(&h, mode, NULL);
        if (*err == MPI_SUCCESS && rdev && w.rout > 0)
            st = umpi_cuda_copy(rdata, rh, (size_t) (w.rout * a->rdt->size));
    }
    umpi_cuda_bounce_put(sh, sbytes);
    umpi_cuda_bounce_put(rh, rbytes);
    if (*err == MPI_SUCCESS && st != UMPI_OK)
        *err = umpi_err_from_status(st, "a collective on device buffers through host copies");
    return 1;
}
