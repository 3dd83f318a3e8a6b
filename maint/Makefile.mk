# maint: build fragment (included by the top Makefile.am)
#
# The MPI bindings are generated at build time by maint/gen_bindings.py from the MPI standard's
# API list and maint/bindings.def (shared/DESIGN.md, "One source of truth for the API"). One run
# writes every output; a stamp file stands for the run so that make starts it once.

# The API list, kept in the repository (maint/README.md says where it comes from); override with
# `make MPI_APIS_JSON=/path/to/apis.json`.
MPI_APIS_JSON = $(top_srcdir)/maint/apis.json
EXTRA_DIST += maint/apis.json maint/README.md

UMPI_GEN_OUTPUTS = include/mpi_proto.h src/mpi/gen/bindings.c src/mpi/gen/umpi_impl.h
UMPI_GEN_DEPS = $(srcdir)/maint/gen_bindings.py $(srcdir)/maint/bindings.def $(MPI_APIS_JSON) \
	$(wildcard $(srcdir)/maint/man/*.txt)

# The stamp takes the time from before the run, so that every output is newer than it.
maint/bindings.stamp: $(UMPI_GEN_DEPS)
	@$(MKDIR_P) maint include src/mpi/gen man/man3
	@touch $@.tmp
	$(AM_V_GEN)$(PYTHON3) $(srcdir)/maint/gen_bindings.py \
	    --apis $(MPI_APIS_JSON) --def $(srcdir)/maint/bindings.def \
	    --proto include/mpi_proto.h --bindings src/mpi/gen/bindings.c \
	    --impl src/mpi/gen/umpi_impl.h --man man/man3 --man-text $(srcdir)/maint/man \
	    --version $(PACKAGE_VERSION)
	@mv -f $@.tmp $@

# If an output was deleted after the stamp was made, run the generator again.
$(UMPI_GEN_OUTPUTS): maint/bindings.stamp
	@test -f $@ || { rm -f maint/bindings.stamp; $(MAKE) $(AM_MAKEFLAGS) maint/bindings.stamp; }

BUILT_SOURCES += $(UMPI_GEN_OUTPUTS)
nodist_libmpi_la_SOURCES += src/mpi/gen/bindings.c src/mpi/gen/umpi_impl.h
CLEANFILES += $(UMPI_GEN_OUTPUTS) maint/bindings.stamp maint/bindings.stamp.tmp man/man3/MPI_*.3
EXTRA_DIST += maint/gen_bindings.py maint/bindings.def

# Man pages: one per generated entry point, so their list is the generator's to know.
install_data_hook_parts += umpi-install-man3
umpi-install-man3: maint/bindings.stamp
	$(MKDIR_P) "$(DESTDIR)$(mandir)/man3"
	$(INSTALL_DATA) man/man3/MPI_*.3 "$(DESTDIR)$(mandir)/man3/"
uninstall-local: umpi-uninstall-man3
umpi-uninstall-man3:
	cd "$(DESTDIR)$(mandir)/man3" && for f in $(abs_builddir)/man/man3/MPI_*.3; do \
	    rm -f "$$(basename "$$f")"; done
.PHONY: umpi-install-man3 umpi-uninstall-man3
