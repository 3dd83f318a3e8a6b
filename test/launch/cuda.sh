#!/bin/sh
# The GPU state end to end, on any machine: umpi_info --gpu decides what MPI_Init must do, and
# MPIX_Query_cuda_support (test/mpi/cuda_query.c) must agree under auto, 0 and 1; UMPI_DEBUG=1 says
# what was found; umpi_info --all lists the knobs. Without a GPU, UMPI_CUDA=1 must stop MPI_Init.
. "$(dirname "$0")/common.sh"
INFO=$UMPI_PREFIX/bin/umpi_info

"$MPICC" -o "$WORK/cuda_query" "$SRCDIR/../mpi/cuda_query.c" || { echo "FAIL: cannot compile cuda_query.c"; exit 1; }
"$INFO" --gpu >"$OUT" 2>"$ERR"
gpu=$?
[ $gpu -le 1 ] || fail "umpi_info --gpu: exit status $gpu"
grep -q "^  GPU  *UMPI_CUDA=auto" "$OUT" || fail "umpi_info --gpu: no GPU line ($(cat "$OUT"))"
want=$((1 - gpu))

run -n 2 "$WORK/cuda_query" $want prepost
expect_rc 0 "auto: MPIX_Query_cuda_support() == $want"
UMPI_CUDA=0 run -n 2 "$WORK/cuda_query" 0 prepost
expect_rc 0 "UMPI_CUDA=0"

UMPI_CUDA=1 "$INFO" --gpu >"$OUT" 2>"$ERR"
RC=$?
expect_rc $gpu "umpi_info --gpu with UMPI_CUDA=1"
UMPI_DEBUG=1 UMPI_CUDA=1 run -n 1 "$WORK/cuda_query" 1
if [ $gpu -eq 0 ]; then
    expect_rc 0 "UMPI_CUDA=1 on a GPU machine"
    expect_err "cuda: in use: driver" "UMPI_DEBUG=1 names the driver"
    expect_err "cuda counters:" "UMPI_DEBUG=1 prints the counters at finalize"
else
    [ "$RC" -ne 0 ] || fail "UMPI_CUDA=1 without a GPU: MPI_Init did not fail"
    expect_err "UMPI_CUDA=1 but CUDA cannot be used" "UMPI_CUDA=1 without a GPU says why"
    UMPI_DEBUG=1 run -n 1 "$WORK/cuda_query" 0
    expect_rc 0 "auto without a GPU"
    expect_err "cuda: host memory only" "UMPI_DEBUG=1 says why CUDA is not used"
fi
check_no_orphans "UMPI_CUDA=1"

"$INFO" --all >"$OUT" 2>"$ERR"
grep -q "^  UMPI_CUDA  " "$OUT" || fail "umpi_info --all does not list UMPI_CUDA"
grep -q "^  UMPI_CUDA_HOST_CACHE  " "$OUT" || fail "umpi_info --all does not list UMPI_CUDA_HOST_CACHE"
grep -q "^  GPU buffers " "$OUT" || fail "umpi_info --all: no 'GPU buffers' line"
finish
