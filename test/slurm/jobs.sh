#!/bin/bash
# Real jobs on a Slurm cluster of two nodes built on this machine (testbed.sh): umpi programs
# under `srun --mpi=pmix` and `--mpi=pmi2`, under mpirun inside salloc and sbatch and with
# --hostfile across the nodes (through testbed.sh exec, and through real ssh into each node's
# sshd), the transports UCX picks between and within nodes, a rank failing and a node dying
# mid-job; then three nodes; then one node whose slurmd binds tasks (the node's CPUs as the
# library counts them under srun --cpu-bind).
# Skipped (77) where the test bed cannot run: not root, or Slurm/munge/openssh not installed.
#
# Each check prints "ok: ..." or "FAIL: ...".
. "$(dirname "$0")/../launch/common.sh"
. "$SRCDIR/bed_test.sh"

# The PMI-2 jobs (pmi2_jobs below); 0 switches them off.
PMI2_JOBS=1
# mpirun --hostfile across the nodes with testbed.sh exec as the launch agent (hostfile_jobs
# below); 0 switches them off.
HOSTFILE_JOBS=1
# mpirun --hostfile started on node1 with the real default launch agent, ssh, to the sshd of
# every node (ssh_jobs below); 0 switches them off.
SSH_JOBS=1

expect_out() {
    grep -q -- "$1" "$OUT" || fail "$2: stdout lacks '$1' (stdout: $(head -c 400 "$OUT"); stderr: $(head -c 600 "$ERR"))"
}

# The job passed: exit 0, "No Errors", and the expected "node HOST: ranks ..." lines.
expect_job_ok() {
    local name=$1 line
    shift
    expect_rc 0 "$name"
    expect_out "No Errors\$" "$name"
    for line in "$@"; do expect_out "^$line\$" "$name"; done
    [ "$RC" -eq 0 ] && grep -q "No Errors" "$OUT" && ok "$name (${MS} ms)"
}

# A failed job: nonzero exit, within LIMIT ms, stderr containing each PATTERN.
expect_job_failed() {
    local name=$1 limit=$2 pat
    shift 2
    [ "$RC" -ne 0 ] || fail "$name: exit status 0, expected a failure"
    expect_within "$limit" "$name"
    for pat in "$@"; do expect_err "$pat" "$name"; done
    ok "$name: exit status $RC after $MS ms"
}

# No process of the job left on any node (slurmstepd included) nor here, once Slurm has had a
# few seconds to clean up after a failure.
expect_nodes_clean() {
    local name=$1 n i left
    for i in $(seq 1 50); do
        left=
        for n in $(seq 1 "$TB_NODES"); do
            for p in $(tb_node_pids node$n); do
                left="$left node$n:$p:$({ tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null | cut -c1-60);"
            done
        done
        [ -z "$left" ] && break
        sleep 0.2
    done
    [ -z "$left" ] || fail "$name: processes left on the nodes:$left"
    check_no_orphans "$name"
}

build slurm_job crash

# ---- two nodes ----------------------------------------------------------------------------------
TB_NODES=2
tb_up || { echo "FAIL: the test bed did not come up"; exit 1; }
ok "test bed of $TB_NODES nodes up ($TB_NAME)"

# srun, PMIx: 2 nodes x 2 ranks; node awareness, ring, allreduce.
sjob srun_pmix 60 srun --mpi=pmix -N 2 -n 4 "$WORK/slurm_job" 2 2
expect_job_ok "srun --mpi=pmix -N 2 -n 4" "node node1: ranks 0,1" "node node2: ranks 2,3"

sjob srun_pmix_cyclic 60 srun --mpi=pmix -N 2 -n 4 --distribution=cyclic "$WORK/slurm_job" 2 2
expect_job_ok "srun --mpi=pmix --distribution=cyclic" "node node1: ranks 0,2" "node node2: ranks 1,3"

