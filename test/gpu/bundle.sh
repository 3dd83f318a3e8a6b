#!/bin/bash
# Makes the GPU bundle: one self-contained folder with which a lent GPU machine runs umpi's whole
# GPU check in one command (./run-gpu-check.sh, test/gpu/run-gpu-check.sh). Such a machine starts
# bare, has no network and none of umpi's dependencies (no UCX, PMIx, hwloc, libevent; Ubuntu, not
# Debian), and gives minutes, not hours: everything it needs is built and gathered here, after
# `make install`, and nothing there has to be discovered or installed.
#
#   test/gpu/bundle.sh [--prefix DIR] [--builddir DIR] [--out DIR] [--tar FILE]
#                      [--osu auto|cuda|host|none] [--cuda DIR] [--osu-tarball FILE] [-j N]
#
#   --prefix DIR     the installed umpi (default: $UMPI_PREFIX, else the builddir's configured prefix)
#   --builddir DIR   the configured build tree (default: $abs_top_builddir, else . if configured,
#                    else the source tree); the GPU tests' programs and the fake CUDA driver are
#                    taken from there (made with `make` if missing)
#   --out DIR        the bundle (default: BUILDDIR/gpu-bundle, which git ignores); replaced if it
#                    is a bundle already, refused if it is anything else
#   --tar FILE       also write the bundle as a gzip'ed tarball
#   --osu MODE       the real OSU Micro-Benchmarks 7.4 (../shared/third-party): cuda (--enable-cuda,
#                    needs a CUDA toolkit), host (no device buffers), none, or auto (default: cuda
#                    where the toolkit is, else host; none without the tarball; saying so)
#   --cuda DIR       the CUDA toolkit (default: $CUDA_HOME, else /usr/local/cuda)
#
# What goes in (test/gpu/README.md, "The GPU bundle"):
#   run-gpu-check.sh    the one command
#   BUNDLE-INFO         umpi's commit, the configure line, versions, what was built how (sh syntax:
#                       the run script reads it)
#   MANIFEST            every file taken from this machine's system, and where from
#   prefix/             the installed umpi tree
#   lib/                the shared libraries that ldd lists for it and for every program below,
#                       except glibc's, the compiler runtime's and zlib (every system has newer ones,
#                       which an old copy on LD_LIBRARY_PATH would shadow) and the GPU driver's
#   ucx/                UCX's transport modules (UCX_MODULE_DIR)
#   pmix2/              Debian's PMIx tree (components, help texts, parameters), which libpmix loads by
#                       absolute path: the run script mounts it over that path
#   src/test, src/bench what test/runtests needs for the gpu suite (testlists, sources, scripts)
#   build/test/gpu      the gpu suite's build-tree programs; build/test/fakecuda: the fake driver
#                       and NCCL (for run-gpu-check.sh --dry-run)
#   bench/              bench/'s osu_latency, osu_bw, osu_bibw, osu_allreduce, cuda_latency built with the mpicc
#   osu/                the real OSU's osu_latency, osu_bw, osu_bibw, osu_allreduce
set -eu
set -o pipefail

SRCDIR=$(cd "$(dirname "$0")/../.." && pwd)
PREFIX=${UMPI_PREFIX:-}
BUILDDIR=${abs_top_builddir:-}
OUTDIR=
TARBALL=
OSU_MODE=auto
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
OSU_TARBALL=$SRCDIR/../shared/third-party/osu-micro-benchmarks-7.4.tar.gz
JOBS=$(nproc 2>/dev/null || echo 2)

usage() { sed -n '/^#   test\/gpu\/bundle.sh/,/^#   --cuda/p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }
die() { echo "bundle.sh: $*" >&2; exit 1; }
say() { echo "bundle.sh: $*"; }

while [ $# -gt 0 ]; do
    case $1 in
    --prefix) PREFIX=$2; shift 2 ;;
    --builddir) BUILDDIR=$2; shift 2 ;;
    --out) OUTDIR=$2; shift 2 ;;
    --tar) TARBALL=$2; shift 2 ;;
    --osu) OSU_MODE=$2; shift 2 ;;
    --cuda) CUDA_HOME=$2; shift 2 ;;
    --osu-tarball) OSU_TARBALL=$2; shift 2 ;;
    -j) JOBS=$2; shift 2 ;;
    -h | --help) usage ;;
    *) echo "bundle.sh: unknown argument $1" >&2; usage 2 ;;
    esac
