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

/* Basic elements: whole elements times their basic count, plus one for a partly received pair
 * element whose first member arrived whole (the pair types are the only multi-element
 * predefined types; their first member is blocks[0] when they have holes, else half the size). */
int umpi_impl_get_elements(const MPI_Status *status, umpi_dtype_t *datatype_ptr, MPI_Count *count)
{
    const umpi_dtype_t *dt = datatype_ptr;
    MPI_Count bytes = umpi_status_get_bytes(status);
    if (dt->size == 0) {
        *count = 0;
        return MPI_SUCCESS;
    }
    MPI_Count whole = bytes / dt->size, rest = bytes % dt->size;
    *count = whole * dt->n_basic;
    if (rest != 0) {
        MPI_Count first = dt->nblocks == 2 ? dt->blocks[0].len : dt->size / 2;
        *count = dt->n_basic == 2 && rest == first ? *count + 1 : MPI_UNDEFINED;
    }
    return MPI_SUCCESS;
}

int umpi_impl_status_set_elements(MPI_Status *status, umpi_dtype_t *datatype_ptr, MPI_Count count)
{
    const umpi_dtype_t *dt = datatype_ptr;
    if (dt->n_basic > 1 && count % dt->n_basic != 0)
        return umpi_err_create(MPI_ERR_ARG, "count %lld is not a whole number of %s elements",
                               (long long) count, dt->name);
    umpi_status_set_bytes(status, count / (dt->n_basic ? dt->n_basic : 1) * dt->size);
    return MPI_SUCCESS;
}

int umpi_impl_status_set_cancelled(MPI_Status *status, int flag)
{
    umpi_status_set_cancelled(status, flag);
    return MPI_SUCCESS;
}
