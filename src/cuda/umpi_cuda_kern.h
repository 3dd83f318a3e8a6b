/*
 * umpi's GPU kernels: reductions of every predefined op x type and datatype pack/unpack on device
 * memory, launched on a CUDA stream.
 *
 *   build   nvcc compiles src/cuda/kernels.cu into a fatbin (one cubin per architecture of
 *           configure's --with-cuda-arch, plus PTX of the newest for the driver to compile for
 *           later GPUs) that kern_image.c embeds in libmpi as data. Without nvcc there is no image:
 *           umpi_cuda_kernels_built() is 0 and every call below answers UMPI_ERR_NOT_FOUND.
 *   run     the first launch in a CUDA context loads the image there (cuModuleLoadData) and looks
 *           up each kernel once (cuModuleGetFunction); launches are cuLaunchKernel on the
 *           caller's stream, asynchronous like any other work on it.
 *
 * Status: UMPI_OK (launched, or nothing to do), UMPI_ERR_NOT_FOUND when no GPU kernel serves the
 * request (no image, UMPI_CUDA_KERNELS=0, the image failed to load for this GPU, a user-defined
 * op, a type the predefined op is not defined on): the caller moves the data through host memory
 * instead, and says so (umpi_cuda_slow_path). Other codes are failures of the driver, with the
 * cause in umpi_status_last_msg().
 *
 * Buffers are addresses the GPU can use: device or managed memory, or pinned host memory.
 */
#ifndef UMPI_CUDA_KERN_H
#define UMPI_CUDA_KERN_H

#include "core/umpi_op.h"
#include "cuda/umpi_cuda.h"

/* 1 when libmpi carries the kernels (nvcc was found at build time). */
int umpi_cuda_kernels_built(void) UMPI_EXPORT;
/* The architectures in the image, as configure chose them ("sm_75 sm_80 sm_90 compute_90"); ""
 * without an image. */
const char *umpi_cuda_kernels_archs(void) UMPI_EXPORT;
/* 1 when the calls below may launch: an image, CUDA active, UMPI_CUDA_KERNELS not 0, and the image
 * has not failed to load in the current context. */
int umpi_cuda_kernels_available(void);
/* Why they are not ("UMPI_CUDA_KERNELS=0", "umpi was built without GPU kernels (no nvcc)", ...). */
const char *umpi_cuda_kern_why_unavailable(void);

/**
 * inout[i] = in[i] op inout[i] for count elements of dt, on the GPU, queued on stream. Predefined
 * ops on the types umpi_op_check accepts: predefined types, and derived types of one predefined
 * type (contiguous ones in place, others packed into scratch device memory, reduced, unpacked);
 * MPI_REPLACE copies, MPI_NO_OP does nothing. UMPI_ERR_NOT_FOUND for user-defined ops.
 */
umpi_status_t umpi_cuda_kern_reduce(const umpi_op_t *op, umpi_dtype_t *dt, const void *in, void *inout,
                               MPI_Count count, CUstream stream);

/**
 * count elements of the committed type dt at typed, packed to (or unpacked from) packed, on the
 * GPU, queued on stream: one cuMemcpyAsync for contiguous types, otherwise one kernel launch (blocks
 * of one length at one stride: the vector kernel; anything else: the general kernel, which reads
 * the type's compiled blocks from device memory, uploaded at its first use and kept until the type
 * is freed). Unpacking writes only the type's bytes, never its holes.
 */
umpi_status_t umpi_cuda_kern_pack(umpi_dtype_t *dt, MPI_Count count, const void *typed, void *packed, CUstream stream);
umpi_status_t umpi_cuda_kern_unpack(umpi_dtype_t *dt, MPI_Count count, const void *packed, void *typed,
                               CUstream stream);

/**
 * MPI_Reduce_local when CUDA is active (src/core/op.c): 0 when both buffers are host memory (the
 * caller reduces on the CPU); otherwise 1, the reduction done, *err its MPI error code. Device
 * buffers on one GPU are reduced by umpi_cuda_kern_reduce on that GPU; anything else (one host buffer, a
 * user op, no kernel) goes through host copies, counted and logged as a slow path.
 */
