/*
 * Unit test of the reduction kernels (src/core/op_kernels.c) and of umpi_op_check/umpi_op_apply:
 * every predefined op on every predefined datatype, against a scalar reference written here from
 * the standard's tables (not from the kernels' enumeration), at counts that leave vector tails;
 * MINLOC/MAXLOC ties; MPI_ERR_OP for undefined pairs. Also prints (does not assert) the time of
 * MPI_SUM on 1 MiB of double against a plain loop.
 */
#include "core/umpi_err.h"
#include "core/umpi_op.h"
#include "mpi/gen/umpi_impl.h"
#include "unit.h"

#include <complex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* classes: i C/Fortran integer, m MPI_AINT & co., f floating, c complex, b logical, y byte,
 * p pair, x none (no predefined reduction) */
static const struct {
    MPI_Datatype h;
    char cls;
    int sgn;
} types[] = {
    {MPI_CHAR, 'i', 1}, {MPI_SIGNED_CHAR, 'i', 1}, {MPI_UNSIGNED_CHAR, 'i', 0}, {MPI_SHORT, 'i', 1},
    {MPI_UNSIGNED_SHORT, 'i', 0}, {MPI_INT, 'i', 1}, {MPI_UNSIGNED, 'i', 0}, {MPI_LONG, 'i', 1},
    {MPI_UNSIGNED_LONG, 'i', 0}, {MPI_LONG_LONG_INT, 'i', 1}, {MPI_UNSIGNED_LONG_LONG, 'i', 0},
    {MPI_INT8_T, 'i', 1}, {MPI_INT16_T, 'i', 1}, {MPI_INT32_T, 'i', 1}, {MPI_INT64_T, 'i', 1},
    {MPI_UINT8_T, 'i', 0}, {MPI_UINT16_T, 'i', 0}, {MPI_UINT32_T, 'i', 0}, {MPI_UINT64_T, 'i', 0},
    {MPI_INTEGER, 'i', 1}, {MPI_INTEGER1, 'i', 1}, {MPI_INTEGER2, 'i', 1}, {MPI_INTEGER4, 'i', 1},
    {MPI_INTEGER8, 'i', 1}, {MPI_AINT, 'm', 1}, {MPI_OFFSET, 'm', 1}, {MPI_COUNT, 'm', 1},
    {MPI_FLOAT, 'f', 1}, {MPI_DOUBLE, 'f', 1}, {MPI_LONG_DOUBLE, 'f', 1}, {MPI_REAL, 'f', 1},
    {MPI_DOUBLE_PRECISION, 'f', 1}, {MPI_REAL4, 'f', 1}, {MPI_REAL8, 'f', 1}, {MPI_REAL16, 'f', 1},
    {MPI_C_FLOAT_COMPLEX, 'c', 1}, {MPI_C_DOUBLE_COMPLEX, 'c', 1}, {MPI_C_LONG_DOUBLE_COMPLEX, 'c', 1},
    {MPI_CXX_FLOAT_COMPLEX, 'c', 1}, {MPI_CXX_DOUBLE_COMPLEX, 'c', 1},
    {MPI_CXX_LONG_DOUBLE_COMPLEX, 'c', 1}, {MPI_COMPLEX, 'c', 1}, {MPI_DOUBLE_COMPLEX, 'c', 1},
    {MPI_COMPLEX8, 'c', 1}, {MPI_COMPLEX16, 'c', 1}, {MPI_COMPLEX32, 'c', 1},
    {MPI_C_BOOL, 'b', 0}, {MPI_CXX_BOOL, 'b', 0}, {MPI_LOGICAL, 'b', 0}, {MPI_BYTE, 'y', 0},
    {MPI_FLOAT_INT, 'p', 0}, {MPI_DOUBLE_INT, 'p', 0}, {MPI_LONG_INT, 'p', 0}, {MPI_SHORT_INT, 'p', 0},
    {MPI_LONG_DOUBLE_INT, 'p', 0}, {MPI_2INT, 'p', 0}, {MPI_2INTEGER, 'p', 0}, {MPI_2REAL, 'p', 0},
    {MPI_2DOUBLE_PRECISION, 'p', 0},
    {MPI_WCHAR, 'x', 0}, {MPI_PACKED, 'x', 0}, {MPI_CHARACTER, 'x', 0},
};
#define NTYPES (int) (sizeof(types) / sizeof(types[0]))

