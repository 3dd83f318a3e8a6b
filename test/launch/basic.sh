#!/bin/sh
# mpirun starts 1, 2 and 4 ranks (-n and -np), mpiexec is the same program, exit status 0.
. "$(dirname "$0")/common.sh"
build hello

for n in 1 2 4; do
    run -n $n "$WORK/hello"
    expect_rc 0 "-n $n"
    expect_out_lines "^hello from rank [0-9] of $n\$" $n "-n $n"
    for r in $(seq 0 $((n - 1))); do
        grep -q "^hello from rank $r of $n\$" "$OUT" || fail "-n $n: no hello from rank $r"
    done
done
run -np 2 "$WORK/hello"
expect_rc 0 "-np 2"
expect_out_lines "^hello from rank" 2 "-np 2"
run "$WORK/hello"
expect_out_lines "^hello from rank 0 of 1" 1 "no -n (one rank)"

if [ -x "$UMPI_PREFIX/bin/mpiexec" ]; then
    "$UMPI_PREFIX/bin/mpiexec" -n 2 "$WORK/hello" >"$OUT" 2>"$ERR"
    RC=$?
    expect_rc 0 "mpiexec -n 2"
    expect_out_lines "^hello from rank" 2 "mpiexec -n 2"
else
    fail "no $UMPI_PREFIX/bin/mpiexec"
fi
# The PMIx server's private directory is removed at exit.
mkdir -p "$WORK/tmp"
rm -rf "$WORK/tmp/"*
TMPDIR=$WORK/tmp "$MPIRUN" -n 2 "$WORK/hello" >"$OUT" 2>"$ERR"
left=$(ls -A "$WORK/tmp")
[ -z "$left" ] || fail "mpirun left $left in TMPDIR"
check_no_orphans "basic"
finish
