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
	src/core/die.c \
	src/core/err.c \
	src/core/errhandler.c \
	src/core/datatype.c \
	src/core/datatype_type.c \
	src/core/datatype_engine.c \
	src/core/datatype_mpi.c \
	src/core/datatype_external.c \
	src/core/env.c \
	src/core/attr.c

# --- info ---
libmpi_la_SOURCES += src/core/info.c

# --- attributes ---
libmpi_la_SOURCES += src/core/umpi_attr.h src/core/attr_list.c
# --- groups and communicators ---
libmpi_la_SOURCES += \
	src/core/umpi_comm.h \
	src/core/umpi_context.h \
	src/core/context.c \
	src/core/group.c \
	src/core/comm_create.c \
	src/core/intercomm.c \
	src/coll/umpi_coll_internal.h \
	src/coll/internal.c

# --- process topologies ---
libmpi_la_SOURCES += \
	src/core/umpi_topo.h \
	src/core/umpi_topo_internal.h \
	src/core/topo.c \
	src/core/topo_graph.c
# --- communicator info hints ---
libmpi_la_SOURCES += src/core/comm_info.c
libmpi_la_SOURCES += src/core/umpi_hw.h src/core/hw.c
# --- nonblocking communicator duplication ---
libmpi_la_SOURCES += src/core/comm_idup.c
# --- communicators from groups, create/split of intercommunicators ---
libmpi_la_SOURCES += src/core/comm_from_group.c src/core/intercomm_sub.c

# --- the node's CPUs from the ranks' affinity masks (progress.c) ---
libmpi_la_SOURCES += \
	src/core/umpi_cpuset.h \
	src/core/cpuset.c
