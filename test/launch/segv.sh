#!/bin/sh
# A rank killed by a signal ends the job: a message naming rank and signal, the other ranks
# killed, exit status 128+signo.
. "$(dirname "$0")/common.sh"
build segv sleeper

run -n 3 "$WORK/segv"
expect_rc 139 "segv"
expect_err "rank 1 (pid [0-9]*) killed by signal 11 (Segmentation fault)" "segv"
expect_within 2500 "segv"
check_no_orphans "segv"

# SIGKILL from outside on one rank.
"$MPIRUN" -n 3 "$WORK/sleeper" >"$OUT" 2>"$ERR" &
mp=$!
for i in $(seq 1 50); do
    [ "$(grep -c ready "$OUT")" -eq 3 ] && break
    sleep 0.1
done
procs=$(ps -eo pid=,args=)
# A rank is the process whose program is the sleeper (mpirun's line names it too, as an argument;
# and the scratch folder's path may hold the word "mpirun").
victim=$(printf '%s\n' "$procs" | awk -v prog="$WORK/sleeper" '$2 == prog {print $1; exit}')
[ -n "$victim" ] && kill -KILL "$victim"
wait $mp
RC=$?
expect_rc 137 "SIGKILL of a rank"
expect_err "killed by signal 9 (Killed)" "SIGKILL of a rank"
check_no_orphans "SIGKILL of a rank"
finish