done
case $OSU_MODE in auto | cuda | host | none) ;; *) die "--osu wants auto, cuda, host or none" ;; esac

if [ -z "$BUILDDIR" ]; then
    if [ -f config.status ]; then BUILDDIR=.; else BUILDDIR=$SRCDIR; fi
fi
BUILDDIR=$(cd "$BUILDDIR" && pwd)
if [ -z "$PREFIX" ] && [ -f "$BUILDDIR/Makefile" ]; then
    PREFIX=$(sed -n 's/^prefix = //p' "$BUILDDIR/Makefile")
fi
[ -n "$PREFIX" ] || die "no --prefix (and no configured build tree at $BUILDDIR to read it from)"
PREFIX=$(cd "$PREFIX" && pwd)
for f in bin/mpirun bin/mpicc bin/umpi_info lib/libmpi.so.12; do
    [ -e "$PREFIX/$f" ] || die "$PREFIX/$f is missing: run make install first"
done
OUTDIR=${OUTDIR:-$BUILDDIR/gpu-bundle}
mkdir -p "$(dirname "$OUTDIR")"
OUTDIR=$(cd "$(dirname "$OUTDIR")" && pwd)/$(basename "$OUTDIR")
if [ -e "$OUTDIR" ] && [ ! -f "$OUTDIR/BUNDLE-INFO" ] && [ -n "$(ls -A "$OUTDIR")" ]; then
    die "$OUTDIR exists and is not a bundle: not replacing it"
fi
T0=$(date +%s)
rm -rf "$OUTDIR"
mkdir -p "$OUTDIR"/{lib,bench,osu,build/test/gpu,build/test/fakecuda,src/test/launch,src/bench}
# marks the folder as a bundle (so that a failed run's leftovers are replaced next time); the
# real BUNDLE-INFO is written last, when everything is in
echo "# unfinished: test/gpu/bundle.sh did not complete" >"$OUTDIR/BUNDLE-INFO"
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/umpi-bundle.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT

# --- the gpu suite's build-tree programs (unit-form lines of the testlist) and the fake driver ---
GPU_PROGS=$(awk '/^[ \t]*#/ || NF == 0 { next } $2 !~ /^[0-9]+$/ && $1 !~ /\.sh$/ { print $1 }' \
    "$SRCDIR/test/gpu/testlist" | sort -u)
FAKES="test/fakecuda/libcuda_fake.so test/fakecuda/libnccl_fake.so"
missing=
for p in $GPU_PROGS; do [ -x "$BUILDDIR/test/gpu/$p" ] || missing="$missing test/gpu/$p"; done
for f in $FAKES; do [ -f "$BUILDDIR/$f" ] || missing="$missing $f"; done
if [ -n "$missing" ]; then
    [ -f "$BUILDDIR/Makefile" ] || die "missing from $BUILDDIR:$missing (and no Makefile to build them)"
    say "building$missing"
    make -C "$BUILDDIR" -s $missing >/dev/null
fi
for p in $GPU_PROGS; do cp -p "$BUILDDIR/test/gpu/$p" "$OUTDIR/build/test/gpu/"; done
for f in $FAKES; do cp -p "$BUILDDIR/$f" "$OUTDIR/build/test/fakecuda/"; done

