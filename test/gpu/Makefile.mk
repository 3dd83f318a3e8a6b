# test/gpu: tests that need a GPU (issue 5). Built by `make check` everywhere (no CUDA toolkit needed:
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

# --- issue 5, part kern: umpi's GPU kernels on a GPU (every op x type, pack/unpack) ---
check_PROGRAMS += test/gpu/gpu_kern
test_gpu_gpu_kern_SOURCES = test/gpu/gpu_kern.c test/unit/kern_testdata.h $(UMPI_UNIT_CUDA) $(UMPI_UNIT_KERN) \
	src/coll/op.c src/coll/op_kernels.c $(UMPI_UNIT_DTYPE) $(UMPI_UNIT_ERR) $(UMPI_UNIT_BASE)
test_gpu_gpu_kern_CPPFLAGS = $(UMPI_UNIT_CPPFLAGS)
test_gpu_gpu_kern_LDADD = $(UMPI_UNIT_LDADD) -ldl -lm
if HAVE_CUDA_KERNELS
src/cuda/test_gpu_gpu_kern-kern_image.$(OBJEXT): $(UMPI_KERN_FATBIN)
endif
EXTRA_DIST += test/gpu/gpu_reduce_local.c
# --- issue 5, part bench: bench/ with -d cuda (bench_cuda.sh) and a CUDA runtime program built with mpicc ---
EXTRA_DIST += test/gpu/bench_cuda.sh test/gpu/cuda_app.sh test/gpu/cuda_app.c
