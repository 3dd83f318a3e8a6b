#!/bin/sh
# Collectives on device buffers within a node through CUDA IPC, as umpi's
# counters tell it (UMPI_DEBUG=1 prints them at MPI_Finalize): gpu_coll_ipc's calls at or above
# UMPI_CUDA_COLL_IPC_MIN go through CUDA IPC, exactly as many as the program expects (coll_ipc), the
# smaller ones through host memory; a rank with host memory, or a driver refusing IPC, makes every
# rank agree on host memory, counted (coll_ipc_fallback) and said with the reason; UMPI_CUDA_COLL_IPC=0
# is never asked; no mapping is in use at MPI_Finalize and none is left in the driver at exit.
. "$(dirname "$0")/../launch/common.sh"
: "${UMPI_CUDA_LIBRARY:?the fakegpu suite sets UMPI_CUDA_LIBRARY}"
"$MPICC" -o "$WORK/gpu_coll_ipc" "$SRCDIR/gpu_coll_ipc.c" || { echo "FAIL: cannot compile gpu_coll_ipc.c"; exit 1; }
export MPITEST_MEMTYPE=device UMPI_CUDA_COLL_IPC_MIN=4096

. "$(dirname "$0")/ipc_common.sh"

# 1. every rank device memory: the counter equals what the program expects, per rank
UMPI_DEBUG=1 run -n 3 "$WORK/gpu_coll_ipc"
ok_run "device"
for r in 0 1 2; do
    want=$(sed -n "s/^\[$r\] expect coll_ipc=//p" "$ERR")
    got=$(count $r coll_ipc)
    [ -n "$want" ] && [ "$want" -gt 0 ] || fail "device: rank $r expects no IPC collective ('$want')"
    [ "${got:-0}" = "$want" ] || fail "device: rank $r did ${got:-0} collectives through CUDA IPC, expected $want"
    lacks $r coll_ipc_fallback "device"
done
expect_err "allreduce on MPI_COMM_WORLD (size 3, [0-9]* bytes): device buffers through CUDA IPC" "device says the path"
n=$(grep -c "at MPI_Finalize: .* IPC mapping(s) cached, 0 in use" "$ERR")
[ "$n" -eq 3 ] || fail "device: $n of 3 ranks finalized with no IPC mapping in use"

# 2. below the threshold: nothing through CUDA IPC
UMPI_DEBUG=1 UMPI_CUDA_COLL_IPC_MIN=1073741824 run -n 2 "$WORK/gpu_coll_ipc" 4096
ok_run "below the threshold"
for r in 0 1; do
    lacks $r coll_ipc "below the threshold"
    lacks $r coll_ipc_fallback "below the threshold"
    has $r coll_staged "below the threshold"
done

# 3. rank 1 passes host memory: every rank agrees on host memory, counts it and says why
UMPI_DEBUG=1 MPITEST_MEMTYPE=mix run -n 3 "$WORK/gpu_coll_ipc"
ok_run "mix"
for r in 0 1 2; do
    lacks $r coll_ipc "mix"
    has $r coll_ipc_fallback "mix"
done
expect_err "umpi\[0\] debug: cuda: allreduce of [0-9]* bytes: not through CUDA IPC.*rank 1 has a buffer in host" "mix says why"

# 4. the driver refuses to open handles: agreed, counted, said
UMPI_DEBUG=1 FAKECUDA_IPC=noopen run -n 2 "$WORK/gpu_coll_ipc"
ok_run "IPC refused"
for r in 0 1; do
    lacks $r coll_ipc "IPC refused"
    has $r coll_ipc_fallback "IPC refused"
done
expect_err "could not be mapped here" "IPC refused says why"

# 5. UMPI_CUDA_COLL_IPC=0: not even asked
UMPI_DEBUG=1 UMPI_CUDA_COLL_IPC=0 run -n 2 "$WORK/gpu_coll_ipc"
ok_run "UMPI_CUDA_COLL_IPC=0"
for r in 0 1; do
    lacks $r coll_ipc "UMPI_CUDA_COLL_IPC=0"
    lacks $r coll_ipc_fallback "UMPI_CUDA_COLL_IPC=0"
done

# 6. a value the knob does not know: said, and taken as auto
UMPI_CUDA_COLL_IPC=sometimes run -n 2 "$WORK/gpu_coll_ipc"
ok_run "UMPI_CUDA_COLL_IPC=sometimes"
expect_err 'UMPI_CUDA_COLL_IPC="sometimes": not auto, 0 or 1; using auto' "a bad UMPI_CUDA_COLL_IPC is named"

# 7. no IPC mapping (nor anything else) left in the driver at exit
FAKECUDA_REPORT=1 run -n 2 "$WORK/gpu_coll_ipc"
ok_run "driver at exit"
n=$(grep -c "at exit: 0 device, 0 pinned, 0 registered, 0 managed allocations, 0 IPC mappings, 0 streams, 0 events live" "$ERR")
[ "$n" -eq 2 ] || fail "driver at exit: $(grep 'at exit' "$ERR" | head -2)"
# 8. umpi_info --gpu says which collectives take CUDA IPC, from which size
UMPI_CUDA_COLL_IPC_MIN=1m "$UMPI_PREFIX/bin/umpi_info" --gpu >"$OUT" 2>"$ERR"
grep -q "GPU collectives .*through CUDA IPC from 1048576 bytes (UMPI_CUDA_COLL_IPC=auto)" "$OUT" ||
    fail "umpi_info --gpu: $(grep 'GPU collectives' "$OUT")"
UMPI_CUDA_COLL_IPC=0 "$UMPI_PREFIX/bin/umpi_info" --gpu >"$OUT" 2>"$ERR"
grep -q "GPU collectives .*through host memory (UMPI_CUDA_COLL_IPC=0)" "$OUT" ||
    fail "umpi_info --gpu with UMPI_CUDA_COLL_IPC=0: $(grep 'GPU collectives' "$OUT")"
check_no_orphans "coll_ipc"
finish
