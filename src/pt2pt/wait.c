/* Completion: Wait/Test and their -all/-any/-some forms, Request_free, Request_get_status, Cancel. */
#include "pt2pt/umpi_p2p.h"

#include <stdlib.h>

int umpi_p2p_request_invalid(MPI_Request h, const char *argname, int index)
{
    if (index >= 0)
        return umpi_err_create(MPI_ERR_REQUEST, "invalid request 0x%x in argument '%s[%d]'", (unsigned) h, argname,
                               index);
    return umpi_err_create(MPI_ERR_REQUEST, "invalid request 0x%x in argument '%s'", (unsigned) h, argname);
}

static int umpi__completion_error_slow(umpi_request_t *r);

static inline int umpi__completion_error(umpi_request_t *r)
{
    if (umpi_likely(r->net_status == UCS_OK && r->error == MPI_SUCCESS))
        return MPI_SUCCESS;
    return umpi__completion_error_slow(r);
}

static int umpi__completion_error_slow(umpi_request_t *r)
{
    if (r->error != MPI_SUCCESS || r->kind == UMPI_REQ_IDUP)
        return r->error; /* a collective's, or an idup's failed agreement */
    switch (r->net_status) {
    case UCS_OK:
    case UCS_ERR_CANCELED:
        return MPI_SUCCESS;
    case UCS_ERR_MESSAGE_TRUNCATED:
        return umpi_err_create_comm(r->comm->handle, MPI_ERR_TRUNCATE,
                                    "message truncated: the message from rank %d with tag %d is longer than "
                                    "the receive buffer (%lld x %s)",
                                    r->status.MPI_SOURCE, r->status.MPI_TAG, (long long) r->count,
                                    r->dt ? r->dt->name : "datatype");
    default:
        return umpi_err_create_comm(r->comm->handle, MPI_ERR_OTHER, "%s with peer rank %d failed: %s",
                                    r->kind == UMPI_REQ_SEND ? "send" : "receive", r->peer,
                                    ucs_status_string((ucs_status_t) r->net_status));
    }
}

int umpi_p2p_request_complete(umpi_request_t *r, MPI_Request *handle, MPI_Status *status)
{
    int err = umpi__completion_error(r);
    if (status != MPI_STATUS_IGNORE) {
        status->MPI_SOURCE = r->status.MPI_SOURCE;
        status->MPI_TAG = r->status.MPI_TAG;
        status->count_lo = r->status.count_lo;
        status->count_hi_and_cancelled = r->status.count_hi_and_cancelled;
    }
    if (r->persistent) {
        r->active = 0;
        r->done = 0;
    } else {
        umpi_request_release(r);
        *handle = MPI_REQUEST_NULL;
    }
    return err;
}

int umpi_impl_wait(MPI_Request *request, MPI_Status *status)
{
    umpi_request_t *r;
    umpi_lock();
    int err = umpi_p2p_request_lookup(*request, "request", -1, &r);
    if (err != MPI_SUCCESS)
        goto out;
    if (umpi_p2p_request_inactive(r)) {
        umpi_status_set_empty(status);
        goto out;
    }
    umpi_progress_wait(&r->done);
    err = umpi_p2p_request_complete(r, request, status);
out:
    umpi_unlock();
    return err;
}

int umpi_impl_test(MPI_Request *request, int *flag, MPI_Status *status)
{
    umpi_request_t *r;
    umpi_lock();
    int err = umpi_p2p_request_lookup(*request, "request", -1, &r);
    if (err != MPI_SUCCESS)
        goto out;
    if (umpi_p2p_request_inactive(r)) {
        *flag = 1;
        umpi_status_set_empty(status);
        goto out;
    }
    if (!r->done)
        umpi_progress_poll();
    *flag = r->done;
    if (r->done)
        err = umpi_p2p_request_complete(r, request, status);
out:
    umpi_unlock();
    return err;
}

/* Looks every handle up before anything completes, so that a bad one changes nothing. */
static int umpi__lookup_all(int count, const MPI_Request reqs[], umpi_request_t **out, const char *argname)
{
    for (int i = 0; i < count; i++) {
        int err = umpi_p2p_request_lookup(reqs[i], argname, i, &out[i]);
        if (err != MPI_SUCCESS)
            return err;
    }
    return MPI_SUCCESS;
}

/* Small arrays of decoded requests live on the stack; large ones are allocated. */
#define UMPI_REQS_ON_STACK 64

static int umpi__decode(int count, const MPI_Request reqs[], umpi_request_t **stack, umpi_request_t ***rs)
{
    *rs = count <= UMPI_REQS_ON_STACK ? stack : malloc(sizeof(umpi_request_t *) * (size_t) count);
    if (*rs == NULL)
        return umpi_err_create(MPI_ERR_OTHER, "out of memory decoding %d requests", count);
    int err = umpi__lookup_all(count, reqs, *rs, "array_of_requests");
    if (err != MPI_SUCCESS && *rs != stack)
        free(*rs);
    return err;
}