/* The standard's table (MPI 4.1 sec. 6.9.2), plus MPI_CHAR as an integer and Fortran integers for
 * the logical ops (MPICH's extensions). */
static int defined(int op, char cls)
{
    switch (op) {
    case UMPI_OP_MAX: case UMPI_OP_MIN: return strchr("imf", cls) != NULL;
    case UMPI_OP_SUM: case UMPI_OP_PROD: return strchr("imfc", cls) != NULL;
    case UMPI_OP_LAND: case UMPI_OP_LOR: case UMPI_OP_LXOR: return strchr("ib", cls) != NULL;
    case UMPI_OP_BAND: case UMPI_OP_BOR: case UMPI_OP_BXOR: return strchr("imy", cls) != NULL;
    case UMPI_OP_MINLOC: case UMPI_OP_MAXLOC: return cls == 'p';
    default: return 0;
    }
}

/* ---- scalar references ---- */

static uint64_t ref_int(int op, uint64_t x, uint64_t y, int sgn, int size)
{
    int shift = 64 - 8 * size;
    int64_t sx = (int64_t) (x << shift) >> shift, sy = (int64_t) (y << shift) >> shift;
    uint64_t ux = (x << shift) >> shift, uy = (y << shift) >> shift;
    int gt = sgn ? sx > sy : ux > uy, lt = sgn ? sx < sy : ux < uy;
    switch (op) {
    case UMPI_OP_MAX: return gt ? x : y;
    case UMPI_OP_MIN: return lt ? x : y;
    case UMPI_OP_SUM: return x + y;
    case UMPI_OP_PROD: return x * y;
    case UMPI_OP_LAND: return ux && uy;
    case UMPI_OP_LOR: return ux || uy;
    case UMPI_OP_LXOR: return !ux != !uy;
    case UMPI_OP_BAND: return x & y;
    case UMPI_OP_BOR: return x | y;
    case UMPI_OP_BXOR: return x ^ y;
    }
    return 0;
}

#define REF_FLOAT(T)                                                                              \
    static T ref_##T(int op, T x, T y)                                                            \
    {                                                                                             \
        return op == UMPI_OP_MAX ? (x > y ? x : y) : op == UMPI_OP_MIN ? (x < y ? x : y)         \
             : op == UMPI_OP_SUM ? x + y : x * y;                                                \
    }
typedef long double ldouble;
REF_FLOAT(float)
REF_FLOAT(double)
REF_FLOAT(ldouble)

#define REF_PAIR(name, V, I)                                                                      \
    struct name { V v; I i; };                                                                    \
    static void ref_##name(int op, const void *in, void *io)                                      \
    {                                                                                             \
        const struct name *a = in;                                                                \
        struct name *b = io;                                                                      \
        int better = op == UMPI_OP_MINLOC ? a->v < b->v : a->v > b->v;                            \
        if (better)                                                                               \
            *b = *a;                                                                              \
        else if (a->v == b->v && a->i < b->i)                                                     \
            b->i = a->i;                                                                          \
    }                                                                                             \
    static void fill_##name(void *p, int k)                                                       \
    {                                                                                             \
        struct name *e = p;                                                                       \
        e->v = (V) (rand() % 3);       /* few values: many ties */                                \
        e->i = (I) (rand() % 5 + k % 2);                                                          \
    }
REF_PAIR(p_float_int, float, int)
REF_PAIR(p_double_int, double, int)
REF_PAIR(p_long_int, long, int)
REF_PAIR(p_short_int, short, int)
REF_PAIR(p_ldouble_int, long double, int)
REF_PAIR(p_int_int, int, int)
REF_PAIR(p_float_float, float, float)
REF_PAIR(p_double_double, double, double)

