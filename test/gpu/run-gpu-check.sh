#!/bin/bash
# run-gpu-check.sh: umpi's whole GPU check in one command, on a lent GPU machine that has nothing of
# umpi's. test/gpu/bundle.sh copies this script into the bundle it makes (test/gpu/README.md, "The
# GPU bundle"); it runs from there:
#
#   ./run-gpu-check.sh [--out DIR] [--dry-run] [--budget S] [--steps LIST] [-j N] [--gds VALUE]
#
#   --out DIR     where the report and the logs go (default: $OUT if set, as the device tool sets
#                 it, else ./gpu-check-<time>)
#   --dry-run     no GPU needed: the fake CUDA driver of the bundle, a short subset of each step
#                 (what test/fakegpu/bundle_dryrun.sh runs in CI)
#   --budget S    seconds for the whole check (default 345: under 6 minutes with the set-up)
#   --steps LIST  only these groups, from preflight,probe,suite,bench,osu,nsys (default: all)
#   -j N          tests at once in the gpu suite (default: the cores)
#   --gds VALUE   PMIX_MCA_gds to retry with when the probe fails without it (default ds12,hash)
#
# The steps, in this order, each command under a hard timeout (cut to what the budget has left),
# a failing one never stopping the later ones:
#   preflight  nvidia-smi; umpi_info --gpu; umpi_info; every bundled program's libraries resolved
#              (ldd) inside the bundle, and the bundle's PMIx tree in place
#   probe      mpirun -n 2 of a host ping-pong; if it fails while PMIX_MCA_gds is unset, once more
#              with PMIX_MCA_gds=ds12,hash (--gds), which every later step then keeps
#   suite      test/runtests --suite gpu against the bundled prefix (-j, --max-time)
#   bench      bench/cuda_latency (the GPU's own cost of small copies and events, 1, 2 and 4
#              processes sharing it), then bench/'s -d cuda benchmarks with their baselines: osu_latency, osu_bw
#              --copy-baseline, osu_bibw (D D, 2 ranks), osu_allreduce --staged-baseline (2, 4 ranks)
#   osu        the real OSU 7.4: osu_latency -d cuda -m 1:4194304 D D, H D, D H; osu_bw -d cuda D D,
#              H D to 64 MiB; osu_allreduce -d cuda at 2 and 4 ranks to 64 MiB
#   nsys       where nsys is on PATH: nsys profile of osu_latency -d cuda -m 1:64 D D, then nsys
#              stats (CUDA API, kernels, memory operations, OS runtime): where a small device
#              message's time goes
# Iteration counts are cut (-i/-x/-W below) so that each fits its limit even at the ~400 us per
# device message measured on the GPU machine before. The report, OUTDIR/gpu-check-report.md, holds
# every command with its exit status, time and output tail, and a summary table of the counts and
# key numbers; OUTDIR/logs has every command's whole output. Exit status 0 when no step failed.
#
# Debian's libpmix loads its components and help texts from its tree (PMIX_TREE in BUNDLE-INFO,
# /usr/lib/x86_64-linux-gnu/pmix2) by absolute path. The GPU machine's image has newer components
# of its own there, which that libpmix cannot load, and PMIX_MCA_mca_base_component_path does not
# move the search. So the check runs in a private mount namespace (unshare -m) with the bundle's
# tree bind-mounted over that path; where unshare cannot run, the machine's folder is moved aside
# and put back on exit.
set -u

B=$(cd "$(dirname "$0")" && pwd)
SELF=$B/$(basename "$0")
if [ ! -f "$B/BUNDLE-INFO" ]; then
    echo "run-gpu-check.sh: no BUNDLE-INFO next to me: not a bundle (test/gpu/bundle.sh makes one)" >&2
    exit 2
fi
. "$B/BUNDLE-INFO"
if [ -z "${BUNDLE_MADE:-}" ]; then
    echo "run-gpu-check.sh: $B is an unfinished bundle (test/gpu/bundle.sh failed): make it again" >&2
    exit 2
fi

