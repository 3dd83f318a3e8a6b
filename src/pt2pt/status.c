/* What a status says: MPI_Get_count, MPI_Get_elements, and the MPI_Status_set_* family. */
#include "pt2pt/umpi_p2p.h"

int umpi_impl_get_count(const MPI_Status *status, umpi_dtype_t *datatype_ptr, MPI_Count *count)
{
    MPI_Count bytes = umpi_status_get_bytes(status);
    MPI_Count size = datatype_ptr->size;
    if (size == 0)
        *count = 0; /* MPI 4.1: zero-size types give 0 whatever arrived */
    else
        *count = bytes % size == 0 ? bytes / size : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* Basic elements of whole elements and of a partly received last one, as far as its basic
 * elements arrived whole (the datatype engine walks the type's constituents). */
int umpi_impl_get_elements(const MPI_Status *status, umpi_dtype_t *datatype_ptr, MPI_Count *count)
{
    MPI_Count n = umpi_dtype_elements(datatype_ptr, umpi_status_get_bytes(status));
    *count = n < 0 ? MPI_UNDEFINED : n;
    return MPI_SUCCESS;
}

int umpi_impl_status_set_elements(MPI_Status *status, umpi_dtype_t *datatype_ptr, MPI_Count count)
{
    MPI_Count bytes = umpi_dtype_elements_bytes(datatype_ptr, count);
    if (bytes < 0)
        return umpi_err_create(MPI_ERR_ARG, "count %lld is not a number of basic elements of datatype %s",
                               (long long) count, datatype_ptr->name);
    umpi_status_set_bytes(status, bytes);
    return MPI_SUCCESS;
}

int umpi_impl_status_set_cancelled(MPI_Status *status, int flag)
{
    umpi_status_set_cancelled(status, flag);
    return MPI_SUCCESS;
}
