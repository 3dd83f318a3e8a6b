# src/rma: windows and one-sided communication (included by the top Makefile.am)
libmpi_la_SOURCES += \
	src/rma/umpi_rma.h \
	src/rma/umpi_rma_err.h \
	src/rma/win.c \
	src/rma/win_query.c \
	src/rma/ops.c \
	src/rma/target.c \
	src/rma/devmem.c \
	src/rma/ipc.c \
	src/rma/sync.c
