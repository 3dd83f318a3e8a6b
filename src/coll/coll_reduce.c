/*
 * The reduction collectives (Reduce, Allreduce, Reduce_scatter, Reduce_scatter_block, Scan,
 * Exscan), each the one implementation of its blocking, nonblocking and persistent forms (coll.c
 * says how): it fills umpi_coll_args_t, checks what the generated binding cannot (the op against
 * the datatype, aliased buffers, arguments that matter at some processes only, per-process
 * counts) and hands it to umpi_coll_run in the form it was called in.
 */
#include "coll/umpi_coll_call.h"
#include "core/umpi_check.h"
#include "mpi/gen/umpi_impl.h"

/* The reduction arguments every one of these takes. */
static int umpi__reduction_args(umpi_coll_args_t *a, MPI_Op op, umpi_dtype_t *dt, MPI_Count count)
{
    a->sdt = a->rdt = dt;
    a->bytes = (size_t) (count * dt->size);
    int err = umpi_coll_op_arg(op, dt, &a->op);
    if (err == MPI_SUCCESS)
        err = umpi_coll_aliased(a->sbuf, a->rbuf, count);
    return err;
}

static int umpi__no_in_place(const void *sendbuf, const char *where)
{
    if (umpi_unlikely(sendbuf == MPI_IN_PLACE))
        return umpi_err_create(MPI_ERR_BUFFER, "MPI_IN_PLACE in argument 'sendbuf' %s", where);
    return MPI_SUCCESS;
}

/* ---- reduce ------------------------------------------------------------------------------------ */

int umpi_impl_reduce(const void *sendbuf, void *recvbuf, MPI_Count count, umpi_dtype_t *dt, MPI_Op op, int root,
                     umpi_comm_t *comm, umpi_coll_mode_t mode, MPI_Request *request)
{
    umpi_coll_args_t a = {.kind = UMPI_COLL_REDUCE, .comm = comm, .sbuf = sendbuf, .rbuf = recvbuf,
                          .scount = count, .rcount = count, .root = root};
    int is_root = umpi_check_at_root(root, comm);
    int err = MPI_SUCCESS;
    if (!is_root) {
        a.rbuf = NULL; /* not significant here */
        if (!comm->is_inter || root != MPI_PROC_NULL)
            err = umpi__no_in_place(sendbuf, comm->is_inter ? "on an intercommunicator" :
                                                              "at a process other than the root");
    } else {
        err = umpi_check_buffer(recvbuf, count, dt, "recvbuf");
    }
    /* Intercommunicator: the root's group sends nothing (sendbuf is not significant there) */
    if (comm->is_inter && (root == MPI_ROOT || root == MPI_PROC_NULL))
        a.sbuf = NULL;
    if (err == MPI_SUCCESS)
        err = umpi__reduction_args(&a, op, dt, count);
    if (err != MPI_SUCCESS)
        return err;
    return umpi_coll_run(&a, mode, request);
}

/* ---- allreduce -------------------------------------------------------------------------------- */

int umpi_impl_allreduce(const void *sendbuf, void *recvbuf, MPI_Count count, umpi_dtype_t *dt, MPI_Op op,
                        umpi_comm_t *comm, umpi_coll_mode_t mode, MPI_Request *request)
{
    umpi_coll_args_t a = {.kind = UMPI_COLL_ALLREDUCE, .comm = comm, .sbuf = sendbuf, .rbuf = recvbuf,
                          .scount = count, .rcount = count, .sdt = dt, .rdt = dt,
                          .bytes = (size_t) (count * dt->size)};
    int err = umpi_coll_op_arg(op, dt, &a.op);
    if (err == MPI_SUCCESS)
        err = umpi_coll_aliased(sendbuf, recvbuf, count);
    if (err == MPI_SUCCESS && comm->is_inter && sendbuf == MPI_IN_PLACE)
        err = umpi_err_create(MPI_ERR_BUFFER, "MPI_IN_PLACE in argument 'sendbuf' is not allowed on an "
                              "intercommunicator");
    if (err != MPI_SUCCESS)
        return err;
    return umpi_coll_run(&a, mode, request);
}

/* ---- reduce_scatter and reduce_scatter_block ------------------------------------------------------ */