# Transports: UMPI_DEBUG=2 prints the lanes of every endpoint a rank connects ("T: " is srun's
# label of rank T). Ranks 0,1 are on node1, 2,3 on node2: pairs within a node must use shared
# memory (sysv/posix) and never TCP, pairs across nodes TCP and never shared memory.
sjob transports 60 env UMPI_DEBUG=2 srun --mpi=pmix --label -N 2 -n 4 "$WORK/slurm_job" 2 2
expect_job_ok "transports (UMPI_DEBUG=2)"
awk '
    /debug: connected to rank/ { t = $1 + 0; peer[t] = $NF + 0; next }
    /lane\[/ { t = $1 + 0; key = t " " peer[t]; lanes[key] = lanes[key] " " $0 }
    END {
        for (key in lanes) {
            split(key, tr, " "); same = int(tr[1] / 2) == int(tr[2] / 2)
            tcp = lanes[key] ~ /tcp\//; shm = lanes[key] ~ /(sysv|posix)\//
            if (same && (tcp || !shm)) { print "rank " tr[1] " -> " tr[2] " (one node):" lanes[key]; bad++ }
            if (!same && (!tcp || shm)) { print "rank " tr[1] " -> " tr[2] " (two nodes):" lanes[key]; bad++ }
            if (same) nsame++; else ncross++
        }
        printf "pairs checked: %d within a node, %d across nodes\n", nsame, ncross
        exit (bad > 0 || nsame == 0 || ncross == 0)
    }' "$ERR" >"$WORK/transports.check"
if [ $? -eq 0 ]; then
    ok "transports: $(tail -1 "$WORK/transports.check"); shared memory within, TCP across"
else
    fail "transports: $(tr '\n' ' ' <"$WORK/transports.check" | cut -c1-800)"
fi

# Shared memory alone cannot reach the other node: the first message across fails, and the job
# ends with UCX's reason and umpi's message naming the call and the ranks. Within one node the
# same setting works.
sjob sm_across 60 env UCX_TLS=sm,self srun --mpi=pmix --kill-on-bad-exit=1 -N 2 -n 4 "$WORK/slurm_job" 2 2
expect_job_failed "UCX_TLS=sm,self across nodes" 15000 "Destination is unreachable" \
    "rank 1: MPI_Send: send to rank 2"
# The same when the first message across is a collective's (crash.c starts with MPI_Barrier): the
# barrier fails at once with the reason instead of waiting for its receives forever.
sjob sm_across_coll 60 env UCX_TLS=sm,self srun --mpi=pmix --kill-on-bad-exit=1 -N 2 -n 2 \
    "$WORK/crash" hang 0
expect_job_failed "UCX_TLS=sm,self across nodes, a collective first" 15000 "Destination is unreachable" \
    "MPI_Barrier"
# ... and when it is the context id agreement of MPI_Comm_dup (src/coll/internal.c).
sjob sm_across_dup 60 env UCX_TLS=sm,self srun --mpi=pmix --kill-on-bad-exit=1 -N 2 -n 2 \
    "$WORK/crash" dup 0
expect_job_failed "UCX_TLS=sm,self across nodes, MPI_Comm_dup first" 15000 "Destination is unreachable" \
    "MPI_Comm_dup"
sjob sm_within 60 env UCX_TLS=sm,self srun --mpi=pmix -N 1 -n 2 "$WORK/slurm_job" 1 2
expect_job_ok "UCX_TLS=sm,self within one node"
sjob tcp_only 60 env UCX_TLS=tcp,self srun --mpi=pmix -N 2 -n 4 "$WORK/slurm_job" 2 2
expect_job_ok "UCX_TLS=tcp,self across nodes" "node node1: ranks 0,1" "node node2: ranks 2,3"

# mpirun inside an allocation hands the job to srun.
sjob salloc_mpirun 60 salloc -N 2 -n 4 "$MPIRUN" "$WORK/slurm_job" 2 2
expect_job_ok "salloc -N 2 -n 4 mpirun (all the allocation's tasks)" "node node1: ranks 0,1" "node node2: ranks 2,3"

sjob salloc_map_node 60 env UMPI_DEBUG=1 salloc -N 2 -n 4 "$MPIRUN" -n 2 --map-by node "$WORK/slurm_job" 2 1
expect_job_ok "salloc mpirun -n 2 --map-by node" "node node1: ranks 0" "node node2: ranks 1"
expect_err "running srun --mpi=pmix --kill-on-bad-exit=1 -n 2 --distribution=cyclic" "salloc mpirun --map-by node"

sjob salloc_ppr 60 salloc -N 2 -n 4 "$MPIRUN" --map-by ppr:1:node --tag-output "$WORK/slurm_job" 2 1
expect_job_ok "salloc mpirun --map-by ppr:1:node --tag-output" "0: node node1: ranks 0" "0: node node2: ranks 1"

sjob salloc_local 60 salloc -N 2 -n 4 "$MPIRUN" --launcher local -n 2 "$WORK/slurm_job" 1 2
expect_job_ok "salloc mpirun --launcher local (runs here, not through srun)" "node $(hostname): ranks 0,1"

# sbatch: the batch script runs on the first node of the allocation and calls mpirun there.
cat >"$WORK/batch.sh" <<EOF
#!/bin/sh
echo "batch script on \$(hostname)"
exec "$MPIRUN" "$WORK/slurm_job" 2 2
EOF
chmod +x "$WORK/batch.sh"
# (Polled here rather than with sbatch --wait, which looks only every 2 s.)
sbatch_wait() {
    local id state
    id=$(sbatch --parsable "$@") || return 1
    for i in $(seq 1 600); do
        state=$(scontrol -o show job "$id" 2>/dev/null)
        case $state in *JobState=COMPLETED*|*JobState=FAILED*|*JobState=CANCELLED*|*JobState=TIMEOUT*|*JobState=NODE_FAIL*)
            state=${state##*ExitCode=}
            return "${state%%:*}" ;;
        esac
        sleep 0.1
    done
    return 1
}
sjob sbatch 60 bash -c "$(declare -f sbatch_wait); sbatch_wait -N 2 -n 4 -o '$WORK/sbatch.job.out' '$WORK/batch.sh'"
cp "$WORK/sbatch.job.out" "$OUT" 2>/dev/null
expect_job_ok "sbatch -N 2 -n 4 (batch script calling mpirun)" "batch script on node1" \
    "node node1: ranks 0,1" "node node2: ranks 2,3"

# A rank fails mid-job: the job ends promptly, nonzero, Slurm naming the rank (task) and how.
sjob segv_srun 60 srun --mpi=pmix --kill-on-bad-exit=1 -N 2 -n 4 "$WORK/crash" segv 3
expect_job_failed "rank 3 (node2) segfaults under srun" 8000 "node2: task 3: Segmentation fault"
expect_nodes_clean "segv under srun"

sjob exit_srun 60 srun --mpi=pmix --kill-on-bad-exit=1 -N 2 -n 4 "$WORK/crash" exit 2
expect_job_failed "rank 2 exits 3 before MPI_Finalize under srun" 8000 "node2: task 2: Exited with exit code 3"
expect_nodes_clean "exit under srun"

sjob abort_srun 60 srun --mpi=pmix -N 2 -n 4 "$WORK/crash" abort 3
expect_rc 7 "MPI_Abort under srun"
expect_job_failed "rank 3 calls MPI_Abort(.., 7) under srun" 8000 \
    "MPI_Abort(MPI_COMM_WORLD, 7) called by rank 3"
expect_nodes_clean "abort under srun"

sjob segv_mpirun 60 salloc -N 2 -n 4 "$MPIRUN" "$WORK/crash" segv 1
expect_job_failed "rank 1 (node1) segfaults under mpirun in salloc" 10000 "node1: task 1: Segmentation fault"
expect_nodes_clean "segv under mpirun in salloc"

# PMI-2 (srun --mpi=pmi2): the same checks, switched on by PMI2_JOBS=1 above.
pmi2_jobs() {
    sjob srun_pmi2 60 srun --mpi=pmi2 -N 2 -n 4 "$WORK/slurm_job" 2 2
    expect_job_ok "srun --mpi=pmi2 -N 2 -n 4" "node node1: ranks 0,1" "node node2: ranks 2,3"
    sjob srun_pmi2_cyclic 60 srun --mpi=pmi2 -N 2 -n 4 --distribution=cyclic "$WORK/slurm_job" 2 2
    expect_job_ok "srun --mpi=pmi2 --distribution=cyclic" "node node1: ranks 0,2" "node node2: ranks 1,3"
    sjob segv_pmi2 60 srun --mpi=pmi2 --kill-on-bad-exit=1 -N 2 -n 4 "$WORK/crash" segv 3
    expect_job_failed "rank 3 segfaults under srun --mpi=pmi2" 8000 "node2: task 3: Segmentation fault"
    expect_nodes_clean "segv under srun --mpi=pmi2"
    sjob abort_pmi2 60 srun --mpi=pmi2 -N 2 -n 4 "$WORK/crash" abort 3
    # Slurm 22.05's pmi2 plugin cancels the step on an abort: srun's status is that of the killed
    # tasks (137), not the abort code as under --mpi=pmix; the job still ends at once, nonzero.
    [ "$RC" -ne 0 ] || fail "MPI_Abort under srun --mpi=pmi2: exit status 0"
    expect_job_failed "MPI_Abort under srun --mpi=pmi2" 8000 "MPI_Abort(MPI_COMM_WORLD, 7) called by rank 3"
    expect_nodes_clean "abort under srun --mpi=pmi2"
}
if [ "$PMI2_JOBS" = 1 ]; then
    pmi2_jobs
else
    echo "not run: srun --mpi=pmi2 jobs (PMI2_JOBS=0)"
fi

# mpirun --hostfile across the nodes, outside Slurm: the launch agent runs mpirun's per-node
# daemon inside the node's namespaces (`testbed.sh exec NODE command...`), mpirun itself runs
# here, in the root namespace, reachable from the nodes through the bridge.
hostfile_jobs() {
    printf '#!/bin/sh\nexec env TB_NAME=%s TB_DIR=%s "%s" exec "$@"\n' "$TB_NAME" "$TB_DIR" \
        "$SRCDIR/testbed.sh" >"$WORK/tb_agent"
    chmod +x "$WORK/tb_agent"
    printf 'node1 slots=2\nnode2 slots=2\n' >"$WORK/hosts"
    sjob hostfile 60 "$MPIRUN" --launch-agent "$WORK/tb_agent" --hostfile "$WORK/hosts" -n 4 \
        "$WORK/slurm_job" 2 2
    expect_job_ok "mpirun --hostfile (2 nodes x 2 slots)" "node node1: ranks 0,1" "node node2: ranks 2,3"
    sjob hostfile_map_node 60 "$MPIRUN" --launch-agent "$WORK/tb_agent" --hostfile "$WORK/hosts" \
        -n 2 --map-by node "$WORK/slurm_job" 2 1
    expect_job_ok "mpirun --hostfile --map-by node" "node node1: ranks 0" "node node2: ranks 1"
    sjob hostfile_segv 60 "$MPIRUN" --launch-agent "$WORK/tb_agent" --hostfile "$WORK/hosts" -n 4 \
        "$WORK/crash" segv 3
    expect_job_failed "rank 3 (node2) segfaults under mpirun --hostfile" 8000 "rank 3" "node2"
    expect_nodes_clean "segv under mpirun --hostfile"
}
if [ "$HOSTFILE_JOBS" = 1 ]; then
    hostfile_jobs
else
    echo "not run: mpirun --hostfile jobs (HOSTFILE_JOBS=0)"
fi

# mpirun --hostfile run on node1 as a user would: no --launch-agent and no UMPI_LAUNCH_AGENT, so
# its daemons start through `ssh -o BatchMode=yes HOST ...` into each node's sshd (testbed.sh
# gives every node one, a key pair and known hosts), in a fresh login environment there.
# on_node NODE CMD...: CMD inside NODE, from the test's directory.
printf '#!/bin/sh\nexec env TB_NAME=%s TB_DIR=%s "%s" exec "$@"\n' "$TB_NAME" "$TB_DIR" \
    "$SRCDIR/testbed.sh" >"$WORK/on_node"
chmod +x "$WORK/on_node"
for prog in echo_stdin lines; do
    "$MPICC" -o "$WORK/$prog" "$SRCDIR/../launch/$prog.c" || fail "cannot compile $prog.c"
done

# ssh_mpirun NAME STDIN HOSTFILE ARGS...: mpirun ARGS on node1 with the default agent, and the
# variables of SSH_ENV (VAR=value words) in its environment.
SSH_ENV=
ssh_mpirun() {
    local name=$1 input=$2 hosts=$3
    shift 3
    echo "+ (node1) mpirun --hostfile $hosts $*" >>"$WORK/commands"
    t0=$(now_ms)
    timeout -k 5 60 "$WORK/on_node" node1 env -u UMPI_LAUNCH_AGENT $SSH_ENV "$MPIRUN" --hostfile "$hosts" "$@" \
        >"$OUT" 2>"$ERR" <"$input"
    RC=$?
    MS=$(($(now_ms) - t0))
    cp "$OUT" "$WORK/$name.out"
    cp "$ERR" "$WORK/$name.err"
    [ $RC -eq 124 ] && fail "$name: still running after 60 s"
}

# Whether process $2 (root-namespace pid) descends from an sshd session ("sshd: root@...").
under_sshd() {
    local p=$1
    while [ -n "$p" ] && [ "$p" -gt 1 ]; do
        case $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null) in "sshd: root@"*) return 0 ;; esac
        p=$(awk '/^PPid:/ {print $2}' "/proc/$p/status" 2>/dev/null)
    done
    return 1
}

