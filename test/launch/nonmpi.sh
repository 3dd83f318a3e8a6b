#!/bin/sh
# Programs that never call MPI_Init run fine; their exit statuses come through.
. "$(dirname "$0")/common.sh"

run -n 2 true
expect_rc 0 "-n 2 true"
run -n 2 hostname
expect_rc 0 "-n 2 hostname"
expect_out_lines "^$(hostname)\$" 2 "-n 2 hostname"
run -n 3 sh -c 'echo "arg=$0"' "two words"
expect_out_lines "^arg=two words\$" 3 "arguments with spaces"
run -n 2 false
expect_rc 1 "-n 2 false"
run -n 1 sh -c 'exit 4'
expect_rc 4 "exit 4"
expect_err "rank 0 (pid [0-9]*) exited with code 4" "exit 4"
run -n 2 "$WORK/no-such-program"
expect_rc 127 "missing program"
expect_err "no-such-program" "missing program"
run -n 2 no-such-command-umpi
expect_rc 127 "missing command"
expect_err "command not found" "missing command"
finish
