# test/gpu: tests that need a GPU. Built by `make check` everywhere (no CUDA toolkit needed:
# they call the driver through umpi's own table); run by test/runtests' gpu suite only where
# `umpi_info --gpu` finds a GPU, reported SKIP elsewhere. `make check-gpu` runs that suite alone.
check_PROGRAMS += test/gpu/gpu_classify
# (with UCX's address-space events, as under MPI_Init: src/netmod/ucx/vm_events.c)
test_gpu_gpu_classify_SOURCES = test/gpu/gpu_classify.c src/netmod/ucx/vm_events.c src/netmod/ucx/status.c $(UMPI_UNIT_CUDA) $(UMPI_UNIT_BASE)
test_gpu_gpu_classify_CPPFLAGS = $(UMPI_UNIT_CPPFLAGS) $(UCX_CFLAGS)
test_gpu_gpu_classify_LDADD = $(UMPI_UNIT_LDADD) -ldl $(UCX_LIBS)

# CUDA IPC and the staged pipeline between two processes (fork + socketpair; no MPI needed)
check_PROGRAMS += test/gpu/gpu_ipc_pipe
test_gpu_gpu_ipc_pipe_SOURCES = test/gpu/gpu_ipc_pipe.c $(UMPI_UNIT_CUDA) $(UMPI_UNIT_BASE)
test_gpu_gpu_ipc_pipe_CPPFLAGS = $(UMPI_UNIT_CPPFLAGS)
test_gpu_gpu_ipc_pipe_LDADD = $(UMPI_UNIT_LDADD) -ldl

EXTRA_DIST += test/gpu/testlist test/gpu/README.md

check-gpu: all $(check_PROGRAMS)
	@test -x "$(prefix)/bin/mpirun" || { echo "make check-gpu needs the installed tree: run make install first"; exit 1; }
	abs_top_builddir="$(abs_top_builddir)" abs_top_srcdir="$(abs_top_srcdir)" \
	$(PYTHON3) $(top_srcdir)/test/runtests --prefix "$(prefix)" --builddir "$(abs_top_builddir)" --suite gpu $(RUNTESTS_FLAGS)
.PHONY: check-gpu

# --- umpi's GPU kernels on a GPU (every op x type, pack/unpack) ---
check_PROGRAMS += test/gpu/gpu_kern
test_gpu_gpu_kern_SOURCES = test/gpu/gpu_kern.c test/unit/kern_testdata.h $(UMPI_UNIT_CUDA) $(UMPI_UNIT_KERN) \
	src/core/op.c src/core/op_kernels.c $(UMPI_UNIT_DTYPE) $(UMPI_UNIT_ERR) $(UMPI_UNIT_BASE)
test_gpu_gpu_kern_CPPFLAGS = $(UMPI_UNIT_CPPFLAGS)
test_gpu_gpu_kern_LDADD = $(UMPI_UNIT_LDADD) -ldl -lm
if HAVE_CUDA_KERNELS
src/cuda/test_gpu_gpu_kern-kern_image.$(OBJEXT): $(UMPI_KERN_FATBIN)
endif
EXTRA_DIST += test/gpu/gpu_reduce_local.c
# --- bench/ with -d cuda (bench_cuda.sh) and a CUDA runtime program built with mpicc ---
EXTRA_DIST += test/gpu/bench_cuda.sh test/gpu/cuda_app.sh test/gpu/cuda_app.c
# --- the GPU bundle: one folder with which a lent GPU machine runs the whole GPU check in one
# command (test/gpu/README.md, "The GPU bundle"): `make install && make gpu-bundle`, then on the
# GPU machine gpu-bundle/run-gpu-check.sh. GPU_BUNDLE_ARGS go to bundle.sh (--tar FILE, --osu MODE).
GPU_BUNDLE = $(abs_top_builddir)/gpu-bundle
GPU_BUNDLE_ARGS =
gpu-bundle: all
	@test -x "$(prefix)/bin/mpirun" || { echo "make gpu-bundle needs the installed tree: run make install first"; exit 1; }
	$(top_srcdir)/test/gpu/bundle.sh --prefix "$(prefix)" --builddir "$(abs_top_builddir)" --out "$(GPU_BUNDLE)" $(GPU_BUNDLE_ARGS)
.PHONY: gpu-bundle
EXTRA_DIST += test/gpu/bundle.sh test/gpu/run-gpu-check.sh test/gpu/osu_win_shim.c
