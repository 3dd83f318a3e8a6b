#!/bin/sh
# mpirun's stdin goes to rank 0; the other ranks read /dev/null.
. "$(dirname "$0")/common.sh"
build echo_stdin

printf 'first line\nsecond line\n' >"$WORK/stdin.txt"
run -n 3 "$WORK/echo_stdin" <"$WORK/stdin.txt"
expect_rc 0 "file on stdin"
expect_out_lines "^first line\$" 1 "file on stdin"
expect_out_lines "^second line\$" 1 "file on stdin"
expect_out_lines "^rank [12] read 0 bytes of stdin\$" 2 "file on stdin"

t0=$(now_ms)
seq 1 5000 | "$MPIRUN" -n 2 "$WORK/echo_stdin" >"$OUT" 2>"$ERR"
RC=$?
expect_rc 0 "pipe on stdin"
seq 1 5000 >"$WORK/expected"
grep -v '^rank' "$OUT" | cmp -s - "$WORK/expected" || fail "pipe on stdin: rank 0 did not echo 1..5000"
expect_out_lines "^rank 1 read 0 bytes of stdin\$" 1 "pipe on stdin"

run -n 2 "$WORK/echo_stdin" </dev/null
expect_rc 0 "/dev/null on stdin"
expect_out_lines "^rank 1 read 0 bytes" 1 "/dev/null on stdin"
finish
