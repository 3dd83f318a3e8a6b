/*
 * The arithmetic of the predefined reduction operations: one kernel per (op, C type), every one
 * generated from the enumerations of umpi_op_enum.h (which the GPU kernels are generated from
 * too), and a table from (op, datatype handle) to kernel.
 *
 * Kernels on scalar types run blocks of UMPI__VB elements in an inner loop of constant trip count
 * (gcc unrolls it and vectorizes it as straight-line code even at -O2, whose cost model refuses
 * loops of unknown length), then the tail one by one. MINLOC/MAXLOC kernels read the pair at a
 * given stride and index offset, so that the packed form of a padded pair type (a derived type
 * through the pack engine) has its kernel too.
 */
#include "core/umpi_op.h"
#include "core/umpi_op_enum.h"

#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

_Static_assert((char) -1 < 0, "MPI_CHAR reduces as a signed 8-bit integer");
_Static_assert(sizeof(long) == 8 && sizeof(MPI_Aint) == 8 && sizeof(MPI_Offset) == 8 &&
               sizeof(MPI_Count) == 8, "64-bit integer types share the i64 kernels");

/* ---- kernels ------------------------------------------------------------------------------------ */

#define UMPI__VB 16   /* elements per unrolled block: 64 B of float, 128 B of double */

/* On x86-64 each scalar kernel also comes built for AVX2, chosen at load time (an ifunc) where
 * the CPU has it: 256 floats summed took 583 instructions with the baseline's SSE2 (callgrind),
 * which at 1 KiB was a sixth of a two-process MPI_Reduce. */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define UMPI__CLONES __attribute__((target_clones("avx2", "default")))
#endif
#endif
#ifndef UMPI__CLONES
#define UMPI__CLONES
#endif

#define UMPI__SCALAR_KERNEL(OP, tag, T)                                                          \
    UMPI__CLONES static void umpi__k_##OP##_##tag(const void *restrict vin, void *restrict vio, size_t n) \
    {                                                                                            \
        const T *restrict in = vin;                                                              \
        T *restrict io = vio;                                                                    \
        size_t i = 0;                                                                            \
        for (; i + UMPI__VB <= n; i += UMPI__VB)                                                 \
            for (size_t j = 0; j < UMPI__VB; j++)                                                \
                io[i + j] = (T) UMPI_OP_EXPR_##OP(in[i + j], io[i + j]);                         \
        for (; i < n; i++)                                                                       \
            io[i] = (T) UMPI_OP_EXPR_##OP(in[i], io[i]);                                         \
    }
#define UMPI__SCALAR_KERNELS(tag, T, CLASS) UMPI_OPS_##CLASS(UMPI__SCALAR_KERNEL, tag, T)
UMPI_OP_CTYPES(UMPI__SCALAR_KERNELS)

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
    }                                                                                            \
    }                                                                                            \
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
UMPI_OP_PAIRS(UMPI__PAIR_KERNELS)

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
#define UMPI__ROW(h, CLASS, tag) UMPI_OPS_##CLASS(UMPI__ENTRY, h, tag)
static umpi_op_kernel_t *const umpi__kernels[UMPI_OP_NBUILTIN][UMPI__NSLOTS] = {
    UMPI_OP_TYPES(UMPI__ROW)
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
static umpi_op_kernel_t *const umpi__packed_pair[2][5] = { UMPI_OP_TYPES(UMPI__PENTRY) };

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