ARGS=("$@")
OUTDIR=${OUT:-}
DRY=0
BUDGET=345
STEPS=preflight,probe,suite,bench,osu,nsys
JOBS=$(nproc 2>/dev/null || echo 2)
GDS_FALLBACK=ds12,hash
CHECK_LIBS=0
while [ $# -gt 0 ]; do
    case $1 in
    --out) OUTDIR=$2; shift 2 ;;
    --dry-run) DRY=1; shift ;;
    --budget) BUDGET=$2; shift 2 ;;
    --steps) STEPS=$2; shift 2 ;;
    -j) JOBS=$2; shift 2 ;;
    --gds) GDS_FALLBACK=$2; shift 2 ;;
    --check-libs) CHECK_LIBS=1; shift ;;   # internal: the preflight's library check
    -h | --help) sed -n '/^#   \.\/run-gpu-check.sh/,/^#   --gds/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-gpu-check.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
    esac
done
FAKE_CUDA=$B/build/test/fakecuda/libcuda_fake.so
FAKE_NCCL=$B/build/test/fakecuda/libnccl_fake.so

# The libraries every system has (bundle.sh does not carry them), and the GPU driver's: BUNDLE-INFO.
is_base_lib() { [[ $1 =~ $BASE_LIBS_RE ]]; }
is_driver_lib() { [[ $1 =~ $DRIVER_LIBS_RE ]]; }
is_elf() { [ -f "$1" ] && [ ! -h "$1" ] && [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }

bundle_env() {
    export UMPI_PREFIX=$B/prefix
    export PATH=$B/prefix/bin:$PATH
    export LD_LIBRARY_PATH=$B/prefix/lib:$B/lib${SYS_LD_LIBRARY_PATH:+:$SYS_LD_LIBRARY_PATH}
    export UCX_MODULE_DIR=$B/ucx
    if [ $DRY = 1 ]; then
        export UMPI_CUDA=1 UMPI_CUDA_LIBRARY=$FAKE_CUDA UMPI_CUDA_KERNELS=0 UMPI_NCCL=0 UMPI_NCCL_LIBRARY=$FAKE_NCCL
    fi
}
SYS_LD_LIBRARY_PATH=${UMPI_BUNDLE_SYS_LDP-${LD_LIBRARY_PATH:-}}
export UMPI_BUNDLE_SYS_LDP=$SYS_LD_LIBRARY_PATH

# --- --check-libs: every bundled program's libraries, and the PMIx tree (run as a preflight step) ---
if [ $CHECK_LIBS = 1 ]; then
    bundle_env
    rc=0 n=0 from_sys=0
    for f in $(find "$B"/prefix/bin "$B"/prefix/lib "$B"/bench "$B"/osu "$B"/build "$B"/ucx "$B"/pmix2/lib -type f | sort); do
        is_elf "$f" || continue
        n=$((n + 1))
        deps=$(ldd "$f" 2>&1)
        ldd_rc=$?
        while read -r name arrow path _; do
            [ "$arrow" = "=>" ] || continue
            is_base_lib "$name" && continue
            if [ "$path" = not ]; then
                if is_driver_lib "$name" && [ $DRY = 1 ]; then
                    echo "note: ${f#"$B"/} needs $name, the GPU driver's: not on this machine (dry run)"
                else
                    echo "MISSING: ${f#"$B"/} needs $name: not found"
                    rc=1
                fi
            else
                case $path in
                "$B"/*) ;;
                *) echo "from this machine: ${f#"$B"/}: $name => $path"
                   is_driver_lib "$name" || from_sys=$((from_sys + 1)) ;;
                esac
            fi
        done <<<"$deps"
        # a library that is there but cannot be loaded (empty, another architecture): ldd fails
        if [ $ldd_rc != 0 ]; then
            echo "ERROR: ldd ${f#"$B"/} failed: $(grep -v '=>' <<<"$deps" | grep . | head -3 | sed "s|$B/||g" | tr '\n' ' ')"
            rc=1
        fi
    done
    echo "$n programs and libraries checked with LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
    # libpmix must find the bundle's components at PMIX_TREE, and none of another PMIx
    for c in "$PMIX_TREE"/lib/pmix/*; do
        [ -e "$c" ] || continue
        if ! cmp -s "$c" "$B/pmix2/lib/pmix/$(basename "$c")"; then
            echo "PMIx tree: $c is not the bundle's: the machine's own PMIx components are visible"
            rc=1
        fi
    done
    for c in "$B"/pmix2/lib/pmix/*; do
        [ -e "$PMIX_TREE/lib/pmix/$(basename "$c")" ] || { echo "PMIx tree: $PMIX_TREE lacks $(basename "$c")"; rc=1; }
    done
    if [ $rc = 0 ] && [ $from_sys = 0 ]; then
        echo "every library resolves inside the bundle (or is the base system's or the GPU driver's); $PMIX_TREE is the bundle's PMIx tree"
    elif [ $rc = 0 ]; then
        echo "every library resolves, $from_sys of them from this machine, not the bundle (above); $PMIX_TREE is the bundle's PMIx tree"
    fi
    exit $rc
fi

# --- the PMIx tree at its absolute path: a private mount namespace, else moved aside ---
if [ -z "$OUTDIR" ]; then OUTDIR=$PWD/gpu-check-$(date +%Y%m%d-%H%M%S); fi
mkdir -p "$OUTDIR" || exit 2
OUTDIR=$(cd "$OUTDIR" && pwd)
if [ "${UMPI_BUNDLE_NS:-}" = inside ]; then
    if mount --bind "$B/pmix2" "$PMIX_TREE" 2>"$OUTDIR/.mount.err"; then
        PMIX_HOW="the bundle's, bind-mounted over $PMIX_TREE in a private mount namespace (unshare -m)"
    else
        PMIX_HOW="NOT replaced: mount --bind failed ($(cat "$OUTDIR/.mount.err"))"
    fi
    rm -f "$OUTDIR/.mount.err"
elif [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then
    created=
    if [ ! -d "$PMIX_TREE" ]; then mkdir -p "$PMIX_TREE" && created=1; fi
    UMPI_BUNDLE_NS=inside unshare -m --propagation private -- "$SELF" "${ARGS[@]}" --out "$OUTDIR"
    rc=$?
    [ -z "$created" ] || rmdir "$PMIX_TREE" 2>/dev/null
    exit $rc
elif [ "$(id -u)" = 0 ]; then
    ASIDE=
    restore_pmix() {
        rm -f "$PMIX_TREE"
        [ -z "$ASIDE" ] || mv "$ASIDE" "$PMIX_TREE"
    }
    if [ -e "$PMIX_TREE" ] || [ -h "$PMIX_TREE" ]; then
        ASIDE=$PMIX_TREE.umpi-aside.$$
        mv "$PMIX_TREE" "$ASIDE"
    fi
    mkdir -p "$(dirname "$PMIX_TREE")"
    ln -s "$B/pmix2" "$PMIX_TREE"
    PMIX_HOW="the bundle's: unshare -m could not run, so $PMIX_TREE was moved aside${ASIDE:+ to $ASIDE} and a link to the bundle's put there (undone on exit)"
else
    PMIX_HOW="NOT replaced (not root): libpmix loads whatever is at $PMIX_TREE"
fi

# --- the steps ---
bundle_env
REPORT=$OUTDIR/gpu-check-report.md
SECTIONS=$OUTDIR/.sections.md
rm -rf "$OUTDIR/logs" "$OUTDIR/suite"     # a previous check's, if DIR is used again
mkdir -p "$OUTDIR/logs"
: >"$SECTIONS"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/umpi-gpu-check.XXXXXX")
cleanup() {
    rm -rf "$WORK"
    if [ -n "${ASIDE+set}" ]; then restore_pmix; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
START=$(date +%s)
DEADLINE=$((START + BUDGET))
NSTEP=0
ROWS=()
NPASS=0 NFAIL=0 NTIMEOUT=0 NSKIP=0
GDS_NOTE="unset (PMIx's default)"
[ -z "${PMIX_MCA_gds:-}" ] || GDS_NOTE="$PMIX_MCA_gds (set by the caller)"

in_steps() { case ",$STEPS," in *",$1,"*) return 0 ;; esac; return 1; }
# budget N: N seconds, or what is left of the budget if less
budget() {
    left=$((DEADLINE - $(date +%s)))
    if [ "$1" -lt "$left" ]; then echo "$1"; else echo "$left"; fi
}
size_label() {
    awk -v s="$1" 'BEGIN { if (s >= 1048576 && s % 1048576 == 0) printf "%d MiB", s / 1048576;
                           else if (s >= 1024 && s % 1024 == 0) printf "%d KiB", s / 1024; else printf "%d B", s }'
}
# at LOG SIZE [COLUMN]: the value of a benchmark's result row (first column the size)
at() { awk -v s="$2" -v c="${3:-2}" '$1 == s && $2 ~ /^[0-9.]+$/ { print $c; exit }' "$1"; }
# rows UNIT SIZE...: "label value unit" of each size that has a row in $LOG
rows() {
    unit=$1; shift
    out=
    for s in $(printf '%s\n' "$@" | awk '!seen[$0]++'); do
        v=$(at "$LOG" "$s")
        [ -z "$v" ] || out="$out${out:+; }$(size_label "$s") $v $unit"
    done
    echo "${out:-no result rows}"
}
last_size() { awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9.]+$/ { s = $1 } END { print s }' "$LOG"; }

# key numbers of a step, from its log ($LOG)
key_smi() { grep -m1 -o 'Driver Version: [0-9.]*.*CUDA Version: [0-9.]*' "$LOG" | tr -s ' '; grep -m1 '^GPU 0:' "$LOG" | sed 's/ (UUID.*//'; }
key_info() { head -1 "$LOG"; }
key_gpu() { grep -E '^ *(GPU path|why host only) ' "$LOG" | sed 's/^ *//' | tr -s ' ' | head -2 | tr '\n' ' '; }
key_libs() {
    n=$(grep -cE '^(MISSING|ERROR|PMIx tree)' "$LOG")
    if [ "$n" = 0 ]; then tail -1 "$LOG" | cut -c1-160; else echo "$n problems"; fi
}
key_suite() { grep -E '^[0-9]+ passed, [0-9]+ failed' "$LOG" | tail -1; }
key_lat() { rows us 8 "$(last_size)"; }
# cuda_latency: the medians of the pinned copies, the pageable ones and the event fence
key_floor() {
    awk '$1 ~ /^(dtoh_pinned|htod_pinned|dtoh_pageable|htod_pageable|event_sync|dtoh_polled)$/ { printf "%s %s us; ", $1, $2 }' "$LOG"
}
key_bw() { rows MB/s 4194304 67108864; }
key_copy_bw() {
    s=4194304 v=$(at "$LOG" 4194304) c=$(at "$LOG" 4194304 3)
    if [ -n "$v" ] && [ -n "$c" ]; then
        echo "4 MiB $v MB/s, cuMemcpyDtoD $c MB/s ($(awk -v v="$v" -v c="$c" 'BEGIN { printf "%.2f", c > 0 ? v / c : 0 }')x copy)"
    else rows MB/s 4194304; fi
}
key_staged() {
    v=$(at "$LOG" 1048576) st=$(at "$LOG" 1048576 3)
    if [ -n "$v" ] && [ -n "$st" ]; then
        echo "$(rows us 4); 1 MiB $v us, staged $st us"
    else rows us 4 1048576; fi
}
key_allreduce() { rows us 4 1048576 67108864; }
key_nsys() {
    # the first row of cuda_api_sum: Time (%), Total Time (ns), Num Calls, ..., Name
    awk '/cuda_api_sum/ { f = 1 } f && $1 ~ /^[0-9.]+$/ && NF >= 8 { printf "top CUDA API call: %s (%s %% of API time, %s calls)", $NF, $1, $3; exit }' "$LOG"
}

# judges: a benchmark printed result rows; the suite ran tests and none failed
judge_rows() { grep -qE '^[0-9]+ +[0-9.]+' "$LOG" || { echo "no result rows"; return 1; }; }
judge_suite() {
    n=$(sed -n 's/^\([0-9]*\) passed, .*/\1/p' "$LOG" | tail -1)
    [ "${n:-0}" -gt 0 ] || { echo "no test passed"; return 1; }
}

# Processes a step left behind (a rank whose mpirun was killed, a test runtests could not reap):
# anything running a program of the bundle or of the scratch folder, but this script.
sweep() {
    pids=$(ps -eo pid=,args= 2>/dev/null | BUNDLE="$B/" SCRATCH="$WORK/" awk -v me=$$ '
        $1 != me && index($0, "run-gpu-check.sh") == 0 &&
        (index($0, ENVIRON["BUNDLE"]) || index($0, ENVIRON["SCRATCH"])) { print $1 }')
    if [ -n "$pids" ]; then
        echo "run-gpu-check.sh: killed what the step left running: $(ps -o pid=,args= -p "$(echo $pids | tr ' ' ',')" 2>/dev/null | cut -c1-120 | tr '\n' ';')" >>"$LOG"
        kill -9 $pids 2>/dev/null
    fi
}

# record NAME STATUS SECONDS KEY COMMAND [LIMIT]: one summary row and one report section
record() {
    case $2 in PASS) NPASS=$((NPASS + 1)) ;; FAIL) NFAIL=$((NFAIL + 1)) ;;
    TIMEOUT) NTIMEOUT=$((NTIMEOUT + 1)) ;; *) NSKIP=$((NSKIP + 1)) ;; esac
    set -- "$1" "$2" "$3" "${4//"$B/"/\$B/}" "${5:-}" "${6:-}"
    ROWS+=("| $NSTEP | $1 | $2 | $3 | ${4//|/\\|} |")
    {
        echo "### $NSTEP. $1: $2"
        echo
        echo '```'
        echo "\$ ${5//"$B"/\$B}"
        echo '```'
        echo
        if [ "$2" = SKIP ]; then
            echo "Not run: $4"
        else
            echo "Exit status ${RC}, ${3} s (limit ${6} s)${4:+. Key: $4}"
            echo
            echo "Output, last ${TAIL:-40} lines of $(basename "$LOG") ($(wc -l <"$LOG") lines):"
            echo
            echo '```text'
            tail -n "${TAIL:-40}" "$LOG" | cut -c1-400
            echo '```'
        fi
        echo
    } >>"$SECTIONS"
    printf '[%4d s] %2d %-22s %-7s %7s s  %s\n' $(($(date +%s) - START)) "$NSTEP" "$1" "$2" "$3" "$4"
    write_report
}