static const struct {
    MPI_Datatype h;
    void (*ref)(int, const void *, void *);
    void (*fill)(void *, int);
} pairs[] = {
    {MPI_FLOAT_INT, ref_p_float_int, fill_p_float_int}, {MPI_DOUBLE_INT, ref_p_double_int, fill_p_double_int},
    {MPI_LONG_INT, ref_p_long_int, fill_p_long_int}, {MPI_SHORT_INT, ref_p_short_int, fill_p_short_int},
    {MPI_LONG_DOUBLE_INT, ref_p_ldouble_int, fill_p_ldouble_int}, {MPI_2INT, ref_p_int_int, fill_p_int_int},
    {MPI_2INTEGER, ref_p_int_int, fill_p_int_int}, {MPI_2REAL, ref_p_float_float, fill_p_float_float},
    {MPI_2DOUBLE_PRECISION, ref_p_double_double, fill_p_double_double},
};

/* One element of a non-pair type: reference result of x op y into out. */
static void ref_elem(int op, char cls, int sgn, size_t size, const void *x, const void *y, void *out)
{
    if (cls == 'i' || cls == 'm' || cls == 'y' || (cls == 'b' && size > 1)) {
        uint64_t a = 0, b = 0;
        memcpy(&a, x, size);
        memcpy(&b, y, size);
        uint64_t r = ref_int(op, a, b, sgn, (int) size);
        memcpy(out, &r, size);
    } else if (cls == 'b') {
        _Bool a = *(const _Bool *) x, b = *(const _Bool *) y;
        *(_Bool *) out = (_Bool) ref_int(op, a, b, 0, 1);
    } else if (cls == 'f') {
        if (size == 4) *(float *) out = ref_float(op, *(const float *) x, *(const float *) y);
        else if (size == 8) *(double *) out = ref_double(op, *(const double *) x, *(const double *) y);
        else *(ldouble *) out = ref_ldouble(op, *(const ldouble *) x, *(const ldouble *) y);
    } else if (cls == 'c') {
        if (size == 8) {
            float _Complex a = *(const float _Complex *) x, b = *(const float _Complex *) y;
            *(float _Complex *) out = op == UMPI_OP_SUM ? a + b : a * b;
        } else if (size == 16) {
            double _Complex a = *(const double _Complex *) x, b = *(const double _Complex *) y;
            *(double _Complex *) out = op == UMPI_OP_SUM ? a + b : a * b;
        } else {
            long double _Complex a = *(const long double _Complex *) x, b = *(const long double _Complex *) y;
            *(long double _Complex *) out = op == UMPI_OP_SUM ? a + b : a * b;
        }
    }
}

/* Small exact values, zeros included (for the logical ops). */
static void fill_elem(char cls, size_t size, void *p)
{
    memset(p, 0, size);
    int v = rand() % 7 - 2;
    if (cls == 'b') {
        if (size == 1) *(_Bool *) p = v > 1; else { int32_t t = v > 1; memcpy(p, &t, 4); }
    } else if (cls == 'f') {
        if (size == 4) *(float *) p = v * 0.25f;
        else if (size == 8) *(double *) p = v * 0.25;
        else *(ldouble *) p = v * 0.25L;
    } else if (cls == 'c') {
        int w = rand() % 5 - 2;
        if (size == 8) *(float _Complex *) p = v * 0.5f + w * 0.25f * I;
        else if (size == 16) *(double _Complex *) p = v * 0.5 + w * 0.25 * I;
        else *(long double _Complex *) p = v * 0.5L + w * 0.25L * I;
    } else {
        int64_t r = (int64_t) (rand() % 200) - 60;   /* negative, and past 127 for the 8-bit types */
        memcpy(p, &r, size);
    }
}

