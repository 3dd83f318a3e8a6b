/*
 * Attributes across MPI_Comm_dup and MPI_Comm_free: copy callbacks decide what the duplicate
 * gets (MPI_COMM_DUP_FN copies, MPI_COMM_NULL_COPY_FN does not, a user callback may change the
 * value or fail the dup), and MPI_Comm_free calls the delete callbacks of what is attached.
 */
#include "mtest.h"

static int copies, deletes, fail_copy;
static void *last_deleted;

static int copy_plus_one(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    copies++;
    if (fail_copy) {
        *flag = 0;
        return MPI_ERR_OTHER;
    }
    *(void **) out = (char *) in + 1;
    *flag = 1;
    return MPI_SUCCESS;
}

static int count_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    deletes++;
    last_deleted = value;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int kplus, kdup, knull, flag;
    void *v;
    char base[4];
    MPI_Comm dup, dup2;

    MPI_Comm_create_keyval(copy_plus_one, count_delete, &kplus, NULL);
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, count_delete, &kdup, NULL);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &knull, NULL);
    MPI_Comm_set_attr(MPI_COMM_WORLD, kplus, &base[0]);
    MPI_Comm_set_attr(MPI_COMM_WORLD, kdup, &base[2]);
    MPI_Comm_set_attr(MPI_COMM_WORLD, knull, &base[3]);

    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MT_CHECK(copies == 1, "copy callback ran %d times, want 1", copies);
    MPI_Comm_get_attr(dup, kplus, &v, &flag);
    MT_CHECK(flag && v == &base[1], "user copy: flag %d value %p, want %p", flag, v, (void *) &base[1]);
    MPI_Comm_get_attr(dup, kdup, &v, &flag);
    MT_CHECK(flag && v == &base[2], "MPI_COMM_DUP_FN: flag %d value %p, want %p", flag, v, (void *) &base[2]);
    MPI_Comm_get_attr(dup, knull, &v, &flag);
    MT_CHECK(!flag, "MPI_COMM_NULL_COPY_FN attribute was copied");

    /* A dup of the dup copies again, from the copied value. */
    MPI_Comm_dup(dup, &dup2);
    MPI_Comm_get_attr(dup2, kplus, &v, &flag);
    MT_CHECK(flag && v == &base[2], "second copy: value %p, want %p", v, (void *) &base[2]);

    /* Freeing calls the delete callback of each attribute attached (two on each dup). */
    deletes = 0;
    MPI_Comm_free(&dup2);
    MT_CHECK(deletes == 2, "%d delete callbacks at free of dup2, want 2", deletes);
    deletes = 0;
    MPI_Comm_free(&dup);
    MT_CHECK(deletes == 2, "%d delete callbacks at free of dup, want 2", deletes);

    /* A failing copy callback fails the dup with its error and gives MPI_COMM_NULL. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    fail_copy = 1;
    deletes = 0;
    dup = MPI_COMM_WORLD;
    int err = MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int cls;
    MPI_Error_class(err, &cls);
    MT_CHECK(err != MPI_SUCCESS && cls == MPI_ERR_OTHER, "dup with a failing copy: error %d class %d", err, cls);
    MT_CHECK(dup == MPI_COMM_NULL, "dup with a failing copy left newcomm 0x%x", (unsigned) dup);
    fail_copy = 0;

    /* The world's attributes are still there, and go with their keyvals freed. */
    MPI_Comm_get_attr(MPI_COMM_WORLD, kplus, &v, &flag);
    MT_CHECK(flag && v == &base[0], "world attribute lost: flag %d", flag);
    MPI_Comm_free_keyval(&kplus);
    MT_CHECK(kplus == MPI_KEYVAL_INVALID, "free_keyval did not reset the keyval");
    MPI_Comm_delete_attr(MPI_COMM_WORLD, kdup);
    MPI_Comm_delete_attr(MPI_COMM_WORLD, knull);
    MPI_Comm_free_keyval(&kdup);
    MPI_Comm_free_keyval(&knull);
    return mt_finish();
}