static void umpi__decode_free(umpi_request_t **stack, umpi_request_t **rs)
{
    if (rs != stack)
        free(rs);
}

/*
 * Completes the done requests among rs[0..count) (all of them when `all`), filling statuses and
 * the MPI_ERR_IN_STATUS bookkeeping: once one fails, every status completed in this call gets its
 * MPI_ERROR field. Returns the number completed in *ndone; *first_err is the first failure.
 */
static int umpi__complete_many(int count, umpi_request_t **rs, MPI_Request reqs[], MPI_Status statuses[],
                               int *indices, int *ndone)
{
    int nfailed = 0, n = 0, first_err = MPI_SUCCESS;
    umpi_comm_t *err_comm = NULL;
    for (int i = 0; i < count; i++) {
        umpi_request_t *r = rs[i];
        if (umpi_p2p_request_inactive(r)) {
            /* -all forms give inactive entries the empty status; -some forms leave them out. */
            if (indices == NULL && statuses != MPI_STATUSES_IGNORE)
                umpi_status_set_empty(&statuses[i]);
            continue;
        }
        if (!r->done)
            continue;
        MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[indices ? n : i];
        umpi_comm_t *comm = r->comm;
        int e = umpi_p2p_request_complete(r, &reqs[i], st);
        rs[i] = NULL;
        if (indices)
            indices[n] = i;
        n++;
        if (e != MPI_SUCCESS) {
            if (nfailed++ == 0) {
                first_err = e;
                err_comm = comm;
                /* The ones completed before had no error: say so now. */
                if (statuses != MPI_STATUSES_IGNORE)
                    for (int j = 0; j < (indices ? n - 1 : i); j++)
                        statuses[j].MPI_ERROR = MPI_SUCCESS;
            }
        }
        if (nfailed && st != MPI_STATUS_IGNORE)
            st->MPI_ERROR = e;
    }
    *ndone = n;
    if (nfailed == 0)
        return MPI_SUCCESS;
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    umpi_err_string(first_err, msg, &len);
    return umpi_err_create_comm(err_comm->handle, MPI_ERR_IN_STATUS,
                                "%d of the completed requests failed; see the MPI_ERROR field of each status "
                                "(first failure: %s)", nfailed, msg);
}

int umpi_impl_waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
    umpi_request_t *stack[UMPI_REQS_ON_STACK], **rs;
    int ndone;
    umpi_lock();
    int err = umpi__decode(count, array_of_requests, stack, &rs);
    if (err != MPI_SUCCESS)
        goto out;
    for (int i = 0; i < count; i++)
        if (!umpi_p2p_request_inactive(rs[i]))
            umpi_progress_wait(&rs[i]->done);
    err = umpi__complete_many(count, rs, array_of_requests, array_of_statuses, NULL, &ndone);
    umpi__decode_free(stack, rs);
out:
    umpi_unlock();
    return err;
}

static int umpi__all_done(int count, umpi_request_t **rs)
{
    for (int i = 0; i < count; i++)
        if (!umpi_p2p_request_inactive(rs[i]) && !rs[i]->done)
            return 0;
    return 1;
}

int umpi_impl_testall(int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[])
{
    umpi_request_t *stack[UMPI_REQS_ON_STACK], **rs;
    int ndone;
    umpi_lock();
    int err = umpi__decode(count, array_of_requests, stack, &rs);
    if (err != MPI_SUCCESS)
        goto out;
    int all = umpi__all_done(count, rs);
    if (!all) {
        umpi_progress_poll();
        all = umpi__all_done(count, rs);
    }
    *flag = all;
    if (all) {
        err = umpi__complete_many(count, rs, array_of_requests, array_of_statuses, NULL, &ndone);
    }
    umpi__decode_free(stack, rs);
out:
    umpi_unlock();
    return err;
}

/* Index of a done request, -1 if none is done, -2 if none is active. */
static int umpi__find_done(int count, umpi_request_t **rs)
{
    int active = 0;
    for (int i = 0; i < count; i++) {
        if (umpi_p2p_request_inactive(rs[i]))
            continue;
        if (rs[i]->done)
            return i;
        active = 1;
    }
    return active ? -1 : -2;
}

/* As umpi__find_done, after one progress pass if nothing is done yet; blocking: until one is. */
static int umpi__poll_done(int count, umpi_request_t **rs, int block)
{
    umpi_waiter_t w = {0};
    int i = umpi__find_done(count, rs);
    if (i != -1)
        return i;
    umpi_progress_poll();
    i = umpi__find_done(count, rs);
    while (block && i == -1) {
        umpi_progress_step(&w);
        i = umpi__find_done(count, rs);
    }
    return i;
}

