#!/bin/sh
# Which process-manager client MPI_Init uses (src/pmi/pmi.c), without any launcher but our own:
# a program run directly is a singleton; one started as a task of several by srun without a PMI
# (faked: srun sets SLURM_STEP_NUM_TASKS and SLURM_PROCID in its tasks) or by a PMI launcher
# without PMI_FD/PMI_PORT fails with a message naming the cure, instead of running N singletons;
# a batch script's environment (SLURM_NTASKS without the step variables) stays a singleton;
# UMPI_PMI forces a client and fails clearly where it is absent; umpi_info says what MPI_Init
# would do. Under our mpirun (PMIx) node and local ranks reach MPI_Comm_split_type(SHARED).
. "$(dirname "$0")/common.sh"
build pmi_nodes hello
INFO=$UMPI_PREFIX/bin/umpi_info
# Whatever launched the test suite must not leak into these cases.
for v in $(env | sed -n 's/^\(SLURM_[A-Z_]*\|PMI_[A-Z_]*\|PMIX_[A-Z_]*\|UMPI_PMI\)=.*/\1/p'); do unset "$v"; done

# direct: run PROG ARGS... without a launcher; RC, $OUT, $ERR as run() sets them
direct() {
    "$@" >"$OUT" 2>"$ERR"
    RC=$?
}
expect_fails() {
    [ "$RC" -ne 0 ] || fail "$2: exit status 0, expected a failure"
    expect_err "$1" "$2"
    n=$(grep -c "^hello from rank" "$OUT")
    [ "$n" -eq 0 ] || fail "$2: the program ran past MPI_Init"
}

direct "$WORK/hello"
expect_rc 0 "singleton"
expect_out_lines "^hello from rank 0 of 1\$" 1 "singleton"
direct "$WORK/pmi_nodes" 0
expect_rc 0 "singleton pmi_nodes"
expect_out_lines "No Errors" 1 "singleton pmi_nodes"

# srun --mpi=none: task 2 of 4
SLURM_JOB_ID=77 SLURM_STEP_ID=0 SLURM_STEP_NUM_TASKS=4 SLURM_NTASKS=4 SLURM_PROCID=2 SLURM_LOCALID=0 \
    direct "$WORK/hello"
expect_fails "started by srun as task 2 of 4 without a PMI: run srun --mpi=pmix or srun --mpi=pmi2" "srun without PMI"
SLURM_STEP_NUM_TASKS=4 SLURM_PROCID=2 UMPI_PMI=singleton direct "$WORK/hello"
expect_rc 0 "srun without PMI, UMPI_PMI=singleton"
expect_out_lines "^hello from rank 0 of 1\$" 1 "srun without PMI, UMPI_PMI=singleton"
# a single-task step, and a batch script (allocation variables, no step ones): singletons
SLURM_JOB_ID=77 SLURM_STEP_ID=1 SLURM_STEP_NUM_TASKS=1 SLURM_NTASKS=1 SLURM_PROCID=0 direct "$WORK/hello"
expect_rc 0 "srun -n 1"
SLURM_JOB_ID=77 SLURM_NTASKS=4 SLURM_NPROCS=4 SLURM_PROCID=0 SLURM_NNODES=2 direct "$WORK/hello"
expect_rc 0 "batch script"
expect_out_lines "^hello from rank 0 of 1\$" 1 "batch script"
# a PMI launcher's rank without a way to reach it
PMI_RANK=1 PMI_SIZE=3 direct "$WORK/hello"
expect_fails "started as rank 1 of 3 (PMI_RANK, PMI_SIZE) but the launcher gave neither PMI_FD nor PMI_PORT" \
    "PMI_SIZE without PMI_FD"

# forced clients
UMPI_PMI=pmix direct "$WORK/hello"
expect_fails "UMPI_PMI=pmix but no PMIx server in the environment" "UMPI_PMI=pmix, no server"
UMPI_PMI=pmi2 direct "$WORK/hello"
expect_fails "UMPI_PMI=pmi2 but no PMI-2 server in the environment" "UMPI_PMI=pmi2, no server"
UMPI_PMI=pmi2 run -n 2 "$WORK/hello"
expect_fails "UMPI_PMI=pmi2 but no PMI-2 server" "UMPI_PMI=pmi2 under mpirun"
UMPI_PMI=pmi3 direct "$WORK/hello"
expect_fails "UMPI_PMI='pmi3' is not one of auto, pmix, pmi2, singleton" "UMPI_PMI=pmi3"
UMPI_PMI=pmi2 PMI_FD=1000 PMI_RANK=0 direct "$WORK/hello"
expect_fails "PMI_FD='1000' is not an open file descriptor" "PMI_FD not open"
UMPI_PMI=pmix run -n 2 "$WORK/hello"
expect_rc 0 "UMPI_PMI=pmix under mpirun"
expect_out_lines "^hello from rank [01] of 2\$" 2 "UMPI_PMI=pmix under mpirun"
check_no_orphans "forced clients"

# PMIx (our mpirun): every rank on this node, local ranks from the server
UMPI_DEBUG=1 run -n 3 "$WORK/pmi_nodes" 0,0,0
expect_rc 0 "mpirun -n 3"
expect_out_lines "No Errors" 1 "mpirun -n 3"
for r in 0 1 2; do
    grep -q "pmi: PMIx (PMIX_[A-Z_]*=[^)]*): rank $r of 3, node 0, local rank $r of 3" "$ERR" ||
        fail "mpirun -n 3: rank $r does not report local rank $r of 3 from PMIx ($(grep 'pmi:' "$ERR" | head -3))"
done
n=$(grep -c "debug: 3 ranks on this node" "$ERR")
[ "$n" -eq 3 ] || fail "mpirun -n 3: $n ranks report 3 ranks on this node to the progress engine"

# umpi_info says what MPI_Init would do
"$INFO" >"$OUT" 2>&1
grep -q "^  process manager  *singleton (no process manager in the environment)" "$OUT" ||
    fail "umpi_info: no singleton line ($(grep 'process manager' "$OUT"))"
SLURM_STEP_NUM_TASKS=2 SLURM_PROCID=1 "$INFO" >"$OUT" 2>&1
grep -q "^  process manager  *MPI_Init would fail: started by srun as task 1 of 2" "$OUT" ||
    fail "umpi_info under srun without PMI ($(grep 'process manager' "$OUT"))"
"$MPIRUN" -n 1 "$INFO" >"$OUT" 2>&1
grep -q "^  process manager  *PMIx (PMIX_" "$OUT" || fail "umpi_info under mpirun ($(grep 'process manager' "$OUT"))"
"$INFO" --knobs >"$OUT" 2>&1
grep -q "^  UMPI_PMI  *STRING  *\"auto\"" "$OUT" || fail "umpi_info --knobs does not list UMPI_PMI"
finish
