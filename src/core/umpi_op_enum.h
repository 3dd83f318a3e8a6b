/*
 * The one enumeration of the predefined reduction operations: which (op, datatype) pairs exist and
 * what each op computes. Everything else is generated from it:
 *
 *   src/core/op_kernels.c   the host kernels and the (op, datatype handle) -> kernel table
 *   src/cuda/kernels.cu     the GPU kernels (nvcc, when CUDA is found at build time)
 *   src/cuda/kern.c         the (op, datatype handle) -> GPU kernel name table
 *
 *   UMPI_OP_TYPES    datatype handle -> (type class, kernel type)    which ops a datatype has
 *   UMPI_OP_CTYPES   kernel type -> C type, class                    which kernels exist
 *   UMPI_OP_PAIRS    pair kernel type -> value type, index type      MINLOC/MAXLOC kernels
 *   UMPI_OPS_<class> the ops of a class                              one list per class
 *
 * Macros only, no includes: the lists are expanded by C (host) and by CUDA C++ (device), which
 * ignores the C type column of UMPI_OP_CTYPES (C's complex and _Bool are not C++).
 */
#ifndef UMPI_OP_ENUM_H
#define UMPI_OP_ENUM_H

/* Classes: INT (C and Fortran integers, and MPI_CHAR as MPICH has it), MLANG (MPI_AINT & co.),
 * FLT, CPLX, LOGI (C _Bool, Fortran LOGICAL), BYTE, and the MINLOC/MAXLOC pairs: PAIR (builtin
 * handles, never padded) and PAIRD (MPICH's direct handles 0..4, possibly padded). */
#define UMPI_OP_TYPES(X)                                                                         \
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
#define UMPI_OP_CTYPES(X)                                                                        \
    X(i8, int8_t, INT) X(u8, uint8_t, INT) X(i16, int16_t, INT) X(u16, uint16_t, INT)            \
    X(i32, int32_t, INT) X(u32, uint32_t, INT) X(i64, int64_t, INT) X(u64, uint64_t, INT)        \
    X(f32, float, FLT) X(f64, double, FLT) X(f80, long double, FLT)                              \
    X(c32, float _Complex, CPLX) X(c64, double _Complex, CPLX) X(c80, long double _Complex, CPLX)  \
    X(b8, _Bool, LOGI) X(b32, int32_t, LOGI)

/* Pair kernel types: X(kernel type, value type, index type). */
#define UMPI_OP_PAIRS(X)                                                                         \
    X(float_int, float, int) X(double_int, double, int) X(long_int, long, int)                   \
    X(short_int, short, int) X(ldouble_int, long double, int) X(int_int, int, int)               \
    X(float_float, float, float) X(double_double, double, double)

/* The ops of each class, as the MPI 4.1 standard lists them (sec. 6.9.2); E(op, a, b) with two
 * arguments passed through. Logical ops on integers take any integer (MPICH does too). */
#define UMPI_OPS_INT(E, a, b)                                                                    \
    E(MAX, a, b) E(MIN, a, b) E(SUM, a, b) E(PROD, a, b) E(LAND, a, b) E(LOR, a, b)              \
    E(LXOR, a, b) E(BAND, a, b) E(BOR, a, b) E(BXOR, a, b)
#define UMPI_OPS_MLANG(E, a, b)                                                                  \
    E(MAX, a, b) E(MIN, a, b) E(SUM, a, b) E(PROD, a, b) E(BAND, a, b) E(BOR, a, b) E(BXOR, a, b)
#define UMPI_OPS_FLT(E, a, b)  E(MAX, a, b) E(MIN, a, b) E(SUM, a, b) E(PROD, a, b)
#define UMPI_OPS_CPLX(E, a, b) E(SUM, a, b) E(PROD, a, b)
#define UMPI_OPS_LOGI(E, a, b) E(LAND, a, b) E(LOR, a, b) E(LXOR, a, b)
#define UMPI_OPS_BYTE(E, a, b) E(BAND, a, b) E(BOR, a, b) E(BXOR, a, b)
#define UMPI_OPS_PAIR(E, a, b) E(MINLOC, a, b) E(MAXLOC, a, b)
#define UMPI_OPS_PAIRD UMPI_OPS_PAIR

/* x op y, x from `in` (the earlier rank), y from `inout`. */
#define UMPI_OP_EXPR_MAX(x, y)  ((x) > (y) ? (x) : (y))
#define UMPI_OP_EXPR_MIN(x, y)  ((x) < (y) ? (x) : (y))
#define UMPI_OP_EXPR_SUM(x, y)  ((x) + (y))
#define UMPI_OP_EXPR_PROD(x, y) ((x) * (y))
#define UMPI_OP_EXPR_LAND(x, y) ((x) != 0 && (y) != 0)
#define UMPI_OP_EXPR_LOR(x, y)  ((x) != 0 || (y) != 0)
#define UMPI_OP_EXPR_LXOR(x, y) (((x) != 0) != ((y) != 0))
#define UMPI_OP_EXPR_BAND(x, y) ((x) & (y))
#define UMPI_OP_EXPR_BOR(x, y)  ((x) | (y))
#define UMPI_OP_EXPR_BXOR(x, y) ((x) ^ (y))

#endif /* UMPI_OP_ENUM_H */