# --- umpi's installed tree and the sources runtests reads ---
cp -a "$PREFIX/." "$OUTDIR/prefix/"
# copy_src DIR PATTERN...: the files of $SRCDIR/DIR matching a pattern (symbolic links kept)
copy_src() {
    dir=$1; shift
    mkdir -p "$OUTDIR/src/$dir"
    for pat in "$@"; do
        for f in "$SRCDIR/$dir"/$pat; do
            [ -e "$f" ] || [ -h "$f" ] || continue
            cp -P -p "$f" "$OUTDIR/src/$dir/"
        done
    done
}
cp -p "$SRCDIR/test/runtests" "$OUTDIR/src/test/"
copy_src test/gpu testlist README.md '*.c' '*.h' '*.sh'
copy_src test/fakegpu testlist '*.c' '*.h' '*.sh'
copy_src test/mpi testlist '*.c' '*.h'
copy_src test/launch common.sh
copy_src bench README.md compare '*.c' '*.h'
cp -p "$SRCDIR/test/gpu/run-gpu-check.sh" "$OUTDIR/"

# --- bench/'s benchmarks, built with the installed mpicc as a user would ---
BENCHES="osu_latency osu_bw osu_bibw osu_allreduce cuda_latency"
for b in $BENCHES; do
    "$PREFIX/bin/mpicc" -O2 -o "$OUTDIR/bench/$b" "$SRCDIR/bench/$b.c" -ldl ||
        die "cannot build bench/$b.c with $PREFIX/bin/mpicc"
done

# --- the real OSU 7.4 ---
# OSU's c/util/osu_util_mpi.c, linked into every benchmark, calls the window functions; an MPI
# without them gets a link shim (test/gpu/osu_win_shim.c) of stubs that abort, in OSU's build only.
OSU_BUILT=none OSU_NOTE='' OSU_CONFIGURE='' OSU_SHIM=''
win_missing=
exported=$(nm -D --defined-only "$PREFIX/lib/libmpi.so.12" | awk '{ print $NF }')
for s in MPI_Win_create MPI_Win_allocate MPI_Win_create_dynamic MPI_Win_attach MPI_Win_free; do
    grep -qx "$s" <<<"$exported" || win_missing="$win_missing $s"
done
have_cuda_toolkit() { [ -f "$CUDA_HOME/include/cuda_runtime.h" ] && [ -e "$CUDA_HOME/lib64/libcudart.so" ]; }
if [ "$OSU_MODE" = auto ] && [ ! -f "$OSU_TARBALL" ]; then
    OSU_MODE=none
    OSU_NOTE="no OSU tarball at $OSU_TARBALL: no real OSU in the bundle"
    echo "*** bundle.sh: $OSU_NOTE"
fi
if [ "$OSU_MODE" = auto ]; then
    if have_cuda_toolkit; then OSU_MODE=cuda; else
        OSU_MODE=host
        OSU_NOTE="no CUDA toolkit at $CUDA_HOME: OSU built host-only (no -d cuda)"
        say "$OSU_NOTE"
    fi
fi
if [ "$OSU_MODE" = cuda ] && ! have_cuda_toolkit; then
    die "--osu cuda: no CUDA toolkit at $CUDA_HOME (include/cuda_runtime.h, lib64/libcudart.so)"
