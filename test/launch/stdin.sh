#!/bin/sh
# mpirun's stdin goes to rank 0; the other ranks read /dev/null.
. "$(dirname "$0")/common.sh"
build echo_stdin

printf 'first line\nsecond line\n' >"$TESTDIR/stdin.txt"
run -n 3 "$TESTDIR/echo_stdin" <"$TESTDIR/stdin.txt"
expect_rc 0 "file on stdin"
expect_out_lines "^first line\$" 1 "file on stdin"
expect_out_lines "^second line\$" 1 "file on stdin"
expect_out_lines "^rank [12] read 0 bytes of stdin\$" 2 "file on stdin"

t0=$(now_ms)
seq 1 5000 | "$MPIRUN" -n 2 "$TESTDIR/echo_stdin" >"$OUT" 2>"$ERR"
RC=$?
expect_rc 0 "pipe on stdin"
seq 1 5000 >"$TESTDIR/expected"
grep -v '^rank' "$OUT" | cmp -s - "$TESTDIR/expected" || fail "pipe on stdin: rank 0 did not echo 1..5000"
expect_out_lines "^rank 1 read 0 bytes of stdin\$" 1 "pipe on stdin"

run -n 2 "$TESTDIR/echo_stdin" </dev/null
expect_rc 0 "/dev/null on stdin"
expect_out_lines "^rank 1 read 0 bytes" 1 "/dev/null on stdin"
finish
