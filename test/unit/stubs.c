/*
 * What the unit tests of src/core objects need from the rest of the library, without UCX, PMIx or
 * MPI_Init: the process state, MPI_COMM_WORLD/SELF in the comm table, and an abort that ends
 * only this process (so a test can fork and watch a fatal error happen).
 */
#include "core/umpi_obj.h"
#include "pmi/umpi_pmi.h"

#include <stdio.h>
#include <string.h>
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

void umpi_pmi_abort(int code, const char *msg)
{
    fprintf(stderr, "%s\n", msg);
    fflush(stderr);
    _exit(code);
}

/* src/coll/op.c's MPI_Reduce_local looks at device buffers (src/coll/device.c, src/cuda): host-only
 * here. Weak, so that the tests linking src/cuda get the real umpi_cuda_active. */
__attribute__((weak)) int umpi_cuda_active;
__attribute__((weak)) int umpi_coll_dev_flag(const void *buf, MPI_Count count, const umpi_dtype_t *dt, int flag,
                                             int *err)
{
    (void) buf, (void) count, (void) dt, (void) flag;
    *err = MPI_SUCCESS;
    return 0;
}
struct umpi_op;
__attribute__((weak)) int umpi_coll_dev_reduce(const struct umpi_op *op, const void *in, void *inout, MPI_Count count,
                                               umpi_dtype_t *dt, int flags)
{
    (void) op, (void) in, (void) inout, (void) count, (void) dt, (void) flags;
    return MPI_ERR_INTERN;
}
