/*
 * The three forms of a collective call. MPI_X, MPI_IX and MPI_X_init share one implementation,
 * umpi_impl_x (the `coll` directive of maint/bindings.def), which gets the form as its mode: the
 * same schedule is run to completion, handed to the progress engine behind a request, or kept
 * for MPI_Start.
 */
#ifndef UMPI_COLL_MODE_H
#define UMPI_COLL_MODE_H

typedef enum {
    UMPI_COLL_BLOCKING,    /* MPI_X: request NULL */
    UMPI_COLL_NONBLOCKING, /* MPI_IX: a started request */
    UMPI_COLL_PERSISTENT,  /* MPI_X_init: an inactive request, started by MPI_Start */
} umpi_coll_mode_t;

#endif
