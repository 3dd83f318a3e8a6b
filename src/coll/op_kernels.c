/*
 * The arithmetic of the predefined reduction operations: one kernel per (op, C type), every one
 * generated from the enumerations below, and a table from (op, datatype handle) to kernel.
 *
 *   UMPI__OP_TYPES    datatype handle -> (type class, kernel type)    which ops a datatype has
 *   UMPI__CTYPES      kernel type -> C type, class                    which kernels exist
 *   UMPI__OPS_<class> the ops of a class                              one list per class
 *
 * Kernels on scalar types run blocks of UMPI__VB elements in an inner loop of constant trip count
 * (gcc unrolls it and vectorizes it as straight-line code even at -O2, whose cost model refuses
 * loops of unknown length), then the tail one by one. MINLOC/MAXLOC kernels read the pair at a
 * given stride and index offset, so that the packed form of a padded pair type (a derived type
 * through the pack engine) has its kernel too.
 */
#include "coll/umpi_op.h"

#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

_Static_assert((char) -1 < 0, "MPI_CHAR reduces as a signed 8-bit integer");
_Static_assert(sizeof(long) == 8 && sizeof(MPI_Aint) == 8 && sizeof(MPI_Offset) == 8 &&
               sizeof(MPI_Count) == 8, "64-bit integer types share the i64 kernels");

/* ---- the enumerations --------------------------------------------------------------------------- */

/* Classes: INT (C and Fortran integers, and MPI_CHAR as MPICH has it), MLANG (MPI_AINT & co.),
 * FLT, CPLX, LOGI (C _Bool, Fortran LOGICAL), BYTE, and the MINLOC/MAXLOC pairs: PAIR (builtin
 * handles, never padded) and PAIRD (MPICH's direct handles 0..4, possibly padded). */
#define UMPI__OP_TYPES(X)                                                                        \
    X(MPI_CHAR, INT, i8) X(MPI_SIGNED_CHAR, INT, i8) X(MPI_UNSIGNED_CHAR, INT, u8)               \
    X(MPI_SHORT, INT, i16) X(MPI_UNSIGNED_SHORT, INT, u16) X(MPI_INT, INT, i32)                  \
    X(MPI_UNSIGNED, INT, u32) X(MPI_LONG, INT, i64) X(MPI_UNSIGNED_LONG, INT, u64)               \
    X(MPI_LONG_LONG_INT, INT, i64) X(MPI_UNSIGNED_LONG_LONG, INT, u64)                           \
    X(MPI_INT8_T, INT, i8) X(MPI_INT16_T, INT, i16) X(MPI_INT32_T, INT, i32)                     \
    X(MPI_INT64_T, INT, i64) X(MPI_UINT8_T, INT, u8) X(MPI_UINT16_T, INT, u16)                   \
    X(MPI_UINT32_T, INT, u32) X(MPI_UINT64_T, INT, u64)                                          \
    X(MPI_AINT, MLANG, i64) X(MPI_OFFSET, MLANG, i64) X(MPI_COUNT, MLANG, i64)                   \
    X(MPI_INTEGER, INT, i32) X(MPI_INTEGER1, INT, i8) X(MPI_INTEGER2, INT, i16)                  \
    X(MPI_INTEGER4, INT, i32) X(MPI_INTEGER8, INT, i64)                                          \
    X(MPI_FLOAT, FLT, f32) X(MPI_DOUBLE, FLT, f64) X(MPI_LONG_DOUBLE, FLT, f80)                  \
    X(MPI_REAL, FLT, f32) X(MPI_DOUBLE_PRECISION, FLT, f64) X(MPI_REAL4, FLT, f32)               \
    X(MPI_REAL8, FLT, f64) X(MPI_REAL16, FLT, f80)                                               \
    X(MPI_C_FLOAT_COMPLEX, CPLX, c32) X(MPI_C_DOUBLE_COMPLEX, CPLX, c64)                         \
    X(MPI_C_LONG_DOUBLE_COMPLEX, CPLX, c80) X(MPI_CXX_FLOAT_COMPLEX, CPLX, c32)                  \
    X(MPI_CXX_DOUBLE_COMPLEX, CPLX, c64) X(MPI_CXX_LONG_DOUBLE_COMPLEX, CPLX, c80)               \
    X(MPI_COMPLEX, CPLX, c32) X(MPI_DOUBLE_COMPLEX, CPLX, c64) X(MPI_COMPLEX8, CPLX, c32)        \
    X(MPI_COMPLEX16, CPLX, c64) X(MPI_COMPLEX32, CPLX, c80)                                      \
    X(MPI_C_BOOL, LOGI, b8) X(MPI_CXX_BOOL, LOGI, b8) X(MPI_LOGICAL, LOGI, b32)                  \
    X(MPI_BYTE, BYTE, u8)                                                                        \
    X(MPI_FLOAT_INT, PAIRD, float_int) X(MPI_DOUBLE_INT, PAIRD, double_int)                      \
    X(MPI_LONG_INT, PAIRD, long_int) X(MPI_SHORT_INT, PAIRD, short_int)                          \
    X(MPI_LONG_DOUBLE_INT, PAIRD, ldouble_int) X(MPI_2INT, PAIR, int_int)                        \
    X(MPI_2INTEGER, PAIR, int_int) X(MPI_2REAL, PAIR, float_float)                               \
    X(MPI_2DOUBLE_PRECISION, PAIR, double_double)

