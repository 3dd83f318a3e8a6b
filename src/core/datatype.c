/*
 * Predefined datatypes, and the lookup of every datatype handle.
 *
 * Builtin handles (kind 1) carry a unique number in their low byte, so the table is indexed by
 * it and a lookup is one load and a compare. MPICH encodes the pair types MPI_FLOAT_INT,
 * MPI_DOUBLE_INT, ... as *direct* handles 0..4 (they are not contiguous in MPICH's model), so
 * they live in a second small table; derived types take direct indices from
 * UMPI__DT_FIRST_DERIVED on.
 *
 * Everything is initialised statically: the tables are ready before MPI_Init and cost nothing
 * at start-up.
 */
#include "core/umpi_obj.h"

#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <wchar.h>

/* Builtin datatype handles: bits 15..8 hold the size in bytes (umpi_obj.h). */
#define UMPI__DT_ENC_SIZE(h) ((((uint32_t) (h)) >> 8) & 0xff)
#define UMPI__DT_SLOT(h)     (((uint32_t) (h)) & 0xff)

/*
 * X(handle, C type of one element, basic elements per element).
 * Fortran types map to the C types that gfortran uses for them.
 */
#define UMPI__BASIC_TYPES(X)                                                                      \
    X(MPI_CHAR, char, 1)                                                                          \
    X(MPI_SIGNED_CHAR, signed char, 1)                                                            \
    X(MPI_UNSIGNED_CHAR, unsigned char, 1)                                                        \
    X(MPI_BYTE, unsigned char, 1)                                                                 \
    X(MPI_WCHAR, wchar_t, 1)                                                                      \
    X(MPI_SHORT, short, 1)                                                                        \
    X(MPI_UNSIGNED_SHORT, unsigned short, 1)                                                      \
    X(MPI_INT, int, 1)                                                                            \
    X(MPI_UNSIGNED, unsigned, 1)                                                                  \
    X(MPI_LONG, long, 1)                                                                          \
    X(MPI_UNSIGNED_LONG, unsigned long, 1)                                                        \
    X(MPI_FLOAT, float, 1)                                                                        \
    X(MPI_DOUBLE, double, 1)                                                                      \
    X(MPI_LONG_DOUBLE, long double, 1)                                                            \
    X(MPI_LONG_LONG_INT, long long, 1)                                                            \
    X(MPI_UNSIGNED_LONG_LONG, unsigned long long, 1)                                              \
    X(MPI_PACKED, unsigned char, 1)                                                               \
    X(MPI_2INT, int[2], 2)                                                                        \
    X(MPI_INT8_T, int8_t, 1)                                                                      \
    X(MPI_INT16_T, int16_t, 1)                                                                    \
    X(MPI_INT32_T, int32_t, 1)                                                                    \
    X(MPI_INT64_T, int64_t, 1)                                                                    \
    X(MPI_UINT8_T, uint8_t, 1)                                                                    \
    X(MPI_UINT16_T, uint16_t, 1)                                                                  \
    X(MPI_UINT32_T, uint32_t, 1)                                                                  \
    X(MPI_UINT64_T, uint64_t, 1)                                                                  \
    X(MPI_C_BOOL, _Bool, 1)                                                                       \
    X(MPI_C_FLOAT_COMPLEX, float _Complex, 1)                                                     \
    X(MPI_C_DOUBLE_COMPLEX, double _Complex, 1)                                                   \
    X(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex, 1)                                         \
    X(MPI_AINT, MPI_Aint, 1)                                                                      \
    X(MPI_OFFSET, MPI_Offset, 1)                                                                  \
    X(MPI_COUNT, MPI_Count, 1)                                                                    \
    X(MPI_CXX_BOOL, bool, 1)                                                                      \
    X(MPI_CXX_FLOAT_COMPLEX, float _Complex, 1)                                                   \
    X(MPI_CXX_DOUBLE_COMPLEX, double _Complex, 1)                                                 \
    X(MPI_CXX_LONG_DOUBLE_COMPLEX, long double _Complex, 1)                                       \
    X(MPI_CHARACTER, char, 1)                                                                     \
    X(MPI_LOGICAL, int, 1)                                                                        \
    X(MPI_INTEGER, int, 1)                                                                        \
    X(MPI_REAL, float, 1)                                                                         \
    X(MPI_DOUBLE_PRECISION, double, 1)                                                            \
    X(MPI_COMPLEX, float _Complex, 1)                                                             \
    X(MPI_DOUBLE_COMPLEX, double _Complex, 1)                                                     \
    X(MPI_2INTEGER, int[2], 2)                                                                    \
    X(MPI_2REAL, float[2], 2)                                                                     \
    X(MPI_2DOUBLE_PRECISION, double[2], 2)                                                        \
    X(MPI_INTEGER1, int8_t, 1)                                                                    \
    X(MPI_INTEGER2, int16_t, 1)                                                                   \
    X(MPI_INTEGER4, int32_t, 1)                                                                   \
    X(MPI_INTEGER8, int64_t, 1)                                                                   \
    X(MPI_REAL4, float, 1)                                                                        \
    X(MPI_REAL8, double, 1)                                                                       \
    X(MPI_REAL16, long double, 1)                                                                 \
    X(MPI_COMPLEX8, float _Complex, 1)                                                            \
    X(MPI_COMPLEX16, double _Complex, 1)                                                          \
    X(MPI_COMPLEX32, long double _Complex, 1)

