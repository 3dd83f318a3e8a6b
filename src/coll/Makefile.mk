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

# --- part c2: reductions, more broadcast and barrier algorithms ---
libmpi_la_SOURCES += \
	src/coll/coll_c2.c \
	src/coll/algo/halving.c \
	src/coll/algo/barrier_recursive_doubling.c \
	src/coll/algo/bcast_scatter_allgather.c \
	src/coll/algo/bcast_pipeline.c \
	src/coll/algo/reduce_binomial.c \
	src/coll/algo/reduce_rabenseifner.c \
	src/coll/algo/allreduce_ring.c \
	src/coll/algo/allreduce_rabenseifner.c \
	src/coll/algo/allreduce_reduce_bcast.c \
	src/coll/algo/reduce_scatter_ring.c \
	src/coll/algo/reduce_scatter_recursive_halving.c \
	src/coll/algo/reduce_scatter_reduce_scatterv.c \
	src/coll/algo/scan_recursive_doubling.c \
	src/coll/algo/scan_linear.c \
	src/coll/algo/exscan_recursive_doubling.c \
	src/coll/algo/exscan_linear.c
