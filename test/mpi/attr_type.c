/*
 * Attributes on datatypes: MPI_Type_create_keyval/free_keyval, set/get/delete on a derived and on
 * a predefined type, copy callbacks at MPI_Type_dup (MPI_TYPE_DUP_FN, MPI_TYPE_NULL_COPY_FN, a
 * user callback, a failing one), delete callbacks at MPI_Type_free and MPI_Type_delete_attr, and
 * keyvals of the wrong object kind.
 */
#include "mtest.h"

static int deletes, fail_copy;

static int copy_twice(MPI_Datatype t, int keyval, void *extra, void *in, void *out, int *flag)
{
    if (fail_copy)
        return MPI_ERR_OTHER;
    *(void **) out = (char *) in + 2;
    *flag = 1;
    return MPI_SUCCESS;
}

static int count_delete(MPI_Datatype t, int keyval, void *value, void *extra)
{
    deletes++;
    (*(int *) extra)++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    char base[8];
    int kuser, kdup, knull, kcomm, flag, extra = 0, cls, err;
    void *v;
    MPI_Datatype vec, dup;

    MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Type_create_keyval(copy_twice, count_delete, &kuser, &extra);
    MPI_Type_create_keyval(MPI_TYPE_DUP_FN, count_delete, &kdup, &extra);
    MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, count_delete, &knull, &extra);

    MPI_Type_set_attr(vec, kuser, &base[0]);
    MPI_Type_set_attr(vec, kdup, &base[4]);
    MPI_Type_set_attr(vec, knull, &base[5]);
    MPI_Type_get_attr(vec, kuser, &v, &flag);
    MT_CHECK(flag && v == &base[0], "get on the original: flag %d", flag);

    /* Replacing a value calls the delete callback of the old one. */
    deletes = 0;
    MPI_Type_set_attr(vec, kdup, &base[6]);
    MT_CHECK(deletes == 1, "replacing an attribute ran %d delete callbacks, want 1", deletes);

    MPI_Type_dup(vec, &dup);
    MPI_Type_get_attr(dup, kuser, &v, &flag);
    MT_CHECK(flag && v == &base[2], "user copy callback: flag %d value %p want %p", flag, v, (void *) &base[2]);
    MPI_Type_get_attr(dup, kdup, &v, &flag);
    MT_CHECK(flag && v == &base[6], "MPI_TYPE_DUP_FN: flag %d", flag);
    MPI_Type_get_attr(dup, knull, &v, &flag);
    MT_CHECK(!flag, "MPI_TYPE_NULL_COPY_FN attribute was copied");

    deletes = 0;
    MPI_Type_free(&dup);
    MT_CHECK(deletes == 2 && dup == MPI_DATATYPE_NULL, "free of the dup: %d delete callbacks, want 2", deletes);

    /* Errors come back through MPI_COMM_SELF's handler (datatypes have none of their own). */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    fail_copy = 1;
    err = MPI_Type_dup(vec, &dup);
    MPI_Error_class(err, &cls);
    MT_CHECK(cls == MPI_ERR_OTHER && dup == MPI_DATATYPE_NULL, "failing copy: class %d, newtype 0x%x", cls,
             (unsigned) dup);
    fail_copy = 0;

    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kcomm, NULL);
    err = MPI_Type_set_attr(vec, kcomm, &base[0]);
    MPI_Error_class(err, &cls);
    MT_CHECK(cls == MPI_ERR_KEYVAL, "a communicator keyval on a datatype: class %d, want MPI_ERR_KEYVAL", cls);
    MPI_Comm_free_keyval(&kcomm);

    /* Predefined types carry attributes too. */
    MPI_Type_set_attr(MPI_INT, kuser, &base[1]);
    MPI_Type_get_attr(MPI_INT, kuser, &v, &flag);
    MT_CHECK(flag && v == &base[1], "attribute on MPI_INT: flag %d", flag);
    deletes = 0;
    MPI_Type_delete_attr(MPI_INT, kuser);
    MPI_Type_get_attr(MPI_INT, kuser, &v, &flag);
    MT_CHECK(!flag && deletes == 1, "delete on MPI_INT: flag %d, %d callbacks", flag, deletes);

    /* Freeing the type deletes its three attributes; then the keyvals go. */
    deletes = 0;
    MPI_Type_free(&vec);
    MT_CHECK(deletes == 3, "free of the original: %d delete callbacks, want 3", deletes);
    MPI_Type_free_keyval(&kuser);
    MPI_Type_free_keyval(&kdup);
    MPI_Type_free_keyval(&knull);
    MT_CHECK(kuser == MPI_KEYVAL_INVALID && knull == MPI_KEYVAL_INVALID, "free_keyval did not reset");
    MT_CHECK(extra > 0, "extra_state never reached the callbacks");
    return mt_finish();
}
