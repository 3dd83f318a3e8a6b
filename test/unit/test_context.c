/*
 * Unit test: the context-id bitmaps (src/core/context.c), with the agreement of comm.c simulated
 * over a few "processes": each keeps its own bitmap, a new communicator takes the lowest pair free
 * in the AND of its members' bitmaps. Checks: ids are even and never the builtin ones; a process
 * never holds two live communicators on one id; dup/free cycles do not run out; exhaustion is
 * reported; disjoint groups may share an id but overlapping ones may not.
 */
#include "core/umpi_context.h"
#include "unit.h"

#include <string.h>

#define NP 6
#define MAXC 64

static umpi_context_mask_t procs[NP];
static int live[NP][MAXC]; /* ids held by each process, -1 = slot empty */

/* Members: bit i of members = process i. Returns the agreed id, or -1. */
static int create(unsigned members)
{
    umpi_context_mask_t m;
    memset(m.word, 0xff, sizeof(m.word));
    for (int p = 0; p < NP; p++)
        if (members & (1u << p))
            umpi_context_and(&m, &procs[p]);
    int id = umpi_context_lowest(&m);
    if (id < 0)
        return -1;
    for (int p = 0; p < NP; p++) {
        if (!(members & (1u << p)))
            continue;
        umpi_context_take(&procs[p], (uint32_t) id);
        for (int k = 0; k < MAXC; k++)
            if (live[p][k] == id)
                CHECK(0, "process %d got id %d twice", p, id);
        for (int k = 0; k < MAXC; k++)
            if (live[p][k] < 0) {
                live[p][k] = id;
                break;
            }
    }
    return id;
}

static void destroy(unsigned members, int id)
{
    for (int p = 0; p < NP; p++) {
        if (!(members & (1u << p)))
            continue;
        umpi_context_give(&procs[p], (uint32_t) id);
        for (int k = 0; k < MAXC; k++)
            if (live[p][k] == id)
                live[p][k] = -1;
    }
}

int main(void)
{
    for (int p = 0; p < NP; p++)
        umpi_context_mask_init(&procs[p]);
    memset(live, 0xff, sizeof(live));
    unsigned all = (1u << NP) - 1, even = 0x15, odd = 0x2a;

    SECTION("first ids skip the builtin communicators") {
        int a = create(all);
        CHECK(a == 4, "first id %d", a);
        int b = create(all);
        CHECK(b == 6, "second id %d", b);
        destroy(all, a);
        int c = create(all);
        CHECK(c == 4, "freed id not reused: %d", c);
        destroy(all, c);
        destroy(all, b);
    }
    SECTION("1000 dup/free cycles") {
        int first = create(all), ok = 1;
        for (int i = 0; i < 1000 && ok; i++) {
            int id = create(all);
            ok = id == first + 2;
            destroy(all, id);
        }
        CHECK(ok, "dup/free cycles drift or run out");
        destroy(all, first);
    }
    SECTION("disjoint groups may share, overlapping ones may not") {
        int e = create(even), o = create(odd);
        CHECK(e == o && (e % 2) == 0, "disjoint halves: %d and %d", e, o);
        /* now a communicator over processes 0 and 1: must avoid both */
        int x = create(0x3);
        CHECK(x != e, "overlapping group took a live id %d", x);
        /* the halves dup concurrently: again the same id each, distinct from x */
        int e2 = create(even), o2 = create(odd);
        CHECK(e2 != e && e2 != x && o2 != o && o2 != x, "dups of halves: %d %d (x %d)", e2, o2, x);
        destroy(even, e);
        destroy(odd, o);
        destroy(0x3, x);
        destroy(even, e2);
        destroy(odd, o2);
    }
    SECTION("exhaustion and recovery") {
        umpi_context_mask_t m;
        umpi_context_mask_init(&m);
        int n = 0, last = -1;
        for (;;) {
            int id = umpi_context_lowest(&m);
            if (id < 0)
                break;
            CHECK(id % 2 == 0 && id > last && id < (1 << 20), "id %d after %d", id, last);
            last = id;
            umpi_context_take(&m, (uint32_t) id);
            n++;
        }
        CHECK(n == UMPI_CONTEXT_PAIRS - 2, "%d ids available", n);
        umpi_context_give(&m, 1234);
        CHECK(umpi_context_lowest(&m) == 1234, "given back id not found: %d", umpi_context_lowest(&m));
        /* odd (collective) ids name the same pair */
        umpi_context_take(&m, 1235);
        CHECK(umpi_context_lowest(&m) == -1, "collective id did not take its pair");
    }
    return unit_done("test_context");
}
