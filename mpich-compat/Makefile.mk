# mpich-compat: build fragment (included by the top Makefile.am)
#
# What lets binaries and habits from MPICH work on umpi unchanged.
#
# A program linked by MPICH's mpicc records DT_NEEDED libmpich.so.12 and nothing else of MPICH;
# libmpi.so.12 has MPICH's ABI, so a symlink of that name is all the loader needs. C++ programs
# linked by MPICH's mpicxx without --as-needed also record libmpichcxx.so.12 (even when they never
# use the C++ bindings, which left the standard in MPI-3): a symlink satisfies those too, and a
# program that does use MPI:: classes fails at load time naming the missing symbol. Fortran
# (libmpichfort.so.12) is deliberately absent: umpi has no Fortran bindings yet, and a missing
# library is a clearer message than missing symbols.
bin_SCRIPTS += mpich-compat/mpichversion
EXTRA_DIST += mpich-compat/mpichversion.in

install_exec_hook_parts += umpi-mpich-compat-install-exec
umpi-mpich-compat-install-exec:
	cd "$(DESTDIR)$(libdir)" && \
	    ln -sf libmpi.so.12 libmpich.so.12 && \
	    ln -sf libmpi.so libmpich.so && \
	    ln -sf libmpi.so.12 libmpichcxx.so.12
.PHONY: umpi-mpich-compat-install-exec