# The ranks of a job started in the background (hang mode) are all up; one is killed from
# outside (kill -KILL), as by the OOM killer: mpirun names it and the signal, ends the job.
ssh_kill_rank() {
    local hosts=$1 np=$2 node=$3 daemon victim i
    "$WORK/on_node" node1 env -u UMPI_LAUNCH_AGENT $SSH_ENV "$MPIRUN" --hostfile "$hosts" -n "$np" \
        "$WORK/crash" hang 0 >"$OUT" 2>"$ERR" </dev/null &
    job=$!
    for i in $(seq 1 150); do
        [ "$(grep -c ready "$OUT")" -eq "$np" ] && break
        sleep 0.1
    done
    daemon= victim=
    for p in $(tb_node_pids "$node"); do
        case $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null) in
            *"mpirun --umpi-daemon"*) daemon=$p ;;
            *"crash hang"*) [ -z "$victim" ] && victim=$p ;;
        esac
    done
    if [ -n "$daemon" ] && under_sshd "$daemon"; then
        ok "ssh: the daemon on $node runs in an ssh session"
    else
        fail "ssh: no umpi daemon started by sshd on $node (daemon pid '${daemon}')"
    fi
    t0=$(now_ms)
    [ -n "$victim" ] && kill -KILL "$victim"
    wait $job
    RC=$?
    MS=$(($(now_ms) - t0))
    [ -n "$victim" ] || fail "ssh: no rank found on $node to kill (stdout: $(head -c 300 "$OUT"))"
}

