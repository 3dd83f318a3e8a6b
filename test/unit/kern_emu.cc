/*
 * The GPU kernels run on the CPU: the same bodies (src/cuda/kern_body.h) and the same kernel list
 * as src/cuda/kernels.cu, each "thread" run in turn, the last one first (the GPU promises no order:
 * a body that depended on one would show here). The bodies' threads touch disjoint bytes, so this
 * computes what the GPU computes; the unit tests put it behind a fake cuLaunchKernel
 * (test_cuda_kern.c) and compare every kernel with the host kernels and the host pack engine.
 * Built by the host C++ compiler: no CUDA toolkit needed.
 */
#include "cuda/kern_body.h"
#include "kern_emu.h"

#include <string.h>

static_assert(sizeof(umpi_f80) == sizeof(long double), "umpi_f80 has the layout of long double");
static_assert(sizeof(umpi_c32) == sizeof(float _Complex) && sizeof(umpi_c64) == sizeof(double _Complex) &&
                  sizeof(umpi_c80) == sizeof(long double _Complex),
              "the device complex types have the host's layout");

#define UMPI_KERN_SCALAR(OP, ktype, D)                                                            \
    static void emu_##OP##_##ktype(const void *args, uint64_t nth)                               \
    {                                                                                             \
        const umpi_kred_args &a = *(const umpi_kred_args *) args;                                 \
        for (uint64_t t = nth; t-- > 0;)                                                          \
            umpi_kred_scalar<D, umpi_kf_##OP>(a, t, nth);                                         \
    }

#define UMPI_KERN_PAIR(OP, ktype, V, I, MAX, CV, CI)                                              \
    static_assert(sizeof(V) == sizeof(CV) && sizeof(I) == sizeof(CI), "pair " #ktype);            \
    static void emu_##OP##_##ktype(const void *args, uint64_t nth)                               \
    {                                                                                             \
        const umpi_kred_args &a = *(const umpi_kred_args *) args;                                 \
        for (uint64_t t = nth; t-- > 0;)                                                          \
            umpi_kred_pair<V, I, MAX>(a, t, nth);                                                 \
    }

UMPI_KERN_REDUCTIONS

#undef UMPI_KERN_SCALAR
#undef UMPI_KERN_PAIR

#define EMU_PACK_VEC(W)                                                                           \
    static void emu_pack_vec##W(const void *args, uint64_t nth)                                  \
    {                                                                                             \
        const umpi_kpack_vec &a = *(const umpi_kpack_vec *) args;                                 \
        for (uint64_t t = nth; t-- > 0;)                                                          \
            umpi_kpack_vec_body<W>(a, t, nth);                                                    \
    }
UMPI_KPACK_VEC_WIDTHS(EMU_PACK_VEC)

static void emu_pack_gen(const void *args, uint64_t nth)
{
    const umpi_kpack_gen &a = *(const umpi_kpack_gen *) args;
    for (uint64_t t = nth; t-- > 0;)
        umpi_kpack_gen_body(a, t, nth);
}

/* The table: the same list again, now as (name, function). */
#define UMPI_KERN_SCALAR(OP, ktype, D) {UMPI_KRED_NAME(OP, ktype), emu_##OP##_##ktype, sizeof(umpi_kred_args)},
#define UMPI_KERN_PAIR(OP, ktype, V, I, MAX, CV, CI) \
    {UMPI_KRED_NAME(OP, ktype), emu_##OP##_##ktype, sizeof(umpi_kred_args)},
#define EMU_PACK_VEC_ENTRY(W) {UMPI_KPACK_VEC_NAME(W), emu_pack_vec##W, sizeof(umpi_kpack_vec)},
static const struct kern_emu_entry emu_table[] = {
    UMPI_KERN_REDUCTIONS
    UMPI_KPACK_VEC_WIDTHS(EMU_PACK_VEC_ENTRY)
    {UMPI_KPACK_GEN_NAME, emu_pack_gen, sizeof(umpi_kpack_gen)},
};

extern "C" int kern_emu_count(void)
{
    return (int) (sizeof(emu_table) / sizeof(emu_table[0]));
}

extern "C" const struct kern_emu_entry *kern_emu_at(int i)
{
    return i >= 0 && i < kern_emu_count() ? &emu_table[i] : NULL;
}

extern "C" const struct kern_emu_entry *kern_emu_find(const char *name)
{
    for (int i = 0; i < kern_emu_count(); i++)
        if (strcmp(emu_table[i].name, name) == 0)
            return &emu_table[i];
    return NULL;
}

/* The software long double, one operation at a time, for the tests against the x87. */
extern "C" void kern_emu_f80(int op, const void *a, const void *b, void *r)
{
    umpi_f80 x = umpi_kmem<umpi_f80>::ld((const char *) a), y = umpi_kmem<umpi_f80>::ld((const char *) b);
    switch (op) {
    case KERN_EMU_ADD: umpi_kmem<umpi_f80>::st((char *) r, umpi_f80_add(x, y)); break;
    case KERN_EMU_SUB: umpi_kmem<umpi_f80>::st((char *) r, umpi_f80_sub(x, y)); break;
    case KERN_EMU_MUL: umpi_kmem<umpi_f80>::st((char *) r, umpi_f80_mul(x, y)); break;
    default: *(int *) r = umpi_f80_cmp(x, y); break;
    }
}
