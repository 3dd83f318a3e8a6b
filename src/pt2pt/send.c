/* Sends of every mode: MPI_Send, Ssend, Rsend, Bsend and their nonblocking versions. */
#include "pt2pt/umpi_p2p.h"
#include "cuda/umpi_cuda_copy.h"
#include "pt2pt/umpi_p2p_gpu.h"

#include <stdio.h>
#include <stdlib.h>

static int umpi__send_error(umpi_status_t st, int dest, int world)
{
    char what[96];
    snprintf(what, sizeof(what), "send to rank %d (world rank %d) failed", dest, world);
    return umpi_err_from_status(st, what);
}

/* On a process that uses CUDA: a device buffer goes to the device protocol (gpu_send.c), whose
 * result is returned; -1 for a host buffer, which goes on as usual. Out of line: host-only
 * processes never come here. */
static __attribute__((noinline)) int umpi__send_gpu(const void *buf, MPI_Count count, umpi_dtype_t *dt, size_t bytes,
                                                    int dest, int tag, umpi_comm_t *comm, umpi_send_mode_t mode,
                                                    umpi_request_t *req)
{
    int dev;
    umpi_status_t cst;
    if (umpi_cuda_is_device_buf((const char *) buf + dt->true_lb, dt->contig ? bytes : 1, &dev, &cst))
        return umpi_p2p_gpu_send(buf, count, dt, bytes, dev, dest, tag, comm, mode, req);
    if (cst != UMPI_OK)
        return umpi_err_create(MPI_ERR_BUFFER, "send buffer %p: %s", buf, umpi_status_last_msg());
    return -1;
}

int umpi_p2p_send(const void *buf, MPI_Count count, umpi_dtype_t *dt, int dest, int tag, umpi_comm_t *comm,
                  umpi_send_mode_t mode, umpi_request_t *req)
{
    size_t bytes;
    int err = umpi_p2p_bytes(count, dt, &bytes);
    if (umpi_unlikely(err != MPI_SUCCESS))
        return err;
    if (umpi_unlikely(dest == MPI_PROC_NULL)) {
        if (req != NULL)
            req->done = 1;
        return MPI_SUCCESS;
    }
    if (umpi_unlikely(umpi_cuda_active) && !umpi_cuda_known_host((const char *) buf + dt->true_lb)) {
        int gerr = umpi__send_gpu(buf, count, dt, bytes, dest, tag, comm, mode, req);
        if (gerr >= 0)
            return gerr; /* a device buffer, sent by gpu_send.c (or an error) */
    }

    /* Contiguous data goes as bytes; other types as an iov list or through the UCX generic
     * datatype (p2p_dtype.c), described by a request naming buf, count and dt: req, or for a
     * blocking send one on the stack, which lives until the send completes here. */
    const void *data = (const char *) buf + dt->true_lb;
    size_t len = bytes;
    ucp_datatype_t udt = UMPI_UCX_DT_BYTES;
    umpi_request_t view;
    view.tmp = NULL;
    if (umpi_unlikely(!dt->contig)) {
        umpi_request_t *v = req != NULL ? req : &view;
        if (req != NULL && req->dt != dt) {
            umpi_dtype_retain(dt); /* the engine reads dt until the send completes */
            if (req->dt != NULL)
                umpi_dtype_release(req->dt);
        }
        v->buf = buf;
        v->count = count;
        v->dt = dt;
        err = umpi_p2p_dt_target(v, bytes, (void **) &data, &len, &udt);
        if (umpi_unlikely(err != MPI_SUCCESS))
            return err;
    }

    ucp_ep_h ep;
    void *ucx_req;
    int world = umpi_comm_to_world(comm, dest);
    umpi_status_t st = umpi_ucx_ep(world, &ep);
    if (umpi_likely(st == UMPI_OK))
        st = umpi_ucx_send_dt(ep, data, len, udt, umpi_ucx_send_tag(comm->context_id, comm->rank, tag),
                              mode == UMPI_SEND_SYNC, req, &ucx_req);
    if (umpi_unlikely(st != UMPI_OK)) {
        free(view.tmp);
        return umpi__send_error(st, dest, world);
    }
    umpi_debug(3, "send %zu bytes to rank %d tag %d (context %u, %s)", bytes, dest, tag, comm->context_id,
               ucx_req ? "in flight" : "done");

    if (req == NULL && ucx_req != NULL) {
        /* Blocking send: wait for UCX's request here, no MPI request needed. */
        ucs_status_t s = umpi_ucx_wait(ucx_req);
        if (s != UCS_OK)
            err = umpi__send_error(umpi_ucx_status(s, "send completion"), dest, world);
    }
    free(view.tmp);
    return err;
}