ssh_jobs() {
    local n1=$WORK/hosts.ssh2
    printf 'node1 slots=2\nnode2 slots=2\n' >"$n1"
    ssh_mpirun ssh_hostfile /dev/null "$n1" -n 4 "$WORK/slurm_job" 2 2
    expect_job_ok "ssh: mpirun --hostfile -n 4 (2 nodes, default agent)" "node node1: ranks 0,1" "node node2: ranks 2,3"
    expect_nodes_clean "ssh: a job that ended well"

    # stdin: rank 0 on node2 (the other side of ssh) reads mpirun's stdin and echoes it whole.
    printf 'node2 slots=1\nnode1 slots=2\n' >"$WORK/hosts.ssh_stdin"
    seq 1 20000 >"$WORK/stdin.txt"
    ssh_mpirun ssh_stdin "$WORK/stdin.txt" "$WORK/hosts.ssh_stdin" -n 3 "$WORK/echo_stdin"
    expect_rc 0 "ssh: stdin to rank 0 on node2"
    if grep -v '^rank' "$OUT" | cmp -s - "$WORK/stdin.txt" &&
       [ "$(grep -c '^rank [12] read 0 bytes of stdin$' "$OUT")" -eq 2 ]; then
        ok "ssh: stdin (20000 lines) to rank 0 on node2, nothing to the others"
    else
        fail "ssh: stdin: rank 0 on node2 did not echo it whole (stdout: $(head -c 300 "$OUT"))"
    fi
    # stdout and stderr of the ranks on node2, tagged, every line whole and in order.
    ssh_mpirun ssh_lines /dev/null "$n1" -n 4 --tag-output "$WORK/lines" 1000
    expect_rc 0 "ssh: output of 4 ranks"
    for r in 2 3; do
        grep "^\[$r@node2\] rank $r line" "$OUT" | awk '{print $5}' >"$WORK/ssh_order.$r"
        seq 0 999 | cmp -s - "$WORK/ssh_order.$r" ||
            fail "ssh: rank $r's 1000 lines tagged [$r@node2] not all there in order"
        grep -q "^\[$r@node2\] rank $r to stderr\$" "$ERR" || fail "ssh: rank $r's stderr line missing"
        grep -q "^\[$r@node2\] rank $r partial\$" "$OUT" || fail "ssh: rank $r's partial last line missing"
    done
    [ "$RC" -eq 0 ] && ok "ssh: stdout and stderr of the ranks on node2, tagged, whole and in order"

    # Failures across ssh: exit code, MPI_Abort, a segfault, a rank killed from outside.
    ssh_mpirun ssh_exit /dev/null "$n1" -n 4 "$WORK/crash" exit 2
    expect_rc 3 "ssh: rank 2 exits 3"
    expect_job_failed "ssh: rank 2 (node2) exits 3 before MPI_Finalize" 10000 "rank 2 (pid [0-9]* on node2) exited with code 3"
    expect_nodes_clean "ssh: exit"
    ssh_mpirun ssh_abort /dev/null "$n1" -n 4 "$WORK/crash" abort 3
    expect_rc 7 "ssh: MPI_Abort(.., 7)"
    expect_job_failed "ssh: rank 3 (node2) calls MPI_Abort(.., 7)" 10000 "MPI_Abort(MPI_COMM_WORLD, 7) called by rank 3"
    expect_nodes_clean "ssh: abort"
    ssh_mpirun ssh_segv /dev/null "$n1" -n 4 "$WORK/crash" segv 3
    expect_rc 139 "ssh: segfault"
    expect_job_failed "ssh: rank 3 (node2) segfaults" 10000 "rank 3 (pid [0-9]* on node2) killed by signal 11"
    expect_nodes_clean "ssh: segv"
    ssh_kill_rank "$n1" 4 node2
    expect_rc 137 "ssh: a rank on node2 killed"
    expect_job_failed "ssh: a rank on node2 killed with SIGKILL" 10000 "on node2) killed by signal 9"
    expect_nodes_clean "ssh: a rank killed"
}
if [ "$SSH_JOBS" = 1 ]; then
    ssh_jobs
