#!/bin/sh
# --help, --version, -x, and clear errors for options umpi does not have and unknown options.
. "$(dirname "$0")/common.sh"

run --help
expect_rc 0 "--help"
grep -q -- "--tag-output" "$OUT" || fail "--help does not describe --tag-output"
grep -q -- "-np" "$OUT" || fail "--help does not describe -np"
run -h
expect_rc 0 "-h"
run --version
expect_rc 0 "--version"
grep -qi "umpi" "$OUT" || fail "--version does not name umpi"

# Launch options umpi does not have yet are refused by name (hosts and mapping: multinode.sh;
# binding: bind.sh).
for opt in "--rank-by slot" "-rankfile rf"; do
    # shellcheck disable=SC2086
    run $opt -n 2 true
    expect_rc 1 "$opt"
    expect_err "option ${opt%% *} is not supported yet" "$opt"
done

run --no-such-option -n 2 true
expect_rc 1 "unknown option"
expect_err "unknown option" "unknown option"
run -n 0 true
expect_rc 1 "-n 0"
run -n two true
expect_rc 1 "-n two"
run -n 2
expect_rc 1 "no program"

UMPI_LAUNCH_INHERITED=yes
export UMPI_LAUNCH_INHERITED
run -n 2 -x UMPI_LAUNCH_SET=42 sh -c 'echo "set=$UMPI_LAUNCH_SET inherited=$UMPI_LAUNCH_INHERITED"'
expect_rc 0 "-x"
expect_out_lines "^set=42 inherited=yes\$" 2 "-x VAR=value"
run --oversubscribe -n 2 true
expect_rc 0 "--oversubscribe"
finish
