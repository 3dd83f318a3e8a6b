#!/bin/sh
# The device paths say what they did: with the fake CUDA driver (runtests sets
# UMPI_CUDA=1, UMPI_CUDA_LIBRARY and MPITEST_MEMTYPE=device), UMPI_DEBUG=1's counters at
# MPI_Finalize show CUDA IPC taken between processes of one node, the pipeline and its reason when
# IPC is off or refused, collectives staged; nothing is left in use at MPI_Finalize, nothing is
# left allocated in the driver at exit; umpi_info and MPIX_Query_cuda_support report GPU buffers.
. "$(dirname "$0")/../launch/common.sh"
: "${UMPI_CUDA_LIBRARY:?the fakegpu suite sets UMPI_CUDA_LIBRARY}"
for prog in sendrecv coll_basic cuda_query; do
    "$MPICC" -o "$WORK/$prog" "$SRCDIR/../mpi/$prog.c" || { echo "FAIL: cannot compile $prog.c"; exit 1; }
done

# counters LINE RANK: rank RANK's "cuda counters:" line
counters() { grep "umpi\[$1\] debug: cuda counters:" "$ERR"; }
has() { counters "$1" | grep -q " $2=[1-9]" || fail "$3: rank $1's counters lack $2 ($(counters "$1"))"; }
lacks() { ! counters "$1" | grep -q " $2=" || fail "$3: rank $1's counters have $2 ($(counters "$1"))"; }
clean_finalize() {
    n=$(grep -c "at MPI_Finalize: .* IPC mapping(s) cached, 0 in use; .* pinned staging buffer(s) pooled, 0 in use; 0 transfer(s) active" "$ERR")
    [ "$n" -eq "$2" ] || fail "$1: $n of $2 ranks finalized with nothing in use ($(grep 'at MPI_Finalize' "$ERR" | head -2))"
    ! grep -q "still in use" "$ERR" || fail "$1: $(grep 'still in use' "$ERR" | head -1)"
}

# 1. CUDA IPC between the two ranks (same node), large messages; the small ones staged. The fake
#    driver opens another process's memory through /proc/PID/fd: where that is not allowed (a
#    hardened container), its IPC opens fail and the fallback (checked in 3) is all there is.
sleep 5 & sleeper=$!
if readlink "/proc/$sleeper/fd/1" >/dev/null 2>&1; then
    UMPI_DEBUG=1 run -n 2 "$WORK/sendrecv"
    expect_rc 0 "IPC"
    grep -q "No Errors" "$OUT" || fail "IPC: no 'No Errors'"
    has 1 ipc_transfers "IPC"
    has 1 ipc_opened "IPC"
    has 1 staged_copies "IPC"
    lacks 0 pipe_fallback "IPC"
    lacks 1 pipelined "IPC"
    clean_finalize "IPC" 2
else
    echo "note: /proc/PID/fd of another process cannot be read here: the fake driver's CUDA IPC is off"
fi
kill $sleeper 2>/dev/null

# 2. UMPI_CUDA_IPC=0: the pipeline, and why
UMPI_DEBUG=1 UMPI_CUDA_IPC=0 run -n 2 "$WORK/sendrecv"
expect_rc 0 "UMPI_CUDA_IPC=0"
has 0 pipe_fallback "UMPI_CUDA_IPC=0"
has 0 pipelined "UMPI_CUDA_IPC=0"
has 1 pipelined "UMPI_CUDA_IPC=0"
lacks 1 ipc_transfers "UMPI_CUDA_IPC=0"
expect_err "through the pipeline: UMPI_CUDA_IPC=0" "UMPI_CUDA_IPC=0 says why"
clean_finalize "UMPI_CUDA_IPC=0" 2

# 3. the driver refuses to open the handle: counted, said, and the pipeline carries it
UMPI_DEBUG=1 FAKECUDA_IPC=noopen run -n 2 "$WORK/sendrecv"
expect_rc 0 "IPC refused"
grep -q "No Errors" "$OUT" || fail "IPC refused: no 'No Errors'"
has 1 ipc_fallback "IPC refused"
has 1 pipelined "IPC refused"
lacks 1 ipc_transfers "IPC refused"
expect_err "could not be opened" "IPC refused says why"
clean_finalize "IPC refused" 2

# 4. collectives: small ones run whole on host copies, larger ones stage each step's device data
#    through host memory (reductions on the CPU where no GPU kernel serves them)
UMPI_DEBUG=1 run -n 3 "$WORK/coll_basic"
expect_rc 0 "collectives"
has 0 coll_whole "collectives"
has 0 coll_staged "collectives"
has 0 reduce_staged "collectives"
expect_err "computed by the CPU" "collectives say the reduction is on the CPU"
expect_err "run whole on host copies" "collectives say which ran whole on host copies"
clean_finalize "collectives" 3
UMPI_DEBUG=1 UMPI_CUDA_COLL_STAGE_MAX=0 run -n 3 "$WORK/coll_basic"
expect_rc 0 "collectives, UMPI_CUDA_COLL_STAGE_MAX=0"
lacks 0 coll_whole "collectives, UMPI_CUDA_COLL_STAGE_MAX=0"
has 0 coll_staged "collectives, UMPI_CUDA_COLL_STAGE_MAX=0"
clean_finalize "collectives, UMPI_CUDA_COLL_STAGE_MAX=0" 3

# 5. nothing left in the driver at exit (the test frees its own buffers before MPI_Finalize)
FAKECUDA_REPORT=1 run -n 2 "$WORK/sendrecv"
expect_rc 0 "driver at exit"
n=$(grep -c "at exit: 0 device, 0 pinned, 0 registered, 0 managed allocations, 0 IPC mappings, 0 streams, 0 events live" "$ERR")
[ "$n" -eq 2 ] || fail "driver at exit: $(grep 'at exit' "$ERR" | head -2)"

# 6. umpi_info and MPIX_Query_cuda_support see a GPU whose buffers are carried
"$UMPI_PREFIX/bin/umpi_info" --gpu >"$OUT" 2>"$ERR"
RC=$?
expect_rc 0 "umpi_info --gpu with the fake driver"
grep -q "GPU buffers  *carried" "$OUT" || fail "umpi_info --gpu: $(grep 'GPU buffers' "$OUT")"
run -n 2 "$WORK/cuda_query" 1
expect_rc 0 "MPIX_Query_cuda_support() is 1"
check_no_orphans "counters"
finish
