/*
 * MPI errors: codes that carry their message, and the error-handler call.
 *
 * Every failing MPI call returns an error *code* whose class is one of the MPI error classes and
 * whose MPI_Error_string is the full story: the call, the argument, the value, and the cause from
 * the layer below. Codes are made by umpi_err_create() (argument checks in the generated bindings,
 * and the implementation functions); the binding hands the code to umpi_err_dispatch(), which
 * prefixes the call name and invokes the error handler of the right object.
 *
 * Code layout (all below MPI_ERR_LASTCODE = 0x3fffffff):
 *
 *    29  28                     10 9          0
 *   +---+-------------------------+------------+
 *   | U |   message / code id     |   class    |
 *   +---+-------------------------+------------+
 *   U = 1: a code added by MPI_Add_error_code (id = its index)
 *   U = 0: id 0 is the bare class; id > 0 names a slot of the message ring (recent errors)
 */
#ifndef UMPI_ERR_H
#define UMPI_ERR_H

#include "core/umpi.h"

#define UMPI_ERR_CLASS_BITS  10
#define UMPI_ERR_CLASS_MASK  ((1 << UMPI_ERR_CLASS_BITS) - 1)
#define UMPI_ERR_USER_BIT    (1 << 29)
/* First class number handed out by MPI_Add_error_class; predefined classes are all below it. */
#define UMPI_ERR_FIRST_USER_CLASS 128

/* Makes a new error code of class err_class with the formatted message (no call name: the binding
 * adds it). Never fails: under memory pressure the message is cut, not lost. */
int umpi_err_create(int err_class, const char *fmt, ...) UMPI_PRINTF(2, 3);

/* Same, and names the communicator whose error handler must be called (for calls that have no
 * communicator argument, e.g. MPI_Wait on a request of that communicator). */
int umpi_err_create_comm(MPI_Comm comm, int err_class, const char *fmt, ...) UMPI_PRINTF(3, 4);

/* Maps an internal status (and the cause recorded with umpi_status_msg) to a new MPI error code. */
int umpi_err_from_status(umpi_status_t st, const char *what);

/* The class of any code (predefined, ring or user-added). */
int umpi_err_class(int code);

/*
 * Called by the generated binding when its implementation returned code != MPI_SUCCESS.
 * fname is "MPI_Send". comm is the communicator argument of the call, or MPI_COMM_NULL when the
 * call has none; the error handler invoked is that of the communicator recorded in the code
 * (umpi_err_create_comm), else comm, else MPI_COMM_SELF's (MPI-4 semantics for errors that belong
 * to no object). ERRORS_ARE_FATAL/ABORT print the message and end the job; ERRORS_RETURN returns;
 * user handlers are called with (&comm, &code). Returns code.
 */
int umpi_err_dispatch(const char *fname, MPI_Comm comm, int code);

/* The same for an object other than a communicator (a window): errhandler is its handler, object
 * its handle, which a user handler receives by address. */
int umpi_err_dispatch_handler(const char *fname, MPI_Errhandler errhandler, int object, int code);
/* For errors before MPI_Init or after MPI_Finalize: no handler exists, so print and abort. */
int umpi_err_uninitialized(const char *fname) __attribute__((noreturn));

/* The largest error class or code made so far (the MPI_LASTUSEDCODE attribute). */
int umpi_err_last_used_code(void);

/* MPI_Error_string for any code: writes at most MPI_MAX_ERROR_STRING bytes including the NUL. */
int umpi_err_string(int code, char *buf, int *len);

#endif