static void test_all(void)
{
    static const size_t counts[] = {1, 3, 15, 16, 17, 33, 100};
    for (int t = 0; t < NTYPES; t++) {
        umpi_dtype_t *dt = umpi_dtype_get(types[t].h);
        CHECK(dt != NULL, "type %d not found", t);
        if (dt == NULL)
            continue;
        size_t ext = (size_t) dt->extent;
        for (int op = 1; op < UMPI_OP_NBUILTIN; op++) {
            umpi_op_t *o = umpi_op_get(MPI_MAX + (op - 1));
            int want = defined(op, types[t].cls);
            int err = umpi_op_check(o, dt, "op");
            CHECK((err == MPI_SUCCESS) == want, "%s on %s: check gives %d, want %sdefined",
                  o ? "op" : "?", dt->name, err, want ? "" : "not ");
            if (err != MPI_SUCCESS) {
                CHECK(umpi_err_class(err) == MPI_ERR_OP, "%s: class %d", dt->name, umpi_err_class(err));
                char msg[MPI_MAX_ERROR_STRING];
                int len;
                umpi_err_string(err, msg, &len);
                CHECK(strstr(msg, dt->name) != NULL && strstr(msg, "'op'") != NULL,
                      "message names neither datatype nor argument: %s", msg);
            }
            if (op == UMPI_OP_REPLACE || op == UMPI_OP_NO_OP)
                CHECK(umpi_op_check_accumulate(o, dt, "op") == MPI_SUCCESS, "%d accumulate on %s", op,
                      dt->name);
            if (!want && op != UMPI_OP_REPLACE && op != UMPI_OP_NO_OP)
                continue;
            for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
                size_t n = counts[c];
                char *in = calloc(n, ext), *io = calloc(n, ext), *ref = calloc(n, ext);
                int p = -1;
                for (int k = 0; k < (int) (sizeof(pairs) / sizeof(pairs[0])); k++)
                    if (pairs[k].h == types[t].h)
                        p = k;
                for (size_t i = 0; i < n; i++) {
                    if (p >= 0) {
                        pairs[p].fill(in + i * ext, (int) i);
                        pairs[p].fill(io + i * ext, (int) i + 1);
                    } else {
                        fill_elem(types[t].cls, ext, in + i * ext);
                        fill_elem(types[t].cls, ext, io + i * ext);
                    }
                }
                memcpy(ref, io, n * ext);
                for (size_t i = 0; i < n; i++) {
                    if (op == UMPI_OP_REPLACE)
                        memcpy(ref + i * ext, in + i * ext, ext);
                    else if (op == UMPI_OP_NO_OP)
                        ;
                    else if (p >= 0)
                        pairs[p].ref(op, in + i * ext, ref + i * ext);
                    else
                        ref_elem(op, types[t].cls, types[t].sgn, ext, in + i * ext, io + i * ext,
                                 ref + i * ext);
                }
                umpi_op_apply(o, in, io, (MPI_Count) n, dt);
                size_t bad = n;
                for (size_t i = 0; i < n && bad == n; i++) {
                    /* compare the data bytes only: pairs and long double have padding */
                    size_t dsz = p >= 0 ? (size_t) dt->size : (types[t].cls == 'f' && ext == 16 ? 10
                                 : types[t].cls == 'c' && ext == 32 ? 10 : ext);
                    if (p >= 0 && dt->nblocks == 2) {
                        if (memcmp(io + i * ext, ref + i * ext, (size_t) dt->blocks[0].len) ||
                            memcmp(io + i * ext + dt->blocks[1].disp, ref + i * ext + dt->blocks[1].disp,
                                   (size_t) dt->blocks[1].len))
                            bad = i;
                    } else if (types[t].cls == 'c' && ext == 32) {
                        if (memcmp(io + i * ext, ref + i * ext, 10) || memcmp(io + i * ext + 16, ref + i * ext + 16, 10))
                            bad = i;
                    } else if (memcmp(io + i * ext, ref + i * ext, dsz)) {
                        bad = i;
                    }
                }
                CHECK(bad == n, "op %d on %s, count %zu: element %zu differs", op, dt->name, n, bad);
                free(in);
                free(io);
                free(ref);
            }
        }
    }
}

static void test_ties(void)
{
    struct { double v; int i; } a[3] = {{2, 5}, {2, 1}, {1, 9}}, b[3] = {{2, 3}, {2, 4}, {1, 2}};
    umpi_op_apply(umpi_op_get(MPI_MAXLOC), a, b, 3, umpi_dtype_get(MPI_DOUBLE_INT));
    CHECK(b[0].i == 3 && b[1].i == 1 && b[2].i == 2, "MAXLOC ties: %d %d %d", b[0].i, b[1].i, b[2].i);
    float r[2] = {1.5f, 7.0f}, s[2] = {1.5f, 3.0f};   /* MPI_2REAL: the index is a float too */
    umpi_op_apply(umpi_op_get(MPI_MINLOC), r, s, 1, umpi_dtype_get(MPI_2REAL));
    CHECK(s[0] == 1.5f && s[1] == 3.0f, "MINLOC 2REAL tie: %g %g", s[0], s[1]);
}

