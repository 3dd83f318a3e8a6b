#!/bin/sh
# The PMIx client on either data store of libpmix: the shared-memory one (ds21, the default), where
# a client reads the data a fence collected from a segment its server fills, and the hash
# (PMIX_MCA_gds=hash, and libpmix builds without shared memory), where that data stays at the
# server and a client must ask for it. Under the hash: the affinity masks of the node's ranks
# (read right after MPI_Init's fence), and a job over two "nodes" (two daemons, each a PMIx
# server, test/launch/local_agent.sh) whose ranks reach each other. On both: a peer that never
# published an address (unpublished_peer.c) makes sends fail at once with MPI_ERR_OTHER, naming
# the call, the world rank, the key and PMIx's reason. (test/mpi/testlist runs MPI programs
# under the hash too.)
. "$(dirname "$0")/common.sh"
build hello multinode
# shellcheck disable=SC2046 # the flags are words
"$MPICC" -o "$WORK/unpublished_peer" "$SRCDIR/unpublished_peer.c" $(pkg-config --cflags --libs pmix) ||
    { echo "FAIL: $TEST: cannot compile unpublished_peer.c"; exit 1; }
unset PMIX_MCA_gds UMPI_NODE_CPUS UMPI_BIND_TO

for gds in default hash; do
    if [ $gds = hash ]; then export PMIX_MCA_gds=hash; fi
    run -n 2 "$WORK/unpublished_peer"
    expect_rc 0 "gds $gds: a peer without an address"
    grep -q "^ No Errors" "$OUT" || fail "gds $gds: a peer without an address: $(head -c 600 "$OUT")"
    check_no_orphans "gds $gds: a peer without an address"
done

# All ranks on one cpu, so that each rank's own mask is short of a cpu per rank and it reads the
# others' masks: every one of them must be found.
cpu=$(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status | sed 's/[-,].*//')
UMPI_DEBUG=1 taskset -c "$cpu" "$MPIRUN" -n 2 "$WORK/hello" >"$OUT" 2>"$ERR"
RC=$?
expect_rc 0 "gds hash: two ranks on cpu $cpu"
n=$(grep -c "2 ranks on this node, 1 cores usable (union of the node's 2 ranks' affinity)" "$ERR")
[ "$n" -eq 2 ] || fail "gds hash: two ranks on cpu $cpu: $n ranks read both masks, expected 2 ($(grep "cores usable" "$ERR"))"

# Two nodes: the other node's ranks' addresses come through both servers.
run --launch-agent "$SRCDIR/local_agent.sh" --host a:2,b:2 -n 4 "$WORK/multinode"
expect_rc 0 "gds hash: two nodes"
grep -q "^ No Errors" "$OUT" || fail "gds hash: two nodes: no 'No Errors' ($(head -c 400 "$OUT"))"
expect_out_lines "; nodes 2\$" 4 "gds hash: two nodes"
check_no_orphans "gds hash: two nodes"
finish