/* Scalar kernel types: X(kernel type, C type, class of its kernels). */
#define UMPI__CTYPES(X)                                                                          \
    X(i8, int8_t, INT) X(u8, uint8_t, INT) X(i16, int16_t, INT) X(u16, uint16_t, INT)            \
    X(i32, int32_t, INT) X(u32, uint32_t, INT) X(i64, int64_t, INT) X(u64, uint64_t, INT)        \
    X(f32, float, FLT) X(f64, double, FLT) X(f80, long double, FLT)                              \
    X(c32, float _Complex, CPLX) X(c64, double _Complex, CPLX) X(c80, long double _Complex, CPLX) \
    X(b8, _Bool, LOGI) X(b32, int32_t, LOGI)

/* Pair kernel types: X(kernel type, value type, index type). */
#define UMPI__PAIRS(X)                                                                           \
    X(float_int, float, int) X(double_int, double, int) X(long_int, long, int)                   \
    X(short_int, short, int) X(ldouble_int, long double, int) X(int_int, int, int)               \
    X(float_float, float, float) X(double_double, double, double)

/* The ops of each class, as the MPI 4.1 standard lists them (sec. 6.9.2); E(op, a, b) with two
 * arguments passed through. Logical ops on integers take any integer (MPICH does too). */
#define UMPI__OPS_INT(E, a, b)                                                                   \
    E(MAX, a, b) E(MIN, a, b) E(SUM, a, b) E(PROD, a, b) E(LAND, a, b) E(LOR, a, b)              \
    E(LXOR, a, b) E(BAND, a, b) E(BOR, a, b) E(BXOR, a, b)
#define UMPI__OPS_MLANG(E, a, b)                                                                 \
    E(MAX, a, b) E(MIN, a, b) E(SUM, a, b) E(PROD, a, b) E(BAND, a, b) E(BOR, a, b) E(BXOR, a, b)
#define UMPI__OPS_FLT(E, a, b)  E(MAX, a, b) E(MIN, a, b) E(SUM, a, b) E(PROD, a, b)
#define UMPI__OPS_CPLX(E, a, b) E(SUM, a, b) E(PROD, a, b)
#define UMPI__OPS_LOGI(E, a, b) E(LAND, a, b) E(LOR, a, b) E(LXOR, a, b)
#define UMPI__OPS_BYTE(E, a, b) E(BAND, a, b) E(BOR, a, b) E(BXOR, a, b)
#define UMPI__OPS_PAIR(E, a, b) E(MINLOC, a, b) E(MAXLOC, a, b)
#define UMPI__OPS_PAIRD UMPI__OPS_PAIR

