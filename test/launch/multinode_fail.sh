#!/bin/sh
# mpirun --host across "hosts" that are umpi daemons on this machine (local_agent.sh): failures on
# another node end the whole job with a message naming rank and host and a nonzero exit status:
# MPI_Abort, a segfault, an early exit, SIGTERM to mpirun, a daemon killed (a leaf, and one in the
# middle of a tree), mpirun killed; a launch agent that fails or a daemon that never connects;
# usage errors.
# No rank and no daemon is left behind.
. "$(dirname "$0")/common.sh"
build abort segv exit_early sleeper
AGENT=$SRCDIR/local_agent.sh
LOCAL_AGENT_PIDS=$WORK/daemons
# The PMIx directories of daemons killed on purpose stay in the scratch folder, not in /tmp.
TMPDIR=$WORK/tmp
export LOCAL_AGENT_PIDS TMPDIR
mkdir -p "$TMPDIR"
: >"$LOCAL_AGENT_PIDS"

runh() { run --launch-agent "$AGENT" "$@"; }

# check_no_daemons LABEL: every daemon (and process) the agents started has exited.
check_no_daemons() {
    for i in 1 2 3 4 5 6 7 8 9 10; do
        left=""
        while read -r pid host; do
            st=$(ps -o stat= -p "$pid")
            case $st in ''|Z*) ;; *) left="$left $pid($host)" ;; esac
        done <"$LOCAL_AGENT_PIDS"
        [ -z "$left" ] && break
        sleep 0.2
    done
    if [ -n "$left" ]; then
        fail "$1: daemons left behind:$left"
        for p in $left; do kill -9 "${p%%(*}" 2>/dev/null; done
    fi
    : >"$LOCAL_AGENT_PIDS"
}

# daemon_of HOST: pid of the daemon started for HOST.
daemon_of() { awk -v h="$1" '$2 == h { print $1 }' "$LOCAL_AGENT_PIDS"; }

# start_job N ARGS...: mpirun ARGS in the background; returns once N ranks printed "ready".
start_job() {
    nranks=$1
    shift
    "$MPIRUN" --launch-agent "$AGENT" "$@" >"$OUT" 2>"$ERR" &
    MP=$!
    for i in $(seq 1 100); do
        [ "$(grep -c ready "$OUT")" -eq "$nranks" ] && return 0
        sleep 0.1
    done
    fail "$*: ranks did not start ($(head -c 300 "$ERR"))"
}

# MPI_Abort by the last rank, on the second host.
runh --host a:2,b:2 "$WORK/abort"
expect_rc 7 "abort on b"
expect_err "rank 3 (pid [0-9]* on b) aborted the job with code 7" "abort on b"
check_no_orphans "abort on b"
check_no_daemons "abort on b"

# A segfault of rank 1, on the second host.
runh --host a:1,b:2 "$WORK/segv"
expect_rc 139 "segv on b"
expect_err "rank 1 (pid [0-9]* on b) killed by signal 11 (Segmentation fault)" "segv on b"
check_no_orphans "segv on b"
check_no_daemons "segv on b"

# Rank 2 exits with 3 before MPI_Finalize, on the second host.
runh --host a:2,b:2 "$WORK/exit_early"
expect_rc 3 "exit 3 on b"
expect_err "rank 2 (pid [0-9]* on b) exited with code 3 before MPI_Finalize" "exit 3 on b"
check_no_orphans "exit 3 on b"
check_no_daemons "exit 3 on b"

# A tree (5 hosts, fan-out 2): the head starts a and b, a starts c and d, b starts e; then
# SIGTERM to mpirun reaches every rank on every host.
UMPI_LAUNCH_FANOUT=2 start_job 5 --host a,b,c,d,e "$WORK/sleeper"
for h in a b c d e; do eval "pid_$h=\$(daemon_of $h)"; done
for pair in "a $MP" "b $MP" "c $pid_a" "d $pid_a" "e $pid_b"; do
    set -- $pair
    pp=$(ps -o ppid= -p "$(daemon_of "$1")" | tr -d ' ')
    [ "$pp" = "$2" ] || fail "tree: the daemon of $1 has parent $pp, expected $2"
