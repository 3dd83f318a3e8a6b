/* Persistent point-to-point requests: MPI_Send_init and friends, MPI_Recv_init, and their start
 * (MPI_Start, which starts persistent collectives too, is in src/coll/start.c). */
#include "pt2pt/umpi_p2p.h"

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

int umpi_p2p_persistent_start(umpi_request_t *r)
{
    if (r->kind == UMPI_REQ_RECV)
        return umpi_p2p_irecv_start(r);
    if (r->mode == UMPI_SEND_BUFFERED) {
        int err = umpi_p2p_bsend(r->buf, r->count, r->dt, r->peer, r->tag, r->comm);
        r->done = 1;
        return err;
    }
    return umpi_p2p_send(r->buf, r->count, r->dt, r->peer, r->tag, r->comm, (umpi_send_mode_t) r->mode, r);
}
