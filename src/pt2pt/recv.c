/* Receives, probes and matched messages: MPI_Recv, Irecv, Probe, Iprobe, Mprobe, Improbe, Mrecv, Imrecv. */
#include "pt2pt/umpi_p2p.h"
#include "cuda/umpi_cuda_copy.h"
#include "pt2pt/umpi_p2p_gpu.h"

#include <stdlib.h>

static void umpi__status_proc_null(MPI_Status *status)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    status->MPI_SOURCE = MPI_PROC_NULL;
    status->MPI_TAG = MPI_ANY_TAG;
    status->count_lo = 0;
    status->count_hi_and_cancelled = 0;
}

static void umpi__status_from_info(MPI_Status *status, const ucp_tag_recv_info_t *info)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    status->MPI_SOURCE = umpi_ucx_tag_source(info->sender_tag);
    status->MPI_TAG = umpi_ucx_tag_tag(info->sender_tag);
    status->count_hi_and_cancelled = 0;
    umpi_status_set_bytes(status, (MPI_Count) info->length);
}

/* Where UCX delivers: contiguous data straight into the buffer; other types as an iov list or
 * through the UCX generic datatype, unpacked fragment by fragment as they arrive (p2p_dtype.c). */
static int umpi__recv_target(umpi_request_t *r, size_t bytes, void **data, size_t *len, ucp_datatype_t *udt)
{
    if (umpi_likely(r->dt->contig)) {
        *data = (char *) r->buf + r->dt->true_lb;
        *len = bytes;
        *udt = UMPI_UCX_DT_BYTES;
        return MPI_SUCCESS;
    }
    return umpi_p2p_dt_target(r, bytes, data, len, udt);
}

static int umpi__recv_error(umpi_status_t st, int source)
{
    char what[80];
    snprintf(what, sizeof(what), "receive from rank %d failed", source);
    return umpi_err_from_status(st, what);
}

/* On a GPU machine: whether the receive buffer is device memory (*dev its device); an error code
 * in *err when it cannot be classified. */
static int umpi__recv_on_device(const void *buf, const umpi_dtype_t *dt, size_t bytes, int *dev, int *err)
{
    umpi_status_t cst;
    int d = umpi_cuda_is_device_buf((const char *) buf + dt->true_lb, dt->contig ? bytes : 1, dev, &cst);
    *err = cst == UMPI_OK ? MPI_SUCCESS
                          : umpi_err_create(MPI_ERR_BUFFER, "receive buffer %p: %s", buf, umpi_status_last_msg());
    return d;
}

static int umpi__matched_recv(umpi_request_t *r, size_t bytes);

/* A message held by a probe (umpi_p2p_gpu_held_find) matching r: r becomes its receive. */
static int umpi__take_held(umpi_request_t *r)
{
    ucp_tag_t t;
    size_t len;
    ucp_tag_message_h msg;
    void *env;
    if (!umpi_p2p_gpu_held_find(r->comm->context_id, r->peer, r->tag, 1, &t, &len, &msg, &env))
        return 0;
    free(r->tmp);
    r->tmp = env;
    r->ucx_msg = msg;
    r->status.MPI_SOURCE = umpi_ucx_tag_source(t);
    r->status.MPI_TAG = umpi_ucx_tag_tag(t);
    umpi_status_set_bytes(&r->status, (MPI_Count) len);
    return 1;
}

/* Posts r's receive into its (host) buffer; env_bit: UMPI_P2P_GPU_ENVELOPE_BIT when the receive
 * can hold a device message (then it matches envelopes too), else 0. */
static inline __attribute__((always_inline)) int umpi__post_recv(umpi_request_t *r, size_t bytes, ucp_tag_t env_bit)
{
    void *data, *ucx_req;
    ucp_tag_t tag, mask;
    size_t len;
    ucp_datatype_t udt;
    int err = umpi__recv_target(r, bytes, &data, &len, &udt);
    if (umpi_unlikely(err != MPI_SUCCESS))
        return err;
    umpi_ucx_recv_tag(r->comm->context_id, r->peer, r->tag, &tag, &mask);
    umpi_status_t st = umpi_ucx_recv_dt(data, len, udt, tag, mask & ~env_bit, r, &ucx_req);
    if (umpi_unlikely(st != UMPI_OK))
        return umpi__recv_error(st, r->peer);
    if (r->done && r->slow_done)
        umpi_p2p_complete_slow(r);
    return MPI_SUCCESS;
}

