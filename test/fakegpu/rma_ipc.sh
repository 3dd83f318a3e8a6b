#!/bin/sh
# One-sided puts and gets to device windows within a node through CUDA IPC, as umpi's counters tell
# it (UMPI_DEBUG=1 prints them at MPI_Finalize): rma_device_ipc's fence and PSCW epochs copy
# through the targets' mappings (rma_ipc), never through host memory at the target for a put or
# get (its accumulates and its lock epoch do: rma_target); UMPI_CUDA_IPC=0 and a driver refusing
# the handles leave every operation on messages; host windows (mix: odd ranks) take no IPC; no
# mapping is left in use at MPI_Finalize, none in the driver at exit.
. "$(dirname "$0")/../launch/common.sh"
: "${UMPI_CUDA_LIBRARY:?the fakegpu suite sets UMPI_CUDA_LIBRARY}"
"$MPICC" -o "$WORK/rma_device_ipc" "$SRCDIR/../mpi/rma_device_ipc.c" || { echo "FAIL: cannot compile rma_device_ipc.c"; exit 1; }
export MPITEST_MEMTYPE=device

. "$(dirname "$0")/ipc_common.sh"

# 1. every window device memory: each rank's 8 gets and 8 puts go through CUDA IPC; the target
#    applies only the accumulates (4) and the lock epoch's put (1) itself
UMPI_DEBUG=1 run -n 2 "$WORK/rma_device_ipc"
ok_run "device"
for r in 0 1; do
    [ "$(count $r rma_ipc)" = 16 ] || fail "device: rank $r copied $(count $r rma_ipc) operations through CUDA IPC, want 16"
    [ "$(count $r rma_target)" = 5 ] || fail "device: rank $r applied $(count $r rma_target) requests, want 5"
    lacks $r ipc_fallback "device"
done
expect_err "exported for CUDA IPC" "device says the path"
n=$(grep -c "at MPI_Finalize: .* IPC mapping(s) cached, 0 in use" "$ERR")
[ "$n" -eq 2 ] || fail "device: $n of 2 ranks finalized with no IPC mapping in use"

# 2. mix: odd ranks' windows are host memory: only the operations to even ranks take IPC
UMPI_DEBUG=1 MPITEST_MEMTYPE=mix run -n 4 "$WORK/rma_device_ipc"
ok_run "mix"
for r in 1 3; do has $r rma_ipc "mix"; done
for r in 0 2; do lacks $r rma_ipc "mix"; done

# 3. UMPI_CUDA_IPC=0: messages, applied at the target
UMPI_DEBUG=1 UMPI_CUDA_IPC=0 run -n 2 "$WORK/rma_device_ipc"
ok_run "UMPI_CUDA_IPC=0"
for r in 0 1; do
    lacks $r rma_ipc "UMPI_CUDA_IPC=0"
    has $r rma_target "UMPI_CUDA_IPC=0"
done

# 4. the driver refuses to open the handles: messages, counted once as a fallback
UMPI_DEBUG=1 FAKECUDA_IPC=noopen run -n 2 "$WORK/rma_device_ipc"
ok_run "IPC refused"
for r in 0 1; do
    lacks $r rma_ipc "IPC refused"
    has $r ipc_fallback "IPC refused"
done

# 5. nothing left in the driver at exit
FAKECUDA_REPORT=1 run -n 2 "$WORK/rma_device_ipc"
ok_run "driver at exit"
n=$(grep -c "at exit: 0 device, 0 pinned, 0 registered, 0 managed allocations, 0 IPC mappings, 0 streams, 0 events live" "$ERR")
[ "$n" -eq 2 ] || fail "driver at exit: $(grep 'at exit' "$ERR" | head -2)"
check_no_orphans "rma_ipc"
finish