/* x op y, x from `in` (the earlier rank), y from `inout`. */
#define UMPI__EXPR_MAX(x, y)  ((x) > (y) ? (x) : (y))
#define UMPI__EXPR_MIN(x, y)  ((x) < (y) ? (x) : (y))
#define UMPI__EXPR_SUM(x, y)  ((x) + (y))
#define UMPI__EXPR_PROD(x, y) ((x) * (y))
#define UMPI__EXPR_LAND(x, y) ((x) != 0 && (y) != 0)
#define UMPI__EXPR_LOR(x, y)  ((x) != 0 || (y) != 0)
#define UMPI__EXPR_LXOR(x, y) (((x) != 0) != ((y) != 0))
#define UMPI__EXPR_BAND(x, y) ((x) & (y))
#define UMPI__EXPR_BOR(x, y)  ((x) | (y))
#define UMPI__EXPR_BXOR(x, y) ((x) ^ (y))

/* ---- kernels ------------------------------------------------------------------------------------ */

#define UMPI__VB 16   /* elements per unrolled block: 64 B of float, 128 B of double */

#define UMPI__SCALAR_KERNEL(OP, tag, T)                                                          \
    static void umpi__k_##OP##_##tag(const void *restrict vin, void *restrict vio, size_t n)     \
    {                                                                                            \
        const T *restrict in = vin;                                                              \
        T *restrict io = vio;                                                                    \
        size_t i = 0;                                                                            \
        for (; i + UMPI__VB <= n; i += UMPI__VB)                                                 \
            for (size_t j = 0; j < UMPI__VB; j++)                                                \
                io[i + j] = (T) UMPI__EXPR_##OP(in[i + j], io[i + j]);                           \
        for (; i < n; i++)                                                                       \
            io[i] = (T) UMPI__EXPR_##OP(in[i], io[i]);                                           \
    }
#define UMPI__SCALAR_KERNELS(tag, T, CLASS) UMPI__OPS_##CLASS(UMPI__SCALAR_KERNEL, tag, T)
UMPI__CTYPES(UMPI__SCALAR_KERNELS)

/*
 * MINLOC/MAXLOC: the better value wins; on a tie the smaller index (MPI 4.1 sec. 6.9.4). Pairs
 * are read with memcpy at (stride, ioff) so one body serves the natural and the packed layout.
 */
