# test/fakecuda: the fake CUDA driver (issue 5, part p2p), a shared library that `make check` builds
# and the fakegpu suite loads through UMPI_CUDA_LIBRARY, so that the device paths run (and any CPU
# access to device memory crashes) on machines without a GPU. Built with the plain compiler: it is
# dlopen'ed by path, never installed, and must not depend on libtool's layout.
check_DATA = test/fakecuda/libcuda_fake.so
CLEANFILES += test/fakecuda/libcuda_fake.so
EXTRA_DIST += test/fakecuda/fakecuda.c test/fakecuda/README.md test/fakegpu

test/fakecuda/libcuda_fake.so: $(top_srcdir)/test/fakecuda/fakecuda.c $(top_srcdir)/src/cuda/umpi_cuda_drv.h
	@mkdir -p test/fakecuda
	$(AM_V_CC)$(CC) $(CFLAGS) -Wall -Wextra -Wno-unused-parameter -fPIC -shared -fvisibility=hidden -D_GNU_SOURCE \
		-I$(top_srcdir)/src -o $@ $(top_srcdir)/test/fakecuda/fakecuda.c -lpthread

# --- issue 5, part nccl: the fake NCCL (libnccl_fake.so) on the fake driver, which the fakegpu suite
# names in UMPI_NCCL_LIBRARY; same rules as the fake driver ---
check_DATA += test/fakecuda/libnccl_fake.so
CLEANFILES += test/fakecuda/libnccl_fake.so
EXTRA_DIST += test/fakecuda/fakenccl.c test/unit/test_nccl_abi.py

test/fakecuda/libnccl_fake.so: $(top_srcdir)/test/fakecuda/fakenccl.c $(top_srcdir)/src/cuda/umpi_cuda_drv.h \
		$(top_srcdir)/src/cuda/umpi_nccl_api.h
	@mkdir -p test/fakecuda
	$(AM_V_CC)$(CC) $(CFLAGS) -Wall -Wextra -Wno-unused-parameter -fPIC -shared -fvisibility=hidden -D_GNU_SOURCE \
		-I$(top_srcdir)/src -o $@ $(top_srcdir)/test/fakecuda/fakenccl.c -ldl -lrt