#define UMPI__BASIC(h, ctype, nbasic)                                                             \
    [UMPI__DT_SLOT(h)] = {                                                                        \
        .handle = (h), .name = #h, .size = sizeof(ctype), .lb = 0, .extent = sizeof(ctype),      \
        .true_lb = 0, .true_extent = sizeof(ctype), .contig = 1, .n_basic = (nbasic),            \
        .nblocks = 1, .blocks = { { 0, sizeof(ctype) } }, .builtin = 1, .committed = 1,          \
        .align = _Alignof(ctype), .combiner = MPI_COMBINER_NAMED,                                 \
    },

/* The handle's encoded size is what MPICH-built binaries believe: it must match the C type. */
#define UMPI__BASIC_CHECK(h, ctype, nbasic)                                                       \
    _Static_assert(UMPI__DT_ENC_SIZE(h) == sizeof(ctype), #h ": handle size != sizeof(" #ctype ")"); \
    _Static_assert(UMPI_HANDLE_KIND(h) == UMPI_KIND_BUILTIN && UMPI_HANDLE_OBJ(h) == UMPI_OBJ_DATATYPE, \
                   #h ": not a builtin datatype handle");
UMPI__BASIC_TYPES(UMPI__BASIC_CHECK)

umpi_dtype_t umpi_dtype_builtin[256] = {
    UMPI__BASIC_TYPES(UMPI__BASIC)
#ifdef MPIX_C_FLOAT16
    UMPI__BASIC(MPIX_C_FLOAT16, uint16_t, 1)
#endif
};

/* Pair types: struct { T value; int index; } as the C compiler lays it out. */
struct umpi__float_int { float v; int i; };
struct umpi__double_int { double v; int i; };
struct umpi__long_int { long v; int i; };
struct umpi__short_int { short v; int i; };
struct umpi__long_double_int { long double v; int i; };

/* Contiguous when the int follows the value with no gap and there is no tail padding. */
#define UMPI__PAIR_CONTIG(S, V) \
    (offsetof(S, i) == sizeof(V) && sizeof(S) == sizeof(V) + sizeof(int))
#define UMPI__PAIR(h, S, V)                                                                       \
    [UMPI_HANDLE_INDEX(h)] = {                                                                    \
        .handle = (h), .name = #h, .size = sizeof(V) + sizeof(int), .lb = 0,                     \
        .extent = sizeof(S), .true_lb = 0, .true_extent = offsetof(S, i) + sizeof(int),          \
        .contig = UMPI__PAIR_CONTIG(S, V), .n_basic = 2,                                         \
        .nblocks = UMPI__PAIR_CONTIG(S, V) ? 1 : 2,                                              \
        .blocks = { { 0, UMPI__PAIR_CONTIG(S, V) ? sizeof(S) : sizeof(V) },                      \
                    { offsetof(S, i), UMPI__PAIR_CONTIG(S, V) ? 0 : sizeof(int) } },              \
        .builtin = 1, .committed = 1, .align = _Alignof(S), .combiner = MPI_COMBINER_NAMED,       \
    },

#define UMPI__DT_FIRST_DERIVED 5
static umpi_dtype_t umpi__dt_pair[UMPI__DT_FIRST_DERIVED] = {
    UMPI__PAIR(MPI_FLOAT_INT, struct umpi__float_int, float)
    UMPI__PAIR(MPI_DOUBLE_INT, struct umpi__double_int, double)
    UMPI__PAIR(MPI_LONG_INT, struct umpi__long_int, long)
    UMPI__PAIR(MPI_SHORT_INT, struct umpi__short_int, short)
    UMPI__PAIR(MPI_LONG_DOUBLE_INT, struct umpi__long_double_int, long double)
};

/* Derived datatypes (datatype_type.c): direct handles from UMPI__DT_FIRST_DERIVED on. */
struct umpi_handle_table umpi_dtype_table = {.lock = PTHREAD_MUTEX_INITIALIZER,
                                             .first_dynamic = UMPI__DT_FIRST_DERIVED};

umpi_dtype_t *umpi_dtype_get_slow(MPI_Datatype h)
{
    if (umpi_unlikely(UMPI_HANDLE_OBJ(h) != UMPI_OBJ_DATATYPE))
        return NULL;
    switch (UMPI_HANDLE_KIND(h)) {
    case UMPI_KIND_BUILTIN: {
        umpi_dtype_t *dt = &umpi_dtype_builtin[UMPI__DT_SLOT(h)];
        /* Empty slots have handle 0; a handle with a wrong size field does not match either. */
        return umpi_likely(dt->handle == h) ? dt : NULL;
    }
    case UMPI_KIND_DIRECT:
        if (UMPI_HANDLE_INDEX(h) < UMPI__DT_FIRST_DERIVED)
            return &umpi__dt_pair[UMPI_HANDLE_INDEX(h)];
        return umpi_ht_get(&umpi_dtype_table, UMPI_HANDLE_INDEX(h));
    default:
        return NULL;
    }
}
