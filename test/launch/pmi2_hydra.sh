#!/bin/sh
# umpi programs under MPICH's Hydra launcher (mpiexec.hydra, Debian package mpich), which they reach
# through the PMI-2 client: ranks, sizes, a ring, an allreduce and MPI_Comm_split_type(SHARED)
# against the node of every rank (test/launch/pmi_nodes.c). Hydra's fork launcher with fake host
# names puts the ranks on "nodes" that all run here, in several layouts (cyclic, slots per host,
# -ppn), so the process mapping (PMI_process_mapping) is checked with several node ids; the
# hierarchical collectives and the progress engine's local count must see the same nodes. Also:
# PMI_PORT (-pmi-port), MPI_Abort, UMPI_PMI forcing, an MPICH-built binary running on umpi under
# Hydra, umpi_info. Skipped without mpiexec.hydra.
. "$(dirname "$0")/common.sh"
HYDRA=$(command -v mpiexec.hydra || command -v mpiexec.mpich) || { echo "SKIP: no mpiexec.hydra (Debian package mpich)"; exit 77; }
build pmi_nodes hello abort
for v in $(env | sed -n 's/^\(SLURM_[A-Z_]*\|PMI_[A-Z_]*\|PMIX_[A-Z_]*\|UMPI_PMI\|UMPI_COLL_RANKS_PER_NODE\)=.*/\1/p'); do
    unset "$v"
done

# hydra ARGS...: like run, with Hydra (status 124: still running after a minute)
hydra() {
    timeout 60 "$HYDRA" "$@" >"$OUT" 2>"$ERR"
    RC=$?
}

# layout NAME NODES HYDRA-ARGS...: pmi_nodes with that node list, then what each rank reported.
# Hydra forwards output in chunks, not lines: one of our log lines (a single write) may follow
# another rank's unfinished line (UCX prints its transport table in pieces), so no '^' anchors.
layout() {
    name=$1 nodes=$2
    shift 2
    UMPI_DEBUG=2 hydra "$@" "$WORK/pmi_nodes" "$nodes"
    expect_rc 0 "$name"
    expect_out_lines "No Errors" 1 "$name"
    np=$(echo "$nodes" | tr ',' '\n' | wc -l)
    nnodes=$(echo "$nodes" | tr ',' '\n' | sort -u | wc -l)
    r=0
    for nd in $(echo "$nodes" | tr ',' ' '); do
        here=$(echo "$nodes" | tr ',' '\n' | grep -c "^$nd\$")
        before=$(echo "$nodes" | tr ',' '\n' | head -n $r | grep -c "^$nd\$")
        grep -q "pmi: PMI-2 (P[A-Z_]*=[^)]*): rank $r of $np, node $nd, local rank $before of $here\$" "$ERR" ||
            fail "$name: rank $r does not report node $nd, local rank $before of $here ($(grep "rank $r of" "$ERR" | head -2))"
        grep -q "umpi\[$r\] debug: $here ranks on this node" "$ERR" ||
            fail "$name: the progress engine of rank $r does not count $here ranks on its node"
        r=$((r + 1))
    done
    # the hierarchical collectives see the same nodes (MPI_COMM_WORLD's structure, from rank 0)
    grep -q "umpi\[0\] debug: communicator 0x44000000: $np members on $nnodes nodes" "$ERR" ||
        fail "$name: the collectives do not see $np members on $nnodes nodes ($(grep 'members on' "$ERR" | head -2))"
}

layout "one host, 3 ranks" 0,0,0 -n 3
layout "hosts ha,hb (cyclic)" 0,1,0,1,0 -launcher fork -hosts ha,hb -n 5
layout "hosts ha:2,hb:1" 0,0,1,0,0 -launcher fork -hosts ha:2,hb:1 -n 5
layout "hosts ha,hb,hc -ppn 2" 0,0,1,1,2,2,0 -launcher fork -hosts ha,hb,hc -ppn 2 -n 7
layout "-pmi-port, hosts ha,hb" 0,1,0,1 -pmi-port -launcher fork -hosts ha,hb -n 4

# the collectives pick hierarchical algorithms across these nodes
UMPI_DEBUG=1 UMPI_ALLREDUCE_ALGORITHM=hier hydra -launcher fork -hosts ha,hb -ppn 2 -n 4 "$WORK/pmi_nodes" 0,0,1,1
expect_rc 0 "forced hier allreduce"
expect_out_lines "No Errors" 1 "forced hier allreduce"
grep -q "allreduce on MPI_COMM_WORLD (size 4, 4 bytes): algorithm hier" "$ERR" ||
    fail "forced hier allreduce: not run ($(grep allreduce "$ERR" | head -2))"

# MPI_Abort ends the job: a nonzero exit, the message, nothing left behind (Hydra 4.0.2 does not
# know PMI-2's abort command, ends the job anyway and exits with 255)
hydra -n 3 "$WORK/abort"
[ "$RC" -ne 0 ] || fail "MPI_Abort under Hydra: exit status 0"
[ "$RC" -ne 124 ] || fail "MPI_Abort under Hydra: the job did not end (killed by timeout)"
expect_err "MPI_Abort(MPI_COMM_WORLD, 7) called by rank 2" "MPI_Abort under Hydra"
check_no_orphans "MPI_Abort under Hydra"

# forcing: pmi2 is what auto picks here, pmix is absent, singleton ignores Hydra
UMPI_PMI=pmi2 hydra -n 2 "$WORK/hello"
expect_rc 0 "UMPI_PMI=pmi2"
expect_out_lines "^hello from rank [01] of 2\$" 2 "UMPI_PMI=pmi2"
UMPI_PMI=pmix hydra -n 2 "$WORK/hello"
[ "$RC" -ne 0 ] || fail "UMPI_PMI=pmix under Hydra: exit status 0"
expect_err "UMPI_PMI=pmix but no PMIx server in the environment" "UMPI_PMI=pmix under Hydra"
UMPI_PMI=singleton hydra -n 2 "$WORK/hello"
expect_rc 0 "UMPI_PMI=singleton under Hydra"
expect_out_lines "^hello from rank 0 of 1\$" 2 "UMPI_PMI=singleton under Hydra"

# a program built by MPICH's mpicc, run on umpi (its libmpich.so.12) under MPICH's own launcher
if command -v mpicc.mpich >/dev/null 2>&1; then
    mpicc.mpich -o "$WORK/pmi_nodes.mpich" "$SRCDIR/pmi_nodes.c" || fail "mpicc.mpich cannot compile pmi_nodes.c"
    LD_LIBRARY_PATH=$UMPI_PREFIX/lib UMPI_DEBUG=1 hydra -launcher fork -hosts ha,hb -n 3 "$WORK/pmi_nodes.mpich" 0,1,0
    expect_rc 0 "MPICH-built binary on umpi under Hydra"
    expect_out_lines "No Errors" 1 "MPICH-built binary on umpi under Hydra"
    n=$(grep -c "pmi: PMI-2 (PMI_FD" "$ERR")
    [ "$n" -eq 3 ] || fail "MPICH-built binary under Hydra: $n ranks report umpi's PMI-2 client, expected 3"
fi

hydra -n 1 "$UMPI_PREFIX/bin/umpi_info"
grep -q "^  process manager  *PMI-2 (PMI_FD=[0-9]*, rank 0)" "$OUT" ||
    fail "umpi_info under Hydra ($(grep 'process manager' "$OUT"))"
check_no_orphans "pmi2_hydra"
finish
