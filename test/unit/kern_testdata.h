/*
 * Test data for the GPU kernel tests (test/unit/test_cuda_kern.c on a fake driver, test/gpu/gpu_kern.c
 * on a GPU): random but valid values of every predefined type, random derived datatypes.
 */
#ifndef KERN_TESTDATA_H
#define KERN_TESTDATA_H

#include "core/umpi_obj.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- random numbers ------------------------------------------------------------------------------- */

static unsigned long long rng = 0x9e3779b97f4a7c15ull;
static inline uint64_t rnd64(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static inline unsigned rnd(unsigned n)
{
    return (unsigned) (rnd64() % n);
}

/* ---- values ------------------------------------------------------------------------------------------- */

static inline long double rand_ld(void)
{
    switch (rnd(12)) {
    case 0: return 0.0L * (rnd(2) ? -1 : 1);
    case 1: return rnd(2) ? INFINITY : -INFINITY;
    case 2: return NAN;
    case 3: return LDBL_MIN / (1 + rnd(1000));   /* denormal */
    case 4: return LDBL_MAX / (1 + rnd(3));
    default: return ((long double) (int64_t) rnd64() / 3.0L) * powl(2.0L, (int) rnd(200) - 100);
    }
}

static inline double rand_d(void)
{
    switch (rnd(12)) {
    case 0: return rnd(2) ? -0.0 : 0.0;
    case 1: return rnd(2) ? INFINITY : -INFINITY;
    case 2: return NAN;
    case 3: return DBL_MIN / (1 + rnd(1000));
    case 4: return DBL_MAX / (1 + rnd(3));
    default: return (double) (int64_t) rnd64() / 7.0 * pow(2.0, (int) rnd(120) - 60);
    }
}

/* One element of a predefined type, random but valid (booleans 0/1; pairs with few values, so
 * that ties happen). */
static inline void rand_elem(const umpi_dtype_t *dt, char *p)
{
    MPI_Datatype h = dt->handle;
    /* what the value leaves unwritten (the 6 bytes after a long double's 10) stays random */
    for (MPI_Aint b = 0; b < dt->extent; b++)
        p[b] = (char) rnd64();
    if (h == MPI_C_BOOL || h == MPI_CXX_BOOL) {
        *p = (char) rnd(2);
    } else if (h == MPI_LOGICAL) {
        int v = rnd(3) == 0 ? (int) rnd64() : (int) rnd(2);
        memcpy(p, &v, 4);
    } else if (h == MPI_FLOAT || h == MPI_REAL || h == MPI_REAL4) {
        float v = (float) rand_d();
        memcpy(p, &v, 4);
    } else if (h == MPI_DOUBLE || h == MPI_DOUBLE_PRECISION || h == MPI_REAL8) {
        double v = rand_d();
        memcpy(p, &v, 8);
    } else if (h == MPI_LONG_DOUBLE || h == MPI_REAL16) {
        long double v = rand_ld();
        memcpy(p, &v, 10);
    } else if (h == MPI_C_FLOAT_COMPLEX || h == MPI_CXX_FLOAT_COMPLEX || h == MPI_COMPLEX || h == MPI_COMPLEX8) {
        float v[2] = {(float) rand_d(), (float) rand_d()};
        memcpy(p, v, 8);
    } else if (h == MPI_C_DOUBLE_COMPLEX || h == MPI_CXX_DOUBLE_COMPLEX || h == MPI_DOUBLE_COMPLEX ||
               h == MPI_COMPLEX16) {
        double v[2] = {rand_d(), rand_d()};
        memcpy(p, v, 16);
    } else if (h == MPI_C_LONG_DOUBLE_COMPLEX || h == MPI_CXX_LONG_DOUBLE_COMPLEX || h == MPI_COMPLEX32) {
        long double v[2] = {rand_ld(), rand_ld()};
        memcpy(p, &v[0], 10);
        memcpy(p + 16, &v[1], 10);
    } else if (h == MPI_FLOAT_INT || h == MPI_2REAL) {
        float v = (float) rnd(4) - 1.5f;
        int i = (int) rnd(5);
        memcpy(p, &v, 4);
        if (h == MPI_2REAL) {
            float fi = (float) i;
            memcpy(p + 4, &fi, 4);
        } else {
            memcpy(p + 4, &i, 4);
        }
    } else if (h == MPI_DOUBLE_INT || h == MPI_2DOUBLE_PRECISION) {
        double v = (double) rnd(4) - 1.5;
        int i = (int) rnd(5);
        memcpy(p, &v, 8);
        if (h == MPI_2DOUBLE_PRECISION) {
            double di = (double) i;
            memcpy(p + 8, &di, 8);
        } else {
            memcpy(p + 8, &i, 4);
        }
    } else if (h == MPI_LONG_INT) {
        long v = (long) rnd(4) - 2;
        int i = (int) rnd(5);
        memcpy(p, &v, 8);
        memcpy(p + 8, &i, 4);
    } else if (h == MPI_SHORT_INT) {
        short v = (short) ((int) rnd(4) - 2);
        int i = (int) rnd(5);
        memcpy(p, &v, 2);
        memcpy(p + 4, &i, 4);
    } else if (h == MPI_LONG_DOUBLE_INT) {
        long double v = rnd(8) == 0 ? NAN : (long double) rnd(4) - 1.5L;
        int i = (int) rnd(5);
        memcpy(p, &v, 10);
        memcpy(p + 16, &i, 4);
    } else if (h == MPI_2INT || h == MPI_2INTEGER) {
        int v[2] = {(int) rnd(4) - 2, (int) rnd(5)};
        memcpy(p, v, 8);
    } else {
        for (MPI_Aint b = 0; b < dt->size; b++)
            p[b] = (char) rnd64();
    }
}

/* Padding bytes: random too, and they must come out as the host leaves them. */
static inline void rand_buf(const umpi_dtype_t *dt, char *p, MPI_Count n)
{
    for (MPI_Count i = 0; i < n; i++) {
        rand_elem(dt, p + i * dt->extent);
        for (MPI_Aint b = dt->size; b < dt->extent && !dt->contig; b++)
            if (p[i * dt->extent + b] == 0)
                p[i * dt->extent + b] = (char) (0x40 + b);
    }
}

static inline umpi_dtype_t *make(int comb, const MPI_Count *c, MPI_Count n, const int *ints, int ni, umpi_dtype_t **t, int nt)
{
    umpi_dtype_t *dt = NULL;
    if (umpi_dtype_create(comb, c, n, ints, ni, t, nt, &dt) != UMPI_OK || umpi_dtype_compile(dt) != UMPI_OK)
        abort();
    dt->committed = 1;
    return dt;
}

static inline umpi_dtype_t *leaf_type(void)
{
    static const MPI_Datatype leaves[] = {MPI_BYTE, MPI_SHORT, MPI_INT, MPI_DOUBLE, MPI_DOUBLE_INT,
                                          MPI_SHORT_INT, MPI_C_DOUBLE_COMPLEX, MPI_LONG_DOUBLE};
    return umpi_dtype_get(leaves[rnd(UMPI_ARRAY_SIZE(leaves))]);
}

static inline umpi_dtype_t *random_type(int depth)
{
    if (depth == 0 || rnd(5) == 0)
        return leaf_type();
    umpi_dtype_t *old = random_type(depth - 1), *dt, *types[3];
    MPI_Count c[16];
    int n = 1 + (int) rnd(3), ints[2];
    switch (rnd(10)) {
    case 0:
        c[0] = 1 + rnd(4);
        dt = make(MPI_COMBINER_CONTIGUOUS, c, 1, NULL, 0, &old, 1);
        break;
    case 1:
        c[0] = 1 + rnd(5), c[1] = 1 + rnd(3), c[2] = (MPI_Count) rnd(7) - 1;
        dt = make(MPI_COMBINER_VECTOR, c, 3, NULL, 0, &old, 1);
        break;
    case 2:
        c[0] = 1 + rnd(5), c[1] = 1 + rnd(3), c[2] = (MPI_Count) rnd(64) - 8;
        dt = make(MPI_COMBINER_HVECTOR, c, 3, NULL, 0, &old, 1);
        break;
    case 3:
    case 4: {
        int comb = rnd(2) ? MPI_COMBINER_INDEXED : MPI_COMBINER_HINDEXED;
        c[0] = n;
        for (int i = 0; i < n; i++)
            c[1 + i] = 1 + rnd(3), c[1 + n + i] = rnd(comb == MPI_COMBINER_HINDEXED ? 40 : 6);
        dt = make(comb, c, 1 + 2 * n, NULL, 0, &old, 1);
        break;
    }
    case 5:
        c[0] = n, c[1] = 1 + rnd(3);
        for (int i = 0; i < n; i++)
            c[2 + i] = rnd(6);
        dt = make(rnd(2) ? MPI_COMBINER_INDEXED_BLOCK : MPI_COMBINER_HINDEXED_BLOCK, c, 2 + n, NULL, 0, &old, 1);
        break;
    case 6: {
        c[0] = n;
        MPI_Aint at = 0;
        for (int i = 0; i < n; i++) {
            types[i] = i == 0 ? old : random_type(depth - 1);
            c[1 + i] = 1 + rnd(3);
            c[1 + n + i] = at + rnd(9) - types[i]->lb;
            at = c[1 + n + i] + types[i]->lb + c[1 + i] * types[i]->extent;
        }
        dt = make(MPI_COMBINER_STRUCT, c, 1 + 2 * n, NULL, 0, types, n);
        for (int i = 1; i < n; i++)
            umpi_dtype_release(types[i]);
        break;
    }
    case 7: {
        int nd = 2 + (int) rnd(2);
        ints[0] = nd, ints[1] = rnd(2) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
        for (int d = 0; d < nd; d++) {
            c[d] = 1 + rnd(5);
            c[nd + d] = 1 + rnd((unsigned) c[d]);
            c[2 * nd + d] = rnd((unsigned) (c[d] - c[nd + d] + 1));
        }
        dt = make(MPI_COMBINER_SUBARRAY, c, 3 * nd, ints, 2, &old, 1);
        break;
    }
    case 8:
        c[0] = (MPI_Count) rnd(8) - 4, c[1] = old->extent + rnd(16);
        dt = make(MPI_COMBINER_RESIZED, c, 2, NULL, 0, &old, 1);
        break;
    default:
        dt = make(MPI_COMBINER_DUP, NULL, 0, NULL, 0, &old, 1);
        break;
    }
    umpi_dtype_release(old);
    return dt;
}

/* ---- predefined types ---------------------------------------------------------------------------------- */

static umpi_dtype_t *all_types[300];
static int n_all_types;

static inline void collect_types(void)
{
    for (int i = 0; i < 256; i++)
        if (umpi_dtype_builtin[i].handle != 0)
            all_types[n_all_types++] = &umpi_dtype_builtin[i];
    const MPI_Datatype pairs[] = {MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT};
    for (int i = 0; i < 5; i++)
        all_types[n_all_types++] = umpi_dtype_get(pairs[i]);
}

static inline int is_ldbl(const umpi_dtype_t *dt)
{
    MPI_Datatype h = dt->handle;
    return h == MPI_LONG_DOUBLE || h == MPI_REAL16 || h == MPI_C_LONG_DOUBLE_COMPLEX ||
           h == MPI_CXX_LONG_DOUBLE_COMPLEX || h == MPI_COMPLEX32 || h == MPI_LONG_DOUBLE_INT;
}

/* The bytes count elements of dt span: [buf + *first, + span). */
static inline size_t kt_span(const umpi_dtype_t *dt, MPI_Count count, MPI_Aint *first)
{
    MPI_Aint reach = (MPI_Aint) (count - 1) * dt->extent;
    *first = dt->true_lb + (reach < 0 ? reach : 0);
    return (size_t) ((reach < 0 ? -reach : reach) + dt->true_extent);
}

/* Whether count elements of dt cover some byte twice (MPI allows such types for sending, not for
 * receiving: what an unpack leaves there depends on the order of the writes). */
static inline int kt_overlaps(const umpi_dtype_t *dt, MPI_Count count)
{
    MPI_Aint first;
    size_t span = kt_span(dt, count, &first), bytes = (size_t) (count * dt->size), covered = 0;
    char *buf = calloc(span + 1, 1), *ones = malloc(bytes + 1);
    memset(ones, 1, bytes);
    umpi_dtype_unpack(dt, ones, (MPI_Count) bytes, buf - first);
    for (size_t i = 0; i < span; i++)
        covered += buf[i] != 0;
    free(buf);
    free(ones);
    return covered < bytes;
}

#endif
