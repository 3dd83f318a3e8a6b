# bench: build fragment (included by the top Makefile.am)
#
# The benchmarks are installed as sources, not built here: bench/compare builds them with each
# MPI's own compiler wrapper (umpi's and every other MPI it finds), which one build tree cannot.
benchdir = $(pkgdatadir)/bench
dist_bench_DATA = bench/umpi_bench.h bench/osu_latency.c bench/osu_bw.c bench/osu_bibw.c \
	bench/dtype_bench.h bench/dtype_vector.c bench/dtype_struct.c bench/dtype_pack.c \
	bench/README.md
# collective benchmarks (coll_bench.h) and the cost-model parameters (coll_params.c)
dist_bench_DATA += bench/coll_bench.h bench/osu_allreduce.c bench/osu_bcast.c bench/osu_reduce.c \
	bench/osu_allgather.c bench/osu_alltoall.c bench/osu_barrier.c bench/osu_iallreduce.c \
	bench/coll_params.c
# one-sided benchmarks (osu_rma.h)
dist_bench_DATA += bench/osu_rma.h bench/osu_put_latency.c bench/osu_get_latency.c bench/osu_put_bw.c \
	bench/osu_get_bw.c bench/osu_acc_latency.c bench/osu_fop_latency.c bench/osu_cas_latency.c \
	bench/rma_busy_target.c
# window creation (win_bench.h) and loads and stores on shared-window memory
dist_bench_DATA += bench/win_bench.h bench/win_create.c bench/win_allocate.c bench/win_allocate_shared.c \
	bench/win_create_dynamic.c bench/win_shared_mem.c
dist_bench_SCRIPTS = bench/compare
# mpirun's start-up across hosts: bench/launch_startup times bench/init_finalize.c
dist_bench_DATA += bench/init_finalize.c
# what the GPU's small copies and events cost, with one or more processes sharing a GPU
dist_bench_DATA += bench/cuda_latency.c
dist_bench_SCRIPTS += bench/launch_startup
EXTRA_DIST += bench/NOTES.md

# `make bench [BENCH_ARGS="-r 3 -s 8,64K,1M,4M --check"]`: compare the installed umpi with the
# other MPIs found here; raw outputs go to bench/out in the build tree.
BENCH_ARGS =
.PHONY: bench
bench:
	$(PYTHON3) $(top_srcdir)/bench/compare --umpi $(prefix) --out $(abs_top_builddir)/bench/out $(BENCH_ARGS)

# --- start-up and allreduce on the Slurm test bed (run from the source tree: it needs test/slurm) ---
EXTRA_DIST += bench/init_time.c bench/slurm_startup

# --- mpirun --hostfile over real ssh on the Slurm test bed (run from the source tree) ---
EXTRA_DIST += bench/hostfile_startup
# --- point-to-point and allreduce across the test bed's nodes (run from the source tree) ---
EXTRA_DIST += bench/slurm_net

# --- instructions of one collective call under callgrind (bench/README.md) ---
dist_bench_DATA += bench/coll_icount.c
dist_bench_SCRIPTS += bench/coll_icount
