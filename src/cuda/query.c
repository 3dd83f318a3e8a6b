/*
 * MPIX_Query_cuda_support: the MPICH extension that tells a program whether it may hand device
 * pointers to MPI. Written by hand: it is not in the MPI standard's API list that the generated
 * bindings come from. Declared in include/mpi.h.
 */
#include "cuda/umpi_cuda.h"

/* 1 while the CUDA path is active (MPI initialised, the driver loaded, a device present); 0 before
 * MPI_Init, after MPI_Finalize, and in a host-only process. */
UMPI_EXPORT int PMPIX_Query_cuda_support(void)
{
    return umpi_cuda_active;
}

#pragma weak MPIX_Query_cuda_support = PMPIX_Query_cuda_support
