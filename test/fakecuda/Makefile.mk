# test/fakecuda: the fake CUDA driver, a shared library that `make check` builds
# and the fakegpu suite loads through UMPI_CUDA_LIBRARY, so that the device paths run (and any CPU
# access to device memory crashes) on machines without a GPU. Built with the plain compiler: it is
# dlopen'ed by path, never installed, and must not depend on libtool's layout.
check_DATA = test/fakecuda/libcuda_fake.so
CLEANFILES += test/fakecuda/libcuda_fake.so
EXTRA_DIST += test/fakecuda/fakecuda.c test/fakecuda/fakecuda_exec.c test/fakecuda/fakecuda.h \
	test/fakecuda/README.md test/fakegpu
# The kernels it runs are umpi's own bodies on the CPU (test/unit/kern_emu.cc, host C++).
FAKECUDA_SRC = $(top_srcdir)/test/fakecuda/fakecuda.c $(top_srcdir)/test/fakecuda/fakecuda_exec.c

test/fakecuda/libcuda_fake.so: $(FAKECUDA_SRC) $(top_srcdir)/test/fakecuda/fakecuda.h \
		$(top_srcdir)/src/cuda/umpi_cuda_drv.h $(top_srcdir)/test/unit/kern_emu.cc $(top_srcdir)/test/unit/kern_emu.h \
		$(top_srcdir)/src/cuda/kern_body.h $(top_srcdir)/src/cuda/kern_args.h
	@mkdir -p test/fakecuda
	$(AM_V_CXX)$(CXX) $(CXXFLAGS) -fPIC -fvisibility=hidden -fno-exceptions -fno-rtti -D_GNU_SOURCE \
		-I$(top_srcdir)/src -I$(top_builddir)/src -I$(top_srcdir)/include -I$(top_builddir)/include \
		-c -o test/fakecuda/kern_emu.o $(top_srcdir)/test/unit/kern_emu.cc
	$(AM_V_CC)$(CC) $(CFLAGS) -Wall -Wextra -Wno-unused-parameter -fPIC -shared -fvisibility=hidden -D_GNU_SOURCE \
		-I$(top_srcdir)/src -I$(top_srcdir)/test/unit -o $@ $(FAKECUDA_SRC) test/fakecuda/kern_emu.o -lpthread -lm
	@rm -f test/fakecuda/kern_emu.o

# --- the fake NCCL (libnccl_fake.so) on the fake driver, which the fakegpu suite
# names in UMPI_NCCL_LIBRARY; same rules as the fake driver ---
check_DATA += test/fakecuda/libnccl_fake.so
CLEANFILES += test/fakecuda/libnccl_fake.so
EXTRA_DIST += test/fakecuda/fakenccl.c test/unit/test_nccl_abi.py

test/fakecuda/libnccl_fake.so: $(top_srcdir)/test/fakecuda/fakenccl.c $(top_srcdir)/src/cuda/umpi_cuda_drv.h \
		$(top_srcdir)/src/cuda/umpi_nccl_api.h
	@mkdir -p test/fakecuda
	$(AM_V_CC)$(CC) $(CFLAGS) -Wall -Wextra -Wno-unused-parameter -fPIC -shared -fvisibility=hidden -D_GNU_SOURCE \
		-I$(top_srcdir)/src -o $@ $(top_srcdir)/test/fakecuda/fakenccl.c -ldl -lrt
