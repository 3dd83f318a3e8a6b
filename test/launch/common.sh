# Shared by the launcher tests (sourced). The harness sets UMPI_PREFIX (the install prefix: bin/mpirun,
# bin/mpicc) and TESTDIR (a scratch directory). Each test prints "FAIL: ..." lines for what went
# wrong and exits nonzero if anything did.
set -u
: "${UMPI_PREFIX:?UMPI_PREFIX must name the install prefix}"
: "${TESTDIR:?TESTDIR must name a scratch directory}"
SRCDIR=$(cd "$(dirname "$0")" && pwd)
TEST=$(basename "$0" .sh)
MPIRUN=$UMPI_PREFIX/bin/mpirun
MPICC=$UMPI_PREFIX/bin/mpicc
OUT=$TESTDIR/$TEST.out
ERR=$TESTDIR/$TEST.err
mkdir -p "$TESTDIR"
failures=0

fail() {
    echo "FAIL: $TEST: $*"
    failures=$((failures + 1))
}

# Compiles test/launch/NAME.c with the installed mpicc into $TESTDIR/NAME.
build() {
    for prog in "$@"; do
        "$MPICC" -o "$TESTDIR/$prog" "$SRCDIR/$prog.c" || { echo "FAIL: $TEST: cannot compile $prog.c"; exit 1; }
    done
}

now_ms() { date +%s%3N; }

# run ARGS...: runs mpirun ARGS with stdin from /dev/null unless redirected by the caller;
# sets RC (exit status) and MS (wall time); stdout in $OUT, stderr in $ERR.
run() {
    t0=$(now_ms)
    "$MPIRUN" "$@" >"$OUT" 2>"$ERR"
    RC=$?
    MS=$(($(now_ms) - t0))
}

expect_rc() {
    [ "$RC" -eq "$1" ] || fail "$2: exit status $RC, expected $1 (stderr: $(head -c 400 "$ERR"))"
}

expect_within() {
    [ "$MS" -le "$1" ] || fail "$2: took $MS ms, expected at most $1 ms"
}

expect_err() {
    grep -q -- "$1" "$ERR" || fail "$2: stderr lacks '$1' (stderr: $(head -c 400 "$ERR"))"
}

expect_out_lines() {
    n=$(grep -c -- "$1" "$OUT")
    [ "$n" -eq "$2" ] || fail "$3: $n stdout lines match '$1', expected $2"
}

# Processes still running a program of $TESTDIR (ranks that outlived their mpirun), after giving
# the kernel up to a second to deliver the deaths already under way.
check_no_orphans() {
    for i in 1 2 3 4 5 6 7 8 9 10; do
        # ps first, then grep: in a pipeline the grep (whose arguments name $TESTDIR) would be listed.
        procs=$(ps -eo pid=,stat=,args=)
        left=$(printf '%s\n' "$procs" | grep -F "$TESTDIR/" | awk '$2 !~ /^Z/ {print $1}')
        [ -z "$left" ] && return 0
        sleep 0.1
    done
    fail "$1: processes left behind: $(printf '%s\n' "$procs" | grep -F "$TESTDIR/" | tr '\n' ';')"
    kill -9 $left 2>/dev/null
}

finish() {
    if [ "$failures" -eq 0 ]; then
        echo "PASS: $TEST"
        exit 0
    fi
    echo "$TEST: $failures failure(s)"
    exit 1
}
