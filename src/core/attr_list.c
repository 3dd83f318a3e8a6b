/*
 * Keyvals and attribute lists for every object kind (umpi_attr.h); the MPI_Comm_* attribute
 * functions on top of them are in attr.c.
 */
#include "core/umpi_attr.h"
#include "core/umpi_err.h"

#include <stdlib.h>

typedef struct umpi_keyval {
    int handle;
    int obj;                          /* UMPI_OBJ_COMM, ... */
    umpi_attr_copy_fn_t *copy_fn;     /* NULL: not copied */
    umpi_attr_delete_fn_t *delete_fn; /* NULL: nothing to call */
    void *extra_state;
    int refcount;                     /* the user's handle (until freed) + one per attribute */
    int freed;                        /* the user freed the handle */
} umpi_keyval_t;

struct umpi_attr {
    umpi_keyval_t *kv;
    void *value;
    struct umpi_attr *next;
};

static struct umpi_handle_table umpi__keyval_table = {
    .first_dynamic = 1,
    .lock = PTHREAD_MUTEX_INITIALIZER,
};

/* Callbacks may call the attribute functions again (a delete callback that frees its keyval,
 * a copy callback that reads another attribute): hence recursive. */
static pthread_mutex_t umpi__attr_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

static const char *umpi__obj_name(int obj)
{
    switch (obj) {
    case UMPI_OBJ_COMM: return "communicator";
    case UMPI_OBJ_DATATYPE: return "datatype";
    case UMPI_OBJ_WIN: return "window";
    default: return "object";
    }
}

/* The name of the keyval argument of the MPI functions for kind obj. */
static const char *umpi__keyval_arg(int obj)
{
    switch (obj) {
    case UMPI_OBJ_COMM: return "comm_keyval";
    case UMPI_OBJ_DATATYPE: return "type_keyval";
    case UMPI_OBJ_WIN: return "win_keyval";
    default: return "keyval";
    }
}

static void umpi__keyval_release(umpi_keyval_t *kv)
{
    if (--kv->refcount > 0)
        return;
    umpi_ht_remove(&umpi__keyval_table, UMPI_KEYVAL_INDEX(kv->handle));
    free(kv);
}

/* The live user keyval of kind obj behind handle, or an MPI_ERR_KEYVAL code. Called locked. */
static int umpi__keyval_lookup(int obj, int handle, umpi_keyval_t **out)
{
    const char *arg = umpi__keyval_arg(obj);
    umpi_keyval_t *kv = NULL;
    if (UMPI_HANDLE_OBJ(handle) == UMPI_OBJ_KEYVAL && UMPI_HANDLE_KIND(handle) == UMPI_KIND_DIRECT)
        kv = umpi_ht_get(&umpi__keyval_table, UMPI_KEYVAL_INDEX(handle));
    if (kv != NULL && kv->handle == handle && !kv->freed && kv->obj == obj) {
        *out = kv;
        return MPI_SUCCESS;
    }
    if (handle == MPI_KEYVAL_INVALID)
        return umpi_err_create(MPI_ERR_KEYVAL, "MPI_KEYVAL_INVALID in argument '%s'", arg);
    if (UMPI_HANDLE_OBJ(handle) == UMPI_OBJ_KEYVAL && UMPI_HANDLE_KIND(handle) == UMPI_KIND_BUILTIN)
        return umpi_err_create(MPI_ERR_KEYVAL, "keyval 0x%x in argument '%s' is predefined: its "
                               "attribute cannot be set, deleted or freed", (unsigned) handle, arg);
    if (kv != NULL && kv->handle == handle && !kv->freed)
        return umpi_err_create(MPI_ERR_KEYVAL, "keyval 0x%x in argument '%s' is for a %s, not a %s",
                               (unsigned) handle, arg, umpi__obj_name(kv->obj), umpi__obj_name(obj));
    return umpi_err_create(MPI_ERR_KEYVAL, "invalid keyval 0x%x in argument '%s'", (unsigned) handle,
                           arg);
}