else
    echo "not run: mpirun --hostfile over ssh (SSH_JOBS=0)"
fi

# A node dies mid-job (everything on node2 killed at once, as by a power cut): Slurm notices
# within TB_SLURMD_TIMEOUT and ends the job naming the node; nothing is left on node1.
SLURM_CONF=$TB_CONF timeout 60 srun --mpi=pmix -N 2 -n 4 "$WORK/crash" hang 0 >"$OUT" 2>"$ERR" </dev/null &
job=$!
for i in $(seq 1 100); do
    [ "$(grep -c ready "$OUT")" -eq 4 ] && break
    sleep 0.1
done
t0=$(now_ms)
kill -KILL "$(tb_node_pid node2)"
wait $job
RC=$?
MS=$(($(now_ms) - t0))
cp "$OUT" "$WORK/node_death.out"
cp "$ERR" "$WORK/node_death.err"
expect_job_failed "node2 killed mid-job" $(((TB_SLURMD_TIMEOUT + 15) * 1000)) "Node failure on node2"
expect_nodes_clean "node death"
tb_down

# ---- three nodes --------------------------------------------------------------------------------
TB_NODES=3
tb_up || { echo "FAIL: the test bed of 3 nodes did not come up"; exit 1; }
sjob srun_3nodes 60 srun --mpi=pmix -N 3 -n 6 "$WORK/slurm_job" 3 2
expect_job_ok "srun --mpi=pmix -N 3 -n 6" "node node1: ranks 0,1" "node node2: ranks 2,3" "node node3: ranks 4,5"
sjob salloc_3nodes 60 salloc -N 3 -n 3 "$MPIRUN" "$WORK/slurm_job" 3 1
expect_job_ok "salloc -N 3 -n 3 mpirun" "node node1: ranks 0" "node node2: ranks 1" "node node3: ranks 2"
# Over ssh, with a tree of fan-out 1: node1 starts node2's daemon, which starts node3's (ssh from
# node2 to node3); output, the abort and the end go through both hops.
if [ "$SSH_JOBS" = 1 ]; then
    printf 'node1 slots=2\nnode2 slots=2\nnode3 slots=2\n' >"$WORK/hosts.ssh3"
    SSH_ENV=UMPI_LAUNCH_FANOUT=1
    ssh_mpirun ssh_3nodes /dev/null "$WORK/hosts.ssh3" -n 6 "$WORK/slurm_job" 3 2
    expect_job_ok "ssh: mpirun --hostfile -n 6 (3 nodes, tree of fan-out 1)" "node node1: ranks 0,1" \
        "node node2: ranks 2,3" "node node3: ranks 4,5"
    expect_nodes_clean "ssh: 3 nodes"
    ssh_mpirun ssh_3nodes_abort /dev/null "$WORK/hosts.ssh3" -n 6 "$WORK/crash" abort 5
    expect_rc 7 "ssh: MPI_Abort on node3"
    expect_job_failed "ssh: rank 5 (node3) calls MPI_Abort(.., 7), 3 nodes" 10000 \
        "MPI_Abort(MPI_COMM_WORLD, 7) called by rank 5"
    expect_nodes_clean "ssh: abort on node3"
    ssh_kill_rank "$WORK/hosts.ssh3" 6 node3
    expect_rc 137 "ssh: a rank on node3 killed"
    expect_job_failed "ssh: a rank on node3 killed with SIGKILL, 3 nodes" 10000 "on node3) killed by signal 9"
    expect_nodes_clean "ssh: a rank killed on node3"
