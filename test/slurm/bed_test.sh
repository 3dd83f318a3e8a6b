# Sourced by the test bed's scripts (jobs.sh, netcost.sh) after ../launch/common.sh: brings in
# testbed.sh, skips (77) where the test bed cannot run, claims an instance of its own (tb_claim) and
# takes it down on exit; defines ok and sjob.
. "$SRCDIR/testbed.sh"

why=$(tb_missing)
if [ -n "$why" ]; then
    echo "SKIP: Slurm test bed: $why"
    exit 77
fi
tb_claim || exit 1
trap 'tb_down' EXIT
trap 'exit 143' TERM INT

ok() { echo "ok: $*"; }

# sjob NAME TIMEOUT CMD...: runs a Slurm command against the test bed; RC, MS, $OUT, $ERR (copied
# to $WORK/NAME.out and .err).
sjob() {
    local name=$1 limit=$2
    shift 2
    echo "+ $*" >>"$WORK/commands"
    t0=$(now_ms)
    SLURM_CONF=$TB_CONF timeout -k 5 "$limit" "$@" >"$OUT" 2>"$ERR" </dev/null
    RC=$?
    MS=$(($(now_ms) - t0))
    cp "$OUT" "$WORK/$name.out"
    cp "$ERR" "$WORK/$name.err"
    [ $RC -eq 124 ] && fail "$name: still running after $limit s: $*"
}
