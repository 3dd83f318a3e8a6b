/* A window's attributes, group, name, hints and error handler. */
#include "rma/umpi_rma.h"
#include "core/umpi_attr.h"
#include "core/umpi_err.h"
#include "mpi/gen/umpi_impl.h"

#include <string.h>

/* What MPI_Win_get_attr hands out for the predefined attributes: pointers into the window (C
 * binding: the attribute value is a pointer to the value, except MPI_WIN_BASE, the base itself). */
static int umpi__model = MPI_WIN_UNIFIED;

int umpi_impl_win_get_attr(MPI_Win win, int win_keyval, void *attribute_val, int *flag)
{
    umpi_win_t *w;
    int err = umpi_rma_win_check(win, &w, "win");
    if (err != MPI_SUCCESS)
        return err;
    void *v;
    switch (win_keyval) {
    case MPI_WIN_BASE:
        v = w->base;
        break;
    case MPI_WIN_SIZE:
        v = &w->size;
        break;
    case MPI_WIN_DISP_UNIT:
        v = &w->disp_unit;
        break;
    case MPI_WIN_CREATE_FLAVOR:
        v = &w->flavor;
        break;
    case MPI_WIN_MODEL:
        v = &umpi__model;
        break;
    default:
        return umpi_attr_get(UMPI_OBJ_WIN, w->attrs, win_keyval, (void **) attribute_val, flag);
    }
    *(void **) attribute_val = v;
    *flag = 1;
    return MPI_SUCCESS;
}

int umpi_impl_win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
                                MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval, void *extra_state)
{
    return umpi_keyval_create(UMPI_OBJ_WIN, win_copy_attr_fn, win_delete_attr_fn, extra_state, win_keyval);
}

int umpi_impl_win_free_keyval(int *win_keyval)
{
    return umpi_keyval_free(UMPI_OBJ_WIN, win_keyval);
}

int umpi_impl_win_set_attr(MPI_Win win, int win_keyval, void *attribute_val)
{
    umpi_win_t *w;
    int err = umpi_rma_win_check(win, &w, "win");
    if (err != MPI_SUCCESS)
        return err;
    return umpi_attr_set(UMPI_OBJ_WIN, win, &w->attrs, win_keyval, attribute_val);
}

int umpi_impl_win_delete_attr(MPI_Win win, int win_keyval)
{
    umpi_win_t *w;
    int err = umpi_rma_win_check(win, &w, "win");
    if (err != MPI_SUCCESS)
        return err;
    return umpi_attr_delete(UMPI_OBJ_WIN, win, &w->attrs, win_keyval);
}

int umpi_impl_win_get_group(MPI_Win win, MPI_Group *group)
{
    umpi_win_t *w;
    int err = umpi_rma_win_check(win, &w, "win");
    if (err != MPI_SUCCESS)
        return err;
    umpi_lock();
    umpi_group_retain(w->comm->group);
    umpi_unlock();
    *group = w->comm->group->handle;
    return MPI_SUCCESS;
}

int umpi_impl_win_set_name(MPI_Win win, const char *win_name)
{
    umpi_win_t *w;
    int err = umpi_rma_win_check(win, &w, "win");
    if (err != MPI_SUCCESS)
        return err;
    size_t n = strlen(win_name);
    if (n >= MPI_MAX_OBJECT_NAME)
        return umpi_err_create(MPI_ERR_ARG, "name of %zu characters in argument 'win_name' (at most %d)", n,
                               MPI_MAX_OBJECT_NAME - 1);
    memcpy(w->name, win_name, n + 1);
    return MPI_SUCCESS;
}

int umpi_impl_win_get_name(MPI_Win win, char *win_name, int *resultlen)
{
    umpi_win_t *w;
    int err = umpi_rma_win_check(win, &w, "win");
    if (err != MPI_SUCCESS)
        return err;
    size_t n = strlen(w->name);
    memcpy(win_name, w->name, n + 1);
    *resultlen = (int) n;
    return MPI_SUCCESS;
}

/* Hints are kept as given (umpi follows none of them yet, and none changes a result). */
int umpi_impl_win_set_info(MPI_Win win, MPI_Info info)
{
    umpi_win_t *w;
    int err = umpi_rma_win_check(win, &w, "win");
    if (err != MPI_SUCCESS)
        return err;
    umpi_info_t *src = umpi_info_get(info), *dst = umpi_info_get(w->info);
    if (src == NULL)
        return umpi_err_create(MPI_ERR_INFO, "MPI_INFO_NULL in argument 'info'");
    pthread_mutex_lock(&src->lock);
    umpi_status_t st = UMPI_OK;
    for (int i = 0; i < src->n && st == UMPI_OK; i++)
        st = umpi_info_list_set(dst, src->entries[i].key, src->entries[i].value);
    pthread_mutex_unlock(&src->lock);
    return st == UMPI_OK ? MPI_SUCCESS : umpi_err_from_status(st, "setting the window's hints");
}

int umpi_impl_win_get_info(MPI_Win win, MPI_Info *info_used)
{
    umpi_win_t *w;
    int err = umpi_rma_win_check(win, &w, "win");
    if (err != MPI_SUCCESS)
        return err;
    return umpi_impl_info_dup(w->info, info_used);
}

/* Window error handlers are comm ones in disguise: both function types take (handle *, int *, ...). */
int umpi_impl_win_create_errhandler(MPI_Win_errhandler_function *win_errhandler_fn, MPI_Errhandler *errhandler)
{
    return umpi_impl_comm_create_errhandler((MPI_Comm_errhandler_function *) win_errhandler_fn, errhandler);
}

int umpi_impl_win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    umpi_win_t *w;
    int err = umpi_rma_win_check(win, &w, "win");
    if (err != MPI_SUCCESS)
        return err;
    umpi_errhandler_t *neweh = umpi_errhandler_get(errhandler);
    if (neweh == NULL)
        return umpi_err_create(MPI_ERR_ARG, "errhandler=0x%x is not an error handler", (unsigned) errhandler);
    umpi_errhandler_retain(neweh);
    MPI_Errhandler old = __atomic_exchange_n(&w->errhandler, errhandler, __ATOMIC_ACQ_REL);
    umpi_errhandler_t *oldeh = umpi_errhandler_get(old);
    if (oldeh != NULL)
        umpi_errhandler_release(oldeh);
    return MPI_SUCCESS;
}

int umpi_impl_win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    umpi_win_t *w;
    int err = umpi_rma_win_check(win, &w, "win");
    if (err != MPI_SUCCESS)
        return err;
    MPI_Errhandler h = __atomic_load_n(&w->errhandler, __ATOMIC_ACQUIRE);
    umpi_errhandler_t *eh = umpi_errhandler_get(h);
    if (eh != NULL)
        umpi_errhandler_retain(eh); /* the caller gets a reference to free */
    *errhandler = h;
    return MPI_SUCCESS;
}

int umpi_impl_win_call_errhandler(MPI_Win win, int errorcode)
{
    umpi_win_t *w;
    int err = umpi_rma_win_check(win, &w, "win");
    if (err != MPI_SUCCESS)
        return err;
    umpi_err_dispatch_handler("MPI_Win_call_errhandler", __atomic_load_n(&w->errhandler, __ATOMIC_ACQUIRE),
                              win, errorcode);
    return MPI_SUCCESS;
}
