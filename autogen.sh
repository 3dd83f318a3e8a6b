#!/bin/sh
# Regenerates the build system. The MPI bindings are generated at build time (maint/gen_bindings.py).
set -e
cd "$(dirname "$0")"
mkdir -p m4 build-aux
autoreconf -fi