int umpi_keyval_create(int obj, umpi_attr_copy_fn_t *copy_fn, umpi_attr_delete_fn_t *delete_fn,
                       void *extra_state, int *keyval)
{
    umpi_keyval_t *kv = malloc(sizeof(*kv));
    if (kv == NULL)
        return umpi_err_create(MPI_ERR_NO_MEM, "cannot allocate a keyval");
    *kv = (umpi_keyval_t){ .obj = obj, .copy_fn = copy_fn, .delete_fn = delete_fn,
                           .extra_state = extra_state, .refcount = 1 };
    int idx = umpi_ht_insert(&umpi__keyval_table, kv);
    if (idx < 0 || (uint32_t) idx > UMPI_KEYVAL_INDEX(~0u)) {
        if (idx >= 0)
            umpi_ht_remove(&umpi__keyval_table, (uint32_t) idx);
        free(kv);
        return umpi_err_create(MPI_ERR_NO_MEM, "no keyval left (%s)", idx < 0 ? "out of memory"
                                                                         : "all handles in use");
    }
    kv->handle = UMPI_HANDLE_MAKE(UMPI_KIND_DIRECT, UMPI_OBJ_KEYVAL, ((uint32_t) obj << 22) | idx);
    *keyval = kv->handle;
    return MPI_SUCCESS;
}

int umpi_keyval_free(int obj, int *keyval)
{
    umpi_keyval_t *kv;
    pthread_mutex_lock(&umpi__attr_lock);
    int err = umpi__keyval_lookup(obj, *keyval, &kv);
    if (err == MPI_SUCCESS) {
        kv->freed = 1;
        umpi__keyval_release(kv);
        *keyval = MPI_KEYVAL_INVALID;
    }
    pthread_mutex_unlock(&umpi__attr_lock);
    return err;
}

/* ---- one attribute ----------------------------------------------------------------------------- */

static struct umpi_attr **umpi__attr_find(struct umpi_attr **list, const umpi_keyval_t *kv)
{
    for (; *list != NULL; list = &(*list)->next)
        if ((*list)->kv == kv)
            return list;
    return NULL;
}

static int umpi__attr_call_delete(int handle, const struct umpi_attr *a)
{
    if (a->kv->delete_fn == NULL)
        return MPI_SUCCESS;
    return a->kv->delete_fn(handle, a->kv->handle, a->value, a->kv->extra_state);
}

/* Appends (kv, value) at the end of *list: the order of setting. */
static int umpi__attr_append(struct umpi_attr **list, umpi_keyval_t *kv, void *value)
{
    struct umpi_attr *a = malloc(sizeof(*a));
    if (a == NULL)
        return umpi_err_create(MPI_ERR_NO_MEM, "cannot allocate an attribute");
    *a = (struct umpi_attr){ .kv = kv, .value = value, .next = NULL };
    kv->refcount++;
    while (*list != NULL)
        list = &(*list)->next;
    *list = a;
    return MPI_SUCCESS;
}

static void umpi__attr_unlink(struct umpi_attr **pos)
{
    struct umpi_attr *a = *pos;
    *pos = a->next;
    umpi__keyval_release(a->kv);
    free(a);
}

/* Removes entry a after its delete callback ran: the callback may have changed the list (deleted
 * other attributes of the object), so a's place is looked up again. */
static void umpi__attr_remove(struct umpi_attr **list, struct umpi_attr *a)
{
    for (; *list != NULL; list = &(*list)->next) {
        if (*list == a) {
            umpi__attr_unlink(list);
            return;
        }
    }
}

int umpi_attr_set(int obj, int handle, struct umpi_attr **list, int keyval, void *value)
{
    umpi_keyval_t *kv;
    pthread_mutex_lock(&umpi__attr_lock);
    int err = umpi__keyval_lookup(obj, keyval, &kv);
    if (err != MPI_SUCCESS)
        goto out;
    struct umpi_attr **pos = umpi__attr_find(list, kv);
    if (pos == NULL) {
        err = umpi__attr_append(list, kv, value);
        goto out;
    }
    /* MPI 4.1 sec. 7.7.2: the old value is deleted through the callback first */
    struct umpi_attr *a = *pos;
    err = umpi__attr_call_delete(handle, a);
    if (err == MPI_SUCCESS)
        a->value = value;
out:
    pthread_mutex_unlock(&umpi__attr_lock);
    return err;
}

