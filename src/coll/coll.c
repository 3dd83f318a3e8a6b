/*
 * The MPI collective functions (barrier, broadcast, allreduce; the other kinds have their own
 * coll_*.c files): each fills umpi_coll_args_t from its arguments, checks what the generated
 * binding cannot (ops against datatypes, aliased buffers), and hands it to umpi_coll_run as a
 * blocking, nonblocking or persistent operation. One function per collective does the work; the
 * I- and _init entry points differ only in the mode.
 */
#include "coll/umpi_coll.h"
#include "mpi/gen/umpi_impl.h"

/* ---- barrier ---------------------------------------------------------------------------------- */

static int umpi__barrier(umpi_comm_t *comm, int mode, MPI_Request *request)
{
    umpi_coll_args_t a = {.kind = UMPI_COLL_BARRIER, .comm = comm};
    return umpi_coll_run(&a, mode, request);
}

int umpi_impl_barrier(umpi_comm_t *comm_ptr)
{
    return umpi__barrier(comm_ptr, UMPI_COLL_BLOCKING, NULL);
}

int umpi_impl_ibarrier(umpi_comm_t *comm_ptr, MPI_Request *request)
{
    return umpi__barrier(comm_ptr, UMPI_COLL_NONBLOCKING, request);
}

int umpi_impl_barrier_init(umpi_comm_t *comm_ptr, MPI_Info info, MPI_Request *request)
{
    (void) info;
    return umpi__barrier(comm_ptr, UMPI_COLL_PERSISTENT, request);
}

/* ---- broadcast -------------------------------------------------------------------------------- */

static int umpi__bcast(void *buffer, MPI_Count count, umpi_dtype_t *dt, int root, umpi_comm_t *comm, int mode,
                       MPI_Request *request)
{
    umpi_coll_args_t a = {.kind = UMPI_COLL_BCAST, .comm = comm, .rbuf = buffer, .rcount = count, .rdt = dt,
                          .root = root, .bytes = (size_t) (count * dt->size)};
    return umpi_coll_run(&a, mode, request);
}

int umpi_impl_bcast(void *buffer, MPI_Count count, umpi_dtype_t *datatype_ptr, int root, umpi_comm_t *comm_ptr)
{
    return umpi__bcast(buffer, count, datatype_ptr, root, comm_ptr, UMPI_COLL_BLOCKING, NULL);
}

int umpi_impl_ibcast(void *buffer, MPI_Count count, umpi_dtype_t *datatype_ptr, int root, umpi_comm_t *comm_ptr,
                     MPI_Request *request)
{
    return umpi__bcast(buffer, count, datatype_ptr, root, comm_ptr, UMPI_COLL_NONBLOCKING, request);
}

int umpi_impl_bcast_init(void *buffer, MPI_Count count, umpi_dtype_t *datatype_ptr, int root,
                         umpi_comm_t *comm_ptr, MPI_Info info, MPI_Request *request)
{
    (void) info;
    return umpi__bcast(buffer, count, datatype_ptr, root, comm_ptr, UMPI_COLL_PERSISTENT, request);
}

/* ---- allreduce -------------------------------------------------------------------------------- */

static int umpi__allreduce(const void *sendbuf, void *recvbuf, MPI_Count count, umpi_dtype_t *dt, MPI_Op op,
                           umpi_comm_t *comm, int mode, MPI_Request *request)
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

int umpi_impl_allreduce(const void *sendbuf, void *recvbuf, MPI_Count count, umpi_dtype_t *datatype_ptr, MPI_Op op,
                        umpi_comm_t *comm_ptr)
{
    return umpi__allreduce(sendbuf, recvbuf, count, datatype_ptr, op, comm_ptr, UMPI_COLL_BLOCKING, NULL);
}

int umpi_impl_iallreduce(const void *sendbuf, void *recvbuf, MPI_Count count, umpi_dtype_t *datatype_ptr,
                         MPI_Op op, umpi_comm_t *comm_ptr, MPI_Request *request)
{
    return umpi__allreduce(sendbuf, recvbuf, count, datatype_ptr, op, comm_ptr, UMPI_COLL_NONBLOCKING, request);
}

int umpi_impl_allreduce_init(const void *sendbuf, void *recvbuf, MPI_Count count, umpi_dtype_t *datatype_ptr,
                             MPI_Op op, umpi_comm_t *comm_ptr, MPI_Info info, MPI_Request *request)
{
    (void) info;
    return umpi__allreduce(sendbuf, recvbuf, count, datatype_ptr, op, comm_ptr, UMPI_COLL_PERSISTENT, request);
}

/* ---- shared by the coll_*.c files (umpi_coll.h) ----------------------------------------------------- */

int umpi_coll_op_arg(MPI_Op h, const umpi_dtype_t *dt, umpi_op_t **op)
{
    *op = umpi_op_get(h);
    if (*op == NULL)
        return umpi_err_create(MPI_ERR_OP, "invalid operation 0x%x in argument 'op'", (unsigned) h);
    return umpi_op_check(*op, dt, "op");
}

int umpi_coll_aliased(const void *sbuf, const void *rbuf, MPI_Count count)
{
    if (umpi_unlikely(sbuf == rbuf && count > 0 && sbuf != NULL))
        return umpi_err_create(MPI_ERR_BUFFER, "sendbuf and recvbuf are the same buffer (%p); use MPI_IN_PLACE",
                               sbuf);
    return MPI_SUCCESS;
}

int umpi_coll_run(umpi_coll_args_t *a, int mode, MPI_Request *request)
{
    umpi_lock();
    int err = umpi_coll_post(a, mode, request);
    umpi_unlock();
    return err;
}
