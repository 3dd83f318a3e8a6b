/*
 * Error handler objects: the four builtin ones and those made by MPI_Comm_create_errhandler.
 *
 * The builtins sit in a statically built first chunk of the table, so that they exist before
 * MPI_Init (an error during MPI_Init is dispatched like any other) and are never freed. User
 * handlers are direct objects from index UMPI__EH_FIRST_DYNAMIC, reference-counted: one reference
 * for the handle the user holds, one for each communicator using it.
 */
#include "core/umpi_err.h"
#include "core/umpi_obj.h"

#include <stdlib.h>

#if __has_include("mpi/gen/umpi_impl.h")
#include "mpi/gen/umpi_impl.h"
#endif

/* Builtin indices are MPICH's handle values (MPI_ERRORS_ARE_FATAL = 0x54000000, ...). */
#define UMPI__EH_FIRST_DYNAMIC 4
#define UMPI__EH_BUILTIN(i) UMPI_HANDLE_MAKE(UMPI_KIND_BUILTIN, UMPI_OBJ_ERRHANDLER, i)
_Static_assert(MPI_ERRORS_ARE_FATAL == UMPI__EH_BUILTIN(0) && MPI_ERRORS_RETURN == UMPI__EH_BUILTIN(1) &&
               MPI_ERRORS_ABORT == UMPI__EH_BUILTIN(3),
               "builtin error handlers: table slots follow the handle values");

static umpi_errhandler_t umpi__eh_builtin[UMPI__EH_FIRST_DYNAMIC] = {
    { UMPI__EH_BUILTIN(0), UMPI_EH_FATAL, NULL, 1 },  /* MPI_ERRORS_ARE_FATAL */
    { UMPI__EH_BUILTIN(1), UMPI_EH_RETURN, NULL, 1 }, /* MPI_ERRORS_RETURN */
    /* MPIR_ERRORS_THROW_EXCEPTIONS: MPICH's C++ binding throws from here; C has no exceptions,
     * so it returns. */
    { UMPI__EH_BUILTIN(2), UMPI_EH_RETURN, NULL, 1 },
    { UMPI__EH_BUILTIN(3), UMPI_EH_ABORT, NULL, 1 },  /* MPI_ERRORS_ABORT */
};

static void *umpi__eh_chunk0[UMPI_HT_CHUNK] = {
    &umpi__eh_builtin[0], &umpi__eh_builtin[1], &umpi__eh_builtin[2], &umpi__eh_builtin[3],
};

struct umpi_handle_table umpi_errhandler_table = {
    .chunks = { umpi__eh_chunk0 },
    .limit = UMPI_HT_CHUNK,
    .first_dynamic = UMPI__EH_FIRST_DYNAMIC,
    .next = UMPI__EH_FIRST_DYNAMIC,
    .lock = PTHREAD_MUTEX_INITIALIZER,
};

/* Serialises MPI_Comm_set/get_errhandler on the same communicator: get must not hand out a
 * handler that a concurrent set is releasing. */
static pthread_mutex_t umpi__eh_lock = PTHREAD_MUTEX_INITIALIZER;

void umpi_errhandler_retain(umpi_errhandler_t *eh)
{
    if (eh->kind != UMPI_EH_USER)
        return;
    __atomic_add_fetch(&eh->refcount, 1, __ATOMIC_RELAXED);
}

void umpi_errhandler_release(umpi_errhandler_t *eh)
{
    if (eh->kind != UMPI_EH_USER)
        return;
    if (__atomic_sub_fetch(&eh->refcount, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    umpi_debug(2, "errhandler 0x%x freed", (unsigned) eh->handle);
    umpi_ht_remove(&umpi_errhandler_table, UMPI_HANDLE_INDEX(eh->handle));
    free(eh);
}

int umpi_impl_comm_create_errhandler(MPI_Comm_errhandler_function *comm_errhandler_fn,
                                     MPI_Errhandler *errhandler)
{
    umpi_errhandler_t *eh = malloc(sizeof(*eh));
    if (eh == NULL)
        return umpi_err_create(MPI_ERR_NO_MEM, "cannot allocate an error handler");
    eh->kind = UMPI_EH_USER;
    eh->comm_fn = comm_errhandler_fn;
    eh->refcount = 1;
    int idx = umpi_ht_insert(&umpi_errhandler_table, eh);
    if (idx < 0) {
        free(eh);
        return umpi_err_from_status(UMPI_ERR_NOMEM, "cannot register an error handler");
    }
    /* The handle is written after insertion published the pointer; nobody can know the handle,
     * hence look the object up, before *errhandler is returned. */
    eh->handle = UMPI_HANDLE_MAKE(UMPI_KIND_DIRECT, UMPI_OBJ_ERRHANDLER, idx);
    *errhandler = eh->handle;
    umpi_debug(2, "errhandler 0x%x created", (unsigned) eh->handle);
    return MPI_SUCCESS;
}

int umpi_impl_comm_set_errhandler(umpi_comm_t *comm_ptr, MPI_Errhandler errhandler)
{
    umpi_errhandler_t *neweh = umpi_errhandler_get(errhandler);
    if (neweh == NULL) /* the binding checked it; a freed one can still reach here */
        return umpi_err_create(MPI_ERR_ARG, "errhandler=0x%x is not an error handler",
                               (unsigned) errhandler);
    umpi_errhandler_retain(neweh);
    pthread_mutex_lock(&umpi__eh_lock);
    MPI_Errhandler old = __atomic_exchange_n(&comm_ptr->errhandler, errhandler, __ATOMIC_ACQ_REL);
    umpi_errhandler_t *oldeh = umpi_errhandler_get(old);
    if (oldeh != NULL)
        umpi_errhandler_release(oldeh);
    pthread_mutex_unlock(&umpi__eh_lock);
    return MPI_SUCCESS;
}

int umpi_impl_comm_get_errhandler(umpi_comm_t *comm_ptr, MPI_Errhandler *errhandler)
{
    pthread_mutex_lock(&umpi__eh_lock);
    MPI_Errhandler h = comm_ptr->errhandler;
    umpi_errhandler_t *eh = umpi_errhandler_get(h);
    if (eh != NULL)
        umpi_errhandler_retain(eh); /* MPI: the caller gets a new reference to free */
    pthread_mutex_unlock(&umpi__eh_lock);
    *errhandler = eh != NULL ? h : MPI_ERRORS_ARE_FATAL;
    return MPI_SUCCESS;
}

int umpi_impl_errhandler_free(MPI_Errhandler *errhandler)
{
    umpi_errhandler_t *eh = umpi_errhandler_get(*errhandler);
    if (eh == NULL)
        return umpi_err_create(MPI_ERR_ARG, "errhandler=0x%x is not an error handler",
                               (unsigned) *errhandler);
    /* Builtins are not counted: freeing one only clears the caller's handle (MPI 4.1). */
    umpi_errhandler_release(eh);
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}