# skip NAME WHY COMMAND...
skip() {
    NSTEP=$((NSTEP + 1))
    LOG=/dev/null
    name=$1 why=$2
    shift 2
    record "$name" SKIP 0 "$why" "$*"
}

# step NAME LIMIT KEYFN COMMAND...: runs COMMAND with stdin from /dev/null under a hard timeout
# (LIMIT, cut to what the budget has left), its output in logs/NN-NAME.log; PASS on exit 0
step() {
    name=$1 limit=$2 keyfn=$3
    shift 3
    NSTEP=$((NSTEP + 1))
    LOG=$OUTDIR/logs/$(printf '%02d' $NSTEP)-$name.log
    cmd=$(printf '%q ' "$@")
    left=$((DEADLINE - $(date +%s)))
    if [ "$left" -lt 5 ]; then
        LOG=/dev/null
        record "$name" SKIP 0 "no time left in the budget of $BUDGET s" "$cmd"
        return 1
    fi
    [ "$limit" -le "$left" ] || limit=$left
    t0=$(date +%s%N)
    timeout -k 5 "$limit" "$@" >"$LOG" 2>&1 </dev/null
    RC=$?
    secs=$(awk -v t="$(($(date +%s%N) - t0))" 'BEGIN { printf "%.2f", t / 1e9 }')
    sweep
    case $RC in 0) status=PASS ;; 124 | 137) status=TIMEOUT ;; *) status=FAIL ;; esac
    key=
    [ "$keyfn" = - ] || key=$($keyfn 2>/dev/null)
    [ $status != TIMEOUT ] || key="killed after $limit s${key:+; $key}"
    # JUDGE=FN: an exit status 0 is not enough (FN prints why not and fails)
    if [ $status = PASS ] && [ -n "${JUDGE:-}" ] && ! why=$($JUDGE); then
        status=FAIL
        key="$why${key:+; $key}"
    fi
    # a failure's key says why: the first line of the output that looks like an error
    if [ $status != PASS ]; then
        e=$(grep -m1 -iE 'error|fail|cannot|missing|not found|abort|denied' "$LOG" | sed "s|$B/|\$B/|g" | tr -s ' ' | sed 's/^ //' | cut -c1-200)
        case $key in *"${e:0:40}"*) ;; *) key="${key:+$key; }$e" ;; esac
    fi
    record "$name" $status "$secs" "$key" "$cmd" "$limit"
    [ $status = PASS ]
}

