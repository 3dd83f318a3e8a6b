#!/bin/sh
# Process binding: --bind-to, --report-bindings, --cpu-set, the default (a core each
# unless oversubscribed), the errors; each rank's own sched_getaffinity against the report; and
# the oversubscription the library decides (UMPI_DEBUG=1), bound and not.
#
# mpirun runs under `taskset -c A,B`, two cpus of two different cores, so that the test means
# the same on any machine: 2 ranks fit, 4 do not.
. "$(dirname "$0")/common.sh"
build affinity
AFF=$WORK/affinity
# The defaults under test, not the caller's.
unset UMPI_BIND_TO UMPI_NODE_CPUS

# Two cpus of ours on different cores (package, core id), from sysfs.
cpus=$(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status | tr ',' '\n' |
       awk -F- '{ hi = NF > 1 ? $2 : $1; for (c = $1; c <= hi; c++) print c }')
A= B=
for c in $cpus; do
    t=/sys/devices/system/cpu/cpu$c/topology
    id="$(cat $t/physical_package_id 2>/dev/null):$(cat $t/core_id 2>/dev/null)"
    if [ -z "$A" ]; then
        A=$c ida=$id
    elif [ "$id" != "$ida" ]; then
        B=$c
        break
    fi
done
if [ -z "$B" ]; then
    echo "SKIP: $TEST: needs two cores (have cpus $(echo $cpus))"
    exit 77
fi
[ "$A" -lt 63 ] && [ "$B" -lt 63 ] || { echo "SKIP: $TEST: cpus $A and $B beyond the shell's masks"; exit 77; }
mask_of() {
    m=$((1 << $1))
    [ -n "${2:-}" ] && m=$((m | (1 << $2)))
    printf '0x%x' $m
}
MA=$(mask_of "$A") MB=$(mask_of "$B") MAB=$(mask_of "$A" "$B")
# A,B as hwloc lists them
if [ "$B" -eq $((A + 1)) ]; then LAB="$A-$B"; else LAB="$A,$B"; fi

# brun ARGS...: mpirun ARGS under taskset A,B with UMPI_DEBUG=1.
brun() {
    t0=$(now_ms)
    UMPI_DEBUG=1 taskset -c "$A,$B" "$MPIRUN" "$@" >"$OUT" 2>"$ERR"
    RC=$?
    MS=$(($(now_ms) - t0))
}

# report_mask R: the mask mpirun reported for rank R; own_mask R: the one rank R read itself.
report_mask() { sed -n "s/^mpirun: rank $1 on [^:]*: .*, mask \(0x[0-9a-f]*\)\$/\1/p" "$ERR"; }
own_mask() { sed -n "s/^affinity of rank $1: cpus [0-9,-]*, mask \(0x[0-9a-f]*\)\$/\1/p" "$OUT"; }

# check_ranks WHAT N LABEL MASK...: N ranks ran, each reported with LABEL (a regex) and the
# given masks (rank r gets the r-th, cycling), and each one's own affinity is what was reported.
check_ranks() {
    what=$1 n=$2 label=$3
    shift 3
    expect_rc 0 "$what"
    r=0
    set -- "$@" "$@" "$@" "$@"
    while [ $r -lt "$n" ]; do
        want=$1
        shift
        line=$(grep "^mpirun: rank $r on " "$ERR")
        [ "$(printf '%s\n' "$line" | grep -c .)" -eq 1 ] || fail "$what: $(printf '%s\n' "$line" | grep -c .) report lines for rank $r"
        printf '%s\n' "$line" | grep -q "^mpirun: rank $r on [^:]*: $label, cpus " ||
            fail "$what: rank $r reported as '$line', expected '$label'"
        [ "$(report_mask $r)" = "$want" ] || fail "$what: rank $r reported mask '$(report_mask $r)', expected $want"
        [ "$(own_mask $r)" = "$want" ] || fail "$what: rank $r runs on mask '$(own_mask $r)', expected $want"
        r=$((r + 1))
    done
    [ "$(grep -c '^mpirun: rank ' "$ERR")" -eq "$n" ] || fail "$what: $(grep -c '^mpirun: rank ' "$ERR") report lines, expected $n"
}