/* A receive on a process that uses CUDA (umpi_p2p_gpu.h): a message a probe holds, a device
 * buffer, or a host buffer that can hold a device message and so matches envelopes too. Out of
 * line: host-only processes never come here. */
static __attribute__((noinline)) int umpi__irecv_start_gpu(umpi_request_t *r, size_t bytes)
{
    int dev, err;
    if (umpi_p2p_gpu_held_count && umpi__take_held(r))
        return umpi__matched_recv(r, bytes);
    if (umpi__recv_on_device(r->buf, r->dt, bytes, &dev, &err) || err != MPI_SUCCESS)
        return err != MPI_SUCCESS ? err : umpi_p2p_gpu_irecv(r, bytes, dev);
    return umpi__post_recv(r, bytes, bytes > umpi_p2p_gpu_envelope_min ? UMPI_P2P_GPU_ENVELOPE_BIT : 0);
}

int umpi_p2p_irecv_start(umpi_request_t *r)
{
    size_t bytes;
    int err = umpi_p2p_bytes(r->count, r->dt, &bytes);
    if (umpi_unlikely(err != MPI_SUCCESS))
        return err;
    if (umpi_unlikely(r->peer == MPI_PROC_NULL)) {
        umpi__status_proc_null(&r->status);
        r->done = 1;
        return MPI_SUCCESS;
    }
    if (umpi_unlikely(umpi_cuda_active) && (umpi_p2p_gpu_held_count || bytes > umpi_p2p_gpu_envelope_min ||
                                             !umpi_cuda_known_host((const char *) r->buf + r->dt->true_lb)))
        return umpi__irecv_start_gpu(r, bytes); /* the GPU machine's cases (umpi_p2p_gpu.h) */
    return umpi__post_recv(r, bytes, 0);
}

int umpi_p2p_irecv(void *buf, MPI_Count count, umpi_dtype_t *dt, int source, int tag, umpi_comm_t *comm,
                   umpi_request_t **out)
{
    umpi_request_t *r = umpi_request_alloc(UMPI_REQ_RECV, comm);
    if (umpi_unlikely(r == NULL))
        return umpi_err_create(MPI_ERR_OTHER, "out of memory allocating a request");
    r->buf = buf;
    r->count = count;
    r->dt = dt;
    umpi_dtype_retain(dt); /* until the request is released: MPI_Type_free may come first */
    r->peer = source;
    r->tag = tag;
    int err = umpi_p2p_irecv_start(r);
    if (umpi_unlikely(err != MPI_SUCCESS)) {
        umpi_request_release(r);
        return err;
    }
    *out = r;
    return MPI_SUCCESS;
}

int umpi_impl_irecv(void *buf, MPI_Count count, umpi_dtype_t *datatype_ptr, int source, int tag,
                    umpi_comm_t *comm_ptr, MPI_Request *request)
{
    umpi_request_t *r;
    umpi_lock();
    int err = umpi_p2p_irecv(buf, count, datatype_ptr, source, tag, comm_ptr, &r);
    if (umpi_likely(err == MPI_SUCCESS))
        *request = r->handle;
    umpi_unlock();
    return err;
}

/* Blocking receive of a request-backed operation (non-contiguous types). */
static int umpi__recv_with_request(void *buf, MPI_Count count, umpi_dtype_t *dt, int source, int tag,
                                   umpi_comm_t *comm, MPI_Status *status)
{
    umpi_request_t *r;
    int err = umpi_p2p_irecv(buf, count, dt, source, tag, comm, &r);
    if (err != MPI_SUCCESS)
        return err;
    umpi_progress_wait(&r->done);
    MPI_Request h = r->handle;
    return umpi_p2p_request_complete(r, &h, status);
}

/* MPI_Recv on a process that uses CUDA: MPI_SUCCESS when the receive needs a request (a message a
 * probe holds, a device buffer, a buffer that can hold a device message and so may meet its
 * envelope), an MPI error code when the buffer cannot be classified, -1 for the fast path. */
