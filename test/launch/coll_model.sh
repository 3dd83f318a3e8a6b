#!/bin/sh
# The cost model's choices across nodes: with node boundaries declared
# (UMPI_COLL_RANKS_PER_NODE=2 at 4 ranks: 2 nodes of 2) it picks the hierarchical algorithms for
# small barrier / bcast / allreduce (and reduce, allgather); with every rank on one node (no knob)
# or one rank per node it picks flat ones; UMPI_DEBUG=2 lists every candidate with its estimate.
. "$(dirname "$0")/common.sh"
build coll_model
for k in BARRIER BCAST ALLREDUCE REDUCE ALLGATHER; do export UMPI_${k}_ALGORITHM=auto; done
unset UMPI_COLL_RANKS_PER_NODE
# The declared nodes share this machine, and UCX's estimate of the link between them (the default,
# UMPI_COLL_NET_COST=auto) is shared memory, where flat algorithms rightly win: price the network
# as the built-in InfiniBand guess, which these choices are about.
export UMPI_COLL_NET_COST=builtin

# choice KIND: the algorithm rank 0 reported for KIND on MPI_COMM_WORLD
choice() {
    sed -n "s/^umpi\[0\] debug: $1 on MPI_COMM_WORLD (size 4, [0-9]* bytes): algorithm \([a-z_]*\)$/\1/p" "$ERR" | head -1
}

UMPI_COLL_RANKS_PER_NODE=2 UMPI_DEBUG=1 run -n 4 "$WORK/coll_model"
expect_rc 0 "two nodes of two"
for kind in barrier bcast allreduce reduce allgather; do
    got=$(choice $kind)
    [ "$got" = hier ] || fail "two nodes of two: $kind chose '$got', expected hier"
done

UMPI_DEBUG=1 run -n 4 "$WORK/coll_model"
expect_rc 0 "one node"
for kind in barrier bcast allreduce reduce allgather; do
    got=$(choice $kind)
    [ -n "$got" ] || fail "one node: no choice reported for $kind"
    case $got in *hier*) fail "one node: $kind chose $got" ;; esac
done

UMPI_COLL_RANKS_PER_NODE=1 UMPI_DEBUG=1 run -n 4 "$WORK/coll_model"
expect_rc 0 "one rank per node"
for kind in barrier bcast allreduce; do
    got=$(choice $kind)
    case $got in ''|*hier*) fail "one rank per node: $kind chose '$got'" ;; esac
done

# UMPI_DEBUG=2: every candidate, with its estimate, and the cheapest is the one chosen
UMPI_COLL_RANKS_PER_NODE=2 UMPI_DEBUG=2 run -n 4 "$WORK/coll_model"
expect_rc 0 "UMPI_DEBUG=2"
grep "^umpi\[0\] debug: allreduce candidate " "$ERR" >"$WORK/cand.txt"
for a in recursive_doubling hier ring rabenseifner reduce_bcast hier_large; do
    grep -q "allreduce candidate $a: estimated [0-9.]* us" "$WORK/cand.txt" || fail "UMPI_DEBUG=2 does not list allreduce candidate $a"
done
best=$(sed -n 's/.*allreduce candidate \([a-z_]*\): estimated \([0-9.]*\) us.*/\2 \1/p' "$WORK/cand.txt" | sort -n | head -1 | cut -d' ' -f2)
[ "$best" = "$(choice allreduce)" ] || fail "UMPI_DEBUG=2: cheapest allreduce candidate $best, chosen $(choice allreduce)"
finish
