/* Unit test of the generic attribute lists (src/core/attr_list.c): the order of copy and delete
 * callbacks, MPI_*_NULL_COPY_FN and MPI_*_DUP_FN, failing callbacks, keyval life time. */
#include "core/umpi_attr.h"
#include "core/umpi_err.h"
#include "unit.h"

#include <string.h>

static char calls[64]; /* one letter per callback: c<value> copy, d<value> delete */
static int fail_copy_of = -1, fail_delete_of = -1;

static void note(char what, void *value)
{
    size_t n = strlen(calls);
    if (n + 2 < sizeof(calls)) {
        calls[n] = what;
        calls[n + 1] = (char) ('0' + (int) (long) value);
        calls[n + 2] = '\0';
    }
}

static int copy_fn(int handle, int keyval, void *extra, void *in, void *out, int *flag)
{
    note('c', in);
    if ((long) in == fail_copy_of)
        return MPI_ERR_OTHER;
    *(void **) out = (void *) ((long) in + 5); /* the copy is a different value */
    *flag = 1;
    return MPI_SUCCESS;
}

static int nocopy_fn(int handle, int keyval, void *extra, void *in, void *out, int *flag)
{
    note('n', in);
    *flag = 0;
    return MPI_SUCCESS;
}

static int delete_fn(int handle, int keyval, void *value, void *extra)
{
    note('d', value);
    return (long) value == fail_delete_of ? MPI_ERR_OTHER : MPI_SUCCESS;
}

int main(void)
{
    struct umpi_attr *a = NULL, *b = NULL;
    int k[4], flag;
    void *v;

    SECTION("keyvals") {
        CHECK(umpi_keyval_create(UMPI_OBJ_COMM, copy_fn, delete_fn, NULL, &k[0]) == MPI_SUCCESS, "k0");
        CHECK(umpi_keyval_create(UMPI_OBJ_COMM, NULL, delete_fn, NULL, &k[1]) == MPI_SUCCESS, "k1");
        CHECK(umpi_keyval_create(UMPI_OBJ_COMM, (umpi_attr_copy_fn_t *) MPIR_Dup_fn, delete_fn, NULL,
                                 &k[2]) == MPI_SUCCESS, "k2");
        CHECK(umpi_keyval_create(UMPI_OBJ_COMM, nocopy_fn, NULL, NULL, &k[3]) == MPI_SUCCESS, "k3");
        CHECK(UMPI_KEYVAL_OBJ(k[0]) == UMPI_OBJ_COMM && UMPI_HANDLE_OBJ(k[0]) == UMPI_OBJ_KEYVAL,
              "handle layout 0x%x", (unsigned) k[0]);
        CHECK(umpi_attr_set(UMPI_OBJ_DATATYPE, 0, &a, k[0], NULL) != MPI_SUCCESS,
              "a communicator keyval on a datatype");
    }
    SECTION("copy in the order of setting, NULL copy and no-flag skipped") {
        for (int i = 0; i < 4; i++)
            umpi_attr_set(UMPI_OBJ_COMM, 7, &a, k[3 - i], (void *) (long) (i + 1)); /* k3=1 ... k0=4 */
        calls[0] = '\0';
        CHECK(umpi_attr_list_copy(UMPI_OBJ_COMM, 7, a, 8, &b) == MPI_SUCCESS, "copy");
        CHECK(strcmp(calls, "n1c4") == 0, "callbacks: %s", calls);
        CHECK(umpi_attr_get(UMPI_OBJ_COMM, b, k[0], &v, &flag) == MPI_SUCCESS && flag && (long) v == 9,
              "copied value");
        CHECK(umpi_attr_get(UMPI_OBJ_COMM, b, k[2], &v, &flag) == MPI_SUCCESS && flag && (long) v == 2,
              "MPI_DUP_FN copies the value");
        umpi_attr_get(UMPI_OBJ_COMM, b, k[1], &v, &flag);
        CHECK(!flag, "NULL copy function: not copied");
        umpi_attr_get(UMPI_OBJ_COMM, b, k[3], &v, &flag);
        CHECK(!flag, "flag 0: not copied");
    }
    SECTION("delete in reverse order") {
        calls[0] = '\0';
        CHECK(umpi_attr_list_delete(UMPI_OBJ_COMM, 8, &b) == MPI_SUCCESS && b == NULL, "delete copy");
        CHECK(strcmp(calls, "d9d2") == 0, "callbacks: %s", calls); /* set order in b: k2, k0 */
    }
    SECTION("a failing copy undoes the copy") {
        fail_copy_of = 4;
        umpi_attr_set(UMPI_OBJ_COMM, 7, &a, k[2], (void *) 3L);
        calls[0] = '\0';
        CHECK(umpi_attr_list_copy(UMPI_OBJ_COMM, 7, a, 8, &b) == MPI_ERR_OTHER, "copy fails");
        CHECK(b == NULL, "nothing left on the new object");
        /* set order: k3(1) k2(3) k1 k0(4): k2's value replaced in place, deleted once */
        CHECK(strcmp(calls, "n1c4d3") == 0, "callbacks: %s", calls);
        fail_copy_of = -1;
    }
    SECTION("a failing delete stops the list") {
        fail_delete_of = 2;
        umpi_attr_set(UMPI_OBJ_COMM, 7, &a, k[1], (void *) 2L);
        calls[0] = '\0';
        CHECK(umpi_attr_list_delete(UMPI_OBJ_COMM, 7, &a) == MPI_ERR_OTHER, "delete fails");
        CHECK(strcmp(calls, "d4d2") == 0, "callbacks: %s", calls);
        umpi_attr_get(UMPI_OBJ_COMM, a, k[1], &v, &flag);
        CHECK(flag && (long) v == 2, "the failing attribute stays");
        fail_delete_of = -1;
    }
    SECTION("freed keyvals live on in their attributes") {
        int k1 = k[1];
        CHECK(umpi_keyval_free(UMPI_OBJ_COMM, &k[1]) == MPI_SUCCESS && k[1] == MPI_KEYVAL_INVALID,
              "free");
        CHECK(umpi_err_class(umpi_attr_get(UMPI_OBJ_COMM, a, k1, &v, &flag)) == MPI_ERR_KEYVAL,
              "a freed keyval handle is invalid");
        calls[0] = '\0';
        CHECK(umpi_attr_list_delete(UMPI_OBJ_COMM, 7, &a) == MPI_SUCCESS && a == NULL, "delete");
        CHECK(strcmp(calls, "d2d3") == 0, "callbacks of the freed keyval still called: %s", calls);
    }
    for (int i = 0; i < 4; i++)
        if (k[i] != MPI_KEYVAL_INVALID)
            umpi_keyval_free(UMPI_OBJ_COMM, &k[i]);
    return unit_done("test_attr");
}