static __attribute__((noinline)) int umpi__recv_gpu_kind(const void *buf, const umpi_dtype_t *dt, size_t bytes)
{
    int dev, err;
    if (umpi_p2p_gpu_held_count || bytes > umpi_p2p_gpu_envelope_min ||
        umpi__recv_on_device(buf, dt, bytes, &dev, &err))
        return MPI_SUCCESS;
    return err != MPI_SUCCESS ? err : -1;
}

struct umpi_p2p_waiting_recv *umpi_p2p_recv_waiting;

/* MPI_Recv's request-less wait on a process that uses CUDA: listed, so that a longer device
 * message whose envelope passed this receive by can be handed to it (gpu_late.c).
 * Returns nonzero when that happened: the UCX receive is cancelled, receive again. */
static __attribute__((noinline)) int umpi__recv_wait_gpu(struct umpi_ucx_recv_wait *w, umpi_comm_t *comm, int source,
                                                         int tag)
{
    struct umpi_p2p_waiting_recv n = { .next = umpi_p2p_recv_waiting, .context = comm->context_id, .source = source,
                                       .tag = tag, .wait = w };
    umpi_waiter_t waiter = {0};
    umpi_p2p_recv_waiting = &n;
    while (!w->done)
        umpi_progress_step(&waiter);
    /* others may have listed and left theirs meanwhile (MPI_THREAD_MULTIPLE) */
    for (struct umpi_p2p_waiting_recv **pp = &umpi_p2p_recv_waiting; *pp != NULL; pp = &(*pp)->next)
        if (*pp == &n) {
            *pp = n.next;
            break;
        }
    return n.redirected;
}

int umpi_impl_recv(void *buf, MPI_Count count, umpi_dtype_t *datatype_ptr, int source, int tag,
                   umpi_comm_t *comm_ptr, MPI_Status *status)
{
    size_t bytes;
    ucp_tag_t utag, mask;
    int err;

    if (umpi_unlikely(source == MPI_PROC_NULL)) {
        umpi__status_proc_null(status);
        return MPI_SUCCESS;
    }
    umpi_lock();
    if (umpi_unlikely(!datatype_ptr->contig)) {
        err = umpi__recv_with_request(buf, count, datatype_ptr, source, tag, comm_ptr, status);
        goto out;
    }
    err = umpi_p2p_bytes(count, datatype_ptr, &bytes);
    if (umpi_unlikely(err != MPI_SUCCESS))
        goto out;
    if (umpi_unlikely(umpi_cuda_active) && (umpi_p2p_gpu_held_count || bytes > umpi_p2p_gpu_envelope_min ||
                                             !umpi_cuda_known_host((const char *) buf + datatype_ptr->true_lb))) {
        /* a GPU machine: held messages, device buffers and receives that may meet a device message's
         * envelope take a request (umpi_p2p_gpu.h) */
        int kind = umpi__recv_gpu_kind(buf, datatype_ptr, bytes);
        if (kind >= 0) {
            err = kind == MPI_SUCCESS ? umpi__recv_with_request(buf, count, datatype_ptr, source, tag, comm_ptr, status)
                                      : kind;
            goto out;
        }
    }

    /* Contiguous: no MPI request; UCX completes into w on this stack. */
    struct umpi_ucx_recv_wait w;
    umpi_ucx_recv_tag(comm_ptr->context_id, source, tag, &utag, &mask);
    umpi_status_t st = umpi_ucx_recv_blocking((char *) buf + datatype_ptr->true_lb, bytes, utag, mask, &w);
    if (umpi_unlikely(st != UMPI_OK)) {
        err = umpi__recv_error(st, source);
        goto out;
    }
    if (!w.done) {
        if (umpi_unlikely(umpi_cuda_active)) {
            if (umpi__recv_wait_gpu(&w, comm_ptr, source, tag)) {
                err = umpi__recv_with_request(buf, count, datatype_ptr, source, tag, comm_ptr, status);
                goto out;
            }
        } else {
            umpi_waiter_t waiter = {0};
            while (!w.done)
                umpi_progress_step(&waiter);
        }
    }
    ucs_status_t s = w.status;
    ucp_tag_recv_info_t info = w.info;
    if (umpi_likely(s == UCS_OK)) {
        umpi__status_from_info(status, &info);
    } else if (s == UCS_ERR_MESSAGE_TRUNCATED) {
        umpi__status_from_info(status, &info);
        err = umpi_err_create_comm(comm_ptr->handle, MPI_ERR_TRUNCATE,
                                   "message truncated: the message from rank %d with tag %d is longer than "
                                   "the receive buffer (%lld x %s = %zu bytes)",
                                   umpi_ucx_tag_source(info.sender_tag), umpi_ucx_tag_tag(info.sender_tag),
                                   (long long) count, datatype_ptr->name, bytes);
    } else {
        err = umpi__recv_error(umpi_ucx_status(s, "receive completion"), source);
    }
out:
    umpi_unlock();
    return err;
}