static void test_handles(void)
{
    CHECK(umpi_op_get(MPI_OP_NULL) == NULL, "MPI_OP_NULL is not an op");
    CHECK(umpi_op_get(MPI_NO_OP + 1) == NULL, "past MPI_NO_OP");
    CHECK(umpi_op_get(MPI_COMM_WORLD) == NULL, "a communicator is not an op");
    CHECK(umpi_op_get(MPI_SUM) != NULL && umpi_op_is_commutative(umpi_op_get(MPI_SUM)), "MPI_SUM");
    CHECK(!umpi_op_is_commutative(umpi_op_get(MPI_REPLACE)), "MPI_REPLACE");
}

static int user_calls;
static void user_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    user_calls++;
}

/* A user op freed while a pending operation holds it lives until that operation releases it. */
static void test_user_lifetime(void)
{
    MPI_Op h = MPI_OP_NULL;
    CHECK(umpi_impl_op_create((MPI_User_function_c *) user_fn, 0, &h, 0) == MPI_SUCCESS, "create");
    umpi_op_t *op = umpi_op_get(h);
    CHECK(op != NULL && !umpi_op_is_commutative(op), "user op 0x%x", (unsigned) h);
    if (op == NULL)
        return;
    CHECK(umpi_op_check(op, umpi_dtype_get(MPI_WCHAR), "op") == MPI_SUCCESS, "user ops take any type");
    umpi_op_retain(op);                      /* a nonblocking collective starts */
    MPI_Op user = h;
    CHECK(umpi_impl_op_free(&user) == MPI_SUCCESS && user == MPI_OP_NULL, "free");
    int x = 1, y = 2;
    umpi_op_apply(op, &x, &y, 1, umpi_dtype_get(MPI_INT));   /* ... and still runs */
    CHECK(user_calls == 1 && op->refcount == 1, "calls %d, refcount %d", user_calls, op->refcount);
    umpi_op_release(op);                     /* ... and completes: now it is gone */
    CHECK(umpi_op_get(h) == NULL, "op 0x%x outlived its last reference", (unsigned) h);
    MPI_Op sum = MPI_SUM;
    int err = umpi_impl_op_free(&sum);
    CHECK(umpi_err_class(err) == MPI_ERR_OP && sum == MPI_SUM, "freeing MPI_SUM: class %d",
          umpi_err_class(err));
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* A plain loop as a user would write it (not inlined, so each repetition runs). */
__attribute__((noinline)) static void plain_sum(const double *a, double *b, int n)
{
    for (int i = 0; i < n; i++)
        b[i] += a[i];
}

/* Printed, not asserted: the machine is shared. */
static void time_sum(void)
{
    enum { N = 1 << 17, REPS = 200 };   /* 1 MiB of double */
    double *a = malloc(N * sizeof(double)), *b = malloc(N * sizeof(double));
    for (int i = 0; i < N; i++)
        a[i] = 1e-9 * i, b[i] = 0;
    umpi_op_t *sum = umpi_op_get(MPI_SUM);
    umpi_dtype_t *dt = umpi_dtype_get(MPI_DOUBLE);
    double t0 = now();
    for (int r = 0; r < REPS; r++)
        umpi_op_apply(sum, a, b, N, dt);
    double t1 = now();
    for (int r = 0; r < REPS; r++)
        plain_sum(a, b, N);
    double t2 = now();
    printf("INFO MPI_SUM on 1 MiB of double: umpi_op_apply %.1f us, plain loop %.1f us\n",
           1e6 * (t1 - t0) / REPS, 1e6 * (t2 - t1) / REPS);
    free(a);
    free(b);
}

int main(void)
{
    srand(12345);
    SECTION("op handles") test_handles();
    SECTION("every predefined op on every predefined type") test_all();
    SECTION("MINLOC/MAXLOC ties") test_ties();
    SECTION("user op lifetime") test_user_lifetime();
    time_sum();
    return unit_done("test_op");
}
