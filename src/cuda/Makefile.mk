# src/cuda: services for device memory (the protocols that use them live with their callers). No
# link-time dependency on CUDA: the driver is opened with dlopen (libmpi already links -ldl), so
# this builds the same with and without a toolkit.
libmpi_la_SOURCES += \
	src/cuda/umpi_cuda.h \
	src/cuda/umpi_cuda_drv.h \
	src/cuda/loader.c \
	src/cuda/start.c \
	src/cuda/stats.c \
	src/cuda/classify.c \
	src/cuda/umpi_cuda_ipc.h \
	src/cuda/ipc_cache.c \
	src/cuda/umpi_cuda_pipe.h \
	src/cuda/pipeline.c \
	src/cuda/umpi_cuda_bounce.h \
	src/cuda/bounce.c \
	src/cuda/query.c \
	src/cuda/umpi_cuda_copy.h \
	src/cuda/copy.c

# MPIX_Query_cuda_support is written by hand (not from the MPI standard's list), so is its page.
dist_man3_MANS = man/man3/MPIX_Query_cuda_support.3

# --- GPU kernels (reductions, pack/unpack) ---
# kernels.cu (bodies in kern_body.h, generated from src/core/umpi_op_enum.h) -> nvcc -> a fatbin
# (configure's architectures) that kern_image.c embeds with .incbin; without nvcc, no image.
libmpi_la_SOURCES += \
	src/cuda/umpi_cuda_kern.h \
	src/cuda/kern_args.h \
	src/cuda/kern.c \
	src/cuda/kern_reduce.c \
	src/cuda/kern_pack.c \
	src/cuda/kern_local.c \
	src/cuda/kern_image.c
EXTRA_DIST += src/cuda/kernels.cu src/cuda/kern_body.h src/cuda/kern_f80.h
UMPI_KERN_FATBIN = src/cuda/umpi_kernels.fatbin
UMPI_KERN_DEPS = $(srcdir)/src/cuda/kernels.cu $(srcdir)/src/cuda/kern_body.h $(srcdir)/src/cuda/kern_f80.h \
	$(srcdir)/src/cuda/kern_args.h \
	$(srcdir)/src/core/umpi_op_enum.h
if HAVE_CUDA_KERNELS
BUILT_SOURCES += $(UMPI_KERN_FATBIN)
CLEANFILES += $(UMPI_KERN_FATBIN)
# --fmad=false: no fused multiply-adds, so that results match the host's bit for bit
$(UMPI_KERN_FATBIN): $(UMPI_KERN_DEPS)
	@$(MKDIR_P) src/cuda
	$(AM_V_GEN)$(NVCC) --fatbin $(NVCC_FLAGS) $(NVCC_ARCH_FLAGS) -O3 --fmad=false -std=c++14 \
		-I$(srcdir)/src -o $@ $(srcdir)/src/cuda/kernels.cu
# objects that .incbin the image (gcc's dependency tracking does not see it)
UMPI_KERN_IMAGE_OBJS = src/cuda/libmpi_la-kern_image.lo
$(UMPI_KERN_IMAGE_OBJS): $(UMPI_KERN_FATBIN)
endif

# --- NCCL loaded with dlopen (no build-time dependency) ---
libmpi_la_SOURCES += \
	src/cuda/umpi_cuda_nccl.h \
	src/cuda/umpi_nccl_api.h \
	src/cuda/nccl.c
