/*
 * MPI_Reduce_local: the op applied to host buffers (src/core/op.c), or, where a buffer is in GPU
 * memory, on the GPU (src/cuda/kern_local.c).
 */
#include "core/umpi_err.h"
#include "core/umpi_op.h"
#include "cuda/umpi_cuda_kern.h"
#include "mpi/gen/umpi_impl.h"

int umpi_impl_reduce_local(const void *inbuf, void *inoutbuf, MPI_Count count, umpi_dtype_t *datatype_ptr,
                           MPI_Op op)
{
    umpi_op_t *o = umpi_op_get(op);
    int err = umpi_op_check(o, datatype_ptr, "op");
    if (err != MPI_SUCCESS)
        return err;
    if (inbuf == NULL && count > 0 && datatype_ptr->size > 0 && datatype_ptr->builtin)
        return umpi_err_create(MPI_ERR_BUFFER, "NULL buffer in argument 'inbuf' with count %ld of %s",
                               (long) count, datatype_ptr->name);
    if (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE)
        return umpi_err_create(MPI_ERR_BUFFER, "MPI_IN_PLACE in argument '%s' (not allowed here)",
                               inbuf == MPI_IN_PLACE ? "inbuf" : "inoutbuf");
    if (count <= 0)
        return MPI_SUCCESS;
    if (umpi_unlikely(umpi_cuda_active) && umpi_cuda_kern_reduce_local(o, inbuf, inoutbuf, count, datatype_ptr, &err))
        return err;     /* a buffer in GPU memory: reduced there, or through host copies */
    umpi_op_apply(o, inbuf, inoutbuf, count, datatype_ptr);
    return MPI_SUCCESS;
}
