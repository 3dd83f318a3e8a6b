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
	src/coll/umpi_coll_cost.h \
	src/coll/post.c \
	src/coll/select.c \
	src/coll/link_cost.c \
	src/coll/algo_cost.c \
	src/coll/info.c \
	src/coll/pair.c

# --- schedules, node structure, intercommunicator helpers, reduction operations ---
libmpi_la_SOURCES += \
	src/coll/umpi_sched.h \
	src/coll/sched.c \
	src/coll/hier.c \
	src/coll/inter.c \
	src/coll/umpi_op.h \
	src/coll/op.c \
	src/coll/op_kernels.c

# --- device buffers: staged through host memory, CUDA IPC within a node, NCCL ---
libmpi_la_SOURCES += \
	src/coll/umpi_coll_device.h \
	src/coll/device.c \
	src/coll/device_ipc.c \
	src/coll/nccl.c

# --- the algorithms (src/coll/algo), one per file, and their shared helpers ---
libmpi_la_SOURCES += \
	src/coll/algo/blocks.h \
	src/coll/algo/hier_blocks.h \
	src/coll/algo/halving.c \
	src/coll/algo/barrier_dissemination.c \
	src/coll/algo/barrier_hier.c \
	src/coll/algo/barrier_recursive_doubling.c \
	src/coll/algo/barrier_linear.c \
	src/coll/algo/bcast_binomial.c \
	src/coll/algo/bcast_hier.c \
	src/coll/algo/bcast_scatter_allgather.c \
	src/coll/algo/bcast_pipeline.c \
	src/coll/algo/bcast_linear.c \
	src/coll/algo/gather_binomial.c \
	src/coll/algo/gather_linear.c \
	src/coll/algo/gather_hier.c \
	src/coll/algo/gatherv_linear.c \
	src/coll/algo/scatter_binomial.c \
	src/coll/algo/scatter_linear.c \
	src/coll/algo/scatter_hier.c \
	src/coll/algo/scatterv_linear.c \
	src/coll/algo/allgather_ring.c \
	src/coll/algo/allgather_recursive_doubling.c \
	src/coll/algo/allgather_bruck.c \
	src/coll/algo/allgather_hier.c \
	src/coll/algo/allgatherv_ring.c \
	src/coll/algo/allgatherv_linear.c \
	src/coll/algo/alltoall_pairwise.c \
	src/coll/algo/alltoall_bruck.c \
	src/coll/algo/alltoall_linear.c \
	src/coll/algo/alltoallv_pairwise.c \
	src/coll/algo/alltoallv_linear.c \
	src/coll/algo/reduce_binomial.c \
	src/coll/algo/reduce_rabenseifner.c \
	src/coll/algo/reduce_hier.c \
	src/coll/algo/reduce_pipeline.c \
	src/coll/algo/allreduce_recursive_doubling.c \
	src/coll/algo/allreduce_hier.c \
	src/coll/algo/allreduce_ring.c \
	src/coll/algo/allreduce_rabenseifner.c \
	src/coll/algo/allreduce_reduce_bcast.c \
	src/coll/algo/allreduce_hier_large.c \
	src/coll/algo/reduce_scatter_ring.c \
	src/coll/algo/reduce_scatter_recursive_halving.c \
	src/coll/algo/reduce_scatter_reduce_scatterv.c \
	src/coll/algo/scan_recursive_doubling.c \
	src/coll/algo/scan_linear.c \
	src/coll/algo/exscan_recursive_doubling.c \
	src/coll/algo/exscan_linear.c \
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
	src/coll/algo/inter_reduce_scatter_block.c \
	src/coll/algo/neighbor_linear.c
