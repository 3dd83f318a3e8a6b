/*
 * Library objects that mpi.h names through macros or extern declarations, under the names
 * MPICH's ABI gives them: an MPICH-built binary links to these symbols, so they must exist with
 * exactly these names, types and meanings. Only their addresses matter for most of them: each is
 * a distinct marker the library compares arguments against.
 */
#include "core/umpi.h"

/* Graph topology weights: markers, never read or written. */
static int umpi__unweighted_mark, umpi__weights_empty_mark;
UMPI_EXPORT int *const MPI_UNWEIGHTED = &umpi__unweighted_mark;
UMPI_EXPORT int *const MPI_WEIGHTS_EMPTY = &umpi__weights_empty_mark;

/* "Ignore the status" for the Fortran interfaces (MPI_Status_f2c and friends compare to these). */
static MPI_Fint umpi__f_status_ignore[MPI_F_STATUS_SIZE];
static MPI_Fint umpi__f_statuses_ignore[MPI_F_STATUS_SIZE];
static MPI_F08_status umpi__f08_status_ignore, umpi__f08_statuses_ignore;
UMPI_EXPORT MPI_Fint *MPI_F_STATUS_IGNORE = umpi__f_status_ignore;
UMPI_EXPORT MPI_Fint *MPI_F_STATUSES_IGNORE = umpi__f_statuses_ignore;
UMPI_EXPORT MPI_F08_status *MPI_F08_STATUS_IGNORE = &umpi__f08_status_ignore;
UMPI_EXPORT MPI_F08_status *MPI_F08_STATUSES_IGNORE = &umpi__f08_statuses_ignore;

/* MPI_T: "every handle of the session", a marker the MPI_T functions recognise. */
static char umpi__all_pvar_handles_mark;
UMPI_EXPORT struct umpi_t_pvar_handle_s *const MPI_T_PVAR_ALL_HANDLES =
    (struct umpi_t_pvar_handle_s *) &umpi__all_pvar_handles_mark;

/*
 * MPI_DUP_FN, MPI_COMM_DUP_FN, MPI_TYPE_DUP_FN, MPI_WIN_DUP_FN: the attribute copy callback that
 * gives the new object the same attribute value. One function serves all object kinds (the handle
 * is an int for each), as in MPICH's ABI.
 */
UMPI_EXPORT int MPIR_Dup_fn(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
                            void *attribute_val_out, int *flag)
{
    *(void **) attribute_val_out = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}
