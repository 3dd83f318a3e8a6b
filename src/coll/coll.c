/*
 * The MPI collective functions: barrier and broadcast here, the others in coll_gather_scatter.c,
 * coll_reduce.c and coll_neighbor.c, and what they share. Each umpi_impl_x is the one
 * implementation of MPI_X, MPI_IX and MPI_X_init (the `coll` directive of maint/bindings.def: the
 * generated entry points check the arguments they can and pass the form as mode): it fills
 * umpi_coll_args_t from its arguments, checks what the generated binding cannot (ops against
 * datatypes, aliased buffers, arguments significant at some processes only) and hands it to
 * umpi_coll_run.
 */
#include "coll/umpi_coll_call.h"
#include "mpi/gen/umpi_impl.h"

/* ---- barrier ---------------------------------------------------------------------------------- */

int umpi_impl_barrier(umpi_comm_t *comm, umpi_coll_mode_t mode, MPI_Request *request)
{
    umpi_coll_args_t a = {.kind = UMPI_COLL_BARRIER, .comm = comm};
    return umpi_coll_run(&a, mode, request);
}

/* ---- broadcast -------------------------------------------------------------------------------- */

int umpi_impl_bcast(void *buffer, MPI_Count count, umpi_dtype_t *dt, int root, umpi_comm_t *comm,
                    umpi_coll_mode_t mode, MPI_Request *request)
{
    umpi_coll_args_t a = {.kind = UMPI_COLL_BCAST, .comm = comm, .rbuf = buffer, .rcount = count, .rdt = dt,
                          .root = root, .bytes = (size_t) (count * dt->size)};
    return umpi_coll_run(&a, mode, request);
}

/* ---- shared by the coll*.c files (umpi_coll.h) ---------------------------------------------- */

int umpi_coll_op_arg(MPI_Op h, const umpi_dtype_t *dt, umpi_op_t **op)
{
    *op = umpi_op_get(h);
    if (*op == NULL)
        return umpi_err_create(MPI_ERR_OP, "invalid operation 0x%x in argument 'op'", (unsigned) h);
    return umpi_op_check(*op, dt, "op");
}
