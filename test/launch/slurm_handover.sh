#!/bin/bash
# mpirun inside a Slurm allocation hands the job to srun with its options translated (tools/mpirun/
# slurm.c). A fake srun first in PATH records the arguments and environment it gets, so this runs
# anywhere, without Slurm; test/slurm/jobs.sh runs the real thing on a Slurm test bed.
. "$(dirname "$0")/common.sh"
build hello

mkdir -p "$WORK/bin"
cat >"$WORK/bin/srun" <<'EOF'
#!/bin/sh
# Fake srun: one argument per line, then the variables the tests set with -x/-genv.
for a in "$@"; do echo "ARG $a"; done >"$FAKE_SRUN_LOG"
echo "ENV FOO=${FOO-unset} BAR=${BAR-unset} BAZ=${BAZ-unset}" >>"$FAKE_SRUN_LOG"
exit "${FAKE_SRUN_EXIT:-0}"
EOF
chmod +x "$WORK/bin/srun"
LOG=$WORK/srun.args
export FAKE_SRUN_LOG=$LOG
unset SLURM_JOB_ID SLURM_STEP_ID SLURM_NTASKS SLURM_NPROCS SLURM_TASKS_PER_NODE SLURM_JOB_NUM_NODES \
      SLURM_NNODES UMPI_LAUNCHER

# in_slurm VAR=VALUE... -- MPIRUN_ARGS...: runs mpirun with the fake srun first in PATH and the
# given Slurm variables; RC, $OUT, $ERR; $LOG holds what srun got (removed first).
in_slurm() {
    local vars=()
    while [ "$1" != "--" ]; do vars+=("$1"); shift; done
    shift
    rm -f "$LOG"
    env PATH="$WORK/bin:$PATH" "${vars[@]}" "$MPIRUN" "$@" >"$OUT" 2>"$ERR" </dev/null
    RC=$?
}

# expect_srun WHAT ARG...: srun was run with exactly these arguments.
expect_srun() {
    local what=$1 got want
    shift
    if [ ! -f "$LOG" ]; then
        fail "$what: srun was not run (exit $RC, stderr: $(head -c 300 "$ERR"))"
        return
    fi
    got=$(grep '^ARG ' "$LOG" | sed 's/^ARG //' | tr '\n' ' ')
    want="$* "
    [ "$got" = "$want" ] || fail "$what: srun got '$got', expected '$want'"
}

expect_no_srun() {
    [ ! -f "$LOG" ] || fail "$1: srun was run: $(tr '\n' ' ' <"$LOG")"
}

P=$WORK/hello
J=(SLURM_JOB_ID=42)

# The allocation's task count when -n is not given: SLURM_NTASKS, else the sum of the compressed
# SLURM_TASKS_PER_NODE.
in_slurm "${J[@]}" SLURM_NTASKS=4 -- "$P" a b
expect_rc 0 "plain"
expect_srun "plain" --mpi=pmix --kill-on-bad-exit=1 -n 4 "$P" a b
in_slurm "${J[@]}" "SLURM_TASKS_PER_NODE=2(x3),1" -- "$P"
expect_srun "tasks per node" --mpi=pmix --kill-on-bad-exit=1 -n 7 "$P"
in_slurm "${J[@]}" -- "$P"
expect_srun "no task count" --mpi=pmix --kill-on-bad-exit=1 "$P"

# Options, in Open MPI's and MPICH's spellings.
in_slurm "${J[@]}" SLURM_NTASKS=4 -- -np 3 --map-by node --bind-to core --tag-output "$P"
expect_srun "map/bind/tag" --mpi=pmix --kill-on-bad-exit=1 -n 3 --distribution=cyclic \
    --cpu-bind=cores --label "$P"
in_slurm "${J[@]}" SLURM_JOB_NUM_NODES=3 -- --map-by ppr:2:node "$P"
expect_srun "ppr" --mpi=pmix --kill-on-bad-exit=1 -n 6 --ntasks-per-node=2 "$P"
in_slurm "${J[@]}" -- -n 8 --map-by socket:PE=2 --report-bindings -bind-to socket --oversubscribe "$P"
expect_srun "socket/PE/report" --mpi=pmix --kill-on-bad-exit=1 -n 8 --distribution=block:cyclic \
    --cpus-per-task=2 --cpu-bind=verbose,sockets --overcommit "$P"
in_slurm "${J[@]}" -- -n 2 --map-by=slot --bind-to=none -l "$P"
expect_srun "= forms" --mpi=pmix --kill-on-bad-exit=1 -n 2 --distribution=block:block \
    --cpu-bind=none --label "$P"
