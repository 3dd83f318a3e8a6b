/*
 * MPI_Start and MPI_Startall: a persistent request of either kind, point-to-point (started by
 * src/pt2pt/persistent.c) or collective (its schedule, sched.c). Here, the first floor that knows
 * both.
 */
#include "coll/umpi_sched.h"
#include "pt2pt/umpi_p2p.h"

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
    err = r->kind == UMPI_REQ_COLL ? umpi_sched_start_request(r) : umpi_p2p_persistent_start(r);
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