done
kill -TERM $MP
wait $MP
RC=$?
expect_rc 143 "SIGTERM to mpirun (tree)"
check_no_orphans "SIGTERM to mpirun (tree)"
check_no_daemons "SIGTERM to mpirun (tree)"

# A daemon killed mid-job: its ranks die with it, mpirun names the host and ends the job.
start_job 4 --host a:2,b:2 "$WORK/sleeper"
kill -KILL "$(daemon_of b)"
wait $MP
RC=$?
expect_rc 1 "daemon of b killed"
expect_err "lost the umpi daemon on b" "daemon of b killed"
check_no_orphans "daemon of b killed"
check_no_daemons "daemon of b killed"

# The same in the middle of the tree: a's subtree (c, d) goes with it.
UMPI_LAUNCH_FANOUT=2 start_job 5 --host a,b,c,d,e "$WORK/sleeper"
kill -KILL "$(daemon_of a)"
wait $MP
RC=$?
expect_rc 1 "daemon of a killed (tree)"
expect_err "lost the umpi daemon on a" "daemon of a killed (tree)"
check_no_orphans "daemon of a killed (tree)"
check_no_daemons "daemon of a killed (tree)"

# mpirun itself killed with -9: every daemon sees its connection close and takes its ranks along.
start_job 4 --host a:2,b:2 "$WORK/sleeper"
kill -KILL $MP
wait $MP 2>/dev/null
check_no_orphans "mpirun killed by SIGKILL"
check_no_daemons "mpirun killed by SIGKILL"

# A launch agent that fails, and one that never starts the daemon.
run --launch-agent false --host a,b "$WORK/sleeper"
expect_rc 1 "failing agent"
expect_err "lost the umpi daemon on [ab]: its launch agent \`false [ab] \.\.\.\` exited with status 1" "failing agent"
printf '#!/bin/sh\necho $$ "$1" >>"$LOCAL_AGENT_PIDS"\nexec sleep 60\n' >"$WORK/idle_agent.sh"
chmod +x "$WORK/idle_agent.sh"
UMPI_LAUNCH_TIMEOUT=1 run --launch-agent "$WORK/idle_agent.sh" --host a:1,b:1 "$WORK/sleeper"
expect_rc 1 "daemon never connects"
expect_err "lost the umpi daemon on [ab]: it did not connect back within 1 s" "daemon never connects"
check_no_daemons "daemon never connects"

# Usage errors, each named.
runh --host a:1,b:1 -n 3 true
expect_rc 1 "too few slots"
expect_err "3 ranks do not fit in the 2 slots of the hosts (a:1 b:1)" "too few slots"
runh --host a:1,b:1 -n 3 --oversubscribe true
expect_rc 0 "--oversubscribe"
printf 'a slots=2\nb cores=4\n' >"$WORK/badhosts"
runh --hostfile "$WORK/badhosts" true
expect_rc 1 "bad hostfile"
expect_err "hostfile $WORK/badhosts, line 2: unknown field 'cores=4'" "bad hostfile"
printf 'a\n' >"$WORK/goodhosts"
runh --host a --hostfile "$WORK/goodhosts" true
expect_rc 1 "--host and --hostfile"
expect_err "either with --host or with --hostfile" "--host and --hostfile"
runh --host 'a;b' true
expect_rc 1 "bad host name"
expect_err "bad host name 'a;b'" "bad host name"
UMPI_LAUNCH_FANOUT=0 runh --host a,b true
expect_rc 1 "fan-out 0"
expect_err "UMPI_LAUNCH_FANOUT=0" "fan-out 0"
runh --host a,b --map-by ppr:2:socket true
expect_rc 1 "--map-by ppr:2:socket"
expect_err "ppr takes the form ppr:N:node" "--map-by ppr:2:socket"
runh --host a,b --map-by bogus true
expect_rc 1 "--map-by bogus"
expect_err "unknown object 'bogus'" "--map-by bogus"
check_no_daemons "usage errors"
check_no_orphans "multinode_fail"
finish
