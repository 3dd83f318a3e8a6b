#!/bin/sh
# A rank exiting nonzero before MPI_Finalize ends the job with its code and a message naming it;
# exiting 0 without MPI_Finalize while others run ends the job too; a nonzero exit after
# MPI_Finalize does not end the job, but is mpirun's exit status.
. "$(dirname "$0")/common.sh"
build exit_early exit_after_finalize

run -n 4 "$WORK/exit_early"
expect_rc 3 "exit 3 before finalize"
expect_err "rank 2 (pid [0-9]*) exited with code 3" "exit 3 before finalize"
expect_within 2500 "exit 3 before finalize"
check_no_orphans "exit 3 before finalize"

run -n 3 "$WORK/exit_early" zero
[ "$RC" -ne 0 ] || fail "exit 0 without finalize: mpirun exited with 0"
expect_err "rank 2 (pid [0-9]*) exited without calling MPI_Finalize" "exit 0 without finalize"
expect_within 2500 "exit 0 without finalize"
check_no_orphans "exit 0 without finalize"

run -n 3 "$WORK/exit_after_finalize"
expect_rc 5 "exit 5 after finalize"
expect_out_lines "^rank [02] finished\$" 2 "exit 5 after finalize (others not killed)"
finish