write_report() {
    now=$(date +%s)
    {
        echo "# umpi GPU check: $(uname -n), $(date -u -d "@$START" +%Y-%m-%dT%H:%M:%SZ)"
        echo
        [ $DRY = 0 ] || echo "**Dry run**: the fake CUDA driver of the bundle (no GPU), a short subset of each step."
        [ $DRY = 0 ] || echo
        echo "- umpi: $UMPI_COMMIT ($UMPI_COMMIT_LINE)"
        echo "- configure: $UMPI_CONFIGURE; UCX $UMPI_UCX, PMIx $UMPI_PMIX, hwloc $UMPI_HWLOC"
        echo "- CUDA at build time: $UMPI_CUDA_BUILD; GPU kernels: ${UMPI_GPU_KERNELS:-none}"
        echo "- bundle: $B, made $BUNDLE_MADE"
        echo "- this machine: $(. /etc/os-release 2>/dev/null; echo "${PRETTY_NAME:-unknown OS}"), kernel $(uname -r), $(nproc) cpus"
        echo "- real OSU 7.4: $OSU_BUILT${OSU_NOTE:+ ($OSU_NOTE)}${OSU_CONFIGURE:+; $OSU_CONFIGURE}"
        if [ -n "$OSU_SHIM" ]; then
            echo "- **NOTE: the real OSU binaries link a shim for $OSU_SHIM** (test/gpu/osu_win_shim.c):"
            echo "  umpi has no one-sided communication yet; the stubs abort if called (the benchmarks run here do not call them)"
        fi
        echo "- PMIx tree: $PMIX_HOW"
        echo "- PMIX_MCA_gds: $GDS_NOTE"
        echo "- environment: PATH=\$B/prefix/bin:..., LD_LIBRARY_PATH=\$B/prefix/lib:\$B/lib${SYS_LD_LIBRARY_PATH:+:$SYS_LD_LIBRARY_PATH}, UCX_MODULE_DIR=\$B/ucx$([ $DRY = 0 ] || echo ", UMPI_CUDA=1 UMPI_CUDA_LIBRARY=\$B/build/test/fakecuda/libcuda_fake.so UMPI_CUDA_KERNELS=0 UMPI_NCCL=0")"
        echo "- time: $((now - START)) s of a budget of $BUDGET s"
        echo
        echo "## Summary"
        echo
        echo "Steps: $NPASS passed, $NFAIL failed, $NTIMEOUT timed out, $NSKIP skipped."
        echo
        echo "| # | step | status | time (s) | key numbers |"
        echo "|---|------|--------|----------|-------------|"
        printf '%s\n' "${ROWS[@]}"
        echo
        echo "## Steps"
        echo
        cat "$SECTIONS"
    } >"$REPORT.tmp" && mv "$REPORT.tmp" "$REPORT"
}

