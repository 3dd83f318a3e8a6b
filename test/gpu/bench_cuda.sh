#!/bin/sh
# bench/ with device buffers: builds one OSU-style benchmark of bench/ with the
# installed mpicc, as a user would, and runs it with `-d cuda` in every buffer placement (D D, D H,
# H D, H H; osu_allreduce: every buffer on the device), short, with -c: every row must say Pass,
# and UMPI_DEBUG=1's counters at MPI_Finalize must show that the device paths ran (small messages
# staged, large ones by CUDA IPC or the pipeline, collectives staged) on the ranks whose buffers
# are device memory, and none on ranks of host placements. Nothing may be left in use.
#
#   bench_cuda.sh osu_latency|osu_bw|osu_bibw|osu_allreduce
#
# The gpu suite runs it on a real GPU (driver libcuda.so.1); the fakegpu suite on the fake driver
# (runtests sets UMPI_CUDA=1 and UMPI_CUDA_LIBRARY, which the benchmark opens too).
. "$(dirname "$0")/../launch/common.sh"
BENCH=${1:?usage: bench_cuda.sh osu_latency|osu_bw|osu_bibw|osu_allreduce}
TEST=bench_cuda-$BENCH
OUT=$WORK/$TEST.out
ERR=$WORK/$TEST.err
BENCHSRC=$SRCDIR/../../bench
"$MPICC" -O2 -o "$WORK/$BENCH" "$BENCHSRC/$BENCH.c" >"$WORK/$BENCH.build.log" 2>&1 ||
    { echo "FAIL: $TEST: cannot build bench/$BENCH.c: $(head -c 600 "$WORK/$BENCH.build.log")"; exit 1; }

counters() { grep "umpi\[$1\] debug: cuda counters:" "$ERR"; }
# has RANK "A B ..." WHAT: one of the counters A, B, ... is nonzero on RANK
has() {
    for c in $2; do counters "$1" | grep -q " $c=[1-9]" && return 0; done
    fail "$3: rank $1's counters have none of $2 ($(counters "$1"))"
}
lacks() {
    for c in $2; do ! counters "$1" | grep -q " $c=" || fail "$3: rank $1's counters have $c ($(counters "$1"))"; done
}
# rows WHAT N: N result rows, each ending in Pass
rows() {
    n=$(grep -c '^[0-9]' "$OUT")
    p=$(grep -c '^[0-9].*Pass$' "$OUT")
    [ "$n" -eq "$2" ] && [ "$p" -eq "$2" ] ||
        fail "$1: $p of $n rows passed validation, expected $2 ($(grep -v '^#' "$OUT" | grep -v Pass | head -3))"
    ! grep -q "still in use" "$ERR" || fail "$1: $(grep 'still in use' "$ERR" | head -1)"
    # every message of umpi's device protocol is received (UCX names those left over at exit)
    ! grep -q "was not matched" "$ERR" || fail "$1: $(grep -c 'was not matched' "$ERR") message(s) never received: $(grep 'was not matched' "$ERR" | head -1)"
}

# 1 B .. 1 MiB: 21 sizes, the largest well above the 32 KiB of UMPI_CUDA_STAGE_THRESH (envelopes)
P2P="-m 1:1048576 -i 4:2 -x 1:1"
case $BENCH in
osu_latency | osu_bibw | osu_bw)
    extra=""
    [ "$BENCH" = osu_latency ] || extra="-W 4"
    for place in "D D" "D H" "H D" "H H"; do
        set -- $place
        UMPI_DEBUG=1 run -n 2 "$WORK/$BENCH" -d cuda $1 $2 -c $P2P $extra
        expect_rc 0 "$place"
        grep -q "^# Send Buffer on .*($1) and Receive Buffer on .*($2)" "$OUT" || fail "$place: no placement line"
        rows "$place" 21
        # who receives large device messages: the second rank always, the first unless osu_bw
        recv0=1
        [ "$BENCH" = osu_bw ] && recv0=0
        for r in 0 1; do
            if [ $r -eq 0 ]; then mine=$1 other=$2; else mine=$2 other=$1; fi
            if [ "$mine" = D ]; then
                has $r "staged_copies" "$place"               # small messages through a host bounce
            elif [ "$other" = H ]; then
                lacks $r "staged_copies ipc_transfers pipelined" "$place"   # H H: no device path at all
            fi
            # a receiver of large messages from a device sender takes them by IPC or the pipeline
            if [ "$other" = D ] && { [ $r -eq 1 ] || [ $recv0 -eq 1 ]; }; then
                has $r "ipc_transfers pipelined" "$place"
            fi
        done
    done
    if [ "$BENCH" = osu_bw ]; then
        # the D-D copy baseline of the same run: two more numeric columns on every row
        run -n 2 "$WORK/$BENCH" -d cuda --copy-baseline -c -m 4096:1048576 -i 2 -x 1 -W 4
        expect_rc 0 "--copy-baseline"
        rows "--copy-baseline" 9
        n=$(grep -cE '^[0-9]+ +[0-9.]+ +[0-9]*\.[0-9]+ +[0-9.]+ +Pass$' "$OUT")
        [ "$n" -eq 9 ] || fail "--copy-baseline: $n of 9 rows have the copy columns ($(grep '^[0-9]' "$OUT" | head -2))"
        grep -q "DtoD copy (MB/s)" "$OUT" || fail "--copy-baseline: no column header"
    fi
    ;;
osu_allreduce)
    UMPI_DEBUG=1 run -n 3 "$WORK/$BENCH" -d cuda -c --staged-baseline -m 4:1048576 -i 3:2 -x 1:1
    expect_rc 0 "allreduce"
    grep -q "^# Every buffer on DEVICE" "$OUT" || fail "allreduce: no placement line"
    grep -q "Staged(us)" "$OUT" || fail "allreduce: no staged baseline column"
    rows "allreduce" 19
    for r in 0 1 2; do has $r "coll_whole coll_staged reduce_staged coll_ipc" "allreduce"; done
    ;;
*)
    echo "FAIL: $TEST: unknown benchmark $BENCH"
    exit 1
    ;;
esac

# a clear error where -d cuda cannot be served (no driver), exit nonzero, no hang
UMPI_CUDA=0 UMPI_CUDA_LIBRARY=$WORK/no-such-libcuda.so.1 run -n 2 "$WORK/$BENCH" -d cuda -m 8
[ "$RC" -ne 0 ] || fail "no driver: exit status 0"
expect_err "cannot load the CUDA driver $WORK/no-such-libcuda.so.1" "no driver"

[ $failures -eq 0 ] || exit 1
echo "PASS: $TEST"
