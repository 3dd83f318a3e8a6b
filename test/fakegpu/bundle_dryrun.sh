#!/bin/bash
# The GPU bundle, dry-run on this machine (test/gpu/README.md, "The GPU bundle"): makes the bundle
# with test/gpu/bundle.sh from the installed tree, then, in a private mount namespace where this
# machine's own copies of everything the bundle carries are hidden (an empty file bind-mounted over
# each library of its MANIFEST, an empty folder over UCX's modules and PMIx's tree, and over the
# installed prefix the bundle was made from), runs the bundle's run-gpu-check.sh --dry-run on the
# fake CUDA driver: umpi_info --gpu, every bundled program's libraries, an mpirun, a subset of the
# gpu suite with device buffers, a bench/ -d cuda run and the real OSU (host buffers) must pass. A
# bundle that still leans on an installed package fails here, as it would on the GPU machine: the
# test checks that too, by hiding one library of the bundle itself and expecting the check to fail
# and name it.
#
# Skipped (77) where the namespace cannot be made: not root, or unshare -m refused.
. "$(dirname "$0")/../launch/common.sh"
TEST=bundle_dryrun
BUNDLE=$WORK/bundle

if [ "${1:-}" != --inside ]; then
    [ "$(id -u)" = 0 ] || { echo "SKIP: needs root (unshare -m and bind mounts hide the system's libraries)"; exit 77; }
    if ! err=$(unshare -m --propagation private true 2>&1); then
        echo "SKIP: unshare -m does not work here: $err"
        exit 77
    fi
    # the build tree: the fakegpu suite names its fake driver, BUILDDIR/test/fakecuda/libcuda_fake.so
    BUILDDIR=${abs_top_builddir:-$(cd "$(dirname "${UMPI_CUDA_LIBRARY:?}")/../.." && pwd)}
    t0=$(now_ms)
    "$SRCDIR/../gpu/bundle.sh" --prefix "$UMPI_PREFIX" --builddir "$BUILDDIR" --out "$BUNDLE" \
        >"$WORK/bundle.log" 2>&1 || { echo "FAIL: $TEST: bundle.sh failed:"; tail -20 "$WORK/bundle.log"; exit 1; }
    echo "bundle made in $(($(now_ms) - t0)) ms: $(tail -1 "$WORK/bundle.log")"
    grep "^\*\*\*\|OSU" "$WORK/bundle.log" | grep -v "^bundle.sh: bundle in" || true
    exec unshare -m --propagation private -- "$0" --inside
fi