finish() {
    write_report
    rm -f "$SECTIONS"
    echo
    sed -n '/^## Summary/,/^## Steps/p' "$REPORT" | sed '$d'
    echo "report: $REPORT"
}

echo "umpi GPU check$([ $DRY = 0 ] || echo ' (dry run, fake CUDA driver)'): bundle $B, report $REPORT, budget $BUDGET s"
echo "PMIx tree: $PMIX_HOW"

# the OSU's CUDA build links the driver's libcuda.so.1; in a dry run on a machine without a
# driver the fake one stands in for it (the host-only runs below never call it)
OSU_LDP=$LD_LIBRARY_PATH
if [ $DRY = 1 ] && [ "$OSU_BUILT" = cuda ]; then
    mkdir -p "$WORK/driver"
    ln -s "$FAKE_CUDA" "$WORK/driver/libcuda.so.1"
    OSU_LDP=$LD_LIBRARY_PATH:$WORK/driver
fi
MPIRUN=$B/prefix/bin/mpirun

if in_steps preflight; then
    if [ $DRY = 1 ]; then
        skip nvidia-smi "dry run" nvidia-smi
    elif command -v nvidia-smi >/dev/null; then
        step nvidia-smi 15 key_smi env LD_LIBRARY_PATH="$SYS_LD_LIBRARY_PATH" sh -c 'nvidia-smi; nvidia-smi -L' || true
    else
        NSTEP=$((NSTEP + 1)) RC=127
        LOG=$OUTDIR/logs/$(printf '%02d' $NSTEP)-nvidia-smi.log
        echo "nvidia-smi is not on PATH ($PATH)" >"$LOG"
        record nvidia-smi FAIL 0 "nvidia-smi is not on PATH" nvidia-smi 0
    fi
    step umpi_info-gpu 20 key_gpu "$B/prefix/bin/umpi_info" --gpu
    step umpi_info 20 key_info "$B/prefix/bin/umpi_info"
    dry=()
    [ $DRY = 0 ] || dry=(--dry-run)
    TAIL=60 step bundle-libs 40 key_libs "$SELF" --check-libs "${dry[@]}"