int umpi_cuda_kern_reduce_local(const umpi_op_t *op, const void *in, void *inout, MPI_Count count, umpi_dtype_t *dt,
                           int *err);

/* Frees what the kernels keep (uploaded datatypes: kern_pack.c; then modules and retained contexts:
 * umpi_cuda_kern_unload, kern.c); at MPI_Finalize. */
void umpi_cuda_kern_finalize(void);
void umpi_cuda_kern_unload(void);

/* ---- for the unit tests, and between kern.c, kern_pack.c and kern_reduce.c -------------------------------------- */

/* The embedded image and its size (NULL, 0 without one): kern_image.c. */
const void *umpi_cuda_kern_image(size_t *size) UMPI_EXPORT;
/* Tests: use image instead of the embedded one (NULL: no image), or the embedded one again
 * (umpi_cuda_kern_use_builtin_image). */
void umpi_cuda_kern_set_image(const void *image);
void umpi_cuda_kern_use_builtin_image(void);

/* The name of the GPU kernel of (op kind, predefined type), NULL where there is none; every
 * kernel name, i < umpi_cuda_kern_count(). */
const char *umpi_cuda_kern_name(int op_kind, const umpi_dtype_t *dt);
int umpi_cuda_kern_count(void) UMPI_EXPORT;
const char *umpi_cuda_kern_name_at(int i);

/* Launch geometry for `items` independent work items on a GPU of `sms` multiprocessors: blocks of
 * UMPI_KERN_THREADS threads, one item per thread up to a few blocks per multiprocessor (the grid
 * loops over the rest). 0 items: grid 0, nothing to launch. */
void umpi_cuda_kern_geometry(uint64_t items, int sms, unsigned *grid, unsigned *block);

/* What kern.c and kern_pack.c share: the module of the current context, and a launch in it. */
struct umpi_cuda_kmod;
enum umpi_cuda_kid_special { UMPI_CUDA_KID_NONE = -1 };
umpi_status_t umpi_cuda_kmod_current(int device, struct umpi_cuda_kmod **out, unsigned long long *ctx_key);
umpi_status_t umpi_cuda_kern_launch(struct umpi_cuda_kmod *km, int kid, void *args, uint64_t items,
                                    CUstream stream);
/* Makes the primary context of `device` current unless the current context is on it; *saved and
 * *switched say what to restore. */
umpi_status_t umpi_cuda_kern_enter_device(int device, CUcontext *saved, int *switched);
int umpi_cuda_kid_pack_vec(unsigned width);   /* 1, 2, 4, 8, 16 */
/* The kernel id of (op kind, predefined type), or a negative value where there is none. */
int umpi_cuda_kern_kid(int kind, const umpi_dtype_t *dt);
/* One reduction launch: n elements of the kernel's type at in/inout, natural pairs when packed is
 * 0, the pack engine's layout else (kern_reduce.c). */
umpi_status_t umpi_cuda_kern_reduce_run(struct umpi_cuda_kmod *km, int kid, CUdeviceptr in, CUdeviceptr inout,
                                        uint64_t n, int packed, CUstream stream);
/* The status of a reduction the kernels cannot do (why, in the status message): the caller reduces
 * on the host. */
umpi_status_t umpi_cuda_kern_unavailable(const char *why);
int umpi_cuda_kid_pack_gen(void);
umpi_status_t umpi_cuda_kern_fail(const char *what, CUresult r);

/* Counters of the kernels (umpi_cuda_kern_stats, for tests and UMPI_DEBUG=2). */
struct umpi_cuda_kern_stats {
    unsigned long launches;        /* kernels launched */
    unsigned long modules_loaded;  /* cuModuleLoadData successes */
    unsigned long module_failures; /* contexts where the image did not load */
    unsigned long dtype_uploads;   /* datatype block tables copied to a GPU */
    unsigned long dtype_frees;     /* ... and freed (type freed, context changed, finalize) */
    unsigned long reduce_packed;   /* reductions of non-contiguous types through scratch memory */
};
extern struct umpi_cuda_kern_stats umpi_cuda_kern_stats;

#endif /* UMPI_CUDA_KERN_H */
