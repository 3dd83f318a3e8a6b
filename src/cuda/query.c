/*
 * MPIX_Query_cuda_support: the MPICH extension that tells a program whether it may hand device
 * pointers to MPI. Written by hand: it is not in the MPI standard's API list that the generated
 * bindings come from. Declared in include/mpi.h; MPIX_ is a weak alias of PMPIX_, like the MPI_
 * functions of the generated bindings.
 */
#include "cuda/umpi_cuda.h"

#pragma weak MPIX_Query_cuda_support = PMPIX_Query_cuda_support
UMPI_EXPORT int MPIX_Query_cuda_support(void);

/* 1 when a program may pass device pointers: the CUDA path is active (MPI initialised, the driver
 * loaded, a device present) and point-to-point and collectives carry device buffers
 * (umpi_cuda_device_buffers, set by MPI_Init: src/pt2pt/gpu_*.c, src/coll/device*.c). 0 before
 * MPI_Init, after MPI_Finalize, and in a host-only process. */
UMPI_EXPORT int PMPIX_Query_cuda_support(void)
{
    return umpi_cuda_active && umpi_cuda_device_buffers;
}