/* ---- probes ---------------------------------------------------------------------------------------- */

static ucp_tag_message_h umpi__probe(int source, int tag, umpi_comm_t *comm, int remove, ucp_tag_recv_info_t *info)
{
    ucp_tag_t utag, mask;
    umpi_ucx_recv_tag(comm->context_id, source, tag, &utag, &mask);
    if (umpi_unlikely(umpi_p2p_gpu_envelope_min != SIZE_MAX))
        mask &= ~UMPI_P2P_GPU_ENVELOPE_BIT; /* probes see device messages' envelopes */
    return umpi_ucx_probe(utag, mask, remove, info);
}

/* MPI_Probe / Iprobe: 1 and info (sender tag, length) when a message matches. The messages a
 * probe holds come first; an envelope met in UCX's queue is taken out (with its sender's older
 * messages) so that the length reported is its message's (gpu_probe.c). */
static int umpi__probe_info(int source, int tag, umpi_comm_t *comm, ucp_tag_recv_info_t *info)
{
    ucp_tag_message_h msg;
    void *env;
    if (umpi_unlikely(umpi_p2p_gpu_held_count) &&
        umpi_p2p_gpu_held_find(comm->context_id, source, tag, 0, &info->sender_tag, &info->length, &msg, &env))
        return 1;
    if (umpi__probe(source, tag, comm, 0, info) == NULL)
        return 0;
    if (umpi_unlikely(umpi_p2p_gpu_is_envelope(info->sender_tag))) {
        if (umpi_p2p_gpu_hold(comm->context_id, source, tag, info) != UMPI_OK)
            umpi_die(1, "probing a device message failed: %s", umpi_status_last_msg());
        return umpi_p2p_gpu_held_find(comm->context_id, source, tag, 0, &info->sender_tag, &info->length, &msg, &env);
    }
    return 1;
}

/* MPI_Mprobe / Improbe: a matched message taken from the held ones or from UCX's queue. */
static ucp_tag_message_h umpi__mprobe(int source, int tag, umpi_comm_t *comm, ucp_tag_recv_info_t *info,
                                      void **env)
{
    ucp_tag_message_h msg;
    *env = NULL;
    if (umpi_unlikely(umpi_p2p_gpu_held_count) &&
        umpi_p2p_gpu_held_find(comm->context_id, source, tag, 1, &info->sender_tag, &info->length, &msg, env))
        return msg != NULL ? msg : (ucp_tag_message_h) env; /* not NULL: found */
    return umpi__probe(source, tag, comm, 1, info);
}

int umpi_impl_iprobe(int source, int tag, umpi_comm_t *comm_ptr, int *flag, MPI_Status *status)
{
    ucp_tag_recv_info_t info;
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        umpi__status_proc_null(status);
        return MPI_SUCCESS;
    }
    umpi_lock();
    int found = umpi__probe_info(source, tag, comm_ptr, &info);
    if (!found) {
        umpi_progress_poll();
        found = umpi__probe_info(source, tag, comm_ptr, &info);
    }
    *flag = found;
    if (found)
        umpi__status_from_info(status, &info);
    umpi_unlock();
    return MPI_SUCCESS;
}