fi
tb_down

# ---- one node whose slurmd binds tasks (task/affinity) ------------------------------------------
# srun binds each task to a core and sets no UMPI_NODE_CPUS: the library counts the union of the
# node's ranks' affinity masks (published at MPI_Init) and sees 2 cores for 2 ranks, where each
# rank's own mask has one; two tasks mapped to one cpu are oversubscribed.
TB_NODES=1 TB_TASK_PLUGIN=task/affinity
tb_up || { echo "FAIL: the test bed of 1 node with task/affinity did not come up"; exit 1; }
# cpubind NAME STATE CORES MPI CPU_BIND: every rank's UMPI_DEBUG=1 line says it.
cpubind() {
    local want="2 ranks on this node, $3 cores usable (union of the node's 2 ranks' affinity): $2"
    sjob "$1" 60 env UMPI_DEBUG=1 srun --mpi="$4" -N 1 -n 2 --cpu-bind="$5" "$WORK/slurm_job" 1 2
    expect_job_ok "srun --mpi=$4 --cpu-bind=$5 -n 2"
    if [ "$(grep -c "debug: $want" "$ERR")" -eq 2 ]; then
        ok "srun --mpi=$4 --cpu-bind=$5: both ranks say '$want'"
    else
        fail "srun --mpi=$4 --cpu-bind=$5: not every rank says '$want' ($(grep 'cores usable' "$ERR" | head -2 | tr '\n' ' '))"
    fi
}
cpubind cpubind_cores "spin before yielding" 2 pmix cores
cpubind cpubind_cores_pmi2 "spin before yielding" 2 pmi2 cores
cpubind cpubind_map00 "oversubscribed, yield when idle" 1 pmix map_cpu:0,0

