/* The error exit of the generated bindings for calls on a window (src/rma/win.c). */
#ifndef UMPI_RMA_ERR_H
#define UMPI_RMA_ERR_H

#include "core/umpi.h"

/* Calls the error handler of win (MPI_COMM_SELF's when win is not a window) for code, as
 * umpi_err_dispatch does for a communicator; returns code. */
int umpi_rma_err_dispatch(const char *fname, MPI_Win win, int code);

#endif
