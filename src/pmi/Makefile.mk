# src/pmi: build fragment (included by the top Makefile.am)
# The PMIx client (rank, size, key-value exchange, abort) that the rest of the library uses.
libmpi_la_SOURCES += src/pmi/pmi.c src/pmi/umpi_pmi.h
