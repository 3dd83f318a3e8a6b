#!/bin/sh
# umpi_info lists the collective algorithms from libmpi's tables: --coll alone and within --all.
. "$(dirname "$0")/common.sh"
INFO=$UMPI_PREFIX/bin/umpi_info

for opt in --coll -c --all; do
    "$INFO" $opt >"$OUT" 2>"$ERR"
    RC=$?
    expect_rc 0 "umpi_info $opt"
    grep -q "^Collective algorithms" "$OUT" || fail "umpi_info $opt: no 'Collective algorithms' section"
    # allreduce's section names recursive_doubling among its intracommunicator algorithms.
    sed -n '/^  allreduce$/,/^  [a-z]/p' "$OUT" >"$WORK/allreduce.txt"
    grep -q "intracommunicators:" "$WORK/allreduce.txt" || fail "umpi_info $opt: no allreduce section"
    grep -q "^      recursive_doubling$" "$WORK/allreduce.txt" \
        || fail "umpi_info $opt: allreduce does not list recursive_doubling"
    grep -q "intercommunicators:" "$WORK/allreduce.txt" || fail "umpi_info $opt: no intercommunicator line"
done
"$INFO" --coll >"$OUT" 2>"$ERR"
grep -q "^Knobs" "$OUT" && fail "umpi_info --coll also lists the knobs"
finish
