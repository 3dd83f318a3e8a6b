/*
 * The CPU sets that the ranks of a node publish at MPI_Init (src/api/umpi_cpuset.h): the compact
 * form drops leading and trailing zero bytes and round-trips; merging ORs into a set that grows;
 * malformed values are refused without touching the set; the own mask matches the kernel's.
 */
#include "api/umpi_cpuset.h"
#include "unit.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

static unsigned char *set_of(const int *cpus, int n, size_t len)
{
    unsigned char *s = calloc(len, 1);

    for (int i = 0; i < n; i++)
        s[cpus[i] / 8] |= (unsigned char) (1u << (cpus[i] % 8));
    return s;
}

int main(void)
{
    SECTION("encode: one cpu, far up, is 5 bytes")
    {
        int cpus[] = { 1001 };
        unsigned char *s = set_of(cpus, 1, 128), *v;
        size_t len = 0;

        v = umpi_cpuset_encode(s, 128, &len);
        CHECK(v != NULL && len == UMPI_CPUSET_HDR + 1, "len %zu", len);
        CHECK(v != NULL && v[0] == 125 && v[1] == 0 && v[2] == 0 && v[3] == 0, "first byte index %d", v ? v[0] : -1);
        CHECK(v != NULL && v[4] == 1u << (1001 % 8), "byte 0x%x", v ? v[4] : 0);
        free(v);
        free(s);
    }
    SECTION("encode: empty set is the header alone")
    {
        unsigned char z[16] = { 0 }, *v;
        size_t len = 0;

        v = umpi_cpuset_encode(z, sizeof(z), &len);
        CHECK(v != NULL && len == UMPI_CPUSET_HDR, "len %zu", len);
        CHECK(v != NULL && v[0] == 0 && v[1] == 0 && v[2] == 0 && v[3] == 0, "header not zero");
        free(v);
    }
    SECTION("merge: union of three masks, set grows")
    {
        int a[] = { 0, 1 }, b[] = { 1, 9 }, c[] = { 300 };
        unsigned char *sa = set_of(a, 2, 8), *sb = set_of(b, 2, 8), *sc = set_of(c, 1, 64);
        unsigned char *acc = NULL, *va, *vb, *vc;
        size_t acclen = 0, la, lb, lc;

        va = umpi_cpuset_encode(sa, 8, &la);
        vb = umpi_cpuset_encode(sb, 8, &lb);
        vc = umpi_cpuset_encode(sc, 64, &lc);
        CHECK(umpi_cpuset_merge(&acc, &acclen, va, la) == 0, "merge a");
        CHECK(acclen == 1 && umpi_cpuset_count(acc, acclen) == 2, "after a: %zu bytes, %d cpus", acclen,
              umpi_cpuset_count(acc, acclen));
        CHECK(umpi_cpuset_merge(&acc, &acclen, vb, lb) == 0, "merge b");
        CHECK(acclen == 2 && umpi_cpuset_count(acc, acclen) == 3, "after b: %zu bytes, %d cpus", acclen,
              umpi_cpuset_count(acc, acclen));
        CHECK(umpi_cpuset_merge(&acc, &acclen, vc, lc) == 0, "merge c");
        CHECK(acclen == 38 && umpi_cpuset_count(acc, acclen) == 4, "after c: %zu bytes, %d cpus", acclen,
              umpi_cpuset_count(acc, acclen));
        CHECK(acclen == 38 && (acc[0] & 3) == 3 && (acc[1] & 2) && (acc[37] & (1u << (300 % 8))), "wrong bits");
        /* merging a set into itself changes nothing */
        CHECK(umpi_cpuset_merge(&acc, &acclen, va, la) == 0 && umpi_cpuset_count(acc, acclen) == 4, "idempotent");
        free(va);
        free(vb);
        free(vc);
        free(sa);
        free(sb);
        free(sc);
        free(acc);
    }
    SECTION("merge: malformed values refused, set untouched")
    {
        unsigned char one[] = { 1 }, *acc = malloc(1);
        unsigned char far[] = { 0, 0, 0, 0x40, 1 };   /* first byte at 1 GiB: beyond any machine */
        size_t acclen = 1;

        acc[0] = 0x5;
        CHECK(umpi_cpuset_merge(&acc, &acclen, one, sizeof(one)) == -1, "short value accepted");
        CHECK(umpi_cpuset_merge(&acc, &acclen, far, sizeof(far)) == -1, "huge offset accepted");
        CHECK(acclen == 1 && acc[0] == 0x5, "set changed");
        free(acc);
    }
    SECTION("own: the kernel's affinity mask")
    {
        unsigned char *own = NULL;
        size_t len = 0;
        cpu_set_t cs;

        CHECK(umpi_cpuset_own(&own, &len) == 0 && own != NULL, "umpi_cpuset_own failed");
        CHECK(sched_getaffinity(0, sizeof(cs), &cs) == 0, "sched_getaffinity");
        CHECK(own != NULL && umpi_cpuset_count(own, len) == CPU_COUNT(&cs), "%d cpus, kernel says %d",
              own ? umpi_cpuset_count(own, len) : -1, CPU_COUNT(&cs));
        for (int c = 0; own != NULL && c < CPU_SETSIZE && (size_t) c / 8 < len; c++)
            CHECK(!!(own[c / 8] & (1u << (c % 8))) == !!CPU_ISSET(c, &cs), "cpu %d differs", c);
        free(own);
    }
    return unit_done("test_cpuset");
}