int umpi_impl_probe(int source, int tag, umpi_comm_t *comm_ptr, MPI_Status *status)
{
    ucp_tag_recv_info_t info;
    umpi_waiter_t w = {0};
    if (source == MPI_PROC_NULL) {
        umpi__status_proc_null(status);
        return MPI_SUCCESS;
    }
    umpi_lock();
    while (!umpi__probe_info(source, tag, comm_ptr, &info))
        umpi_progress_step(&w);
    umpi__status_from_info(status, &info);
    umpi_unlock();
    return MPI_SUCCESS;
}

/* A matched message becomes a request of kind MESSAGE that MPI_Mrecv turns into a receive. */
static int umpi__message_new(ucp_tag_message_h msg, void *env, const ucp_tag_recv_info_t *info, umpi_comm_t *comm,
                             MPI_Message *message, MPI_Status *status)
{
    umpi_request_t *r = umpi_request_alloc(UMPI_REQ_MESSAGE, comm);
    if (r == NULL) {
        /* The message is already removed from UCX's queue: losing it would break the program. */
        umpi_die(1, "out of memory allocating a message handle in MPI_Mprobe");
    }
    r->ucx_msg = msg;
    umpi__status_from_info(&r->status, info);
    if (umpi_unlikely(env != NULL)) {
        /* a device message held by a probe, its envelope read then (gpu_probe.c) */
        r->ucx_msg = NULL;
        r->tmp = env;
    } else if (umpi_unlikely(umpi_p2p_gpu_is_envelope(info->sender_tag))) {
        /* a device message: the status must tell its length, which its envelope holds */
        size_t len;
        umpi_status_t st = umpi_p2p_gpu_probed_envelope(r, msg, info, &len);
        if (st != UMPI_OK)
            umpi_die(1, "reading the envelope of a matched device message failed: %s", umpi_status_last_msg());
        r->ucx_msg = NULL;
        umpi_status_set_bytes(&r->status, (MPI_Count) len);
    }
    if (status != MPI_STATUS_IGNORE) {
        status->MPI_SOURCE = r->status.MPI_SOURCE;
        status->MPI_TAG = r->status.MPI_TAG;
        status->count_lo = r->status.count_lo;
        status->count_hi_and_cancelled = r->status.count_hi_and_cancelled;
    }
    *message = r->handle;
    return MPI_SUCCESS;
}

int umpi_impl_improbe(int source, int tag, umpi_comm_t *comm_ptr, int *flag, MPI_Message *message,
                      MPI_Status *status)
{
    ucp_tag_recv_info_t info;
    int err = MPI_SUCCESS;
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        *message = MPI_MESSAGE_NO_PROC;
        umpi__status_proc_null(status);
        return MPI_SUCCESS;
    }
    umpi_lock();
    void *env;
    ucp_tag_message_h msg = umpi__mprobe(source, tag, comm_ptr, &info, &env);
    if (msg == NULL) {
        umpi_progress_poll();
        msg = umpi__mprobe(source, tag, comm_ptr, &info, &env);
    }
    *flag = msg != NULL;
    if (msg != NULL)
        err = umpi__message_new(env ? NULL : msg, env, &info, comm_ptr, message, status);
    umpi_unlock();
    return err;
}

int umpi_impl_mprobe(int source, int tag, umpi_comm_t *comm_ptr, MPI_Message *message, MPI_Status *status)
{
    ucp_tag_recv_info_t info;
    ucp_tag_message_h msg;
    umpi_waiter_t w = {0};
    if (source == MPI_PROC_NULL) {
        *message = MPI_MESSAGE_NO_PROC;
        umpi__status_proc_null(status);
        return MPI_SUCCESS;
    }
    umpi_lock();
    void *env;
    while ((msg = umpi__mprobe(source, tag, comm_ptr, &info, &env)) == NULL)
        umpi_progress_step(&w);
    int err = umpi__message_new(env ? NULL : msg, env, &info, comm_ptr, message, status);
    umpi_unlock();
    return err;
}

