/* Unit test of the info list (src/core/info.c): order, replace in place, deletion, copies. */
#include "core/umpi_obj.h"
#include "mpi/gen/umpi_impl.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>

static int order_is(const umpi_info_t *info, const char *const *keys, int n)
{
    if (info->n != n)
        return 0;
    for (int i = 0; i < n; i++)
        if (strcmp(info->entries[i].key, keys[i]) != 0)
            return 0;
    return 1;
}

static const char *value_of(const umpi_info_t *info, const char *key)
{
    const struct umpi_info_entry *e = umpi_info_list_find(info, key);
    return e ? e->value : NULL;
}

int main(void)
{
    umpi_info_t a = { 0 }, b = { 0 };

    SECTION("insertion order") {
        CHECK(umpi_info_list_set(&a, "one", "1") == UMPI_OK, "set one");
        CHECK(umpi_info_list_set(&a, "two", "2") == UMPI_OK, "set two");
        CHECK(umpi_info_list_set(&a, "three", "3") == UMPI_OK, "set three");
        CHECK(order_is(&a, (const char *const[]){ "one", "two", "three" }, 3), "order");
        CHECK(value_of(&a, "four") == NULL, "absent key");
    }
    SECTION("set of an existing key replaces in place") {
        CHECK(umpi_info_list_set(&a, "two", "deux") == UMPI_OK, "replace");
        CHECK(order_is(&a, (const char *const[]){ "one", "two", "three" }, 3), "order kept");
        CHECK(strcmp(value_of(&a, "two"), "deux") == 0, "new value");
    }
    SECTION("deletion") {
        CHECK(umpi_info_list_delete(&a, "one") == UMPI_OK, "delete first");
        CHECK(order_is(&a, (const char *const[]){ "two", "three" }, 2), "after deleting the first");
        CHECK(umpi_info_list_delete(&a, "one") == UMPI_ERR_NOT_FOUND, "delete twice");
        CHECK(umpi_info_list_set(&a, "one", "again") == UMPI_OK, "re-add");
        CHECK(order_is(&a, (const char *const[]){ "two", "three", "one" }, 3), "re-added goes last");
        CHECK(umpi_info_list_delete(&a, "one") == UMPI_OK, "delete last");
        CHECK(order_is(&a, (const char *const[]){ "two", "three" }, 2), "after deleting the last");
    }
    SECTION("growth past the first allocation") {
        char k[16], v[16];
        for (int i = 0; i < 100; i++) {
            snprintf(k, sizeof(k), "k%03d", i);
            snprintf(v, sizeof(v), "%d", i * i);
            umpi_info_list_set(&b, k, v);
        }
        CHECK(b.n == 100, "100 keys, got %d", b.n);
        CHECK(strcmp(b.entries[57].key, "k057") == 0 && strcmp(value_of(&b, "k057"), "3249") == 0,
              "entry 57");
        umpi_info_list_clear(&b);
        CHECK(b.n == 0 && b.entries == NULL, "cleared");
    }
    SECTION("copies are independent") {
        CHECK(umpi_info_list_copy(&a, &b) == UMPI_OK, "copy");
        CHECK(order_is(&b, (const char *const[]){ "two", "three" }, 2), "copy order");
        umpi_info_list_set(&b, "two", "zwei");
        umpi_info_list_delete(&b, "three");
        umpi_info_list_set(&a, "four", "4");
        CHECK(strcmp(value_of(&a, "two"), "deux") == 0, "original value kept");
        CHECK(order_is(&a, (const char *const[]){ "two", "three", "four" }, 3), "original keys");
        CHECK(order_is(&b, (const char *const[]){ "two" }, 1), "copy keys");
        CHECK(strcmp(value_of(&b, "two"), "zwei") == 0, "copy value");
    }
    SECTION("info objects through their handles") {
        MPI_Info h;
        char buf[8];
        CHECK(umpi_impl_info_create(&h) == MPI_SUCCESS, "create");
        CHECK(umpi_info_get(h) != NULL, "handle resolves");
        CHECK(umpi_info_get(MPI_INFO_NULL) == NULL, "MPI_INFO_NULL does not resolve");
        CHECK(umpi_info_get(MPI_INFO_ENV) != NULL, "MPI_INFO_ENV resolves");
        CHECK(umpi_impl_info_set(h, "mpi_hint", "12345678") == MPI_SUCCESS, "set");
        CHECK(umpi_info_hint(h, "mpi_hint", buf, sizeof(buf)) == 1 && strcmp(buf, "1234567") == 0,
              "hint cut to the buffer: %s", buf);
        CHECK(umpi_info_hint(h, "other", buf, sizeof(buf)) == 0, "absent hint");
        CHECK(umpi_info_hint(MPI_INFO_NULL, "mpi_hint", buf, sizeof(buf)) == 0, "no info");
        CHECK(umpi_impl_info_free(&h) == MPI_SUCCESS && h == MPI_INFO_NULL, "free");
    }
    umpi_info_list_clear(&a);
    umpi_info_list_clear(&b);
    return unit_done("test_info");
}
