/*
 * Attribute caching (MPI 4.1 sec. 7.7), shared by every object kind that has attributes:
 * communicators now, datatypes and windows later. An object holds a `struct umpi_attr *` list;
 * keyvals are objects of the generic handle table.
 *
 * Keyval handles follow MPICH's layout, which also tells which object kind a keyval is for:
 *
 *    31 30 29    26 25    22 21                  0
 *   +-----+--------+--------+---------------------+
 *   |kind | 0x9    | object |        index        |
 *   +-----+--------+--------+---------------------+
 *   kind 1: predefined (MPI_TAG_UB 0x64400001, MPI_WIN_BASE 0x66000001), 2: user keyvals
 *   object: UMPI_OBJ_COMM, UMPI_OBJ_DATATYPE or UMPI_OBJ_WIN
 *
 * The functions return MPI_SUCCESS or an MPI error code: user callbacks return MPI codes, which
 * are passed on unchanged. A lock (recursive, because callbacks may call MPI attribute functions)
 * serialises all attribute work.
 */
#ifndef UMPI_ATTR_H
#define UMPI_ATTR_H

#include "core/umpi_obj.h"

#define UMPI_KEYVAL_OBJ(kv)   (((uint32_t)(kv) >> 22) & 0xf)
#define UMPI_KEYVAL_INDEX(kv) ((uint32_t)(kv) & 0x3fffffu)

/* One callback type for every kind: the handles (MPI_Comm, MPI_Datatype, MPI_Win) are all int. */
typedef int umpi_attr_copy_fn_t(int, int, void *, void *, void *, int *);
typedef int umpi_attr_delete_fn_t(int, int, void *, void *);

/** Creates a keyval for objects of kind obj (UMPI_OBJ_COMM, ...); NULL callbacks do nothing
 *  (MPI_*_NULL_COPY_FN: the attribute is not copied; MPI_*_NULL_DELETE_FN). */
int umpi_keyval_create(int obj, umpi_attr_copy_fn_t *copy_fn, umpi_attr_delete_fn_t *delete_fn,
                       void *extra_state, int *keyval);
/** MPI_*_free_keyval: the keyval lives on while attributes use it; *keyval becomes invalid. */
int umpi_keyval_free(int obj, int *keyval);

/** Sets (or replaces, after calling the delete callback on the old value) an attribute. */
int umpi_attr_set(int obj, int handle, struct umpi_attr **list, int keyval, void *value);
/** *flag = 0 when keyval has no attribute on the object. */
int umpi_attr_get(int obj, struct umpi_attr *list, int keyval, void **value, int *flag);
/** Calls the delete callback and removes the attribute; it stays if the callback fails. */
int umpi_attr_delete(int obj, int handle, struct umpi_attr **list, int keyval);

/**
 * For MPI_Comm_dup / Type_dup: calls the copy callback of each attribute of old_list in the order
 * they were set and builds *new_list from those that set their flag. On a failing callback the
 * attributes copied so far are deleted again (delete callbacks called) and its code returned.
 */
int umpi_attr_list_copy(int obj, int old_handle, struct umpi_attr *old_list, int new_handle,
                        struct umpi_attr **new_list);
/**
 * For MPI_Comm_free / Type_free and MPI_Finalize: calls the delete callbacks in the reverse order
 * of setting (MPI 4.1 sec. 11.2.4 asks this for MPI_COMM_SELF at MPI_Finalize) and empties the
 * list. A failing callback stops it: the error is returned, that attribute and those set before
 * it stay.
 */
int umpi_attr_list_delete(int obj, int handle, struct umpi_attr **list);

/** MPI_Finalize, first thing: deletes the attributes of MPI_COMM_SELF, then of MPI_COMM_WORLD. */
int umpi_attr_finalize_builtin_comms(void);

#endif