fi
if [ "$OSU_MODE" != none ]; then
    [ -f "$OSU_TARBALL" ] || die "no OSU tarball at $OSU_TARBALL (--osu-tarball FILE, or --osu none)"
    tar xzf "$OSU_TARBALL" -C "$SCRATCH"
    osu=$(echo "$SCRATCH"/osu-micro-benchmarks-*)
    libs=
    if [ -n "$win_missing" ]; then
        OSU_SHIM=${win_missing# }
        defs=$(for s in $win_missing; do printf ' -DUMPI_SHIM_%s' "$s"; done)
        "$PREFIX/bin/mpicc" -O2 -c $defs "$SRCDIR/test/gpu/osu_win_shim.c" -o "$SCRATCH/osu_win_shim.o"
        libs=$SCRATCH/osu_win_shim.o
        echo "*** bundle.sh: libmpi lacks$win_missing (no one-sided communication yet):"
        echo "*** OSU is linked with test/gpu/osu_win_shim.c, stubs that abort if called."
    fi
    set -- CC="$PREFIX/bin/mpicc" CXX="$PREFIX/bin/mpicxx" LIBS="$libs"
    if [ "$OSU_MODE" = cuda ]; then
        # CUDA 13 changed cudaMemPrefetchAsync (a cudaMemLocation and flags instead of the device
        # number): OSU 7.4's one call in prefetch_data does not compile; patch that call only.
        awk '
        $0 == "    CUDA_CHECK(cudaMemPrefetchAsync(buf, length, devid, um_stream));" {
            print "#if CUDART_VERSION >= 13000"
            print "    /* patched by umpi test/gpu/bundle.sh for CUDA 13 */"
            print "    struct cudaMemLocation loc = {0};"
            print "    loc.type = devid == cudaCpuDeviceId ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;"
            print "    loc.id = devid == cudaCpuDeviceId ? 0 : devid;"
            print "    CUDA_CHECK(cudaMemPrefetchAsync(buf, length, loc, 0, um_stream));"
            print "#else"
            print
            print "#endif"
            n++
            next
        }
        { print }
        END { exit n == 1 ? 0 : 1 }' "$osu/c/util/osu_util_mpi.c" >"$SCRATCH/osu_util_mpi.c" ||
            die "OSU's c/util/osu_util_mpi.c has no prefetch_data call to patch (not 7.4?)"
        mv "$SCRATCH/osu_util_mpi.c" "$osu/c/util/osu_util_mpi.c"
        # without nvcc only the basic CUDA support (no OSU kernels); the driver stub library
        # links where no driver is installed (the machine's libcuda.so.1 serves at run time)
        cuda=--enable-cuda
        [ -x "$CUDA_HOME/bin/nvcc" ] || cuda=--enable-cuda=basic
        set -- "$@" "$cuda" --with-cuda="$CUDA_HOME" LDFLAGS="-L$CUDA_HOME/lib64/stubs"
    fi
    OSU_CONFIGURE="./configure $(printf '%q ' "$@")"
    say "building OSU ($OSU_MODE): $OSU_CONFIGURE"
    (
        cd "$osu"
        export PATH="$CUDA_HOME/bin:$PATH"
        ./configure "$@" >"$SCRATCH/osu-configure.log" 2>&1 ||
            { tail -30 "$SCRATCH/osu-configure.log"; exit 1; }
        { make -j"$JOBS" -C c/mpi/pt2pt/standard osu_latency osu_bw osu_bibw &&
          make -j"$JOBS" -C c/mpi/collective/blocking osu_allreduce; } >"$SCRATCH/osu-make.log" 2>&1 ||
            { tail -30 "$SCRATCH/osu-make.log"; exit 1; }
    ) || die "building OSU failed (above)"
    cp -p "$osu"/c/mpi/pt2pt/standard/{osu_latency,osu_bw,osu_bibw} "$osu/c/mpi/collective/blocking/osu_allreduce" \
        "$OUTDIR/osu/"
    OSU_BUILT=$OSU_MODE
fi

# --- the system's shared libraries everything above loads ---
# Libraries every Linux system has, newer than Debian 12's: a copy would only shadow them. The GPU
# driver's own libraries come from the GPU machine, never from here. (Written into BUNDLE-INFO: the
# run script and the CI dry run read them from there.)
BASE_LIBS_RE='^(linux-vdso|ld-linux-x86-64|libc|libm|libdl|libpthread|librt|libresolv|libutil|libanl|libgcc_s|libstdc\+\+|libz)\.so(\.|$)'
DRIVER_LIBS_RE='^(libcuda|libnvidia-[a-z0-9_-]+)\.so(\.|$)'
is_base_lib() { [[ $1 =~ $BASE_LIBS_RE ]]; }
is_driver_lib() { [[ $1 =~ $DRIVER_LIBS_RE ]]; }
is_elf() { [ -f "$1" ] && [ ! -h "$1" ] && [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }

# UCX's modules and PMIx's tree: where this machine's libucs and libpmix are
sys_path() { env -u LD_LIBRARY_PATH ldd "$PREFIX/lib/libmpi.so.12" | awk -v n="$1" '$1 == n { print $3 }'; }
UCS=$(sys_path libucs.so.0)
PMIX=$(sys_path libpmix.so.2)
[ -n "$UCS" ] && [ -n "$PMIX" ] || die "ldd finds no libucs.so.0 or libpmix.so.2 for $PREFIX/lib/libmpi.so.12"
UCX_MODULES=$(dirname "$(readlink -f "$UCS")")/ucx
PMIX_TREE=$(dirname "$(dirname "$(readlink -f "$PMIX")")")
[ -d "$PMIX_TREE/lib/pmix" ] || die "libpmix at $PMIX is not in a PMIx tree (no $PMIX_TREE/lib/pmix)"

: >"$OUTDIR/MANIFEST"
manifest() { printf '%s\t%s\n' "$1" "$2" >>"$OUTDIR/MANIFEST"; }
mkdir -p "$OUTDIR/ucx" "$OUTDIR/pmix2/lib"
if [ -d "$UCX_MODULES" ]; then
    cp -a "$UCX_MODULES"/*.so* "$OUTDIR/ucx/"
    manifest ucx/ "$UCX_MODULES"
else
    say "no UCX modules at $UCX_MODULES (UCX without loadable transports)"
fi
cp -a "$PMIX_TREE"/lib/libpmix.so* "$PMIX_TREE/lib/pmix" "$OUTDIR/pmix2/lib/"
[ ! -d "$PMIX_TREE/share" ] || cp -a "$PMIX_TREE/share" "$OUTDIR/pmix2/"
manifest pmix2/ "$PMIX_TREE"

# ldd every program and library of the bundle (and the modules above, which are dlopen'ed)
elves=$SCRATCH/elves
find "$OUTDIR"/prefix/bin "$OUTDIR"/prefix/lib "$OUTDIR"/bench "$OUTDIR"/osu "$OUTDIR"/build \
    "$OUTDIR"/ucx "$OUTDIR"/pmix2/lib -type f | while read -r f; do if is_elf "$f"; then echo "$f"; fi; done >"$elves"
[ -s "$elves" ] || die "no programs found in the bundle"
declare -A carry=()
while read -r f; do
    while read -r name arrow path _; do
        [ "$arrow" = "=>" ] || continue
        is_base_lib "$name" && continue
        if [ "$path" = "not" ]; then
            is_driver_lib "$name" && continue
            die "ldd $f: $name not found"
        fi
        is_driver_lib "$name" && continue
        case $path in "$PREFIX"/* | "$OUTDIR"/*) continue ;; esac   # umpi's own
        carry[$name]=$path
    done < <(env -u LD_LIBRARY_PATH ldd "$f" 2>/dev/null)
done <"$elves"
for name in $(printf '%s\n' "${!carry[@]}" | sort); do
    cp -L "${carry[$name]}" "$OUTDIR/lib/$name"
    manifest "lib/$name" "$(readlink -f "${carry[$name]}")"
done

# --- check: with the run script's library path, nothing outside the bundle but the base system ---
bad=
while read -r f; do
    while read -r name arrow path _; do
        [ "$arrow" = "=>" ] || continue
        is_base_lib "$name" && continue
        is_driver_lib "$name" && continue
        case $path in "$OUTDIR"/*) ;; *) bad="$bad\n  $f: $name => $path" ;; esac
    done < <(env LD_LIBRARY_PATH="$OUTDIR/prefix/lib:$OUTDIR/lib" ldd "$f" 2>/dev/null)
done <"$elves"
[ -z "$bad" ] || die "$(printf 'libraries from outside the bundle:%b' "$bad")"

# --- what this bundle is ---
q() { printf '%q' "$1"; }
info_line() { grep -m1 "^  $1 " <<<"$UMPI_INFO" | sed "s/^  $1 *//"; }
UMPI_INFO=$(env -u LD_LIBRARY_PATH "$PREFIX/bin/umpi_info" 2>&1 || true)
COMMIT=$(git -C "$SRCDIR" describe --always --dirty --tags 2>/dev/null || echo unknown)
COMMIT_LINE=$(git -C "$SRCDIR" log -1 --format='%H %s' 2>/dev/null || echo unknown)
CUDA_VERSION=
if have_cuda_toolkit; then
    CUDA_VERSION=$(sed -n 's/^#define CUDART_VERSION *//p' "$CUDA_HOME/include/cuda_runtime_api.h" 2>/dev/null | head -1)
fi
{
    echo "# umpi GPU bundle, made by test/gpu/bundle.sh; read by run-gpu-check.sh (sh syntax)"
    echo "BUNDLE_MADE=$(q "$(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n), $(. /etc/os-release 2>/dev/null; echo "${PRETTY_NAME:-unknown OS}"), glibc $(ldd --version | head -1 | sed "s/.* //")")"
    echo "UMPI_COMMIT=$(q "$COMMIT")"
    echo "UMPI_COMMIT_LINE=$(q "$COMMIT_LINE")"
    echo "UMPI_CONFIGURE=$(q "$(info_line 'configure args')")"
    echo "UMPI_BUILT_PREFIX=$(q "$PREFIX")"
    echo "UMPI_UCX=$(q "$(info_line UCX)")"
    echo "UMPI_PMIX=$(q "$(info_line PMIx)")"
    echo "UMPI_HWLOC=$(q "$(info_line hwloc)")"
    echo "UMPI_CUDA_BUILD=$(q "$(info_line CUDA)")"
    echo "UMPI_GPU_KERNELS=$(q "$(info_line 'GPU kernels')")"
    echo "GPU_TEST_PROGRAMS=$(q "$(echo $GPU_PROGS)")"
    echo "BENCHES=$(q "$BENCHES")"
    echo "OSU_BUILT=$(q "$OSU_BUILT")"
    echo "OSU_NOTE=$(q "$OSU_NOTE")"
    echo "OSU_CONFIGURE=$(q "${OSU_CONFIGURE//$SCRATCH/<scratch>}")"
    echo "OSU_SHIM=$(q "$OSU_SHIM")"
    echo "CUDA_TOOLKIT=$(q "${CUDA_VERSION:+CUDART_VERSION $CUDA_VERSION at $CUDA_HOME}")"
    echo "UCX_MODULES_FROM=$(q "$UCX_MODULES")"
    echo "PMIX_TREE=$(q "$PMIX_TREE")"
    echo "BASE_LIBS_RE=$(q "$BASE_LIBS_RE")"
    echo "DRIVER_LIBS_RE=$(q "$DRIVER_LIBS_RE")"
    echo "CARRIED_LIBS=$(q "$(printf '%s\n' "${!carry[@]}" | sort | tr '\n' ' ' | sed 's/ $//')")"
} >"$OUTDIR/BUNDLE-INFO"
cat >"$OUTDIR/README.md" <<EOF
# umpi GPU bundle ($COMMIT)

Made by umpi's test/gpu/bundle.sh (test/gpu/README.md, "The GPU bundle"). On a GPU machine, as root:

    ./run-gpu-check.sh [--out DIR]      # default DIR: \$OUT if set, else ./gpu-check-<time>

It runs the gpu suite, bench/ and the real OSU with -d cuda, and an nsys profile, each step with a
hard timeout, in under 6 minutes, and writes DIR/gpu-check-report.md. \`--dry-run\` runs a short
subset on the fake CUDA driver (no GPU needed). BUNDLE-INFO says what was built how; MANIFEST lists
every file taken from the build machine's system.
EOF
[ -z "$OSU_SHIM" ] || cat >>"$OUTDIR/README.md" <<EOF

The OSU binaries in osu/ link a shim for $OSU_SHIM: umpi has no one-sided
communication yet; the stubs abort with a message if a benchmark calls them (the point-to-point
and collective ones do not).
EOF

if [ -n "$TARBALL" ]; then
    tar czf "$TARBALL" -C "$(dirname "$OUTDIR")" "$(basename "$OUTDIR")"
fi
say "bundle in $OUTDIR: $(du -sh "$OUTDIR" | cut -f1), ${#carry[@]} system libraries, OSU: $OSU_BUILT$([ -z "$OSU_SHIM" ] || echo " (with the MPI_Win_* link shim)"), $(($(date +%s) - T0)) s"
[ -z "$TARBALL" ] || say "tarball $TARBALL: $(du -sh "$TARBALL" | cut -f1)"
