/* Unit test of the two-level handle table (src/core/handle.c). */
#include "core/umpi_obj.h"
#include "unit.h"

#include <stdint.h>
#include <stdlib.h>

#define NOBJ ((int) (3 * UMPI_HT_CHUNK + 17)) /* spans several chunks */
#define NTHREAD 4
#define PER_THREAD 2000

static struct umpi_handle_table table = { .first_dynamic = 3, .lock = PTHREAD_MUTEX_INITIALIZER };
static struct umpi_handle_table mt_table = { .lock = PTHREAD_MUTEX_INITIALIZER };
static int objs[NOBJ];

static void *worker(void *arg)
{
    intptr_t id = (intptr_t) arg;
    int *mine = malloc(PER_THREAD * sizeof(int));
    for (int i = 0; i < PER_THREAD; i++) {
        mine[i] = umpi_ht_insert(&mt_table, (void *) (id * PER_THREAD + i + 1));
        if (i % 3 == 2) { /* churn: free one of ours, so the free list is shared too */
            umpi_ht_remove(&mt_table, (uint32_t) mine[i - 1]);
            mine[i - 1] = -1;
        }
    }
    int bad = 0;
    for (int i = 0; i < PER_THREAD; i++)
        if (mine[i] >= 0 && umpi_ht_get(&mt_table, (uint32_t) mine[i]) != (void *) (id * PER_THREAD + i + 1))
            bad++;
    free(mine);
    return (void *) (intptr_t) bad;
}

int main(void)
{
    SECTION("empty table") {
        CHECK(umpi_ht_get(&table, 0) == NULL, "get on an empty table");
        CHECK(umpi_ht_get(&table, 123456) == NULL, "get far beyond the limit");
    }

    SECTION("builtin slots") {
        static int b0, b2;
        umpi_ht_set(&table, 0, &b0);
        umpi_ht_set(&table, 2, &b2);
        CHECK(umpi_ht_get(&table, 0) == &b0, "builtin 0");
        CHECK(umpi_ht_get(&table, 2) == &b2, "builtin 2");
        CHECK(umpi_ht_get(&table, 1) == NULL, "unset builtin 1");
    }

    SECTION("insert and growth across chunks") {
        int ok = 1;
        for (int i = 0; i < NOBJ; i++) {
            int idx = umpi_ht_insert(&table, &objs[i]);
            /* first_dynamic = 3: dynamic objects never take a builtin slot */
            if (idx != 3 + i) {
                ok = 0;
                printf("insert %d gave %d\n", i, idx);
                break;
            }
        }
        CHECK(ok, "sequential indices from first_dynamic");
        CHECK(table.limit >= 3 + NOBJ && table.limit % UMPI_HT_CHUNK == 0, "limit %u", table.limit);
        ok = 1;
        for (int i = 0; i < NOBJ; i++)
            ok &= umpi_ht_get(&table, (uint32_t) (3 + i)) == &objs[i];
        CHECK(ok, "every object found at its index");
        CHECK(umpi_ht_get(&table, table.limit) == NULL, "get at limit");
    }

    SECTION("remove and LIFO reuse") {
        umpi_ht_remove(&table, 10);
        umpi_ht_remove(&table, 2000);
        CHECK(umpi_ht_get(&table, 10) == NULL, "removed slot reads NULL");
        CHECK(umpi_ht_get(&table, 2000) == NULL, "removed slot reads NULL");
        static int x, y, z;
        CHECK(umpi_ht_insert(&table, &x) == 2000, "most recently freed slot reused first");
        CHECK(umpi_ht_insert(&table, &y) == 10, "then the older one");
        CHECK(umpi_ht_insert(&table, &z) == 3 + NOBJ, "then a fresh index");
        CHECK(umpi_ht_get(&table, 10) == &y, "reused slot holds the new object");
    }

    SECTION("remove ignores builtin and bogus indices") {
        uint32_t nfree = table.nfree;
        umpi_ht_remove(&table, 0);
        umpi_ht_remove(&table, 1u << 25);
        CHECK(table.nfree == nfree, "free list untouched");
        CHECK(umpi_ht_get(&table, 0) != NULL, "builtin still there");
    }

    SECTION("concurrent insert/remove/get") {
        pthread_t th[NTHREAD];
        for (intptr_t t = 0; t < NTHREAD; t++)
            pthread_create(&th[t], NULL, worker, (void *) t);
        int bad = 0;
        for (int t = 0; t < NTHREAD; t++) {
            void *r;
            pthread_join(th[t], &r);
            bad += (int) (intptr_t) r;
        }
        CHECK(bad == 0, "%d objects not found where inserted", bad);
        /* every live entry is distinct: no index handed to two threads */
        int live = 0;
        for (uint32_t i = 0; i < mt_table.limit; i++)
            live += umpi_ht_get(&mt_table, i) != NULL;
        CHECK(live == NTHREAD * (PER_THREAD - PER_THREAD / 3), "live objects %d", live);
    }
    return unit_done("test_handle");
}
