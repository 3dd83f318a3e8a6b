/*
 * What the unit tests of src/core objects need from the rest of the library, without UCX, PMIx or
 * MPI_Init: the process state and MPI_COMM_WORLD/SELF in the comm table. No abort is set
 * (umpi_abort_job), so a fatal error ends only this process: a test can fork and watch one happen.
 */
#include "core/umpi_obj.h"
#include "pmi/umpi_pmi.h"

#include <stdio.h>
#include <unistd.h>

struct umpi_global umpi_global = {
    .state = UMPI_STATE_INITIALIZED, .rank = 0, .size = 1, .appnum = 0, .universe_size = 4,
    .hostname = "unit-host",
};
pthread_mutex_t umpi_big_lock = PTHREAD_MUTEX_INITIALIZER;

umpi_comm_t umpi_comm_world = { .handle = MPI_COMM_WORLD, .rank = 0, .size = 1,
                                .errhandler = MPI_ERRORS_ARE_FATAL, .refcount = 1,
                                .name = "MPI_COMM_WORLD" };
umpi_comm_t umpi_comm_self = { .handle = MPI_COMM_SELF, .rank = 0, .size = 1,
                               .errhandler = MPI_ERRORS_ARE_FATAL, .refcount = 1,
                               .name = "MPI_COMM_SELF" };

static void *unit__comm_chunk0[UMPI_HT_CHUNK] = { &umpi_comm_world, &umpi_comm_self };
struct umpi_handle_table umpi_comm_table = {
    .chunks = { unit__comm_chunk0 },
    .limit = UMPI_HT_CHUNK,
    .first_dynamic = 2,
    .next = 2,
    .lock = PTHREAD_MUTEX_INITIALIZER,
};

int umpi_comm_builtin_init(void)
{
    return MPI_SUCCESS;
}

/* MPI_Abort (src/api/env.c) ends the job through the process manager: here, only this process. */
void umpi_pmi_abort(int code, const char *msg)
{
    fprintf(stderr, "%s\n", msg);
    fflush(stderr);
    _exit(code);
}
