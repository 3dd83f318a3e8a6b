# Sourced by the fakegpu scripts that check CUDA IPC paths by umpi's counters (UMPI_DEBUG=1 prints
# them at MPI_Finalize), after ../launch/common.sh: reading the counters of a rank from $ERR, a run
# that must pass, and the skip where the fake driver's IPC cannot work.
counters() { grep "umpi\[$1\] debug: cuda counters:" "$ERR"; }
count() { counters "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
lacks() { ! counters "$1" | grep -q " $2=" || fail "$3: rank $1's counters have $2 ($(counters "$1"))"; }
has() { counters "$1" | grep -q " $2=[1-9]" || fail "$3: rank $1's counters lack $2 ($(counters "$1"))"; }
ok_run() {
    expect_rc 0 "$1"
    grep -q "No Errors" "$OUT" || fail "$1: no 'No Errors' ($(grep -m3 'check' "$ERR"))"
}

# The fake driver opens another process's memory through /proc/PID/fd: without it, no IPC to test.
sleep 5 & sleeper=$!
if ! readlink "/proc/$sleeper/fd/1" >/dev/null 2>&1; then
    kill $sleeper 2>/dev/null
    echo "SKIP: /proc/PID/fd of another process cannot be read here: the fake driver's CUDA IPC is off"
    exit 77
fi
kill $sleeper 2>/dev/null
