#!/bin/sh
# SIGTERM and SIGINT to mpirun reach every rank; ranks that ignore them get SIGKILL after the
# grace period; mpirun exits with 128+signo and leaves nothing behind, even when killed -9.
. "$(dirname "$0")/common.sh"
build sleeper

# start_job ARGS...: mpirun in the background, returns once every rank printed "ready".
start_job() {
    nranks=$1
    shift
    "$MPIRUN" -n "$nranks" "$@" >"$OUT" 2>"$ERR" &
    MP=$!
    for i in $(seq 1 50); do
        [ "$(grep -c ready "$OUT")" -eq "$nranks" ] && return 0
        sleep 0.1
    done
    fail "$*: ranks did not start"
}

stop_job() {
    sig=$1
    t0=$(now_ms)
    kill -"$sig" $MP
    wait $MP
    RC=$?
    MS=$(($(now_ms) - t0))
}

start_job 3 "$WORK/sleeper"
stop_job TERM
expect_rc 143 "SIGTERM"
expect_within 1000 "SIGTERM"
check_no_orphans "SIGTERM"

start_job 2 "$WORK/sleeper"
stop_job INT
expect_rc 130 "SIGINT"
expect_within 1000 "SIGINT"
check_no_orphans "SIGINT"

# Ranks that ignore SIGTERM: killed after the 2 s grace period.
start_job 2 "$WORK/sleeper" ignore
stop_job TERM
expect_rc 143 "SIGTERM ignored by the ranks"
[ "$MS" -ge 1500 ] || fail "SIGTERM ignored by the ranks: ended after $MS ms, before the grace period"
expect_within 3500 "SIGTERM ignored by the ranks"
check_no_orphans "SIGTERM ignored by the ranks"

# mpirun killed with -9: the ranks die with it (they cannot be signalled by it any more). Its
# server directory cannot be cleaned up: keep it in the scratch directory.
mkdir -p "$WORK/tmp"
TMPDIR=$WORK/tmp start_job 2 "$WORK/sleeper" ignore
kill -KILL $MP
wait $MP 2>/dev/null
check_no_orphans "mpirun killed by SIGKILL"
finish
