#!/bin/sh
# A user's CUDA program built with umpi's mpicc: cuda_app.c uses the CUDA
# runtime (<cuda_runtime.h>, cudaMalloc, -lcudart) and gives device pointers to MPI. Checks what
# the wrapper prints (-show, --showme:compile, --showme:link) with the CUDA flags a user adds,
# builds it (the loader must find umpi's libmpi and the toolkit's libcudart), and on a GPU runs
# it on 2 ranks, with CUDA IPC and with the pipeline (UMPI_CUDA_IPC=0).
#   cuda_app.sh [--build-only]      (the launch suite runs the build part on machines without GPU)
# Skipped (77) where the toolkit is not at $CUDA_HOME (default /usr/local/cuda), as on CI.
. "$(dirname "$0")/../launch/common.sh"
TEST=cuda_app
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$CUDA_HOME/include/cuda_runtime.h" ] || [ ! -e "$CUDA_HOME/lib64/libcudart.so" ]; then
    echo "SKIP: no CUDA toolkit at $CUDA_HOME (cuda_runtime.h, lib64/libcudart.so)"
    exit 77
fi
CFLAGS="-I$CUDA_HOME/include"
LIBS="-L$CUDA_HOME/lib64 -Wl,-rpath,$CUDA_HOME/lib64 -lcudart"
SRC=$(cd "$SRCDIR/../gpu" && pwd)/cuda_app.c

# what the wrapper would run: the user's flags kept, umpi's added, libmpi after the user's objects
show=$("$MPICC" -show $CFLAGS "$SRC" -o "$WORK/cuda_app" $LIBS)
for want in "-I$UMPI_PREFIX/include" "-I$CUDA_HOME/include" "-L$CUDA_HOME/lib64" "-lcudart" \
            "-L$UMPI_PREFIX/lib" "-lmpi" "$SRC" "-o $WORK/cuda_app"; do
    case " $show " in *" $want "*) ;; *) fail "mpicc -show lacks '$want': $show" ;; esac
done
case "$show" in *-I$UMPI_PREFIX/include*"$SRC"*-lcudart*-lmpi*) ;;
*) fail "mpicc -show: not <compiler> <umpi -I> ... <source> ... -lcudart ... -lmpi: $show" ;; esac
# the Open MPI forms print umpi's own flags (what a build system adds to the user's)
comp=$("$MPICC" --showme:compile)
case " $comp " in *" -I$UMPI_PREFIX/include "*) ;; *) fail "--showme:compile: $comp" ;; esac
case " $comp " in *" -lmpi "*) fail "--showme:compile links: $comp" ;; esac
link=$("$MPICC" --showme:link)
case " $link " in *" -L$UMPI_PREFIX/lib "*" -lmpi "*) ;; *) fail "--showme:link: $link" ;; esac

"$MPICC" -O2 $CFLAGS "$SRC" -o "$WORK/cuda_app" $LIBS >"$WORK/cuda_app.build.log" 2>&1 ||
    { echo "FAIL: $TEST: build: $(head -c 800 "$WORK/cuda_app.build.log")"; exit 1; }
deps=$(ldd "$WORK/cuda_app")
echo "$deps" | grep -q "libmpi.so.12 => $UMPI_PREFIX/lib/" || fail "ldd: libmpi not from $UMPI_PREFIX/lib: $deps"
echo "$deps" | grep -q "libcudart.so.* => $CUDA_HOME/lib64/" || fail "ldd: libcudart not from $CUDA_HOME/lib64: $deps"

if [ "${1:-}" != --build-only ]; then
    "$UMPI_PREFIX/bin/umpi_info" --gpu >/dev/null 2>&1 || { echo "SKIP: built; no GPU to run it on"; exit 77; }
    for ipc in 1 0; do
        UMPI_CUDA_IPC=$ipc UMPI_DEBUG=1 run -n 2 "$WORK/cuda_app"
        expect_rc 0 "UMPI_CUDA_IPC=$ipc"
        grep -q "No Errors" "$OUT" || fail "UMPI_CUDA_IPC=$ipc: no 'No Errors' ($(head -c 400 "$ERR"))"
        if [ $ipc = 1 ]; then want=ipc_transfers; else want=pipelined; fi
        grep "umpi\[1\] debug: cuda counters:" "$ERR" | grep -q " $want=[1-9]" ||
            fail "UMPI_CUDA_IPC=$ipc: rank 1 took no $want ($(grep 'cuda counters' "$ERR" | head -2))"
    done
fi
[ $failures -eq 0 ] || exit 1
echo "PASS: $TEST"
