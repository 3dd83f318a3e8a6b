# src/core: what every layer uses (included by the top Makefile.am). It calls nothing above it:
# where it must act for a layer above (end the job through the process manager, free what coll
# hangs on a communicator or a request, poll the network) it calls through a pointer that layer
# sets at MPI_Init (umpi.h umpi_abort_job, umpi_obj.h umpi_comm_free_above, umpi_request.h
# umpi_request_sched_free, umpi_progress.h umpi_progress_set_net).

# --- the library's base: status codes, logging, knobs, the big lock ---
libmpi_la_SOURCES += \
	src/core/umpi.h \
	src/core/umpi_err.h \
	src/core/umpi_check.h \
	src/core/umpi_knobs.h \
	src/core/umpi_knobs.def \
	src/core/umpi_coll_kinds.def \
	src/core/knobs.c \
	src/core/log.c \
	src/core/die.c \
	src/core/err.c

# --- objects' storage: handles, communicators, groups, datatypes, info, attributes, error handlers, ops ---
libmpi_la_SOURCES += \
	src/core/umpi_obj.h \
	src/core/umpi_attr.h \
	src/core/umpi_context.h \
	src/core/umpi_topo.h \
	src/core/handle.c \
	src/core/objects.c \
	src/core/abi_symbols.c \
	src/core/comm.c \
	src/core/context.c \
	src/core/context_round.c \
	src/core/group.c \
	src/core/errhandler.c \
	src/core/info.c \
	src/core/attr.c \
	src/core/attr_list.c \
	src/core/datatype.c \
	src/core/datatype_type.c \
	src/core/datatype_engine.c \
	src/core/datatype_mpi.c \
	src/core/datatype_external.c \
	src/core/umpi_op.h \
	src/core/umpi_op_enum.h \
	src/core/op.c \
	src/core/op_kernels.c

# --- requests and the progress engine ---
libmpi_la_SOURCES += \
	src/core/umpi_request.h \
	src/core/request.c \
	src/core/umpi_progress.h \
	src/core/progress.c \
	src/core/progress_thread.c