static int umpi__send_blocking(const void *buf, MPI_Count count, umpi_dtype_t *dt, int dest, int tag,
                               umpi_comm_t *comm, umpi_send_mode_t mode)
{
    umpi_lock();
    int err = mode == UMPI_SEND_BUFFERED ? umpi_p2p_bsend(buf, count, dt, dest, tag, comm)
                                         : umpi_p2p_send(buf, count, dt, dest, tag, comm, mode, NULL);
    umpi_unlock();
    return err;
}

static int umpi__send_nonblocking(const void *buf, MPI_Count count, umpi_dtype_t *dt, int dest, int tag,
                                  umpi_comm_t *comm, umpi_send_mode_t mode, MPI_Request *request)
{
    int err;
    umpi_lock();
    umpi_request_t *r = umpi_request_alloc(UMPI_REQ_SEND, comm);
    if (umpi_unlikely(r == NULL)) {
        err = umpi_err_create(MPI_ERR_OTHER, "out of memory allocating a request");
        goto out;
    }
    r->mode = (uint8_t) mode;
    if (mode == UMPI_SEND_BUFFERED) {
        /* The data is in the attached buffer when MPI_Ibsend returns: the request is complete. */
        err = umpi_p2p_bsend(buf, count, dt, dest, tag, comm);
        r->kind = UMPI_REQ_DONE;
        r->done = 1;
    } else {
        err = umpi_p2p_send(buf, count, dt, dest, tag, comm, mode, r);
    }
    if (umpi_unlikely(err != MPI_SUCCESS)) {
        umpi_request_release(r);
        goto out;
    }
    *request = r->handle;
out:
    umpi_unlock();
    return err;
}

int umpi_impl_send(const void *buf, MPI_Count count, umpi_dtype_t *datatype_ptr, int dest, int tag,
                   umpi_comm_t *comm_ptr)
{
    return umpi__send_blocking(buf, count, datatype_ptr, dest, tag, comm_ptr, UMPI_SEND_STANDARD);
}

int umpi_impl_ssend(const void *buf, MPI_Count count, umpi_dtype_t *datatype_ptr, int dest, int tag,
                    umpi_comm_t *comm_ptr)
{
    return umpi__send_blocking(buf, count, datatype_ptr, dest, tag, comm_ptr, UMPI_SEND_SYNC);
}

/* Ready mode is the user's promise that the receive is posted; a standard send honours it. */
int umpi_impl_rsend(const void *buf, MPI_Count count, umpi_dtype_t *datatype_ptr, int dest, int tag,
                    umpi_comm_t *comm_ptr)
{
    return umpi__send_blocking(buf, count, datatype_ptr, dest, tag, comm_ptr, UMPI_SEND_READY);
}

int umpi_impl_bsend(const void *buf, MPI_Count count, umpi_dtype_t *datatype_ptr, int dest, int tag,
                    umpi_comm_t *comm_ptr)
{
    return umpi__send_blocking(buf, count, datatype_ptr, dest, tag, comm_ptr, UMPI_SEND_BUFFERED);
}

int umpi_impl_isend(const void *buf, MPI_Count count, umpi_dtype_t *datatype_ptr, int dest, int tag,
                    umpi_comm_t *comm_ptr, MPI_Request *request)
{
    return umpi__send_nonblocking(buf, count, datatype_ptr, dest, tag, comm_ptr, UMPI_SEND_STANDARD, request);
}

int umpi_impl_issend(const void *buf, MPI_Count count, umpi_dtype_t *datatype_ptr, int dest, int tag,
                     umpi_comm_t *comm_ptr, MPI_Request *request)
{
    return umpi__send_nonblocking(buf, count, datatype_ptr, dest, tag, comm_ptr, UMPI_SEND_SYNC, request);
}

int umpi_impl_irsend(const void *buf, MPI_Count count, umpi_dtype_t *datatype_ptr, int dest, int tag,
                     umpi_comm_t *comm_ptr, MPI_Request *request)
{
    return umpi__send_nonblocking(buf, count, datatype_ptr, dest, tag, comm_ptr, UMPI_SEND_READY, request);
}

int umpi_impl_ibsend(const void *buf, MPI_Count count, umpi_dtype_t *datatype_ptr, int dest, int tag,
                     umpi_comm_t *comm_ptr, MPI_Request *request)
{
    return umpi__send_nonblocking(buf, count, datatype_ptr, dest, tag, comm_ptr, UMPI_SEND_BUFFERED, request);
}
