#!/bin/sh
# mpicc with a CUDA runtime program: the build half of test/gpu/cuda_app.sh,
# which runs here, without a GPU; skipped (77) where the CUDA toolkit is absent (CI).
exec "$(dirname "$0")/../gpu/cuda_app.sh" --build-only
