#!/bin/bash
# One-sided communication across two nodes of the Slurm test bed (testbed.sh): the MPI test
# programs rma_win, rma_acc and rma_sync (test/mpi) at 4 ranks, 2 per node, under
# `srun --mpi=pmix`, with window traffic as messages (UMPI_RMA_UCX=0) and through UCX RMA
# (UMPI_RMA_UCX=1), ranks in block and in cyclic order (so that a rank's ring neighbours are on the
# other node either way). rma_win also checks that a shared window on MPI_COMM_WORLD fails with
# MPI_ERR_RMA_SHARED when the job spans nodes, and makes its shared windows per node.
# Skipped (77) where the test bed cannot run: not root, or Slurm/munge not installed.
#
# Each check prints "ok: ..." or "FAIL: ...".
. "$(dirname "$0")/../launch/common.sh"
. "$SRCDIR/bed_test.sh"

PROGS="rma_win rma_acc rma_sync"
for prog in $PROGS; do
    "$MPICC" -o "$WORK/$prog" "$SRCDIR/../mpi/$prog.c" || { echo "FAIL: $TEST: cannot compile $prog.c"; exit 1; }
done

TB_NODES=2
tb_up || { echo "FAIL: the test bed did not come up"; exit 1; }

# The layout the jobs below assume: two tasks on each node.
sjob layout 60 srun -N 2 -n 4 hostname
layout=$(sort "$OUT" | uniq -c | awk '{ printf "%s:%s ", $2, $1 }')
[ "$RC" -eq 0 ] && [ "$layout" = "node1:2 node2:2 " ] && ok "srun -N 2 -n 4: $layout" ||
    fail "srun -N 2 -n 4 hostname: exit $RC, tasks per node '$layout' (stderr: $(head -c 400 "$ERR"))"

# rjob NAME CMD...: sjob with 90 s at most, which must pass (exit 0, " No Errors").
rjob() {
    local name=$1
    shift
    sjob "$name" 90 "$@"
    if [ "$RC" -ne 0 ]; then
        fail "$name: exit $RC: $* (stdout: $(head -c 400 "$OUT"); stderr: $(head -c 600 "$ERR"))"
    elif ! grep -q "^ No Errors\$" "$OUT"; then
        fail "$name: no ' No Errors' (stdout: $(head -c 400 "$OUT"); stderr: $(head -c 400 "$ERR"))"
    else
        ok "$name (${MS} ms)"
    fi
}

for ucx in 0 1; do
    for dist in block cyclic; do
        for prog in $PROGS; do
            rjob "$prog.ucx$ucx.$dist" env UMPI_RMA_UCX=$ucx \
                srun --mpi=pmix --kill-on-bad-exit=1 -N 2 -n 4 --distribution=$dist "$WORK/$prog"
        done
    done
done

finish