#define UMPI__PAIR_KERNELS(tag, V, I)                                                            \
    struct umpi__pair_##tag { V v; I i; };                                                       \
    static inline void umpi__loc_##tag(const char *in, char *io, size_t n, size_t stride,        \
                                       size_t ioff, int want_max)                                \
    {                                                                                            \
        for (size_t k = 0; k < n; k++, in += stride, io += stride) {                             \
            V a, b;                                                                              \
            I ia, ib;                                                                            \
            memcpy(&a, in, sizeof(V));                                                           \
            memcpy(&b, io, sizeof(V));                                                           \
            memcpy(&ia, in + ioff, sizeof(I));                                                   \
            memcpy(&ib, io + ioff, sizeof(I));                                                   \
            if (want_max ? a > b : a < b) {                                                      \
                memcpy(io, &a, sizeof(V));                                                       \
                memcpy(io + ioff, &ia, sizeof(I));                                               \
            } else if (a == b && ia < ib) {                                                      \
                memcpy(io + ioff, &ia, sizeof(I));                                               \
            }                                                                                    \
        }                                                                                        \
    }                                                                                            \
    static void umpi__k_MINLOC_##tag(const void *restrict in, void *restrict io, size_t n)       \
    {                                                                                            \
        umpi__loc_##tag(in, io, n, sizeof(struct umpi__pair_##tag),                              \
                        offsetof(struct umpi__pair_##tag, i), 0);                                \
    }                                                                                            \
    static void umpi__k_MAXLOC_##tag(const void *restrict in, void *restrict io, size_t n)       \
    {                                                                                            \
        umpi__loc_##tag(in, io, n, sizeof(struct umpi__pair_##tag),                              \
                        offsetof(struct umpi__pair_##tag, i), 1);                                \
    }                                                                                            \
    /* (unused for pairs that have no padding: their packed form is the natural one) */           \
    __attribute__((unused)) static void umpi__kp_MINLOC_##tag(const void *restrict in, void *restrict io, size_t n)      \
    {                                                                                            \
        umpi__loc_##tag(in, io, n, sizeof(V) + sizeof(I), sizeof(V), 0);                         \
    }                                                                                            \
    __attribute__((unused)) static void umpi__kp_MAXLOC_##tag(const void *restrict in, void *restrict io, size_t n)      \
    {                                                                                            \
        umpi__loc_##tag(in, io, n, sizeof(V) + sizeof(I), sizeof(V), 1);                         \
    }
UMPI__PAIRS(UMPI__PAIR_KERNELS)

/* ---- the table (op, datatype) -> kernel ---------------------------------------------------------- */

/* Builtin handles by their low byte; the pair types (MPICH's direct handles 0..4) after them. */
#define UMPI__NSLOTS (256 + 5)
static inline unsigned umpi__slot(MPI_Datatype h)
{
    return UMPI_HANDLE_KIND(h) == UMPI_KIND_BUILTIN ? ((uint32_t) h & 0xff) : 256 + UMPI_HANDLE_INDEX(h);
}
#define UMPI__SLOT(h) (UMPI_HANDLE_KIND(h) == UMPI_KIND_BUILTIN ? ((uint32_t) (h) & 0xff) \
                                                                : 256 + UMPI_HANDLE_INDEX(h))

#define UMPI__ENTRY(OP, h, tag) [UMPI_OP_##OP][UMPI__SLOT(h)] = umpi__k_##OP##_##tag,
#define UMPI__ROW(h, CLASS, tag) UMPI__OPS_##CLASS(UMPI__ENTRY, h, tag)
static umpi_op_kernel_t *const umpi__kernels[UMPI_OP_NBUILTIN][UMPI__NSLOTS] = {
    UMPI__OP_TYPES(UMPI__ROW)
};

/* Packed pair kernels: only MINLOC/MAXLOC, only pair types. */
#define UMPI__PENTRY_PAIRD(h, tag)                                                                \
    [0][UMPI_HANDLE_INDEX(h)] = umpi__kp_MINLOC_##tag, [1][UMPI_HANDLE_INDEX(h)] = umpi__kp_MAXLOC_##tag,
#define UMPI__PENTRY(h, CLASS, tag) UMPI__PENTRY_##CLASS(h, tag)
#define UMPI__PENTRY_PAIR(h, tag)
#define UMPI__PENTRY_INT(h, tag)
#define UMPI__PENTRY_MLANG(h, tag)
#define UMPI__PENTRY_FLT(h, tag)
#define UMPI__PENTRY_CPLX(h, tag)
#define UMPI__PENTRY_LOGI(h, tag)
#define UMPI__PENTRY_BYTE(h, tag)
static umpi_op_kernel_t *const umpi__packed_pair[2][5] = { UMPI__OP_TYPES(UMPI__PENTRY) };

umpi_op_kernel_t *umpi_op_kernel(int kind, const umpi_dtype_t *dt)
{
    if (umpi_unlikely(kind < 1 || kind >= UMPI_OP_NBUILTIN || !dt->builtin))
        return NULL;
    unsigned s = umpi__slot(dt->handle);
    return s < UMPI__NSLOTS ? umpi__kernels[kind][s] : NULL;
}

umpi_op_kernel_t *umpi_op_kernel_packed(int kind, const umpi_dtype_t *dt)
{
    if ((kind == UMPI_OP_MINLOC || kind == UMPI_OP_MAXLOC) && dt->builtin &&
        UMPI_HANDLE_KIND(dt->handle) == UMPI_KIND_DIRECT && UMPI_HANDLE_INDEX(dt->handle) < 5)
        return umpi__packed_pair[kind - UMPI_OP_MINLOC][UMPI_HANDLE_INDEX(dt->handle)];
    return umpi_op_kernel(kind, dt);   /* MPI_2INT & co.: no padding, packed is natural */
}