fi

if in_steps probe; then
    if ! step probe 20 key_lat "$MPIRUN" -n 2 "$B/bench/osu_latency" -m 1:8 -i 20 -x 2 &&
        [ -z "${PMIX_MCA_gds:-}" ]; then
        # umpi failed in its first send when the PMIx data store was hash only (gpu-node notes)
        export PMIX_MCA_gds=$GDS_FALLBACK
        if step probe-gds 20 key_lat env PMIX_MCA_gds="$GDS_FALLBACK" "$MPIRUN" -n 2 "$B/bench/osu_latency" -m 1:8 -i 20 -x 2; then
            GDS_NOTE="$GDS_FALLBACK: set for every later step, because the probe failed without it and passed with it"
        else
            unset PMIX_MCA_gds
            GDS_NOTE="unset: the probe failed without it and with $GDS_FALLBACK"
        fi
    fi
fi

if in_steps suite; then
    limit=$(budget 120)
    filter=()
    # the dry run: a subset that runs on the fake driver (gpu_classify reports SKIP there)
    [ $DRY = 0 ] || filter=(--filter '^gpu/(cuda_query|gpu_classify|gpu_p2p MPITEST_MEMTYPE=device$|sendrecv MPITEST_MEMTYPE=device$|coll_basic|bench_cuda\.sh osu_latency$)')
    TAIL=80 JUDGE=judge_suite step gpu-suite "$limit" key_suite python3 "$B/src/test/runtests" --prefix "$B/prefix" \
        --builddir "$B/build" --workdir "$WORK/runtests" --suite gpu -j "$JOBS" \
        --max-time $((limit > 20 ? limit - 10 : limit)) "${filter[@]}"
    # each test's output, for the failures' whole story (the binaries stay behind)
    for o in "$WORK"/runtests/run/*/output; do
        [ -f "$o" ] || continue
        mkdir -p "$OUTDIR/suite"
        cp "$o" "$OUTDIR/suite/$(basename "$(dirname "$o")").txt"
    done
fi

if in_steps bench; then
    LAT="$B/bench/osu_latency" BW="$B/bench/osu_bw" BIBW="$B/bench/osu_bibw" AR="$B/bench/osu_allreduce"
    # the GPU's own floor: small copies and events, by 1, 2 and 4 processes sharing the GPU at once
    for n in 1 2 4; do
        [ $DRY = 0 ] || [ $n = 2 ] || continue
        step "cuda-latency-$n" 15 key_floor "$MPIRUN" -n $n "$B/bench/cuda_latency" -i $([ $DRY = 1 ] && echo 20 || echo 1000) -x 20
    done
    if [ $DRY = 1 ]; then
        JUDGE=judge_rows step bench-latency-DD 30 key_lat "$MPIRUN" -n 2 "$LAT" -d cuda D D -c -m 1:65536 -i 10 -x 2
        JUDGE=judge_rows step bench-allreduce-2 30 key_staged "$MPIRUN" -n 2 "$AR" -d cuda --staged-baseline -c -m 4:65536 -i 5 -x 1
    else
        JUDGE=judge_rows step bench-latency-DD 12 key_lat "$MPIRUN" -n 2 "$LAT" -d cuda D D -m 1:4194304 -i 200:50 -x 20:5
        JUDGE=judge_rows step bench-bw-DD 15 key_copy_bw "$MPIRUN" -n 2 "$BW" -d cuda D D --copy-baseline -m 1:4194304 -i 10 -x 2
        JUDGE=judge_rows step bench-bibw-DD 12 key_bw "$MPIRUN" -n 2 "$BIBW" -d cuda D D -m 1:4194304 -i 10 -x 2
        JUDGE=judge_rows step bench-allreduce-2 10 key_staged "$MPIRUN" -n 2 "$AR" -d cuda --staged-baseline -m 4:4194304 -i 50:10 -x 5:2
        JUDGE=judge_rows step bench-allreduce-4 12 key_staged "$MPIRUN" -n 4 "$AR" -d cuda --staged-baseline -m 4:4194304 -i 50:10 -x 5:2
    fi
fi

if in_steps osu; then
    OSU=$B/osu
    if [ "$OSU_BUILT" = none ]; then
        skip osu "the bundle has no real OSU (bundle.sh --osu none)" "$OSU/osu_latency"
    elif [ $DRY = 1 ]; then
        # host buffers only: the fake driver cannot serve the CUDA runtime OSU uses for -d cuda
        JUDGE=judge_rows step osu-latency-host 30 key_lat env LD_LIBRARY_PATH="$OSU_LDP" "$MPIRUN" -n 2 "$OSU/osu_latency" -m 1:64 -i 10 -x 2
        JUDGE=judge_rows step osu-allreduce-host 30 key_allreduce env LD_LIBRARY_PATH="$OSU_LDP" "$MPIRUN" -n 2 "$OSU/osu_allreduce" -m 4:64 -i 10 -x 2
    elif [ "$OSU_BUILT" != cuda ]; then
        skip osu "the real OSU was built host-only: ${OSU_NOTE:-no CUDA toolkit where the bundle was made}" "$OSU/osu_latency -d cuda"
    else
        for place in "D D" "H D" "D H"; do
            JUDGE=judge_rows step "osu-latency-${place// /}" 12 key_lat "$MPIRUN" -n 2 "$OSU/osu_latency" -d cuda -m 1:4194304 -i 200 -x 20 $place
        done
        for place in "D D" "H D"; do
            JUDGE=judge_rows step "osu-bw-${place// /}" 20 key_bw "$MPIRUN" -n 2 "$OSU/osu_bw" -d cuda -m 1:67108864 -i 10 -x 2 -W 8 $place
        done
        for n in 2 4; do
            JUDGE=judge_rows step "osu-allreduce-$n" 20 key_allreduce "$MPIRUN" -n $n "$OSU/osu_allreduce" -d cuda -m 4:67108864 -i 20 -x 2
        done
    fi
fi

if in_steps nsys; then
    if [ $DRY = 1 ]; then
        skip nsys "dry run" nsys profile
    elif ! command -v nsys >/dev/null; then
        skip nsys "nsys is not on PATH" nsys profile
    else
        # the real OSU where it was built with CUDA, else bench/'s, which takes -d cuda D D as well
        lat=$B/bench/osu_latency
        [ "$OSU_BUILT" != cuda ] || lat=$B/osu/osu_latency
        mkdir -p "$OUTDIR/nsys"
        rep=$OUTDIR/nsys/osu_latency_small
        step nsys-version 10 key_info env LD_LIBRARY_PATH="$SYS_LD_LIBRARY_PATH" nsys --version
        # nsys itself runs with the machine's libraries; only the MPI job gets the bundle's
        step nsys-profile 25 - env LD_LIBRARY_PATH="$SYS_LD_LIBRARY_PATH" nsys profile --trace=cuda,osrt \
            --force-overwrite=true -o "$rep" env LD_LIBRARY_PATH="$LD_LIBRARY_PATH" \
            "$MPIRUN" -n 2 "$lat" -d cuda -m 1:64 -i 500 -x 50 D D
        if [ -f "$rep.nsys-rep" ]; then
            TAIL=150 step nsys-stats 25 key_nsys env LD_LIBRARY_PATH="$SYS_LD_LIBRARY_PATH" nsys stats \
                --force-export=true --report cuda_api_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,osrt_sum "$rep.nsys-rep"
            rm -f "$rep.sqlite"
        else
            skip nsys-stats "nsys profile wrote no report" nsys stats
        fi
    fi
fi

finish
[ $NFAIL = 0 ] && [ $NTIMEOUT = 0 ]
