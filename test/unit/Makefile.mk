# test/unit: C unit tests of src/core internals, built by `make check` and run by test/runtests
# from test/unit/testlist. Each test links the core sources it exercises directly (not libmpi),
# plus stubs.c for what lives in other layers, so it needs no UCX, PMIx, launcher or MPI_Init.

UMPI_UNIT_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/test/unit
UMPI_UNIT_LDADD = -lpthread
# Every test needs these: handles, logging (umpi_die), knobs (umpi_config), the stubs.
UMPI_UNIT_BASE = src/core/handle.c src/core/log.c src/core/die.c src/core/knobs.c test/unit/stubs.c test/unit/unit.h
UMPI_UNIT_ERR = src/core/err.c src/core/errhandler.c

check_PROGRAMS += test/unit/test_handle test/unit/test_err test/unit/test_knobs \
	test/unit/test_datatype test/unit/test_env test/unit/test_dtype_engine

test_unit_test_handle_SOURCES = test/unit/test_handle.c $(UMPI_UNIT_BASE)
test_unit_test_handle_CPPFLAGS = $(UMPI_UNIT_CPPFLAGS)
test_unit_test_handle_LDADD = $(UMPI_UNIT_LDADD)

test_unit_test_err_SOURCES = test/unit/test_err.c src/core/attr.c src/core/attr_list.c $(UMPI_UNIT_ERR) $(UMPI_UNIT_BASE)
test_unit_test_err_CPPFLAGS = $(UMPI_UNIT_CPPFLAGS)
test_unit_test_err_LDADD = $(UMPI_UNIT_LDADD)

# test_knobs.c #includes knobs.c to reach its parsers, so knobs.c is not listed again.
test_unit_test_knobs_SOURCES = test/unit/test_knobs.c src/core/handle.c src/core/log.c src/core/die.c \
	test/unit/stubs.c test/unit/unit.h
test_unit_test_knobs_CPPFLAGS = $(UMPI_UNIT_CPPFLAGS)
test_unit_test_knobs_LDADD = $(UMPI_UNIT_LDADD)

UMPI_UNIT_DTYPE = src/core/datatype.c src/core/datatype_type.c src/core/datatype_engine.c
test_unit_test_datatype_SOURCES = test/unit/test_datatype.c $(UMPI_UNIT_DTYPE) $(UMPI_UNIT_BASE)
test_unit_test_datatype_CPPFLAGS = $(UMPI_UNIT_CPPFLAGS)
test_unit_test_datatype_LDADD = $(UMPI_UNIT_LDADD)

test_unit_test_dtype_engine_SOURCES = test/unit/test_dtype_engine.c $(UMPI_UNIT_DTYPE) $(UMPI_UNIT_BASE)
test_unit_test_dtype_engine_CPPFLAGS = $(UMPI_UNIT_CPPFLAGS)
test_unit_test_dtype_engine_LDADD = $(UMPI_UNIT_LDADD)

test_unit_test_env_SOURCES = test/unit/test_env.c src/api/env.c src/core/info.c $(UMPI_UNIT_ERR) $(UMPI_UNIT_BASE)
test_unit_test_env_CPPFLAGS = $(UMPI_UNIT_CPPFLAGS)
test_unit_test_env_LDADD = $(UMPI_UNIT_LDADD)

# info lists and objects
check_PROGRAMS += test/unit/test_info
test_unit_test_info_SOURCES = test/unit/test_info.c src/core/info.c $(UMPI_UNIT_ERR) $(UMPI_UNIT_BASE)
test_unit_test_info_CPPFLAGS = $(UMPI_UNIT_CPPFLAGS)
test_unit_test_info_LDADD = $(UMPI_UNIT_LDADD)

# attribute lists
check_PROGRAMS += test/unit/test_attr
test_unit_test_attr_SOURCES = test/unit/test_attr.c src/core/attr_list.c src/core/abi_symbols.c \
	$(UMPI_UNIT_ERR) $(UMPI_UNIT_BASE)
test_unit_test_attr_CPPFLAGS = $(UMPI_UNIT_CPPFLAGS)
test_unit_test_attr_LDADD = $(UMPI_UNIT_LDADD)

EXTRA_DIST += test/unit/testlist

# The UCX tag layout and the MPI_Status count encoding: header-only, needs UCX's headers.
check_PROGRAMS += test/unit/test_tags
test_unit_test_tags_SOURCES = test/unit/test_tags.c
test_unit_test_tags_CPPFLAGS = $(UMPI_UNIT_CPPFLAGS) $(UCX_CFLAGS)

# Context-id bitmaps of communicators (pure logic).
check_PROGRAMS += test/unit/test_context
test_unit_test_context_SOURCES = test/unit/test_context.c src/core/context.c
test_unit_test_context_CPPFLAGS = $(UMPI_UNIT_CPPFLAGS)

# reduction operations: kernels, checks and apply
check_PROGRAMS += test/unit/test_op
test_unit_test_op_SOURCES = test/unit/test_op.c src/core/op.c src/core/op_kernels.c $(UMPI_UNIT_DTYPE) \
	$(UMPI_UNIT_ERR) $(UMPI_UNIT_BASE)
test_unit_test_op_CPPFLAGS = $(UMPI_UNIT_CPPFLAGS)
test_unit_test_op_LDADD = $(UMPI_UNIT_LDADD)

