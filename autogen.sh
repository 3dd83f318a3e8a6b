#!/bin/sh
# Regenerates the build system. The MPI bindings are generated at build time (maint/gen_bindings.py).
set -e
cd "$(dirname "$0")"
mkdir -p m4 build-aux
# The collective algorithms' source list comes from their table (src/coll/Makefile.mk says why).
sh maint/coll_sources.sh src/coll/algos.def > src/coll/algo/sources.mk
autoreconf -fi