# --- inside the namespace: hide what the bundle carries ---
: >"$WORK/empty-file"
mkdir -p "$WORK/empty-dir"
hidden=0
hide() {
    real=$(readlink -f "$1") || return 0
    if [ -d "$real" ]; then src=$WORK/empty-dir; elif [ -f "$real" ]; then src=$WORK/empty-file; else return 0; fi
    mount --bind "$src" "$real" || { echo "FAIL: $TEST: cannot hide $real"; exit 1; }
    hidden=$((hidden + 1))
}
. "$BUNDLE/BUNDLE-INFO"
# What the bundle says it carries (MANIFEST), and, found here independently of bundle.sh, every
# library this machine would give a bundled program that is neither the base system's nor the GPU
# driver's: a library bundle.sh forgot to carry and to list is hidden all the same.
{
    cut -f2 "$BUNDLE/MANIFEST"
    find "$BUNDLE"/prefix/bin "$BUNDLE"/prefix/lib "$BUNDLE"/bench "$BUNDLE"/osu "$BUNDLE"/build \
        "$BUNDLE"/ucx "$BUNDLE"/pmix2/lib -type f -perm -u+x -o -type f -name '*.so*' | while read -r f; do
        env -u LD_LIBRARY_PATH ldd "$f" 2>/dev/null | while read -r name arrow path _; do
            [ "$arrow" = "=>" ] && [ -f "$path" ] || continue
            [[ $name =~ $BASE_LIBS_RE || $name =~ $DRIVER_LIBS_RE ]] && continue
            case $path in "$BUNDLE"/* | "$UMPI_PREFIX"/*) continue ;; esac
            echo "$path"
        done
    done
} | xargs -r readlink -f | sort -u >"$WORK/hide.list"
while read -r path; do hide "$path"; done <"$WORK/hide.list"
hide "$UMPI_PREFIX"                            # the installed tree the bundle was made from
hide "$(dirname "$UMPI_CUDA_LIBRARY")"         # the build tree's fake driver (the bundle has its own)
hide "$(dirname "$UCX_MODULES_FROM")/hwloc"    # hwloc's plugins: the bundle goes without them
echo "hidden: $hidden files and folders (MANIFEST: $(wc -l <"$BUNDLE/MANIFEST") entries; found with ldd: $(wc -l <"$WORK/hide.list") paths)"

# the hiding works: without the bundle's library path its programs cannot start
out=$(env -u LD_LIBRARY_PATH "$BUNDLE/prefix/bin/umpi_info" 2>&1) &&
    fail "umpi_info started without the bundle's LD_LIBRARY_PATH: the system's libraries are not hidden"
case $out in *"error while loading shared libraries"*) ;; *) fail "umpi_info without the bundle's libraries: $out" ;; esac
[ ! -e "$UMPI_PREFIX/bin/mpirun" ] || fail "$UMPI_PREFIX is not hidden"

# --- the dry run ---
rm -rf "$WORK/check" "$WORK/check-missing"
t0=$(now_ms)
"$BUNDLE/run-gpu-check.sh" --dry-run --out "$WORK/check" >"$WORK/check.out" 2>&1
RC=$?
echo "run-gpu-check.sh --dry-run: exit status $RC in $(($(now_ms) - t0)) ms"
REPORT=$WORK/check/gpu-check-report.md
[ "$RC" -eq 0 ] || fail "run-gpu-check.sh --dry-run: exit status $RC: $(grep -E '^\| [0-9]+ \|.*\| (FAIL|TIMEOUT) \|' "$REPORT" | head -5)"
[ -s "$REPORT" ] || { fail "no report $REPORT ($(tail -5 "$WORK/check.out"))"; finish; }
# row STEP STATUS [TEXT]: the summary table says STEP ended STATUS (its key numbers holding TEXT)
row() {
    line=$(grep -E "^\| [0-9]+ \| $1 \| " "$REPORT")
    case $line in *"| $2 |"*"${3:-}"*) ;; *) fail "report: step $1 is not $2${3:+ with '$3'}: ${line:-no such row}" ;; esac
}
row umpi_info-gpu PASS "umpi fake GPU"
row bundle-libs PASS "every library resolves inside the bundle"
row probe PASS "8 B"
row gpu-suite PASS ", 0 failed"
row bench-latency-DD PASS "64 KiB"
row bench-allreduce-2 PASS "4 B"
if grep -q "^OSU_BUILT=none" "$BUNDLE/BUNDLE-INFO"; then
    row osu SKIP
else
    row osu-latency-host PASS "64 B"
    row osu-allreduce-host PASS "4 B"
fi
passed=$(sed -n 's/^\([0-9]*\) passed, 0 failed.*/\1/p' "$WORK/check/logs/"*-gpu-suite.log)
[ "${passed:-0}" -ge 5 ] || fail "gpu suite subset: ${passed:-no} tests passed, expected at least 5"
grep -q "^PMIx tree: the bundle's" "$WORK/check.out" || fail "the PMIx tree was not replaced: $(grep '^PMIx tree' "$WORK/check.out")"

# --- a bundle missing one library must fail here, naming it ---
victim=libevent_pthreads-2.1.so.7   # needed by libpmix only: the kind of library one forgets
[ -f "$BUNDLE/lib/$victim" ] || victim=$(ls "$BUNDLE/lib" | head -1)
mount --bind "$WORK/empty-file" "$BUNDLE/lib/$victim"
"$BUNDLE/run-gpu-check.sh" --dry-run --steps preflight,probe --out "$WORK/check-missing" >"$WORK/check-missing.out" 2>&1
RC=$?
umount "$BUNDLE/lib/$victim"
REPORT=$WORK/check-missing/gpu-check-report.md
[ "$RC" -ne 0 ] || fail "with $victim missing from the bundle, run-gpu-check.sh --dry-run passed"
row bundle-libs FAIL
row probe FAIL
grep -q "$victim" "$WORK/check-missing/logs/"*-bundle-libs.log ||
    fail "with $victim missing, the library check does not name it: $(tail -3 "$WORK/check-missing/logs/"*-bundle-libs.log)"
echo "with $victim hidden in the bundle: exit status $RC, $(grep -c '| FAIL |' "$REPORT") steps failed"
finish
