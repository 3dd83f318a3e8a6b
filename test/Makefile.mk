# test: build fragment (included by the top Makefile.am)
include test/unit/Makefile.mk
include test/gpu/Makefile.mk
#
# `make check` runs test/runtests against the *installed* tree: the MPI programs are built with
# $(prefix)/bin/mpicc and run with $(prefix)/bin/mpirun, exactly as a user would. So the test command
# is `./configure --prefix=$PWD/_inst && make -j2 install && make check` (test/README.md).
# Unit tests of internals (check_PROGRAMS of test/unit) are built by `make check` before this runs.

EXTRA_DIST += test/runtests test/README.md test/mpi test/mpich-abi

RUNTESTS_FLAGS =

check-local:
	@test -x "$(prefix)/bin/mpirun" || { echo "make check needs the installed tree: run make install first ($(prefix)/bin/mpirun is missing)"; exit 1; }
	abs_top_builddir="$(abs_top_builddir)" abs_top_srcdir="$(abs_top_srcdir)" \
	$(PYTHON3) $(top_srcdir)/test/runtests --prefix "$(prefix)" --builddir "$(abs_top_builddir)" $(RUNTESTS_FLAGS)

clean-local: clean-local-runtests
clean-local-runtests:
	-rm -rf test/_work
.PHONY: clean-local-runtests

# the fake CUDA driver and the fakegpu suite (device buffers without a GPU)
include test/fakecuda/Makefile.mk
# --- the Slurm test bed (test/slurm) ---
EXTRA_DIST += test/slurm
