/*
 * Info hints of communicators (MPI 4.1 sec. 7.4.4): MPI_Comm_set_info, MPI_Comm_get_info,
 * MPI_Comm_dup_with_info, MPI_Comm_idup_with_info.
 *
 * umpi understands the four assertions the standard defines for communicators (sec. 7.4.4),
 * each "true" or "false" (default "false"): mpi_assert_no_any_tag, mpi_assert_no_any_source,
 * mpi_assert_exact_length, mpi_assert_allow_overtaking. It keeps their values (they permit
 * optimizations; point-to-point does not exploit them yet, which is always correct) and reports
 * all four from MPI_Comm_get_info. Any other key, or a value other than true/false, is ignored
 * and not reported, as the standard allows for hints an implementation does not use.
 *
 * MPI_Comm_get_info also reports mpi_memory_alloc_kinds (MPI 4.1 sec. 11.4.3): the kinds of memory
 * this process may hand to MPI. "system" (any malloc'ed memory) and "mpi" (MPI_Alloc_mem) always;
 * with CUDA in use (the driver loaded, a GPU, UMPI_CUDA not 0) also the CUDA kinds of the MPI
 * Forum's side document, "cuda:device", "cuda:host" (pinned) and "cuda:managed", which
 * point-to-point and the collectives accept (src/cuda). The value is the same on every
 * communicator of the process; it is not a hint the user sets.
 */
#include "api/umpi_comm.h"
#include "core/umpi_attr.h"
#include "cuda/umpi_cuda.h"

#include <strings.h>

static const char *const umpi__hint_keys[] = {
    "mpi_assert_no_any_tag",
    "mpi_assert_no_any_source",
    "mpi_assert_exact_length",
    "mpi_assert_allow_overtaking",
};
#define UMPI__NHINTS ((int) (sizeof(umpi__hint_keys) / sizeof(umpi__hint_keys[0])))

/* The hints after applying info to hints: keys absent from info keep their value. */
static unsigned umpi__hints_apply(unsigned hints, MPI_Info info)
{
    char v[16];
    for (int i = 0; i < UMPI__NHINTS; i++) {
        if (!umpi_info_hint(info, umpi__hint_keys[i], v, sizeof(v)))
            continue;
        if (strcasecmp(v, "true") == 0)
            hints |= 1u << i;
        else if (strcasecmp(v, "false") == 0)
            hints &= ~(1u << i);
    }
    return hints;
}

/* Collective in the standard's sense (all members call it with their own info); the hints are
 * local state, so no communication is needed. */
int umpi_impl_comm_set_info(umpi_comm_t *comm_ptr, MPI_Info info)
{
    unsigned h = umpi__hints_apply(comm_ptr->hints, info);
    umpi_lock();
    comm_ptr->hints = h;
    umpi_unlock();
    return MPI_SUCCESS;
}

int umpi_impl_comm_get_info(umpi_comm_t *comm_ptr, MPI_Info *info_used)
{
    MPI_Info info;
    int err = umpi_impl_info_create(&info);
    if (err != MPI_SUCCESS)
        return err;
    umpi_lock();
    unsigned h = comm_ptr->hints;
    umpi_unlock();
    for (int i = 0; i < UMPI__NHINTS && err == MPI_SUCCESS; i++)
        err = umpi_impl_info_set(info, umpi__hint_keys[i], h & (1u << i) ? "true" : "false");
    if (err == MPI_SUCCESS)
        err = umpi_impl_info_set(info, "mpi_memory_alloc_kinds",
                                 umpi_cuda_active && umpi_cuda_device_buffers
                                     ? "system,mpi,cuda:device,cuda:host,cuda:managed"
                                     : "system,mpi");
    if (err != MPI_SUCCESS) {
        umpi_impl_info_free(&info);
        return err;
    }
    *info_used = info;
    return MPI_SUCCESS;
}

/* MPI_Comm_dup, with the hints of info instead of comm's (the standard's rule: comm's hints are
 * not carried over; the attributes are, as by MPI_Comm_dup). */
int umpi_impl_comm_dup_with_info(umpi_comm_t *comm_ptr, MPI_Info info, MPI_Comm *newcomm)
{
    unsigned h = umpi__hints_apply(0, info);
    int err = umpi_impl_comm_dup(comm_ptr, newcomm);
    if (err != MPI_SUCCESS)
        return err;
    umpi_comm_t *c = umpi_comm_get(*newcomm);
    umpi_lock();
    c->hints = h;
    umpi_unlock();
    return MPI_SUCCESS;
}

/* MPI_Comm_idup, with the hints of info instead of comm's (as MPI_Comm_dup_with_info). */
int umpi_impl_comm_idup_with_info(umpi_comm_t *comm_ptr, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
    return umpi_comm_idup_start(comm_ptr, umpi__hints_apply(0, info), newcomm, request);
}
