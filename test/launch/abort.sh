#!/bin/sh
# MPI_Abort(MPI_COMM_WORLD, 7) in one rank ends every rank within a second; mpirun exits with 7.
. "$(dirname "$0")/common.sh"
build abort

for n in 1 3; do
    run -n $n "$WORK/abort"
    expect_rc 7 "-n $n"
    expect_err "rank $((n - 1)) aborted the job with code 7" "-n $n"
    # The aborting rank waits 1 s before aborting; the sleepers must be gone within a second.
    expect_within 2500 "-n $n"
    check_no_orphans "-n $n"
done
finish