int umpi_attr_get(int obj, struct umpi_attr *list, int keyval, void **value, int *flag)
{
    umpi_keyval_t *kv;
    pthread_mutex_lock(&umpi__attr_lock);
    int err = umpi__keyval_lookup(obj, keyval, &kv);
    if (err == MPI_SUCCESS) {
        struct umpi_attr **pos = umpi__attr_find(&list, kv);
        *flag = pos != NULL;
        if (pos != NULL)
            *value = (*pos)->value;
    }
    pthread_mutex_unlock(&umpi__attr_lock);
    return err;
}

int umpi_attr_delete(int obj, int handle, struct umpi_attr **list, int keyval)
{
    umpi_keyval_t *kv;
    pthread_mutex_lock(&umpi__attr_lock);
    int err = umpi__keyval_lookup(obj, keyval, &kv);
    if (err != MPI_SUCCESS)
        goto out;
    /* Deleting an attribute that is not set is nothing to do (as in MPICH). */
    struct umpi_attr **pos = umpi__attr_find(list, kv);
    if (pos == NULL)
        goto out;
    struct umpi_attr *a = *pos;
    err = umpi__attr_call_delete(handle, a);
    if (err == MPI_SUCCESS)
        umpi__attr_remove(list, a);
out:
    pthread_mutex_unlock(&umpi__attr_lock);
    return err;
}

/* ---- whole lists ------------------------------------------------------------------------------- */

int umpi_attr_list_delete(int obj, int handle, struct umpi_attr **list)
{
    int err = MPI_SUCCESS;
    pthread_mutex_lock(&umpi__attr_lock);
    /* Last set, first deleted: find the last entry each time (lists are short). */
    while (*list != NULL) {
        struct umpi_attr **last = list;
        while ((*last)->next != NULL)
            last = &(*last)->next;
        struct umpi_attr *a = *last;
        err = umpi__attr_call_delete(handle, a);
        if (err != MPI_SUCCESS)
            break;
        umpi__attr_remove(list, a);
    }
    pthread_mutex_unlock(&umpi__attr_lock);
    (void) obj;
    return err;
}

int umpi_attr_list_copy(int obj, int old_handle, struct umpi_attr *old_list, int new_handle,
                        struct umpi_attr **new_list)
{
    int err = MPI_SUCCESS;
    *new_list = NULL;
    pthread_mutex_lock(&umpi__attr_lock);
    for (struct umpi_attr *a = old_list; a != NULL; a = a->next) {
        void *out = NULL;
        int flag = 0;
        if (a->kv->copy_fn == NULL)
            continue;
        err = a->kv->copy_fn(old_handle, a->kv->handle, a->kv->extra_state, a->value, &out, &flag);
        if (err == MPI_SUCCESS && flag)
            err = umpi__attr_append(new_list, a->kv, out);
        if (err != MPI_SUCCESS)
            break;
    }
    if (err != MPI_SUCCESS) {
        /* The new object never existed for the user: undo, keeping the first error. */
        if (umpi_attr_list_delete(obj, new_handle, new_list) != MPI_SUCCESS) {
            while (*new_list != NULL)
                umpi__attr_unlink(new_list);
        }
    }
    pthread_mutex_unlock(&umpi__attr_lock);
    return err;
}

int umpi_attr_finalize_builtin_comms(void)
{
    int err = umpi_attr_list_delete(UMPI_OBJ_COMM, MPI_COMM_SELF, &umpi_comm_self.attrs);
    int err2 = umpi_attr_list_delete(UMPI_OBJ_COMM, MPI_COMM_WORLD, &umpi_comm_world.attrs);
    return err != MPI_SUCCESS ? err : err2;
}
