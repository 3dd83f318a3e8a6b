/*
 * Device buffers' collectives taken whole, past the schedule: offloaded to CUDA IPC within a node
 * (device_ipc.c) or NCCL (nccl.c), or, small and blocking, run on host copies (design:
 * umpi_coll_device.h). The steps of a schedule on device buffers are in device_stage.c.
 */
#include "coll/umpi_coll_device.h"
#include "core/umpi_err.h"
#include "cuda/umpi_cuda_bounce.h"
#include "cuda/umpi_cuda_copy.h"

#include <stdlib.h>
#include <string.h>

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

int umpi_coll_dev_whole_begin(umpi_coll_args_t *a, int mode, int *host_only, umpi_coll_dev_whole_t *wh,
                              umpi_coll_args_t *h, int *err)
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

    *wh = (umpi_coll_dev_whole_t) {.sbytes = sbytes, .rbytes = rbytes};
    const char *sdata = sdev ? (const char *) a->sbuf + a->sdt->true_lb : NULL;
    char *rdata = rdev ? (char *) a->rbuf + a->rdt->true_lb : NULL;
    umpi_status_t st = umpi_cuda_ctx_ensure(dev);
    if (st == UMPI_OK && sdev)
        st = umpi_cuda_bounce_get(sbytes, &wh->sh);
    if (st == UMPI_OK && rdev)
        st = umpi_cuda_bounce_get(rbytes, &wh->rh);
    if (st == UMPI_OK && sdev)
        st = umpi_cuda_copy(wh->sh, sdata, sbytes);
    if (st == UMPI_OK && rdev && w.rin)
        st = umpi_cuda_copy(wh->rh, rdata, rbytes);
    if (st != UMPI_OK) {
        *err = umpi_err_from_status(st, "a collective on device buffers through host copies");
        umpi_coll_dev_whole_end(wh, *err);
        return 1;
    }
    umpi_cuda_slow_path(UMPI_CUDA_STAT_coll_whole, "cuda: %s with %zu bytes of device buffers run whole on "
                        "host copies", umpi_coll_kind_name(a->kind), sbytes + rbytes);
    *h = *a;
    if (sdev)
        h->sbuf = (char *) wh->sh - a->sdt->true_lb;
    if (rdev) {
        h->rbuf = (char *) wh->rh - a->rdt->true_lb;
        wh->rdata = rdata;
        wh->rout = (size_t) (w.rout * a->rdt->size);
    }
    wh->running = 1;
    return 1;
}

int umpi_coll_dev_whole_end(umpi_coll_dev_whole_t *wh, int err)
{
    umpi_status_t st = UMPI_OK;
    if (wh->running && err == MPI_SUCCESS && wh->rdata != NULL && wh->rout > 0)
        st = umpi_cuda_copy(wh->rdata, wh->rh, wh->rout);
    umpi_cuda_bounce_put(wh->sh, wh->sbytes);
    umpi_cuda_bounce_put(wh->rh, wh->rbytes);
    if (err == MPI_SUCCESS && st != UMPI_OK)
        err = umpi_err_from_status(st, "a collective on device buffers through host copies");
    return err;
}