in_slurm "${J[@]}" -- -n 4 -ppn 2 "$P"
expect_srun "-ppn" --mpi=pmix --kill-on-bad-exit=1 -n 4 --ntasks-per-node=2 "$P"
in_slurm "${J[@]}" -- -n 1 -- "$P" -n 5 --label
expect_srun "-- and program options" --mpi=pmix --kill-on-bad-exit=1 -n 1 -- "$P" -n 5 --label

# -x / -genv reach the ranks through srun's environment.
in_slurm "${J[@]}" BAR=frommpirun -- -n 1 -x FOO=1 -x BAR -genv BAZ "two words" "$P"
grep -q '^ENV FOO=1 BAR=frommpirun BAZ=two words$' "$LOG" ||
    fail "-x/-genv: srun's environment: $(grep ENV "$LOG")"

# srun's exit status is mpirun's.
in_slurm "${J[@]}" FAKE_SRUN_EXIT=143 -- -n 2 "$P"
expect_rc 143 "srun's exit status"

# Where mpirun launches by itself: no allocation, inside a job step (mpirun is a task srun
# placed), --launcher local, UMPI_LAUNCHER=local. --launcher is taken out before mpirun's own
# option parsing.
for case in "" "SLURM_STEP_ID=0" "UMPI_LAUNCHER=local"; do
    if [ -z "$case" ]; then in_slurm -- -n 2 "$P"; else in_slurm "${J[@]}" "$case" -- -n 2 "$P"; fi
    expect_rc 0 "local launch ($case)"
    expect_no_srun "local launch ($case)"
    expect_out_lines "^hello from rank" 2 "local launch ($case)"
done
in_slurm "${J[@]}" UMPI_LAUNCHER=slurm -- --launcher local -n 2 "$P"
expect_rc 0 "--launcher local over UMPI_LAUNCHER=slurm"
expect_no_srun "--launcher local"
expect_out_lines "^hello from rank" 2 "--launcher local"
in_slurm "${J[@]}" -- --launcher=local -n 1 "$P"
expect_no_srun "--launcher=local"
expect_rc 0 "--launcher=local"

# Forced to srun outside an allocation (srun then makes one).
in_slurm UMPI_LAUNCHER=slurm UMPI_DEBUG=1 -- -n 2 "$P"
expect_srun "UMPI_LAUNCHER=slurm" --mpi=pmix --kill-on-bad-exit=1 -n 2 "$P"
expect_err "Slurm job (none yet): running srun --mpi=pmix" "UMPI_DEBUG=1 prints the srun command"
in_slurm -- --launcher slurm -n 2 "$P"
expect_srun "--launcher slurm" --mpi=pmix --kill-on-bad-exit=1 -n 2 "$P"

# --help and --version are mpirun's own, allocation or not.
in_slurm "${J[@]}" -- --help
expect_rc 0 "--help"
expect_no_srun "--help"
expect_out_lines "--launcher L" 1 "--help mentions --launcher"

# Errors: one clear line naming what is wrong, exit 1, and no srun.
bad() {
    local what=$1 msg=$2
    shift 2
    in_slurm "${J[@]}" -- "$@"
    expect_rc 1 "$what"
    expect_err "$msg" "$what"
    expect_no_srun "$what"
}
bad "--bind-to l3cache" "srun binds to none, core, hwthread, socket" --bind-to l3cache "$P"
bad "--map-by bogus" "bad --map-by 'bogus'" --map-by bogus "$P"
bad "--map-by ppr per core" "not per core" --map-by ppr:2:core "$P"
bad "--map-by modifier" "modifier SPAN has no srun equivalent" --map-by node:SPAN "$P"
bad "unknown option" "option --frobnicate has no srun equivalent" --frobnicate "$P"
bad "--host inside an allocation" "choose them with salloc/sbatch -w" --launcher slurm --host a,b "$P"
bad "bad launcher" "unknown launcher 'ssh'" --launcher ssh "$P"
bad "-n 0" "bad number of ranks '0'" -n 0 "$P"
bad "no program" "no program to run" -n 2
in_slurm "${J[@]}" UMPI_LAUNCHER=bogus -- "$P"
expect_rc 1 "UMPI_LAUNCHER=bogus"
expect_err "unknown launcher 'bogus'" "UMPI_LAUNCHER=bogus"

# No srun to run: exit 127 and the reason.
rm -f "$LOG"
env PATH=/nonexistent SLURM_JOB_ID=42 "$MPIRUN" -n 2 "$P" >"$OUT" 2>"$ERR" </dev/null
RC=$?
expect_rc 127 "no srun"
expect_err "cannot run srun (No such file or directory)" "no srun"
finish
