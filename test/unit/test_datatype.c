/*
 * Unit test of the predefined datatypes (src/core/datatype.c): every builtin's size against the
 * C type it stands for, the pair types' layouts against the C compiler's structs, invalid
 * handles, and pack/unpack of the types with holes.
 */
#include "core/umpi_obj.h"
#include "unit.h"

#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <wchar.h>

/* Written independently of datatype.c's list on purpose: the two must agree. */
#define T(h, ctype) { h, #h, sizeof(ctype) }
static const struct { MPI_Datatype h; const char *name; size_t size; } basics[] = {
    T(MPI_CHAR, char), T(MPI_SIGNED_CHAR, signed char), T(MPI_UNSIGNED_CHAR, unsigned char),
    T(MPI_BYTE, char), T(MPI_WCHAR, wchar_t), T(MPI_SHORT, short), T(MPI_UNSIGNED_SHORT, unsigned short),
    T(MPI_INT, int), T(MPI_UNSIGNED, unsigned), T(MPI_LONG, long), T(MPI_UNSIGNED_LONG, unsigned long),
    T(MPI_FLOAT, float), T(MPI_DOUBLE, double), T(MPI_LONG_DOUBLE, long double),
    T(MPI_LONG_LONG_INT, long long), T(MPI_LONG_LONG, long long),
    T(MPI_UNSIGNED_LONG_LONG, unsigned long long), T(MPI_PACKED, char), T(MPI_2INT, int[2]),
    T(MPI_INT8_T, int8_t), T(MPI_INT16_T, int16_t), T(MPI_INT32_T, int32_t), T(MPI_INT64_T, int64_t),
    T(MPI_UINT8_T, uint8_t), T(MPI_UINT16_T, uint16_t), T(MPI_UINT32_T, uint32_t),
    T(MPI_UINT64_T, uint64_t), T(MPI_C_BOOL, _Bool), T(MPI_C_COMPLEX, float _Complex),
    T(MPI_C_FLOAT_COMPLEX, float _Complex), T(MPI_C_DOUBLE_COMPLEX, double _Complex),
    T(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex), T(MPI_AINT, MPI_Aint),
    T(MPI_OFFSET, MPI_Offset), T(MPI_COUNT, MPI_Count), T(MPI_CXX_BOOL, bool),
    T(MPI_CXX_FLOAT_COMPLEX, float _Complex), T(MPI_CXX_DOUBLE_COMPLEX, double _Complex),
    T(MPI_CXX_LONG_DOUBLE_COMPLEX, long double _Complex), T(MPI_CHARACTER, char),
    T(MPI_LOGICAL, int), T(MPI_INTEGER, int), T(MPI_REAL, float), T(MPI_DOUBLE_PRECISION, double),
    T(MPI_COMPLEX, float _Complex), T(MPI_DOUBLE_COMPLEX, double _Complex),
    T(MPI_2INTEGER, int[2]), T(MPI_2REAL, float[2]), T(MPI_2DOUBLE_PRECISION, double[2]),
    T(MPI_INTEGER1, int8_t), T(MPI_INTEGER2, int16_t), T(MPI_INTEGER4, int32_t),
    T(MPI_INTEGER8, int64_t), T(MPI_REAL4, float), T(MPI_REAL8, double), T(MPI_REAL16, long double),
    T(MPI_COMPLEX8, float _Complex), T(MPI_COMPLEX16, double _Complex),
    T(MPI_COMPLEX32, long double _Complex),
};

struct fi { float v; int i; };
struct di { double v; int i; };
struct li { long v; int i; };
struct si { short v; int i; };
struct ldi { long double v; int i; };
#define P(h, S, V) { h, #h, sizeof(V) + sizeof(int), sizeof(S), offsetof(S, i), sizeof(V) }
static const struct { MPI_Datatype h; const char *name; size_t size, extent, idisp, vlen; } pairs[] = {
    P(MPI_FLOAT_INT, struct fi, float), P(MPI_DOUBLE_INT, struct di, double),
    P(MPI_LONG_INT, struct li, long), P(MPI_SHORT_INT, struct si, short),
    P(MPI_LONG_DOUBLE_INT, struct ldi, long double),
};

