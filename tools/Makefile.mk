# tools: build fragment (included by the top Makefile.am)

# ---- mpirun / mpiexec: the launcher (tools/mpirun/mpirun.h says what each file does) ------------
# On one machine a PMIx server and a libevent loop; across machines (--host, --hostfile) also the
# launch tree of daemons; inside a Slurm allocation it hands the job to srun. The knob table
# (UMPI_LAUNCH_*) is compiled in from src/core/knobs.c rather than linked from libmpi, which would
# load UCX into every mpirun.
bin_PROGRAMS += mpirun
mpirun_SOURCES = tools/mpirun/mpirun.h tools/mpirun/main.c tools/mpirun/error.c \
	tools/mpirun/server.c tools/mpirun/launch.c tools/mpirun/iof.c tools/mpirun/bind.c \
	tools/mpirun/hosts.c tools/mpirun/wire.h tools/mpirun/wire.c \
	tools/mpirun/tree.h tools/mpirun/tree_spawn.c tools/mpirun/tree_route.c \
	tools/mpirun/tree_end.c tools/mpirun/tree_conn.c tools/mpirun/daemon.c \
	tools/mpirun/slurm.c src/core/knobs.c
mpirun_CPPFLAGS = $(AM_CPPFLAGS) $(PMIX_CFLAGS) $(LIBEVENT_CFLAGS) $(HWLOC_CFLAGS)
mpirun_LDADD = $(PMIX_LIBS) $(LIBEVENT_LIBS) $(HWLOC_LIBS) -lpthread
dist_man1_MANS += man/man1/mpirun.1

# mpiexec is mpirun under the standard's name: a link, for the program and for its man page.
install_exec_hook_parts += install-mpiexec-link
install-mpiexec-link:
	cd $(DESTDIR)$(bindir) && rm -f mpiexec$(EXEEXT) && ln -s mpirun$(EXEEXT) mpiexec$(EXEEXT)
install_data_hook_parts += install-mpiexec-man-link
install-mpiexec-man-link:
	cd $(DESTDIR)$(man1dir) && rm -f mpiexec.1 && ln -s mpirun.1 mpiexec.1
.PHONY: install-mpiexec-link install-mpiexec-man-link
# ---- end of mpirun ---------------------------------------------------------------------------------

# --- tools: compiler wrappers and umpi_info ---------------------------------------------------------
# mpicc and mpicxx are made by configure from the one template tools/mpicc.in (configure.ac, "tools").
bin_SCRIPTS += tools/mpicc tools/mpicxx
EXTRA_DIST += tools/mpicc.in

# umpi_info reads the knob table from libmpi and never calls MPI_Init; it asks PMIx directly for its
# run-time version, and UCX through the netmod (whose header needs UCX's).
bin_PROGRAMS += tools/umpi_info
tools_umpi_info_SOURCES = tools/umpi_info.c
tools_umpi_info_CPPFLAGS = $(AM_CPPFLAGS) $(UCX_CFLAGS) $(PMIX_CFLAGS)
tools_umpi_info_LDADD = libmpi.la $(PMIX_LIBS)
# $ORIGIN first: a moved or copied install tree runs its own libmpi, not the one at the old prefix.
tools_umpi_info_LDFLAGS = -Wl,-rpath,'$$ORIGIN/../lib'

dist_man1_MANS += man/man1/mpicc.1 man/man1/mpicxx.1 man/man1/umpi_info.1
