#!/bin/sh
# stdout and stderr of every rank are forwarded line by line, each line whole; --tag-output
# prefixes "[rank] "; a partial last line is flushed at the end.
. "$(dirname "$0")/common.sh"
build lines

run -n 4 "$WORK/lines" 200
expect_rc 0 "untagged"
for r in 0 1 2 3; do
    n=$(grep -c "^rank $r line [0-9]* end\$" "$OUT")
    [ "$n" -eq 200 ] || fail "untagged: rank $r has $n whole lines on stdout, expected 200"
    grep -q "^rank $r to stderr\$" "$ERR" || fail "untagged: rank $r's stderr line missing"
    grep -q "rank $r to stderr" "$OUT" && fail "untagged: rank $r's stderr line went to stdout"
    grep -q "rank $r partial" "$OUT" || fail "untagged: rank $r's partial last line missing"
done
# Each rank's lines in the order it wrote them.
for r in 0 1 2 3; do
    grep "^rank $r line" "$OUT" | awk '{print $4}' >"$WORK/order.$r"
    seq 0 199 | cmp -s - "$WORK/order.$r" || fail "untagged: rank $r's lines out of order"
done

run --tag-output -n 4 "$WORK/lines" 50
expect_rc 0 "tagged"
for r in 0 1 2 3; do
    n=$(grep -c "^\[$r\] rank $r line [0-9]* end\$" "$OUT")
    [ "$n" -eq 50 ] || fail "tagged: rank $r has $n tagged lines, expected 50"
    grep -q "^\[$r\] rank $r to stderr\$" "$ERR" || fail "tagged: rank $r's stderr line not tagged"
    grep -q "^\[$r\] rank $r partial\$" "$OUT" || fail "tagged: rank $r's partial line not tagged"
done
untagged=$(grep -vc '^\[[0-9]\] ' "$OUT")
[ "$untagged" -eq 0 ] || fail "tagged: $untagged stdout lines without a tag"

# A partial line of a single rank comes out exactly as written.
run -n 1 printf 'no newline'
[ "$(cat "$OUT")" = "no newline" ] || fail "partial line: got '$(cat "$OUT")'"
finish