/* Turns the message request into a receive request and starts it. */
static int umpi__mrecv_start(void *buf, MPI_Count count, umpi_dtype_t *dt, MPI_Message message, umpi_request_t **out)
{
    size_t bytes;
    umpi_request_t *r = umpi_request_get(message);
    if (r == NULL || r->kind != UMPI_REQ_MESSAGE)
        return umpi_err_create(MPI_ERR_REQUEST, "invalid message handle 0x%x in argument 'message'",
                               (unsigned) message);
    int err = umpi_p2p_bytes(count, dt, &bytes);
    if (err != MPI_SUCCESS)
        return err;
    r->kind = UMPI_REQ_RECV;
    r->buf = buf;
    r->count = count;
    r->dt = dt;
    umpi_dtype_retain(dt);
    r->peer = r->status.MPI_SOURCE;
    r->tag = r->status.MPI_TAG;
    err = umpi__matched_recv(r, bytes);
    if (err == MPI_SUCCESS)
        *out = r;
    return err;
}

/* Starts the receive of r's matched message (r->ucx_msg, or an envelope in r->tmp; r->status
 * from the probe) into r->buf, count, dt. */
static int umpi__matched_recv(umpi_request_t *r, size_t bytes)
{
    void *data, *ucx_req;
    ucp_tag_recv_info_t info;
    int dev = -1, on_dev = 0, err = MPI_SUCCESS;
    if (umpi_unlikely(umpi_cuda_active) && (on_dev = umpi__recv_on_device(r->buf, r->dt, bytes, &dev, &err), err))
        return err;
    if (umpi_unlikely(r->tmp != NULL || on_dev)) {
        /* a device message (its envelope read at the probe), or a device receive buffer */
        return umpi_p2p_gpu_mrecv(r, (ucp_tag_message_h) r->ucx_msg, bytes, dev, on_dev);
    }
    size_t len;
    ucp_datatype_t udt;
    err = umpi__recv_target(r, bytes, &data, &len, &udt);
    if (err != MPI_SUCCESS)
        return err;
    /* The probe's info stands for an immediate completion, for which UCX reports nothing. */
    info.sender_tag = umpi_ucx_send_tag(r->comm->context_id, r->status.MPI_SOURCE, r->status.MPI_TAG);
    info.length = (size_t) umpi_status_get_bytes(&r->status);
    umpi_status_t st = umpi_ucx_msg_recv_dt(data, len, udt, (ucp_tag_message_h) r->ucx_msg, r, &ucx_req, &info);
    if (st != UMPI_OK)
        return umpi__recv_error(st, r->peer);
    if (r->done && info.length > bytes)
        r->net_status = UCS_ERR_MESSAGE_TRUNCATED;
    if (r->done && r->slow_done)
        umpi_p2p_complete_slow(r);
    return MPI_SUCCESS;
}

int umpi_impl_mrecv(void *buf, MPI_Count count, umpi_dtype_t *datatype_ptr, MPI_Message *message,
                    MPI_Status *status)
{
    umpi_request_t *r;
    if (*message == MPI_MESSAGE_NO_PROC) {
        umpi__status_proc_null(status);
        *message = MPI_MESSAGE_NULL;
        return MPI_SUCCESS;
    }
    umpi_lock();
    int err = umpi__mrecv_start(buf, count, datatype_ptr, *message, &r);
    if (err == MPI_SUCCESS) {
        *message = MPI_MESSAGE_NULL;
        umpi_progress_wait(&r->done);
        MPI_Request h = r->handle;
        err = umpi_p2p_request_complete(r, &h, status);
    }
    umpi_unlock();
    return err;
}

int umpi_impl_imrecv(void *buf, MPI_Count count, umpi_dtype_t *datatype_ptr, MPI_Message *message,
                     MPI_Request *request)
{
    umpi_request_t *r;
    int err = MPI_SUCCESS;
    umpi_lock();
    if (*message == MPI_MESSAGE_NO_PROC) {
        /* A receive from MPI_PROC_NULL: complete at once with the PROC_NULL status. */
        r = umpi_request_alloc(UMPI_REQ_DONE, &umpi_comm_self);
        if (r == NULL) {
            err = umpi_err_create(MPI_ERR_OTHER, "out of memory allocating a request");
            goto out;
        }
        umpi__status_proc_null(&r->status);
        r->done = 1;
    } else {
        err = umpi__mrecv_start(buf, count, datatype_ptr, *message, &r);
        if (err != MPI_SUCCESS)
            goto out;
    }
    *message = MPI_MESSAGE_NULL;
    *request = r->handle;
out:
    umpi_unlock();
    return err;
}
