/*
 * umpi's GPU kernels: every predefined reduction (op x type) of core/umpi_op_enum.h and the
 * datatype pack/unpack kernels. Built by nvcc into a fatbin (src/cuda/Makefile.mk) that is embedded
 * in libmpi (kern_image.c) and loaded at run time with cuModuleLoadData (kern.c); nothing here is
 * linked against the CUDA runtime.
 *
 * Each kernel is a thin wrapper: its thread number and the grid's size go to the body in
 * kern_body.h, which the unit tests also run on the CPU (test/unit/kern_emu.cc).
 */
#include "cuda/kern_body.h"

#define UMPI__TID ((uint64_t) blockIdx.x * blockDim.x + threadIdx.x)
#define UMPI__NTH ((uint64_t) gridDim.x * blockDim.x)

#define UMPI_KERN_SCALAR(OP, ktype, D)                                                            \
    extern "C" __global__ void __launch_bounds__(UMPI_KERN_THREADS)                               \
        UMPI_KRED_SYM(OP, ktype)(struct umpi_kred_args a)                                         \
    {                                                                                             \
        umpi_kred_scalar<D, umpi_kf_##OP>(a, UMPI__TID, UMPI__NTH);                               \
    }

#define UMPI_KERN_PAIR(OP, ktype, V, I, MAX, CV, CI)                                              \
    extern "C" __global__ void __launch_bounds__(UMPI_KERN_THREADS)                               \
        UMPI_KRED_SYM(OP, ktype)(struct umpi_kred_args a)                                         \
    {                                                                                             \
        umpi_kred_pair<V, I, MAX>(a, UMPI__TID, UMPI__NTH);                                       \
    }

UMPI_KERN_REDUCTIONS

#define UMPI__PACK_VEC(W)                                                                         \
    extern "C" __global__ void __launch_bounds__(UMPI_KERN_THREADS)                               \
        UMPI_KPACK_VEC_SYM(W)(struct umpi_kpack_vec a)                                            \
    {                                                                                             \
        umpi_kpack_vec_body<W>(a, UMPI__TID, UMPI__NTH);                                          \
    }
UMPI_KPACK_VEC_WIDTHS(UMPI__PACK_VEC)

extern "C" __global__ void __launch_bounds__(UMPI_KERN_THREADS) umpi_pack_gen(struct umpi_kpack_gen a)
{
    umpi_kpack_gen_body(a, UMPI__TID, UMPI__NTH);
}
