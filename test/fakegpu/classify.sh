#!/bin/sh
# test/gpu/gpu_classify (buffer classification against a driver) on the fake CUDA driver: memory of
# every kind classified as it is, the caches answering repeats without the driver, and addresses
# handed out again as another kind of memory (device memory's as pinned host memory, malloc's as
# device memory) classified anew, as on a GPU. The gpu suite runs the same program on a real one.
: "${UMPI_BUILDDIR:?runtests gives scripts UMPI_BUILDDIR}"
: "${UMPI_CUDA_LIBRARY:?the fakegpu suite sets UMPI_CUDA_LIBRARY}"
prog=$UMPI_BUILDDIR/test/gpu/gpu_classify
[ -x "$prog" ] || { echo "FAIL: $prog is not built (make check builds it)"; exit 1; }
"$prog"
