/* Persistent requests: MPI_Send_init and friends, MPI_Recv_init, MPI_Start, MPI_Startall. */
#include "pt2pt/umpi_p2p.h"
#include "coll/umpi_sched.h"

/* An inactive persistent request holding the operation's arguments. */
static int umpi__persistent_new(umpi_req_kind_t kind, const void *buf, MPI_Count count, umpi_dtype_t *dt, int peer,
                                int tag, umpi_comm_t *comm, umpi_send_mode_t mode, MPI_Request *request)
{
    int err = MPI_SUCCESS;
    umpi_lock();
    umpi_request_t *r = umpi_request_alloc(kind, comm);
    if (r == NULL) {
        err = umpi_err_create(MPI_ERR_OTHER, "out of memory allocating a request");
        goto out;
    }
    r->persistent = 1;
    r->buf = buf;
    r->count = count;
    r->dt = dt;
    umpi_dtype_retain(dt); /* the request outlives MPI_Type_free */
    r->peer = peer;
    r->tag = tag;
    r->mode = (uint8_t) mode;
    *request = r->handle;
out:
    umpi_unlock();
    return err;
}

static int umpi__psend_init(const void *buf, MPI_Count count, umpi_dtype_t *dt, int dest, int tag,
                            umpi_comm_t *comm, umpi_send_mode_t mode, MPI_Request *request)
{
    return umpi__persistent_new(UMPI_REQ_SEND, buf, count, dt, dest, tag, comm, mode, request);
}

int umpi_impl_send_init(const void *buf, MPI_Count count, umpi_dtype_t *datatype_ptr, int dest, int tag,
                        umpi_comm_t *comm_ptr, MPI_Request *request)
{
    return umpi__psend_init(buf, count, datatype_ptr, dest, tag, comm_ptr, UMPI_SEND_STANDARD, request);
}

int umpi_impl_ssend_init(const void *buf, MPI_Count count, umpi_dtype_t *datatype_ptr, int dest, int tag,
                         umpi_comm_t *comm_ptr, MPI_Request *request)
{
    return umpi__psend_init(buf, count, datatype_ptr, dest, tag, comm_ptr, UMPI_SEND_SYNC, request);
}

int umpi_impl_rsend_init(const void *buf, MPI_Count count, umpi_dtype_t *datatype_ptr, int dest, int tag,
                         umpi_comm_t *comm_ptr, MPI_Request *request)
{
    return umpi__psend_init(buf, count, datatype_ptr, dest, tag, comm_ptr, UMPI_SEND_READY, request);
}

int umpi_impl_bsend_init(const void *buf, MPI_Count count, umpi_dtype_t *datatype_ptr, int dest, int tag,
                         umpi_comm_t *comm_ptr, MPI_Request *request)
{
    return umpi__psend_init(buf, count, datatype_ptr, dest, tag, comm_ptr, UMPI_SEND_BUFFERED, request);
}

int umpi_impl_recv_init(void *buf, MPI_Count count, umpi_dtype_t *datatype_ptr, int source, int tag,
                        umpi_comm_t *comm_ptr, MPI_Request *request)
{
    return umpi__persistent_new(UMPI_REQ_RECV, buf, count, datatype_ptr, source, tag, comm_ptr, UMPI_SEND_STANDARD,
                                request);
}

static int umpi__start(MPI_Request h, int index)
{
    umpi_request_t *r;
    int err = umpi_p2p_request_lookup(h, index < 0 ? "request" : "array_of_requests", index, &r);
    if (err != MPI_SUCCESS)
        return err;
    if (r == NULL || !r->persistent)
        return umpi_err_create(MPI_ERR_REQUEST, "request 0x%x is not a persistent request", (unsigned) h);
    if (r->active)
        return umpi_err_create(MPI_ERR_REQUEST, "persistent request 0x%x is already active", (unsigned) h);
    r->active = 1;
    r->done = 0;
    r->net_status = 0;
    r->ucx_req = NULL;
    r->status.count_lo = 0;
    r->status.count_hi_and_cancelled = 0;
    r->slow_done = 0;
    if (r->kind == UMPI_REQ_COLL)
        err = umpi_sched_start_request(r);
    else if (r->kind == UMPI_REQ_RECV)
        err = umpi_p2p_irecv_start(r);
    else if (r->mode == UMPI_SEND_BUFFERED) {
        err = umpi_p2p_bsend(r->buf, r->count, r->dt, r->peer, r->tag, r->comm);
        r->done = 1;
    } else
        err = umpi_p2p_send(r->buf, r->count, r->dt, r->peer, r->tag, r->comm, (umpi_send_mode_t) r->mode, r);
    if (err != MPI_SUCCESS)
        r->active = 0;
    return err;
}

int umpi_impl_start(MPI_Request *request)
{
    umpi_lock();
    int err = umpi__start(*request, -1);
    umpi_unlock();
    return err;
}

int umpi_impl_startall(int count, MPI_Request array_of_requests[])
{
    int err = MPI_SUCCESS;
    umpi_lock();
    for (int i = 0; i < count && err == MPI_SUCCESS; i++)
        err = umpi__start(array_of_requests[i], i);
    umpi_unlock();
    return err;
}
