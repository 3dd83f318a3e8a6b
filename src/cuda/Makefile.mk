# src/cuda: GPU buffers (issue 5). No link-time dependency on CUDA: the driver is opened with
# dlopen (libmpi already links -ldl), so this builds the same with and without a toolkit.
libmpi_la_SOURCES += \
	src/cuda/umpi_cuda.h \
	src/cuda/umpi_cuda_drv.h \
	src/cuda/loader.c \
	src/cuda/classify.c \
	src/cuda/umpi_cuda_ipc.h \
	src/cuda/ipc_cache.c \
	src/cuda/umpi_cuda_pipe.h \
	src/cuda/pipeline.c \
	src/cuda/query.c \
	src/cuda/umpi_cuda_copy.h \
	src/cuda/copy.c \
	src/cuda/umpi_cuda_p2p.h \
	src/cuda/umpi_cuda_p2p_wire.h \
	src/cuda/p2p.c \
	src/cuda/p2p_probe.c

# MPIX_Query_cuda_support is written by hand (not from the MPI standard's list), so is its page.
dist_man3_MANS = man/man3/MPIX_Query_cuda_support.3