# A node reachable by IPv6 only: node1 loses its IPv4 address, and mpirun, here in the root
# namespace, starts its daemon there (testbed.sh exec as the agent); the daemon can connect back
# only over IPv6 (tools/mpirun/daemon.c tries each address mpirun offers, IPv4 ones first).
ns=$TB_NAME-node1
if [ -n "$(ip -n "$ns" -6 -o addr show dev eth0 scope global)" ]; then
    ip -n "$ns" addr del "$(tb_node_ip node1)/24" dev eth0
    if [ -z "$(ip -n "$ns" -4 -o addr show dev eth0)" ]; then
        printf '#!/bin/sh\nexec env TB_NAME=%s TB_DIR=%s "%s" exec "$@"\n' "$TB_NAME" "$TB_DIR" \
            "$SRCDIR/testbed.sh" >"$WORK/tb_agent"
        chmod +x "$WORK/tb_agent"
        sjob ipv6_only 60 "$MPIRUN" --launch-agent "$WORK/tb_agent" --host node1:2 "$WORK/slurm_job" 1 2
        expect_job_ok "mpirun --host node1:2 from the root namespace, node1 reachable by IPv6 only" \
            "node node1: ranks 0,1"
        expect_nodes_clean "IPv6 only"
    else
        fail "IPv6 only: node1 still has an IPv4 address: $(ip -n "$ns" -4 -o addr show dev eth0)"
    fi
else
    echo "not run: a node reachable by IPv6 only (no IPv6 on this machine)"
fi

finish
