/*
 * What src/api offers the rooms above it (one-sided windows, and later files): a place in
 * MPI_Finalize. init.c calls nothing above itself by name; a room above that holds resources of
 * the rooms below (UCX registrations of windows the program did not free) registers a finalizer,
 * which MPI_Finalize runs, last registered first, after the final fence and before the network
 * goes down.
 */
#ifndef UMPI_API_H
#define UMPI_API_H

/* Registers fn once (registering it again does nothing); -1 when the table is full. */
int umpi_finalize_register(void (*fn)(void));

#endif
