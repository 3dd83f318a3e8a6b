#!/bin/sh
# The OSU micro-benchmarks 7.4 (../shared/third-party, skipped where absent) build unpatched with
# umpi's mpicc, and every one-sided benchmark runs to the end at 2 ranks in each window creation
# mode (-w create|allocate|dynamic) and each synchronization mode it offers (-s), briefly.
# Environment (set by test/runtests): UMPI_PREFIX, TESTDIR (this folder), UMPI_TEST_WORKDIR.
set -u
: "${UMPI_PREFIX:?UMPI_PREFIX is not set}"
TESTDIR=${TESTDIR:-$(dirname "$0")}
WORK=${UMPI_TEST_WORKDIR:-$(mktemp -d)}
TARBALL=${UMPI_OSU_TARBALL:-$TESTDIR/../../../shared/third-party/osu-micro-benchmarks-7.4.tar.gz}
[ -f "$TARBALL" ] || { echo "SKIP: $TARBALL not found"; exit 77; }
TARBALL=$(readlink -f "$TARBALL")

cd "$WORK" && tar xzf "$TARBALL" && cd osu-micro-benchmarks-7.4 || { echo "FAIL: cannot unpack $TARBALL"; exit 1; }
if ! ./configure CC="$UMPI_PREFIX/bin/mpicc" CXX="$UMPI_PREFIX/bin/mpicxx" > configure.log 2>&1 ||
   ! make -C c/mpi/one-sided > make.log 2>&1; then
    echo "FAIL: OSU does not build with umpi's mpicc:"; tail -n 20 configure.log make.log; exit 1
fi
cd c/mpi/one-sided
fails=0 runs=0
for b in osu_put_latency osu_get_latency osu_put_bw osu_get_bw osu_put_bibw osu_acc_latency \
         osu_get_acc_latency osu_fop_latency osu_cas_latency; do
    # the synchronization modes this benchmark offers (osu_put_bibw: active target only)
    modes="pscw fence lock flush flush_local lock_all"
    [ $b = osu_put_bibw ] && modes="pscw fence"
    for w in create allocate dynamic; do
        for s in $modes; do
            runs=$((runs + 1))
            out=$(timeout 60 "$UMPI_PREFIX/bin/mpirun" -n 2 ./$b -w $w -s $s -m 1:8192 -i 10 -x 1 2>&1)
            rc=$?
            # the last line is a size with its figure (8192, or the one size of fop and cas)
            if [ $rc -ne 0 ] || ! printf '%s\n' "$out" | tail -n 1 | grep -Eq '^[0-9]+ +[0-9.]+$'; then
                echo "FAIL $b -w $w -s $s: exit status $rc"; printf '%s\n' "$out" | tail -5 | sed 's/^/    /'
                fails=$((fails + 1))
            fi
        done
    done
done
echo "$runs runs, $fails failed"
[ $fails -eq 0 ]
