#!/bin/sh
# bench/'s one-sided benchmarks (osu_rma.h) build with umpi's mpicc and run with -c at 2 and 4
# ranks (pairs), put/get through UCX RMA and as messages (UMPI_RMA_UCX=0): every size's data check
# must pass (what a put wrote, a get read, the accumulates' sum, every value fetch_and_op and
# compare_and_swap returned).
# Environment (set by test/runtests): UMPI_PREFIX, TESTDIR (this folder), UMPI_TEST_WORKDIR.
set -u
: "${UMPI_PREFIX:?UMPI_PREFIX is not set}"
TESTDIR=${TESTDIR:-$(dirname "$0")}
WORK=${UMPI_TEST_WORKDIR:-$(mktemp -d)}
BENCH=$(cd "$TESTDIR/../../bench" && pwd)
fails=0 runs=0
for b in put_latency get_latency put_bw get_bw acc_latency fop_latency cas_latency; do
    if ! "$UMPI_PREFIX/bin/mpicc" -O2 -Wall -Werror -o "$WORK/osu_$b" "$BENCH/osu_$b.c" 2> "$WORK/$b.log"; then
        echo "FAIL: osu_$b does not build:"; cat "$WORK/$b.log"; exit 1
    fi
    for ucx in 1 0; do
        for n in 2 4; do
            runs=$((runs + 1))
            out=$(UMPI_RMA_UCX=$ucx timeout 60 "$UMPI_PREFIX/bin/mpirun" -n $n "$WORK/osu_$b" -c -m 1:65536 \
                  -i 20 -x 2 2>&1)
            rc=$?
            rows=$(printf '%s\n' "$out" | grep -Ec '^[0-9]+ +[0-9.]+ +Pass$')
            if [ $rc -ne 0 ] || [ "$rows" -eq 0 ] || printf '%s\n' "$out" | grep -q 'Fail$'; then
                echo "FAIL osu_$b UMPI_RMA_UCX=$ucx -n $n: exit status $rc"
                printf '%s\n' "$out" | tail -5 | sed 's/^/    /'
                fails=$((fails + 1))
            fi
        done
    done
done
echo "$runs runs, $fails failed"
[ $fails -eq 0 ]