# src/cuda without a GPU: the loader and the classification caches against a fake driver
check_PROGRAMS += test/unit/test_cuda
UMPI_UNIT_CUDA = src/cuda/loader.c src/cuda/start.c src/cuda/stats.c src/cuda/classify.c src/cuda/ipc_cache.c src/cuda/pipeline.c src/cuda/bounce.c
test_unit_test_cuda_SOURCES = test/unit/test_cuda.c $(UMPI_UNIT_CUDA) src/cuda/query.c \
	$(UMPI_UNIT_BASE)
test_unit_test_cuda_CPPFLAGS = $(UMPI_UNIT_CPPFLAGS)
test_unit_test_cuda_LDADD = $(UMPI_UNIT_LDADD) -ldl

# the CUDA IPC caches and the staged-transfer scheduler against fake drivers and networks
check_PROGRAMS += test/unit/test_cuda_ipc test/unit/test_cuda_pipe
test_unit_test_cuda_ipc_SOURCES = test/unit/test_cuda_ipc.c test/unit/fake_cuda.h $(UMPI_UNIT_CUDA) $(UMPI_UNIT_BASE)
test_unit_test_cuda_ipc_CPPFLAGS = $(UMPI_UNIT_CPPFLAGS)
test_unit_test_cuda_ipc_LDADD = $(UMPI_UNIT_LDADD) -ldl
test_unit_test_cuda_pipe_SOURCES = test/unit/test_cuda_pipe.c test/unit/fake_cuda.h $(UMPI_UNIT_CUDA) $(UMPI_UNIT_BASE)
test_unit_test_cuda_pipe_CPPFLAGS = $(UMPI_UNIT_CPPFLAGS)
test_unit_test_cuda_pipe_LDADD = $(UMPI_UNIT_LDADD) -ldl

# --- mpirun's binding plan on synthetic hwloc topologies, and its child side ---
check_PROGRAMS += test/unit/test_bind
test_unit_test_bind_SOURCES = test/unit/test_bind.c tools/mpirun/bind.c tools/mpirun/mpirun.h
test_unit_test_bind_CPPFLAGS = $(UMPI_UNIT_CPPFLAGS) -I$(top_srcdir)/tools/mpirun $(HWLOC_CFLAGS)
test_unit_test_bind_LDADD = $(HWLOC_LIBS)
# the PMI-2 client: mapping parser, value encoding, and the client against fake servers and, where
# installed, mpiexec.hydra
check_PROGRAMS += test/unit/test_pmi2
test_unit_test_pmi2_SOURCES = test/unit/test_pmi2.c src/pmi/pmi2.c src/pmi/pmi2_format.c $(UMPI_UNIT_BASE)
test_unit_test_pmi2_CPPFLAGS = $(UMPI_UNIT_CPPFLAGS)
test_unit_test_pmi2_LDADD = $(UMPI_UNIT_LDADD)
# mpirun's host lists and mapping (tools/mpirun/hosts.c): plain C, no MPI
check_PROGRAMS += test/unit/test_mpirun_hosts
test_unit_test_mpirun_hosts_SOURCES = test/unit/test_mpirun_hosts.c tools/mpirun/hosts.c test/unit/unit.h
test_unit_test_mpirun_hosts_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/test/unit -I$(top_srcdir)/tools/mpirun
# ... and the launch tree's messages (tools/mpirun/wire.c)
check_PROGRAMS += test/unit/test_mpirun_wire
test_unit_test_mpirun_wire_SOURCES = test/unit/test_mpirun_wire.c tools/mpirun/wire.c tools/mpirun/hosts.c \
	test/unit/unit.h
test_unit_test_mpirun_wire_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/test/unit -I$(top_srcdir)/tools/mpirun

# --- the GPU kernels without a GPU: a fake driver whose cuLaunchKernel runs
# the kernels' bodies on the CPU (kern_emu.cc, host C++), against the host kernels and pack engine ---
UMPI_UNIT_KERN = src/cuda/kern.c src/cuda/kern_reduce.c src/cuda/kern_pack.c src/cuda/kern_local.c src/cuda/kern_image.c
check_PROGRAMS += test/unit/test_cuda_kern
test_unit_test_cuda_kern_SOURCES = test/unit/test_cuda_kern.c test/unit/kern_emu.cc test/unit/kern_emu.h test/unit/kern_testdata.h \
	$(UMPI_UNIT_CUDA) $(UMPI_UNIT_KERN) src/core/op.c src/core/op_kernels.c src/coll/reduce_local.c \
	$(UMPI_UNIT_DTYPE) $(UMPI_UNIT_ERR) $(UMPI_UNIT_BASE)
test_unit_test_cuda_kern_CPPFLAGS = $(UMPI_UNIT_CPPFLAGS)
test_unit_test_cuda_kern_CXXFLAGS = $(AM_CXXFLAGS) -fno-exceptions -fno-rtti
test_unit_test_cuda_kern_LDADD = $(UMPI_UNIT_LDADD) -ldl -lm
if HAVE_CUDA_KERNELS
src/cuda/test_unit_test_cuda_kern-kern_image.$(OBJEXT): $(UMPI_KERN_FATBIN)
endif

# --- CPU sets the ranks publish (the node's CPUs, src/api/node_cpus.c) ---
check_PROGRAMS += test/unit/test_cpuset
test_unit_test_cpuset_SOURCES = test/unit/test_cpuset.c src/api/cpuset.c test/unit/unit.h
test_unit_test_cpuset_CPPFLAGS = $(UMPI_UNIT_CPPFLAGS)