# library N CPUS FROM STATE: every rank's debug line says N ranks, CPUS cores usable (FROM),
# and STATE ("spin before yielding" or "oversubscribed").
library() {
    c=$(grep -c "debug: $1 ranks on this node, $2 cores usable ($3): $4" "$ERR")
    [ "$c" -eq "$1" ] || fail "$5: $c of $1 ranks say '$1 ranks on this node, $2 cores usable ($3): $4' (stderr: $(grep 'cores usable' "$ERR" | head -2 | tr '\n' ' '))"
}

# -n 2 by default: one core each, distinct; the library sees 2 cpus for 2 ranks (not oversubscribed,
# although each rank's own mask has one cpu).
brun --report-bindings -n 2 "$AFF"
check_ranks "-n 2" 2 "core [0-9]*" "$MA" "$MB"
library 2 2 UMPI_NODE_CPUS "spin before yielding" "-n 2 bound"

# -n 4 by default: more ranks than cores, so no binding; the library sees it oversubscribed.
brun --report-bindings -n 4 "$AFF"
check_ranks "-n 4" 4 "not bound" "$MAB"
expect_err "mpirun: 4 ranks on 2 cores (cpus $LAB): not binding them (oversubscribed)" "-n 4"
library 4 2 "union of the node's 4 ranks' affinity" "oversubscribed" "-n 4 not bound"

# --bind-to core -n 4 without --oversubscribe: an error naming the way out, and nothing started.
brun --bind-to core -n 4 "$AFF"
expect_rc 1 "--bind-to core -n 4"
expect_err "mpirun: cannot bind 4 ranks to cores of their own: only 2 are available (cpus $LAB); add --oversubscribe" "--bind-to core -n 4"
[ -s "$OUT" ] && fail "--bind-to core -n 4: ranks ran: $(head -c 200 "$OUT")"

# ... with --oversubscribe: ranks 0 and 2 share a core, 1 and 3 the other; still oversubscribed.
brun --bind-to core --oversubscribe --report-bindings -n 4 "$AFF"
check_ranks "--bind-to core --oversubscribe -n 4" 4 "core [0-9]*" "$MA" "$MB"
library 4 2 UMPI_NODE_CPUS "oversubscribed" "--bind-to core --oversubscribe -n 4"

# --bind-to none (and MPICH's -bind-to spelling): every rank keeps mpirun's cpus.
for opt in "--bind-to none" "-bind-to none" "--bind-to=none"; do
    # shellcheck disable=SC2086
    brun $opt --report-bindings -n 2 "$AFF"
    check_ranks "$opt" 2 "not bound" "$MAB"
    library 2 2 "own affinity" "spin before yielding" "$opt"
done

# UMPI_BIND_TO gives the default; --bind-to overrides it; a bad value is an error.
export UMPI_BIND_TO=none
brun --report-bindings -n 2 "$AFF"
check_ranks "UMPI_BIND_TO=none" 2 "not bound" "$MAB"
brun --bind-to core --report-bindings -n 2 "$AFF"
check_ranks "UMPI_BIND_TO=none --bind-to core" 2 "core [0-9]*" "$MA" "$MB"
UMPI_BIND_TO=core
brun -n 4 "$AFF"
expect_rc 1 "UMPI_BIND_TO=core -n 4"
expect_err "cannot bind 4 ranks" "UMPI_BIND_TO=core -n 4"
UMPI_BIND_TO=board
brun -n 1 "$AFF"
expect_rc 1 "UMPI_BIND_TO=board"
expect_err "UMPI_BIND_TO: unknown object 'board'" "UMPI_BIND_TO=board"
unset UMPI_BIND_TO

