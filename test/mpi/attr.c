/*
 * Communicator attributes (MPI 4.1 sec. 7.7) on MPI_COMM_WORLD and MPI_COMM_SELF: keyvals with
 * and without callbacks, set/get/replace/delete, freeing a keyval that is still in use, the error
 * classes, and the delete callbacks of MPI_COMM_SELF at MPI_Finalize: called first, in the reverse
 * order of setting, while MPI_Finalized still says false (sec. 11.2.4).
 */
#include "mtest.h"

#ifdef UMPI_VERSION_STRING
#define IS_UMPI 1
#else
#define IS_UMPI 0
#endif

static int extra_marker;

/* What the delete callback saw, in order. */
static struct {
    MPI_Comm comm;
    int keyval;
    void *value;
    void *extra;
    int finalized;
} seen[64];
static int nseen;

static int delete_fn(MPI_Comm comm, int keyval, void *value, void *extra)
{
    if (nseen < 64) {
        seen[nseen].comm = comm;
        seen[nseen].keyval = keyval;
        seen[nseen].value = value;
        seen[nseen].extra = extra;
        MPI_Finalized(&seen[nseen].finalized);
        nseen++;
    }
    return MPI_SUCCESS;
}

static int failing_delete_fn(MPI_Comm comm, int keyval, void *value, void *extra)
{
    return *(int *) extra ? MPI_ERR_OTHER : MPI_SUCCESS;
}

static void test_set_get_delete(void)
{
    int keyval, flag;
    static int v1 = 1, v2 = 2;
    void *got;

    MT_CHECK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, delete_fn, &keyval, &extra_marker) ==
                 MPI_SUCCESS, "create_keyval");
    MT_CHECK(keyval != MPI_KEYVAL_INVALID, "a valid keyval");

    got = NULL;
    MPI_Comm_get_attr(MPI_COMM_WORLD, keyval, &got, &flag);
    MT_CHECK(!flag, "no attribute yet");

    MPI_Comm_set_attr(MPI_COMM_WORLD, keyval, &v1);
    MPI_Comm_get_attr(MPI_COMM_WORLD, keyval, &got, &flag);
    MT_CHECK(flag && got == &v1, "get after set: flag %d", flag);
    MPI_Comm_get_attr(MPI_COMM_SELF, keyval, &got, &flag);
    MT_CHECK(!flag, "attributes belong to one communicator");
    MT_CHECK(nseen == 0, "no delete callback yet (%d)", nseen);

    /* replacing calls the delete callback on the old value */
    MPI_Comm_set_attr(MPI_COMM_WORLD, keyval, &v2);
    MT_CHECK(nseen == 1 && seen[0].value == &v1 && seen[0].comm == MPI_COMM_WORLD &&
                 seen[0].keyval == keyval && seen[0].extra == &extra_marker,
             "delete callback on replace: %d calls", nseen);
    MPI_Comm_get_attr(MPI_COMM_WORLD, keyval, &got, &flag);
    MT_CHECK(flag && got == &v2, "get after replace");

    MPI_Comm_delete_attr(MPI_COMM_WORLD, keyval);
    MT_CHECK(nseen == 2 && seen[1].value == &v2, "delete callback on delete: %d calls", nseen);
    MPI_Comm_get_attr(MPI_COMM_WORLD, keyval, &got, &flag);
    MT_CHECK(!flag, "no attribute after delete");

    /* NULL values are values too */
    MPI_Comm_set_attr(MPI_COMM_WORLD, keyval, NULL);
    got = &v1;
    MPI_Comm_get_attr(MPI_COMM_WORLD, keyval, &got, &flag);
    MT_CHECK(flag && got == NULL, "NULL attribute value: flag %d", flag);
    MPI_Comm_delete_attr(MPI_COMM_WORLD, keyval);
    MT_CHECK(nseen == 3, "delete callback of the NULL value");

    MPI_Comm_free_keyval(&keyval);
    MT_CHECK(keyval == MPI_KEYVAL_INVALID, "free_keyval sets MPI_KEYVAL_INVALID");
    nseen = 0;

    /* a keyval without callbacks */
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &keyval, NULL);
    MPI_Comm_set_attr(MPI_COMM_SELF, keyval, &v1);
    MPI_Comm_set_attr(MPI_COMM_SELF, keyval, &v2);
    MPI_Comm_get_attr(MPI_COMM_SELF, keyval, &got, &flag);
    MT_CHECK(flag && got == &v2, "NULL callbacks: replace");
    MPI_Comm_delete_attr(MPI_COMM_SELF, keyval);
    MPI_Comm_get_attr(MPI_COMM_SELF, keyval, &got, &flag);
    MT_CHECK(!flag, "NULL callbacks: deleted");
    MPI_Comm_free_keyval(&keyval);
    MT_CHECK(nseen == 0, "no callback of another keyval called");

    /* many keyvals at once */
    int kv[40];
    for (int i = 0; i < 40; i++) {
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kv[i], NULL);
        MPI_Comm_set_attr(MPI_COMM_WORLD, kv[i], (void *) (long) (i + 100));
    }
    for (int i = 0; i < 40; i++) {
        MPI_Comm_get_attr(MPI_COMM_WORLD, kv[i], &got, &flag);
        MT_CHECK(flag && (long) got == i + 100, "keyval %d of 40", i);
        if (i % 2)
            MPI_Comm_delete_attr(MPI_COMM_WORLD, kv[i]);
        MPI_Comm_free_keyval(&kv[i]);
    }

    /* predefined attributes keep working */
    int *ub;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    MT_CHECK(flag && *ub >= 32767, "MPI_TAG_UB");
}

