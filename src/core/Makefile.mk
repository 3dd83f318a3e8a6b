# src/core: build fragment (included by the top Makefile.am)

# --- lead: init, communicators, requests, progress ---
libmpi_la_SOURCES += \
	src/core/umpi.h \
	src/core/umpi_err.h \
	src/core/umpi_obj.h \
	src/core/umpi_knobs.h \
	src/core/umpi_knobs.def \
	src/core/umpi_progress.h \
	src/core/umpi_request.h \
	src/core/init.c \
	src/core/comm.c \
	src/core/request.c \
	src/core/progress.c

# --- objects and environment (append below) ---
libmpi_la_SOURCES += \
	src/core/handle.c \
	src/core/objects.c \
	src/core/knobs.c \
	src/core/log.c \
	src/core/err.c \
	src/core/errhandler.c \
	src/core/datatype.c \
	src/core/datatype_type.c \
	src/core/datatype_engine.c \
	src/core/datatype_mpi.c \
	src/core/datatype_external.c \
	src/core/env.c \
	src/core/attr.c
