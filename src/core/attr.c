/*
 * Communicator attributes: the predefined ones (values of the process, answered on every
 * communicator) and user keyvals, cached on the communicator through attr_list.c.
 *
 * In C the attribute value is returned by reference: attribute_val is really a `void **` that
 * receives a pointer to an int holding the value (MPI 4.1, 7.7.2).
 */
#include "core/umpi_attr.h"
#include "core/umpi_err.h"
#include "core/umpi_obj.h"

#if __has_include("mpi/gen/umpi_impl.h")
#include "mpi/gen/umpi_impl.h"
#endif

/* err.c: the largest error class or code in use (MPI_LASTUSEDCODE). To move into umpi_err.h. */


/* Tag values the user may send: 0..umpi_tag_ub. The netmod's tag layout has a 24-bit tag field
 * whose top bit marks internal traffic, leaving 23 bits. */
const int umpi_tag_ub = (1 << 23) - 1;

/* Returned by pointer, so they must outlive the call; each is written only with the same
 * process-wide value, so concurrent callers race benignly. */
static int umpi__attr_tag_ub, umpi__attr_host, umpi__attr_io, umpi__attr_wtime_is_global;
static int umpi__attr_universe_size, umpi__attr_appnum, umpi__attr_lastusedcode;

int umpi_impl_comm_get_attr(umpi_comm_t *comm_ptr, int comm_keyval, void *attribute_val, int *flag)
{
    int *slot;
    int value;

    if (UMPI_HANDLE_KIND(comm_keyval) == UMPI_KIND_DIRECT) {
        void *v = NULL;
        int err = umpi_attr_get(UMPI_OBJ_COMM, comm_ptr->attrs, comm_keyval, &v, flag);
        if (err == MPI_SUCCESS && *flag)
            *(void **) attribute_val = v;
        return err;
    }
    /* Served on every communicator, not only MPI_COMM_WORLD: the values are process-wide and
     * programs commonly ask a duplicate of MPI_COMM_WORLD for MPI_TAG_UB. */
    switch (comm_keyval) {
    case MPI_TAG_UB: slot = &umpi__attr_tag_ub; value = umpi_tag_ub; break;
    case MPI_HOST: slot = &umpi__attr_host; value = MPI_PROC_NULL; break;
    case MPI_IO: slot = &umpi__attr_io; value = MPI_ANY_SOURCE; break; /* every rank can do I/O */
    case MPI_WTIME_IS_GLOBAL: slot = &umpi__attr_wtime_is_global; value = 0; break;
    case MPI_UNIVERSE_SIZE:
        slot = &umpi__attr_universe_size;
        value = umpi_global.universe_size;
        break;
    case MPI_APPNUM: slot = &umpi__attr_appnum; value = umpi_global.appnum; break;
    case MPI_LASTUSEDCODE:
        slot = &umpi__attr_lastusedcode;
        value = umpi_err_last_used_code();
        break;
    default:
        *flag = 0;
        return umpi_err_create(MPI_ERR_KEYVAL, "invalid keyval 0x%x in argument 'comm_keyval'",
                               (unsigned) comm_keyval);
    }
    /* Unknown to the process manager: the attribute is absent rather than made up. */
    if ((comm_keyval == MPI_UNIVERSE_SIZE || comm_keyval == MPI_APPNUM) && value < 0) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    *slot = value;
    *(int **) attribute_val = slot;
    *flag = 1;
    return MPI_SUCCESS;
}

int umpi_impl_comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                                 MPI_Comm_delete_attr_function *comm_delete_attr_fn,
                                 int *comm_keyval, void *extra_state)
{
    return umpi_keyval_create(UMPI_OBJ_COMM, comm_copy_attr_fn, comm_delete_attr_fn, extra_state,
                              comm_keyval);
}

int umpi_impl_comm_free_keyval(int *comm_keyval)
{
    return umpi_keyval_free(UMPI_OBJ_COMM, comm_keyval);
}

int umpi_impl_comm_set_attr(umpi_comm_t *comm_ptr, int comm_keyval, void *attribute_val)
{
    return umpi_attr_set(UMPI_OBJ_COMM, comm_ptr->handle, &comm_ptr->attrs, comm_keyval,
                         attribute_val);
}

int umpi_impl_comm_delete_attr(umpi_comm_t *comm_ptr, int comm_keyval)
{
    return umpi_attr_delete(UMPI_OBJ_COMM, comm_ptr->handle, &comm_ptr->attrs, comm_keyval);
}

/* ---- datatypes: the same machinery, keyvals of kind UMPI_OBJ_DATATYPE --------------------------------- */

int umpi_impl_type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
                                 MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval,
                                 void *extra_state)
{
    return umpi_keyval_create(UMPI_OBJ_DATATYPE, type_copy_attr_fn, type_delete_attr_fn, extra_state,
                              type_keyval);
}

int umpi_impl_type_free_keyval(int *type_keyval)
{
    return umpi_keyval_free(UMPI_OBJ_DATATYPE, type_keyval);
}

int umpi_impl_type_set_attr(umpi_dtype_t *datatype_ptr, int type_keyval, void *attribute_val)
{
    return umpi_attr_set(UMPI_OBJ_DATATYPE, datatype_ptr->handle, &datatype_ptr->attrs, type_keyval,
                         attribute_val);
}

/* attribute_val is really a void **: the standard keeps void * in C for Fortran's sake. */
int umpi_impl_type_get_attr(umpi_dtype_t *datatype_ptr, int type_keyval, void *attribute_val, int *flag)
{
    return umpi_attr_get(UMPI_OBJ_DATATYPE, datatype_ptr->attrs, type_keyval, (void **) attribute_val, flag);
}

int umpi_impl_type_delete_attr(umpi_dtype_t *datatype_ptr, int type_keyval)
{
    return umpi_attr_delete(UMPI_OBJ_DATATYPE, datatype_ptr->handle, &datatype_ptr->attrs, type_keyval);
}