static void test_errors(void)
{
    int keyval, rc, flag, failing = 1;
    void *got;

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    rc = MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, NULL);
    MT_CHECK(mt_class(rc) == MPI_ERR_KEYVAL, "set with MPI_KEYVAL_INVALID: %s", mt_errstr(rc));
    if (IS_UMPI)
        MT_CHECK(mt_msg_has(rc, "comm_keyval"), "message names the argument: %s", mt_errstr(rc));
    rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &got, &flag);
    MT_CHECK(mt_class(rc) == MPI_ERR_KEYVAL, "get with MPI_KEYVAL_INVALID: %s", mt_errstr(rc));
    rc = MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID);
    MT_CHECK(mt_class(rc) == MPI_ERR_KEYVAL, "delete with MPI_KEYVAL_INVALID: %s", mt_errstr(rc));
    rc = MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL);
    MT_CHECK(mt_class(rc) == MPI_ERR_KEYVAL, "set of a predefined attribute: %s", mt_errstr(rc));
    int tag_ub = MPI_TAG_UB;
    rc = MPI_Comm_free_keyval(&tag_ub);
    MT_CHECK(mt_class(rc) == MPI_ERR_KEYVAL, "free of a predefined keyval: %s", mt_errstr(rc));
    int invalid = MPI_KEYVAL_INVALID;
    rc = MPI_Comm_free_keyval(&invalid);
    MT_CHECK(mt_class(rc) == MPI_ERR_KEYVAL, "free of MPI_KEYVAL_INVALID: %s", mt_errstr(rc));

    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &keyval, NULL);
    rc = MPI_Comm_set_attr(MPI_COMM_NULL, keyval, NULL);
    MT_CHECK(mt_class(rc) == MPI_ERR_COMM, "set on MPI_COMM_NULL: %s", mt_errstr(rc));
    rc = MPI_Comm_delete_attr(MPI_COMM_NULL, keyval);
    MT_CHECK(mt_class(rc) == MPI_ERR_COMM, "delete on MPI_COMM_NULL: %s", mt_errstr(rc));
    rc = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, NULL, NULL);
    MT_CHECK(mt_class(rc) == MPI_ERR_ARG, "create_keyval with NULL keyval: %s", mt_errstr(rc));
    MPI_Comm_free_keyval(&keyval);

    /* a failing delete callback fails the call and keeps the attribute */
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, failing_delete_fn, &keyval, &failing);
    MPI_Comm_set_attr(MPI_COMM_WORLD, keyval, &failing);
    rc = MPI_Comm_delete_attr(MPI_COMM_WORLD, keyval);
    MT_CHECK(rc != MPI_SUCCESS, "delete whose callback fails");
    MPI_Comm_get_attr(MPI_COMM_WORLD, keyval, &got, &flag);
    MT_CHECK(flag && got == &failing, "attribute kept after a failed delete");
    rc = MPI_Comm_set_attr(MPI_COMM_WORLD, keyval, NULL);
    MT_CHECK(rc != MPI_SUCCESS, "replace whose delete callback fails");
    MPI_Comm_get_attr(MPI_COMM_WORLD, keyval, &got, &flag);
    MT_CHECK(flag && got == &failing, "old value kept after a failed replace");
    failing = 0;
    MT_CHECK(MPI_Comm_delete_attr(MPI_COMM_WORLD, keyval) == MPI_SUCCESS, "delete once it succeeds");
    MPI_Comm_free_keyval(&keyval);

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
}

