/*
 * What the host (src/cuda/kern.c, C) and the GPU kernels (src/cuda/kernels.cu, CUDA C++) agree on:
 * the kernels' names and their one argument each, a plain struct passed by value. Read by C and by
 * C++, so fixed-width types only, no pointers (device addresses are 64-bit integers).
 *
 * Every kernel is `extern "C" __global__ void NAME(struct ARGS a)`:
 *
 *   umpi_red_<OP>_<ktype>   struct umpi_kred_args   inout[i] = in[i] OP inout[i], OP and ktype as
 *                                                   in core/umpi_op_enum.h (MINLOC/MAXLOC: pairs)
 *   umpi_pack_vec<W>        struct umpi_kpack_vec   blocks of a fixed length at a fixed stride, moved
 *                                                   as W-byte words (W = 1, 2, 4, 8, 16)
 *   umpi_pack_gen           struct umpi_kpack_gen   any datatype, from its compiled ops uploaded to
 *                                                   the device (struct umpi_kpack_op)
 */
#ifndef UMPI_CUDA_KERN_ARGS_H
#define UMPI_CUDA_KERN_ARGS_H

#include <stdint.h>

#define UMPI_KRED_SYM(OP, ktype) umpi_red_##OP##_##ktype
#define UMPI_KRED_NAME(OP, ktype) "umpi_red_" #OP "_" #ktype

/* The pack kernels: X(name suffix, word bytes); gen has no fixed word. */
#define UMPI_KPACK_VEC_WIDTHS(X) X(1) X(2) X(4) X(8) X(16)
#define UMPI_KPACK_VEC_SYM(W) umpi_pack_vec##W
#define UMPI_KPACK_VEC_NAME(W) "umpi_pack_vec" #W
#define UMPI_KPACK_GEN_NAME "umpi_pack_gen"

/* Threads per block of every launch; the kernels are compiled for at most this many. */
#define UMPI_KERN_THREADS 256

/* Reductions. Scalars: n elements, naturally laid out (stride and ioff unused). Pairs
 * (MINLOC/MAXLOC): n pairs `stride` bytes apart, the index `ioff` bytes after the value; the
 * natural layout of the C struct or the packed one (no padding) of a derived type. */
struct umpi_kred_args {
    uint64_t in;
    uint64_t inout;
    uint64_t n;
    uint64_t stride;
    uint64_t ioff;
};

/* Fixed-shape pack/unpack: nelem elements of nblk blocks of blen bytes; block b of element e is
 * at typed + e * estride + b * bstride and at packed + (e * nblk + b) * blen. blen, the strides and
 * both addresses are multiples of the kernel's word size. */
struct umpi_kpack_vec {
    uint64_t typed;
    uint64_t packed;
    uint64_t nelem;
    uint64_t nblk;
    uint64_t blen;
    int64_t bstride;
    int64_t estride;
    uint32_t unpack;   /* 0: typed -> packed; 1: packed -> typed */
    uint32_t pad_;
};

/* One compiled op of a datatype (umpi_dt_op_t) as the device reads it, with the prefix sums the
 * kernel needs to find the op of a block without walking the list. */
struct umpi_kpack_op {
    int64_t disp;      /* from the start of the sub-element */
    int64_t len;       /* bytes of a block */
    int64_t count;     /* blocks */
    int64_t stride;    /* bytes between blocks */
    uint64_t bfirst;   /* blocks of the ops before this one */
    uint64_t poff;     /* packed bytes of the ops before this one */
};

/*
 * Any datatype: count elements, each `loop` sub-elements lstride apart (umpi_dtype_t's loop_count:
 * one pass over the ops), nsub = count * loop sub-elements in all. Block b of sub-element s is
 * found in the op table by binary search of bfirst (or directly, when every op is one block of
 * uniform_len bytes: indexed blocks); `lanes` threads (1..32, a power of two) copy one block.
 */
struct umpi_kpack_gen {
    uint64_t typed;
    uint64_t packed;
    uint64_t ops;          /* device address of nops struct umpi_kpack_op */
    uint64_t nops;
    uint64_t nsub;
    uint64_t loop;
    int64_t ext;           /* bytes between elements */
    int64_t lstride;       /* bytes between the sub-elements of an element */
    uint64_t nblocks;      /* blocks of one sub-element */
    uint64_t subsize;      /* packed bytes of one sub-element */
    uint64_t uniform_len;  /* nonzero: op k is block k, of this many bytes */
    uint32_t lanes;
    uint32_t unpack;
};

#endif /* UMPI_CUDA_KERN_ARGS_H */