int main(void)
{
    SECTION("basic types") {
        for (size_t i = 0; i < UMPI_ARRAY_SIZE(basics); i++) {
            umpi_dtype_t *dt = umpi_dtype_get(basics[i].h);
            CHECK(dt != NULL, "%s not found", basics[i].name);
            if (dt == NULL)
                continue;
            CHECK(dt->handle == basics[i].h, "%s handle", basics[i].name);
            CHECK((size_t) dt->size == basics[i].size, "%s: size %ld, sizeof %zu", basics[i].name,
                  (long) dt->size, basics[i].size);
            CHECK(dt->extent == dt->size && dt->true_extent == dt->size && dt->lb == 0 && dt->true_lb == 0,
                  "%s extent", basics[i].name);
            CHECK(dt->contig && dt->builtin && dt->committed, "%s flags", basics[i].name);
            CHECK(umpi_dtype_size_fast(basics[i].h, dt) == dt->size, "%s fast size", basics[i].name);
            int two = basics[i].h == MPI_2INT || basics[i].h == MPI_2INTEGER || basics[i].h == MPI_2REAL ||
                      basics[i].h == MPI_2DOUBLE_PRECISION;
            CHECK(dt->n_basic == (two ? 2 : 1), "%s n_basic %d", basics[i].name, dt->n_basic);
        }
        CHECK(strcmp(umpi_dtype_get(MPI_DOUBLE)->name, "MPI_DOUBLE") == 0, "name");
        CHECK(strcmp(umpi_dtype_get(MPI_C_COMPLEX)->name, "MPI_C_FLOAT_COMPLEX") == 0, "alias name");
    }

    SECTION("pair types") {
        for (size_t i = 0; i < UMPI_ARRAY_SIZE(pairs); i++) {
            umpi_dtype_t *dt = umpi_dtype_get(pairs[i].h);
            CHECK(dt != NULL, "%s not found", pairs[i].name);
            if (dt == NULL)
                continue;
            CHECK((size_t) dt->size == pairs[i].size, "%s size %ld", pairs[i].name, (long) dt->size);
            CHECK((size_t) dt->extent == pairs[i].extent, "%s extent %ld", pairs[i].name, (long) dt->extent);
            CHECK((size_t) dt->true_extent == pairs[i].idisp + sizeof(int), "%s true extent", pairs[i].name);
            CHECK(dt->n_basic == 2, "%s n_basic", pairs[i].name);
            int contig = pairs[i].size == pairs[i].extent;
            CHECK(dt->contig == contig, "%s contig %d", pairs[i].name, dt->contig);
            if (!contig)
                CHECK(dt->nblocks == 2 && dt->blocks[0].disp == 0 && (size_t) dt->blocks[0].len == pairs[i].vlen &&
                      (size_t) dt->blocks[1].disp == pairs[i].idisp && dt->blocks[1].len == sizeof(int),
                      "%s blocks", pairs[i].name);
        }
        CHECK(umpi_dtype_get(MPI_DOUBLE_INT)->size == 12 && umpi_dtype_get(MPI_DOUBLE_INT)->extent == 16,
              "MPI_DOUBLE_INT is 12 bytes in 16");
        CHECK(umpi_dtype_get(MPI_LONG_DOUBLE_INT)->size == 20 && umpi_dtype_get(MPI_LONG_DOUBLE_INT)->extent == 32,
              "MPI_LONG_DOUBLE_INT is 20 bytes in 32");
    }

    SECTION("invalid handles") {
        CHECK(umpi_dtype_get(MPI_DATATYPE_NULL) == NULL, "MPI_DATATYPE_NULL");
        CHECK(umpi_dtype_get(MPI_LB) == NULL && umpi_dtype_get(MPI_UB) == NULL, "MPI_LB/UB are gone in MPI 4");
        CHECK(umpi_dtype_get(MPI_INT + 0x100) == NULL, "wrong size bits");
        CHECK(umpi_dtype_get(0x4c0000ff) == NULL, "unused slot");
        CHECK(umpi_dtype_get(MPI_COMM_WORLD) == NULL, "a communicator");
        CHECK(umpi_dtype_get(0x8c000005) == NULL, "derived index not yet made");
        CHECK(umpi_dtype_get(0) == NULL && umpi_dtype_get(-1) == NULL, "garbage");
    }

    SECTION("pack/unpack of types with holes") {
        struct di src[3] = { { 1.5, 1 }, { 2.5, 2 }, { 3.5, 3 } }, dst[3];
        char packed[36];
        umpi_dtype_t *dt = umpi_dtype_get(MPI_DOUBLE_INT);
        umpi_dtype_pack(dt, src, 3, packed);
        double d;
        int k;
        memcpy(&d, packed + 12, 8);
        memcpy(&k, packed + 20, 4);
        CHECK(d == 2.5 && k == 2, "second element packed at 12: %g %d", d, k);
        memset(dst, 0, sizeof(dst));
        umpi_dtype_unpack(dt, packed, 36, dst);
        CHECK(memcmp(&dst[2].v, &src[2].v, 8) == 0 && dst[2].i == 3 && dst[0].i == 1, "round trip");
        /* a short message fills a prefix: 1.5 elements */
        memset(dst, 0, sizeof(dst));
        umpi_dtype_unpack(dt, packed, 20, dst);
        CHECK(dst[0].v == 1.5 && dst[0].i == 1 && dst[1].v == 2.5 && dst[1].i == 0, "partial unpack");

        struct si s[2] = { { 7, 70 }, { 8, 80 } }, t[2];
        umpi_dtype_t *st = umpi_dtype_get(MPI_SHORT_INT);
        char ps[12];
        umpi_dtype_pack(st, s, 2, ps);
        memset(t, 0, sizeof(t));
        umpi_dtype_unpack(st, ps, 12, t);
        CHECK(t[0].v == 7 && t[0].i == 70 && t[1].v == 8 && t[1].i == 80, "short_int round trip");

        struct fi f[2] = { { 1.f, 1 }, { 2.f, 2 } }, g[2];
        umpi_dtype_t *ft = umpi_dtype_get(MPI_FLOAT_INT);
        char pf[16];
        umpi_dtype_pack(ft, f, 2, pf);
        umpi_dtype_unpack(ft, pf, 16, g);
        CHECK(memcmp(f, g, sizeof(f)) == 0, "contiguous pair type round trip");

        struct ldi l[2] = { { 1.25L, 5 }, { 2.25L, 6 } }, m[2];
        umpi_dtype_t *lt = umpi_dtype_get(MPI_LONG_DOUBLE_INT);
        char pl[40];
        memset(m, 0, sizeof(m));
        umpi_dtype_pack(lt, l, 2, pl);
        umpi_dtype_unpack(lt, pl, 40, m);
        CHECK(m[1].v == 2.25L && m[1].i == 6 && m[0].i == 5, "long_double_int round trip");
    }
    return unit_done("test_datatype");
}
