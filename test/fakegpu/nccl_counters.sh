#!/bin/sh
# NCCL says what it did: with the fake CUDA driver and the fake NCCL (runtests
# sets UMPI_CUDA_LIBRARY, UMPI_NCCL_LIBRARY, MPITEST_MEMTYPE=device), UMPI_DEBUG=1 shows when NCCL
# ran a collective, the counters nccl_colls / nccl_comms / nccl_declined at MPI_Finalize, and why a
# collective on device buffers was not NCCL's: a type or op NCCL lacks, a nonblocking call, host
# memory at another process, no NCCL to load; nothing is left in the driver at exit.
. "$(dirname "$0")/../launch/common.sh"
: "${UMPI_NCCL_LIBRARY:?the fakegpu suite sets UMPI_NCCL_LIBRARY}"
# CUDA IPC takes one-node communicators first (umpi_coll_dev_offload): off here, so NCCL gets them
export UMPI_CUDA_COLL_IPC=0
"$MPICC" -o "$WORK/gpu_nccl" "$SRCDIR/gpu_nccl.c" || { echo "FAIL: cannot compile gpu_nccl.c"; exit 1; }

counters() { grep "umpi\[$1\] debug: cuda counters:" "$ERR"; }
has() { counters "$1" | grep -q " $2=[1-9]" || fail "$3: rank $1's counters lack $2 ($(counters "$1"))"; }
lacks() { ! counters "$1" | grep -q " $2=" || fail "$3: rank $1's counters have $2 ($(counters "$1"))"; }

# 1. NCCL runs the collectives and says so; what it does not take is counted with the reason
UMPI_DEBUG=1 UMPI_NCCL=auto FAKECUDA_REPORT=1 run -n 2 "$WORK/gpu_nccl"
expect_rc 0 "NCCL"
grep -q "No Errors" "$OUT" || fail "NCCL: no 'No Errors'"
for r in 0 1; do
    has $r nccl_colls "NCCL"
    has $r nccl_comms "NCCL"
    has $r nccl_declined "NCCL"
done
expect_err "umpi\[0\] debug: nccl: loaded .*libnccl_fake.so, NCCL 2.19.3" "NCCL: the library loaded"
expect_err "umpi\[1\] debug: allreduce on MPI_COMM_WORLD (size 2, 32768 bytes): NCCL (device buffers" "NCCL: a collective it ran"
expect_err "umpi\[1\] debug: bcast on MPI_COMM_WORLD .*: NCCL" "NCCL: bcast"
expect_err "umpi\[1\] debug: allgather on MPI_COMM_WORLD .*: NCCL" "NCCL: allgather"
expect_err "umpi\[1\] debug: reduce_scatter_block on MPI_COMM_WORLD .*: NCCL" "NCCL: reduce_scatter_block"
expect_err "not run by NCCL: NCCL has no such datatype \[nccl_declined\]" "NCCL: MPI_SHORT"
expect_err "not run by NCCL: NCCL has no such op" "NCCL: MPI_BAND"
expect_err "not run by NCCL: nonblocking and persistent collectives are staged" "NCCL: iallreduce"
expect_err "umpi\[1\] debug: cuda: allreduce of 131072 bytes on device buffers not run by NCCL: another process's buffers" \
    "NCCL: host memory at rank 0, said at rank 1"
n=$(grep -c "at exit: 0 device, 0 pinned, 0 registered, 0 managed allocations, 0 IPC mappings, 0 streams, 0 events live" "$ERR")
[ "$n" -eq 2 ] || fail "NCCL: driver at exit: $(grep 'at exit' "$ERR" | head -2)"

# 2. host buffers everywhere: no NCCL, nothing declined (below or above the threshold)
UMPI_DEBUG=1 UMPI_NCCL=auto MPITEST_MEMTYPE=host run -n 2 "$WORK/gpu_nccl"
expect_rc 0 "host buffers"
lacks 0 nccl_colls "host buffers"
lacks 0 nccl_declined "host buffers"

# 3. no NCCL to load: said once, then the staged path
UMPI_DEBUG=1 UMPI_NCCL=auto UMPI_NCCL_LIBRARY=/nonexistent/libnccl.so.2 run -n 2 "$WORK/gpu_nccl"
expect_rc 0 "no NCCL"
expect_err "nccl: not used: /nonexistent/libnccl.so.2 could not be loaded" "no NCCL: why"
expect_err "nccl: not used on this communicator from now on: NCCL is not usable here" "no NCCL: the communicator"
lacks 0 nccl_colls "no NCCL"
has 0 nccl_declined "no NCCL"
check_no_orphans "nccl_counters"
finish
