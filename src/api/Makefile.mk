# src/api: the MPI object layer that builds on collectives (included by the top Makefile.am):
# MPI_Init/MPI_Finalize, communicator and topology constructors, the queries and hints that need
# the other processes. It stands above coll and pt2pt; nothing below calls into it.

# --- init and finalize, the environment, this process's hardware ---
libmpi_la_SOURCES += \
	src/api/umpi_api.h \
	src/api/init.c \
	src/api/env.c \
	src/api/umpi_hw.h \
	src/api/hw.c \
	src/api/umpi_cpuset.h \
	src/api/cpuset.c \
	src/api/node_cpus.c

# --- communicators: life cycle, constructors, intercommunicators, info hints ---
libmpi_la_SOURCES += \
	src/api/umpi_comm.h \
	src/api/comm.c \
	src/api/comm_create.c \
	src/api/comm_from_group.c \
	src/api/comm_idup.c \
	src/api/comm_info.c \
	src/api/intercomm.c \
	src/api/intercomm_sub.c

# --- process topologies ---
libmpi_la_SOURCES += \
	src/api/umpi_topo_internal.h \
	src/api/topo_record.c \
	src/api/topo.c \
	src/api/topo_graph.c
