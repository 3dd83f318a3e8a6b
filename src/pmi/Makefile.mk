# src/pmi: build fragment (included by the top Makefile.am)
# The process-management interface (rank, size, nodes, key-value exchange, abort) that the rest of the
# library uses: pmi.c chooses between the PMIx client (pmix.c) and the PMI-2 client (pmi2.c,
# pmi2_format.c), or a singleton.
libmpi_la_SOURCES += src/pmi/pmi.c src/pmi/umpi_pmi.h src/pmi/umpi_pmi_impl.h src/pmi/pmix.c \
	src/pmi/pmi2.c src/pmi/pmi2_format.c src/pmi/umpi_pmi2.h