static int order_val[4] = { 10, 11, 12, 13 };

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    test_set_get_delete();
    test_errors();

    /* Attributes for MPI_Finalize: one of a keyval freed while still in use, then three more. */
    int kfreed, k[3];
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &kfreed, &extra_marker);
    MPI_Comm_set_attr(MPI_COMM_SELF, kfreed, &order_val[0]);
    MPI_Comm_free_keyval(&kfreed);
    for (int i = 0; i < 3; i++) {
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &k[i], &extra_marker);
        MPI_Comm_set_attr(MPI_COMM_SELF, k[i], &order_val[i + 1]);
    }
    MPI_Comm_free_keyval(&k[1]);
    int kworld;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &kworld, &extra_marker);
    MPI_Comm_set_attr(MPI_COMM_WORLD, kworld, &order_val[0]);
    nseen = 0;

    /* mt_finish's verdict covers everything before MPI_Finalize; what the callbacks saw during
     * it is checked afterwards, and a failure there fails this rank's exit status. */
    int rank = mt_rank, total = mt_errs;
    if (mt_rank == 0) {
        for (int i = 1; i < mt_size; i++) {
            int e = 0;
            MPI_Recv(&e, 1, MPI_INT, i, MT_TAG_SYNC + 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            total += e;
        }
    } else {
        MPI_Send(&mt_errs, 1, MPI_INT, 0, MT_TAG_SYNC + 2, MPI_COMM_WORLD);
    }
    MPI_Finalize();

    int bad = 0;
    int nself = 0;
    for (int i = 0; i < nseen; i++)
        if (seen[i].comm == MPI_COMM_SELF)
            nself++;
    if (nself != 4) {
        fprintf(stderr, "[%d] %d delete callbacks on MPI_COMM_SELF at MPI_Finalize, expected 4\n",
                rank, nself);
        bad++;
    }
    for (int i = 0; i < 4 && i < nseen; i++) {
        /* reverse order of setting, before any other */
        if (seen[i].comm != MPI_COMM_SELF || seen[i].value != &order_val[3 - i] ||
            seen[i].finalized || seen[i].extra != &extra_marker) {
            fprintf(stderr, "[%d] delete callback %d at MPI_Finalize: comm %s value %d finalized %d\n",
                    rank, i, seen[i].comm == MPI_COMM_SELF ? "SELF" : "other",
                    seen[i].value ? *(int *) seen[i].value : -1, seen[i].finalized);
            bad++;
        }
    }
    if (IS_UMPI && (nseen != 5 || seen[4].comm != MPI_COMM_WORLD)) {
        fprintf(stderr, "[%d] umpi deletes MPI_COMM_WORLD's attributes after MPI_COMM_SELF's\n", rank);
        bad++;
    }
    if (rank == 0 && total + bad == 0)
        printf(" No Errors\n");
    else if (rank == 0)
        printf(" Found %d errors\n", total + bad);
    return total + bad == 0 ? 0 : 1;
}
