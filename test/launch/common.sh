# Shared by the launcher tests (sourced). test/runtests sets UMPI_PREFIX (the install prefix:
# bin/mpirun, bin/mpicc), TESTDIR (this folder) and UMPI_TEST_WORKDIR (a scratch folder of the
# test's own); without UMPI_TEST_WORKDIR, TESTDIR is taken as the scratch folder. Each test prints
# "FAIL: ..." lines for what went wrong and exits nonzero if anything did.
set -u
: "${UMPI_PREFIX:?UMPI_PREFIX must name the install prefix}"
WORK=${UMPI_TEST_WORKDIR:-${TESTDIR:?TESTDIR or UMPI_TEST_WORKDIR must name a scratch folder}}
SRCDIR=$(cd "$(dirname "$0")" && pwd)
TEST=$(basename "$0" .sh)
MPIRUN=$UMPI_PREFIX/bin/mpirun
MPICC=$UMPI_PREFIX/bin/mpicc
OUT=$WORK/$TEST.out
ERR=$WORK/$TEST.err
mkdir -p "$WORK"
failures=0

fail() {
    echo "FAIL: $TEST: $*"
    failures=$((failures + 1))
}

# Compiles test/launch/NAME.c with the installed mpicc into $WORK/NAME.
build() {
    for prog in "$@"; do
        "$MPICC" -o "$WORK/$prog" "$SRCDIR/$prog.c" || { echo "FAIL: $TEST: cannot compile $prog.c"; exit 1; }
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

# Processes still running a program of $WORK (ranks that outlived their mpirun), after giving
# the kernel up to a second to deliver the deaths already under way.
check_no_orphans() {
    for i in 1 2 3 4 5 6 7 8 9 10; do
        # ps first, then grep: in a pipeline the grep (whose arguments name $WORK) would be listed.
        procs=$(ps -eo pid=,stat=,args=)
        left=$(printf '%s\n' "$procs" | grep -F "$WORK/" | awk '$2 !~ /^Z/ {print $1}')
        [ -z "$left" ] && return 0
        sleep 0.1
    done
    fail "$1: processes left behind: $(printf '%s\n' "$procs" | grep -F "$WORK/" | tr '\n' ';')"
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
