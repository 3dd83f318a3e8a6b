#!/bin/bash
# The collectives' network parameters across the nodes of the Slurm test bed (testbed.sh): by default (UMPI_COLL_NET_COST=auto) MPI_COMM_WORLD rank 0 asks UCX for its estimate
# of the link to another node and every rank takes rank 0's values at MPI_Init (through PMI); builtin and
# LAT,BW set them; a job on one node asks nothing. Each job also checks allreduce results
# (slurm_job: small and large vectors) under the parameters it got.
# Skipped (77) where the test bed cannot run: not root, or Slurm/munge not installed.
#
# Each check prints "ok: ..." or "FAIL: ...".
. "$(dirname "$0")/../launch/common.sh"
. "$SRCDIR/bed_test.sh"

# njob NAME CMD...: sjob with 60 s at most, which must pass (exit 0, "No Errors").
njob() {
    local name=$1
    shift
    sjob "$name" 60 "$@"
    [ $RC -eq 0 ] || fail "$name: exit $RC: $* (stderr: $(head -c 600 "$ERR"))"
    grep -q "No Errors" "$OUT" || fail "$name: no 'No Errors' (stdout: $(head -c 400 "$OUT"))"
}

# The debug lines "collectives across nodes: ..." of the last job, one per rank that printed one,
# without the rank prefix.
net_lines() { grep -o "collectives across nodes: .*" "$ERR"; }

# expect_net NAME NRANKS TEXT: every one of NRANKS ranks printed the same line, and it contains TEXT.
expect_net() {
    local name=$1 n=$2 text=$3 got distinct
    got=$(net_lines | wc -l)
    distinct=$(net_lines | sort -u | wc -l)
    [ "$got" -eq "$n" ] || fail "$name: $got ranks printed their network parameters, expected $n ($(net_lines | head -3))"
    [ "$distinct" -eq 1 ] || fail "$name: the ranks disagree: $(net_lines | sort -u | tr '\n' ';')"
    net_lines | head -1 | grep -qF -- "$text" || fail "$name: '$(net_lines | head -1)' lacks '$text'"
    [ "$got" -eq "$n" ] && [ "$distinct" -eq 1 ] && net_lines | head -1 | grep -qF -- "$text" &&
        ok "$name: $(net_lines | head -1)"
}

build slurm_job
TB_NODES=3
tb_up || { echo "FAIL: the test bed did not come up"; exit 1; }

# auto, 2 nodes x 2 ranks: rank 0's estimate of its TCP link to node2 reaches all four ranks, and
# it is not the built-in InfiniBand guess.
njob auto_2x2 env UMPI_DEBUG=1 srun --mpi=pmix -N 2 -n 4 "$WORK/slurm_job" 2 2
expect_net "auto, 2 nodes x 2" 4 "(UCX's estimate, from rank 0)"
net_lines | head -1 | grep -q "latency 2.000 us, bandwidth 11000 MB/s" &&
    fail "auto, 2 nodes x 2: UCX's estimate equals the built-in guess: $(net_lines | head -1)"
auto=$(net_lines | head -1 | sed 's/ (.*//')

# The same link priced from three nodes, and under PMI-2: the same estimate.
njob auto_3x1 env UMPI_DEBUG=1 srun --mpi=pmix -N 3 -n 3 "$WORK/slurm_job" 3 1
expect_net "auto, 3 nodes x 1" 3 "$auto (UCX's estimate, from rank 0)"
njob auto_pmi2 env UMPI_DEBUG=1 srun --mpi=pmi2 -N 2 -n 2 "$WORK/slurm_job" 2 1
expect_net "auto, srun --mpi=pmi2" 2 "$auto (UCX's estimate, from rank 0)"

# One node: no network, nothing asked.
njob auto_1node env UMPI_DEBUG=1 srun --mpi=pmix -N 1 -n 2 "$WORK/slurm_job" 1 2
[ "$(net_lines | wc -l)" -eq 0 ] && ok "one node: no network parameters set" ||
    fail "one node: $(net_lines | head -1)"

# builtin and LAT,BW.
njob builtin env UMPI_DEBUG=1 UMPI_COLL_NET_COST=builtin srun --mpi=pmix -N 2 -n 4 "$WORK/slurm_job" 2 2
expect_net "UMPI_COLL_NET_COST=builtin" 4 "latency 2.000 us, bandwidth 11000 MB/s (UMPI_COLL_NET_COST=builtin)"
njob given env UMPI_DEBUG=1 UMPI_COLL_NET_COST=30,500 srun --mpi=pmix -N 3 -n 3 "$WORK/slurm_job" 3 1
expect_net "UMPI_COLL_NET_COST=30,500" 3 "latency 30.000 us, bandwidth 500 MB/s (UMPI_COLL_NET_COST)"

finish
