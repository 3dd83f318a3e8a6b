# src/coll: collectives (schedules, algorithm selection, one file per algorithm)
libmpi_la_SOURCES += \
	src/coll/umpi_sched.h \
	src/coll/umpi_coll.h \
	src/coll/umpi_op.h \
	src/coll/sched.c \
	src/coll/select.c \
	src/coll/coll.c

# --- reduction operations ---
libmpi_la_SOURCES += src/coll/op_tmp.c

# --- algorithms (src/coll/algo), one per file ---
libmpi_la_SOURCES += \
	src/coll/algo/barrier_dissemination.c \
	src/coll/algo/bcast_binomial.c \
	src/coll/algo/allreduce_recursive_doubling.c

# --- c4: the algorithm listing for umpi_info ---
libmpi_la_SOURCES += src/coll/info.c
