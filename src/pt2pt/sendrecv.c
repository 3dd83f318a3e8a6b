/* MPI_Sendrecv and MPI_Sendrecv_replace: the receive is posted first, so two ranks exchanging
 * with each other never wait on each other's send. */
#include "pt2pt/umpi_p2p.h"
#include "cuda/umpi_cuda_copy.h"

#include <stdlib.h>
#include <string.h>

/* Sends, then completes the posted receive; a failed send still completes (cancels) the receive. */
static int umpi__send_then_wait(const void *sendbuf, MPI_Count sendcount, umpi_dtype_t *sendtype, int dest,
                                int sendtag, umpi_comm_t *comm, umpi_request_t *r, MPI_Status *status)
{
    int err = umpi_p2p_send(sendbuf, sendcount, sendtype, dest, sendtag, comm, UMPI_SEND_STANDARD, NULL);
    if (err != MPI_SUCCESS && !r->done && r->ucx_req != NULL)
        umpi_ucx_cancel(r->ucx_req);
    umpi_progress_wait(&r->done);
    MPI_Request h = r->handle;
    int rerr = umpi_p2p_request_complete(r, &h, status);
    return err != MPI_SUCCESS ? err : rerr;
}

int umpi_impl_sendrecv(const void *sendbuf, MPI_Count sendcount, umpi_dtype_t *sendtype_ptr, int dest, int sendtag,
                       void *recvbuf, MPI_Count recvcount, umpi_dtype_t *recvtype_ptr, int source, int recvtag,
                       umpi_comm_t *comm_ptr, MPI_Status *status)
{
    umpi_request_t *r;
    umpi_lock();
    int err = umpi_p2p_irecv(recvbuf, recvcount, recvtype_ptr, source, recvtag, comm_ptr, &r);
    if (err == MPI_SUCCESS)
        err = umpi__send_then_wait(sendbuf, sendcount, sendtype_ptr, dest, sendtag, comm_ptr, r, status);
    umpi_unlock();
    return err;
}

/* The message arrives in a staging buffer (as packed bytes) while buf is being sent, then replaces buf. */
int umpi_impl_sendrecv_replace(void *buf, MPI_Count count, umpi_dtype_t *datatype_ptr, int dest, int sendtag,
                               int source, int recvtag, umpi_comm_t *comm_ptr, MPI_Status *status)
{
    umpi_dtype_t *dt = datatype_ptr;
    umpi_request_t *r;
    size_t bytes;
    int err = umpi_p2p_bytes(count, dt, &bytes);
    if (err != MPI_SUCCESS)
        return err;
    void *tmp = malloc(bytes ? bytes : 1);
    if (tmp == NULL)
        return umpi_err_create(MPI_ERR_OTHER, "out of memory staging %zu bytes", bytes);
    umpi_lock();
    err = umpi_p2p_irecv(tmp, (MPI_Count) bytes, umpi_dtype_get(MPI_BYTE), source, recvtag, comm_ptr, &r);
    if (err == MPI_SUCCESS) {
        MPI_Status st;
        err = umpi__send_then_wait(buf, count, dt, dest, sendtag, comm_ptr, r, &st);
        int dev;
        umpi_status_t cst;
        if (err == MPI_SUCCESS || umpi_err_class(err) == MPI_ERR_TRUNCATE) {
            MPI_Count got = umpi_status_get_bytes(&st);
            if (got > (MPI_Count) bytes)
                got = (MPI_Count) bytes;
            if (umpi_unlikely(umpi_cuda_active) &&
                umpi_cuda_is_device_buf((char *) buf + dt->true_lb, dt->contig ? bytes : 1, &dev, &cst)) {
                cst = umpi_cuda_unpack(dt, buf, count, tmp, (size_t) got); /* into device memory */
                if (cst != UMPI_OK && err == MPI_SUCCESS)
                    err = umpi_err_from_status(cst, "copying the received message into the device buffer");
            } else if (dt->contig)
                memcpy((char *) buf + dt->true_lb, tmp, (size_t) got);
            else
                umpi_dtype_unpack(dt, tmp, got, buf);
        }
        if (status != MPI_STATUS_IGNORE) {
            status->MPI_SOURCE = st.MPI_SOURCE;
            status->MPI_TAG = st.MPI_TAG;
            status->count_lo = st.count_lo;
            status->count_hi_and_cancelled = st.count_hi_and_cancelled;
        }
    }
    umpi_unlock();
    free(tmp);
    return err;
}