# --cpu-set: the one cpu given; -n 2 on it does not fit, so they are confined but not bound apart.
brun --cpu-set "$B" --report-bindings -n 1 "$AFF"
check_ranks "--cpu-set $B" 1 "core [0-9]*" "$MB"
brun --cpu-set "$B" --report-bindings -n 2 "$AFF"
check_ranks "--cpu-set $B -n 2" 2 "cpu-set" "$MB"
library 2 1 UMPI_NODE_CPUS "oversubscribed" "--cpu-set $B -n 2"
brun --cpu-set 100000 -n 1 "$AFF"
expect_rc 1 "--cpu-set 100000"
expect_err "cpu 100000 is not available here" "--cpu-set 100000"

# Binding to an object larger than a core: both ranks get the whole socket's cpus (of A,B).
brun --bind-to socket --report-bindings -n 2 "$AFF"
expect_rc 0 "--bind-to socket"
for r in 0 1; do
    [ "$(report_mask $r)" = "$(own_mask $r)" ] || fail "--bind-to socket: rank $r reported $(report_mask $r), runs on $(own_mask $r)"
done

# The user's UMPI_NODE_CPUS wins over mpirun's.
brun -x UMPI_NODE_CPUS=7 -n 2 "$AFF"
library 2 7 UMPI_NODE_CPUS "spin before yielding" "-x UMPI_NODE_CPUS=7"

# Without UMPI_NODE_CPUS (a launcher that does not set it, as srun) the ranks count the union of
# their node's affinity masks, published at MPI_Init: one core each, 2 ranks, not oversubscribed;
# two ranks forced onto one core, oversubscribed; unbound ranks with enough cpus of their own do
# not even look (their own mask says it).
brun -x UMPI_NODE_CPUS=0 --bind-to core -n 2 "$AFF"
expect_rc 0 "UMPI_NODE_CPUS=0 --bind-to core -n 2"
library 2 2 "union of the node's 2 ranks' affinity" "spin before yielding" "UMPI_NODE_CPUS=0 --bind-to core -n 2"
brun -x UMPI_NODE_CPUS=0 --bind-to core --oversubscribe -n 4 "$AFF"
library 4 2 "union of the node's 4 ranks' affinity" "oversubscribed" "UMPI_NODE_CPUS=0 --bind-to core --oversubscribe -n 4"
brun -x UMPI_NODE_CPUS=0 --cpu-set "$B" --bind-to core --oversubscribe -n 2 "$AFF"
library 2 1 "union of the node's 2 ranks' affinity" "oversubscribed" "UMPI_NODE_CPUS=0 --cpu-set $B -n 2"
brun -x UMPI_NODE_CPUS=0 --bind-to none -n 2 "$AFF"
library 2 2 "own affinity" "spin before yielding" "UMPI_NODE_CPUS=0 --bind-to none -n 2"

# Bad values: named, exit 1.
for opt in "--bind-to board" "--map-by board" "--map-by core:PE=0" "--cpu-set x"; do
    # shellcheck disable=SC2086
    brun $opt -n 1 "$AFF"
    expect_rc 1 "$opt"
    expect_err "mpirun: --" "$opt"
done
expect_err "'x' is not a list of cpu numbers" "--cpu-set x"

# Binding does not depend on MPI: a shell sees the same cpus.
taskset -c "$A,$B" "$MPIRUN" -n 2 -l sh -c 'grep Cpus_allowed_list /proc/self/status' >"$OUT" 2>"$ERR"
grep -q "^\[0\] Cpus_allowed_list:.$A\$" "$OUT" || fail "sh rank 0: $(grep '^\[0\]' "$OUT")"
grep -q "^\[1\] Cpus_allowed_list:.$B\$" "$OUT" || fail "sh rank 1: $(grep '^\[1\]' "$OUT")"
finish