static int umpi__any(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status, int block)
{
    umpi_request_t *stack[UMPI_REQS_ON_STACK], **rs;
    umpi_lock();
    int err = umpi__decode(count, reqs, stack, &rs);
    if (err != MPI_SUCCESS)
        goto out;
    int i = umpi__poll_done(count, rs, block);
    if (i == -2) {
        *index = MPI_UNDEFINED;
        *flag = 1;
        umpi_status_set_empty(status);
    } else if (i == -1) {
        *index = MPI_UNDEFINED;
        *flag = 0;
    } else {
        *index = i;
        *flag = 1;
        err = umpi_p2p_request_complete(rs[i], &reqs[i], status);
    }
    umpi__decode_free(stack, rs);
out:
    umpi_unlock();
    return err;
}

int umpi_impl_waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
    int flag;
    return umpi__any(count, array_of_requests, index, &flag, status, 1);
}

int umpi_impl_testany(int count, MPI_Request array_of_requests[], int *index, int *flag, MPI_Status *status)
{
    return umpi__any(count, array_of_requests, index, flag, status, 0);
}

static int umpi__some(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[],
                      int block)
{
    umpi_request_t *stack[UMPI_REQS_ON_STACK], **rs;
    umpi_lock();
    int err = umpi__decode(incount, reqs, stack, &rs);
    if (err != MPI_SUCCESS)
        goto out;
    int i = umpi__poll_done(incount, rs, block);
    if (i == -2)
        *outcount = MPI_UNDEFINED;
    else
        err = umpi__complete_many(incount, rs, reqs, statuses, indices, outcount);
    umpi__decode_free(stack, rs);
out:
    umpi_unlock();
    return err;
}

int umpi_impl_waitsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                       MPI_Status array_of_statuses[])
{
    return umpi__some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, 1);
}

int umpi_impl_testsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                       MPI_Status array_of_statuses[])
{
    return umpi__some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, 0);
}

/* The 'request' argument of calls for which MPI_REQUEST_NULL is an error (Request_free, Cancel). */
static int umpi__lookup_active_arg(MPI_Request h, umpi_request_t **r)
{
    int err = umpi_p2p_request_lookup(h, "request", -1, r);
    if (err == MPI_SUCCESS && *r == NULL)
        err = umpi_err_create(MPI_ERR_REQUEST, "MPI_REQUEST_NULL in argument 'request'");
    return err;
}

int umpi_impl_request_free(MPI_Request *request)
{
    umpi_request_t *r;
    umpi_lock();
    int err = umpi__lookup_active_arg(*request, &r);
    if (err != MPI_SUCCESS)
        goto out;
    if (umpi_p2p_request_inactive(r) || r->done) {
        /* Nothing in flight: a pending unpack or bsend segment was handled at completion. */
        umpi_request_release(r);
    } else {
        /* In flight: the completion callback returns it to the pool. */
        r->user_freed = 1;
        r->slow_done = 1;
    }
    *request = MPI_REQUEST_NULL;
out:
    umpi_unlock();
    return err;
}

int umpi_impl_request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    umpi_request_t *r;
    umpi_lock();
    int err = umpi_p2p_request_lookup(request, "request", -1, &r);
    if (err != MPI_SUCCESS)
        goto out;
    if (umpi_p2p_request_inactive(r)) {
        *flag = 1;
        umpi_status_set_empty(status);
        goto out;
    }
    if (!r->done)
        umpi_progress_poll();
    *flag = r->done;
    if (r->done) {
        if (status != MPI_STATUS_IGNORE) {
            status->MPI_SOURCE = r->status.MPI_SOURCE;
            status->MPI_TAG = r->status.MPI_TAG;
            status->count_lo = r->status.count_lo;
            status->count_hi_and_cancelled = r->status.count_hi_and_cancelled;
        }
        err = umpi__completion_error(r);
    }
out:
    umpi_unlock();
    return err;
}

/*
 * Receives that have not matched are cancelled through UCX; their completion then carries the
 * cancelled flag. Sends are not cancelled (MPI 4.1 deprecates it; a message may already be in the
 * receiver's queue): MPI_Test_cancelled reports false for them, which the standard allows.
 */
int umpi_impl_cancel(MPI_Request *request)
{
    umpi_request_t *r;
    umpi_lock();
    int err = umpi__lookup_active_arg(*request, &r);
    if (err != MPI_SUCCESS)
        goto out;
    if (umpi_p2p_request_inactive(r)) {
        err = umpi_err_create(MPI_ERR_REQUEST, "request 0x%x is an inactive persistent request",
                              (unsigned) *request);
        goto out;
    }
    if (r->kind == UMPI_REQ_COLL) {
        err = umpi_err_create(MPI_ERR_REQUEST, "request 0x%x is a collective operation, which cannot be cancelled",
                              (unsigned) *request);
        goto out;
    }
    if (r->kind == UMPI_REQ_RECV && !r->done && r->ucx_req != NULL) {
        umpi_debug(2, "cancelling receive from rank %d tag %d", r->peer, r->tag);
        umpi_ucx_cancel(r->ucx_req);
    }
out:
    umpi_unlock();
    return err;
}

int umpi_impl_test_cancelled(const MPI_Status *status, int *flag)
{
    *flag = umpi_status_get_cancelled(status);
    return MPI_SUCCESS;
}
