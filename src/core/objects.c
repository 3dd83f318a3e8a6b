/*
 * The process's MPI state (umpi_global), the big lock, and the life cycle of the predefined
 * objects.
 *
 * Error handlers and datatypes are built statically (errhandler.c, datatype.c): they exist before
 * MPI_Init, so that errors during MPI_Init are handled, and cost nothing at start-up. What needs
 * the job's shape, MPI_COMM_WORLD and MPI_COMM_SELF, is set up here.
 */
#include "core/umpi_obj.h"

struct umpi_global umpi_global = {.appnum = -1, .universe_size = -1};
pthread_mutex_t umpi_big_lock = PTHREAD_MUTEX_INITIALIZER;

/* Provided by comm.c: fills umpi_comm_world/self and the comm table (needs umpi_global's rank
 * and size, so it runs after PMI is up). Returns MPI_SUCCESS or an MPI error code. */
int umpi_comm_builtin_init(void);

int umpi_objects_init(void)
{
    return umpi_comm_builtin_init();
}

void umpi_objects_finalize(void)
{
    /* Nothing to free: builtins are static, and user objects still alive at MPI_Finalize are
     * the program's leak, reachable through their tables for tools such as valgrind. */
}
