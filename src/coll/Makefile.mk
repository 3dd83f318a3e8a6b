# src/coll: collectives (schedules, algorithm selection, one file per algorithm)
libmpi_la_SOURCES += \
	src/coll/umpi_sched.h \
	src/coll/umpi_coll.h \
	src/coll/umpi_coll_cost.h \
	src/coll/umpi_op.h \
	src/coll/sched.c \
	src/coll/link_cost.c \
	src/coll/algo_cost.c \
	src/coll/select.c \
	src/coll/post.c \
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
# --- part c3: intercommunicator and neighbourhood collectives ---
libmpi_la_SOURCES += \
	src/coll/coll_neighbor.c \
	src/coll/inter.c \
	src/coll/algo/neighbor_linear.c \
	src/coll/algo/inter_barrier.c \
	src/coll/algo/inter_bcast.c \
	src/coll/algo/inter_gather.c \
	src/coll/algo/inter_gatherv.c \
	src/coll/algo/inter_scatter.c \
	src/coll/algo/inter_scatterv.c \
	src/coll/algo/inter_allgather.c \
	src/coll/algo/inter_allgatherv.c \
	src/coll/algo/inter_alltoall.c \
	src/coll/algo/inter_alltoallv.c \
	src/coll/algo/inter_alltoallw.c \
	src/coll/algo/inter_reduce.c \
	src/coll/algo/inter_allreduce.c \
	src/coll/algo/inter_reduce_scatter.c \
	src/coll/algo/inter_reduce_scatter_block.c
# --- c4: the algorithm listing for umpi_info ---
libmpi_la_SOURCES += src/coll/info.c
# --- part c1: gather, scatter, allgather, alltoall families ---
libmpi_la_SOURCES += \
	src/coll/coll_c1.c \
	src/coll/algo/c1_blocks.h \
	src/coll/algo/gather_binomial.c \
	src/coll/algo/gather_linear.c \
	src/coll/algo/gatherv_linear.c \
	src/coll/algo/scatter_binomial.c \
	src/coll/algo/scatter_linear.c \
	src/coll/algo/scatterv_linear.c \
	src/coll/algo/allgather_ring.c \
	src/coll/algo/allgather_recursive_doubling.c \
	src/coll/algo/allgather_bruck.c \
	src/coll/algo/allgatherv_ring.c \
	src/coll/algo/allgatherv_linear.c \
	src/coll/algo/alltoall_pairwise.c \
	src/coll/algo/alltoall_bruck.c \
	src/coll/algo/alltoall_linear.c \
	src/coll/algo/alltoallv_pairwise.c \
	src/coll/algo/alltoallv_linear.c
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

# --- part hier2: more hierarchical algorithms ---
libmpi_la_SOURCES += \
	src/coll/algo/hier_blocks.h \
	src/coll/algo/reduce_hier.c \
	src/coll/algo/allgather_hier.c \
	src/coll/algo/gather_hier.c \
	src/coll/algo/scatter_hier.c \
	src/coll/algo/allreduce_hier_large.c

# --- part perf2: small collectives when oversubscribed ---
libmpi_la_SOURCES += \
	src/coll/algo/bcast_linear.c

# --- issue 5, part p2p: collective steps on device buffers (through host memory until GPU kernels) ---
libmpi_la_SOURCES += src/coll/umpi_coll_device.h src/coll/device.c
# --- part perf4: segmented (pipelined) reduce ---
libmpi_la_SOURCES += \
	src/coll/algo/reduce_pipeline.c \
	src/coll/algo/barrier_linear.c
# --- issue 5, part collipc: device collectives within a node through CUDA IPC ---
libmpi_la_SOURCES += src/coll/device_ipc.c

# --- issue 5, part nccl: blocking collectives on device buffers run by NCCL ---
libmpi_la_SOURCES += src/coll/nccl.c

# --- issue 4, part small: blocking collectives over two members without a schedule ---
libmpi_la_SOURCES += src/coll/pair.c