/* recvcounts: one per process (Reduce_scatter), or NULL and recvcount for each (_block). */
static int umpi__reduce_scatter(const void *sendbuf, void *recvbuf, const MPI_Count *recvcounts, MPI_Count recvcount,
                                umpi_dtype_t *dt, MPI_Op op, umpi_comm_t *comm, umpi_coll_mode_t mode,
                                MPI_Request *request)
{
    umpi_coll_args_t a = {.kind = recvcounts ? UMPI_COLL_REDUCE_SCATTER : UMPI_COLL_REDUCE_SCATTER_BLOCK,
                          .comm = comm, .sbuf = sendbuf, .rbuf = recvbuf, .rcounts = recvcounts,
                          .rcount = recvcount};
    MPI_Count total = 0;
    int err = MPI_SUCCESS;
    for (int i = 0; i < comm->size; i++) {
        MPI_Count c = umpi_coll_rs_count(&a, i);
        if (umpi_unlikely(c < 0))
            return umpi_err_create(MPI_ERR_COUNT, "negative count %lld in argument 'recvcounts[%d]'", (long long) c,
                                   i);
        total += c;
    }
    a.scount = total;
    if (comm->is_inter)
        err = umpi__no_in_place(sendbuf, "on an intercommunicator");
    if (err == MPI_SUCCESS && recvcounts) {
        a.rcount = recvcounts[comm->rank];
        err = umpi_check_buffer(recvbuf, a.rcount, dt, "recvbuf");
    }
    if (err == MPI_SUCCESS && sendbuf != MPI_IN_PLACE)
        err = umpi_check_buffer(sendbuf, total, dt, "sendbuf");
    if (err == MPI_SUCCESS)
        err = umpi__reduction_args(&a, op, dt, total);
    if (err != MPI_SUCCESS)
        return err;
    return umpi_coll_run(&a, mode, request);
}

int umpi_impl_reduce_scatter(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], umpi_dtype_t *dt,
                             MPI_Op op, umpi_comm_t *comm, umpi_coll_mode_t mode, MPI_Request *request)
{
    return umpi__reduce_scatter(sendbuf, recvbuf, recvcounts, 0, dt, op, comm, mode, request);
}

int umpi_impl_reduce_scatter_block(const void *sendbuf, void *recvbuf, MPI_Count recvcount, umpi_dtype_t *dt,
                                   MPI_Op op, umpi_comm_t *comm, umpi_coll_mode_t mode, MPI_Request *request)
{
    return umpi__reduce_scatter(sendbuf, recvbuf, NULL, recvcount, dt, op, comm, mode, request);
}

/* ---- scan and exscan ------------------------------------------------------------------------------ */

static int umpi__scan(umpi_coll_kind_t kind, const void *sendbuf, void *recvbuf, MPI_Count count, umpi_dtype_t *dt,
                      MPI_Op op, umpi_comm_t *comm, umpi_coll_mode_t mode, MPI_Request *request)
{
    umpi_coll_args_t a = {.kind = kind, .comm = comm, .sbuf = sendbuf, .rbuf = recvbuf, .scount = count,
                          .rcount = count};
    int err = MPI_SUCCESS;
    /* Exscan's recvbuf at rank 0 is undefined: anything goes there */
    if (kind == UMPI_COLL_SCAN || comm->rank > 0)
        err = umpi_check_buffer(recvbuf, count, dt, "recvbuf");
    if (err == MPI_SUCCESS && sendbuf != MPI_IN_PLACE)
        err = umpi_check_buffer(sendbuf, count, dt, "sendbuf");
    if (err == MPI_SUCCESS)
        err = umpi__reduction_args(&a, op, dt, count);
    if (err != MPI_SUCCESS)
        return err;
    if (comm->is_inter)
        return umpi_err_create(MPI_ERR_COMM, "MPI_%s is not defined on an intercommunicator",
                               kind == UMPI_COLL_SCAN ? "Scan" : "Exscan");
    return umpi_coll_run(&a, mode, request);
}

int umpi_impl_scan(const void *sendbuf, void *recvbuf, MPI_Count count, umpi_dtype_t *dt, MPI_Op op,
                   umpi_comm_t *comm, umpi_coll_mode_t mode, MPI_Request *request)
{
    return umpi__scan(UMPI_COLL_SCAN, sendbuf, recvbuf, count, dt, op, comm, mode, request);
}

int umpi_impl_exscan(const void *sendbuf, void *recvbuf, MPI_Count count, umpi_dtype_t *dt, MPI_Op op,
                     umpi_comm_t *comm, umpi_coll_mode_t mode, MPI_Request *request)
{
    return umpi__scan(UMPI_COLL_EXSCAN, sendbuf, recvbuf, count, dt, op, comm, mode, request);
}
