# src/coll: collectives (schedules, algorithm selection, one file per algorithm)

# --- the MPI collective functions: their arguments into umpi_coll_args_t ---
libmpi_la_SOURCES += \
	src/coll/coll.c \
	src/coll/coll_gather_scatter.c \
	src/coll/coll_reduce.c \
	src/coll/coll_neighbor.c

# --- the driver, the cost model and the choice of an algorithm ---
libmpi_la_SOURCES += \
	src/coll/umpi_coll.h \
	src/coll/umpi_coll_call.h \
	src/coll/umpi_coll_cost.h \
	src/coll/post.c \
	src/coll/select.c \
	src/coll/link_cost.c \
	src/coll/algo_cost.c \
	src/coll/info.c \
	src/coll/pair.c

# --- schedules, node structure, intercommunicator helpers, MPI_Start, MPI_Reduce_local ---
libmpi_la_SOURCES += \
	src/coll/umpi_sched.h \
	src/coll/sched.c \
	src/coll/hier.c \
	src/coll/inter.c \
	src/coll/start.c \
	src/coll/reduce_local.c

# --- the internal collectives (on integers and bytes, for the layers above: communicator constructors) ---
libmpi_la_SOURCES += \
	src/coll/umpi_coll_internal.h \
	src/coll/internal.c

# --- device buffers: staged through host memory, CUDA IPC within a node, NCCL ---
libmpi_la_SOURCES += \
	src/coll/umpi_coll_device.h \
	src/coll/device.c \
	src/coll/device_stage.c \
	src/coll/device_ipc.c \
	src/coll/nccl.c

# --- the table of the algorithms (the kinds are in src/core/umpi_coll_kinds.def, which the knobs read too) ---
libmpi_la_SOURCES += src/coll/algos.def

# --- the algorithms' shared helpers (src/coll/algo) ---
libmpi_la_SOURCES += \
	src/coll/algo/blocks.h \
	src/coll/algo/hier_blocks.h \
	src/coll/algo/halving.c \
	src/coll/algo/reduce_segmented.c

# --- the algorithms, one per file: those algos.def lists (maint/coll_sources.sh writes
# sources.mk from it; autogen.sh runs it first, then this rule whenever algos.def changes, after
# which automake reruns by itself) ---
include src/coll/algo/sources.mk
$(srcdir)/src/coll/algo/sources.mk: $(srcdir)/src/coll/algos.def $(srcdir)/maint/coll_sources.sh
	$(AM_V_GEN)$(SHELL) $(srcdir)/maint/coll_sources.sh $(srcdir)/src/coll/algos.def > $@.tmp && mv -f $@.tmp $@
EXTRA_DIST += maint/coll_sources.sh
