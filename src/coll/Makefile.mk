# src/coll: collectives (schedules, algorithm selection, one file per algorithm)
libmpi_la_SOURCES += \
	src/coll/umpi_sched.h \
	src/coll/umpi_coll.h \
	src/coll/umpi_op.h \
	src/coll/sched.c \
	src/coll/select.c \
	src/coll/coll.c \
	src/coll/hier.c

# --- reduction operations ---
libmpi_la_SOURCES += src/coll/op.c src/coll/op_kernels.c

# --- algorithms (src/coll/algo), one per file ---
libmpi_la_SOURCES += \
	src/coll/algo/barrier_dissemination.c \
	src/coll/algo/bcast_binomial.c \
	src/coll/algo/allreduce_recursive_doubling.c

# --- hierarchical algorithms (lead) ---
libmpi_la_SOURCES += \
	src/coll/algo/barrier_hier.c \
	src/coll/algo/bcast_hier.c \
	src/coll/algo/allreduce_hier.c
