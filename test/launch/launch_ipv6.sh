#!/bin/sh
# The launch tree's TCP over IPv6 as well as IPv4 (tools/mpirun/tree_spawn.c, daemon.c): each "host"
# is a daemon on this machine (an agent like local_agent.sh that also records the daemon's command
# line). Checks the addresses mpirun offers its daemons (IPv4 first, then IPv6 without link-local
# ones, loopback last), jobs whose daemons connect back through UMPI_LAUNCH_ADDRESS given as ::1, as
# a name and as 127.0.0.1, and that an address no daemon can reach ends the job naming it.
. "$(dirname "$0")/common.sh"
build hello
AGENT=$WORK/uri_agent
printf '#!/bin/sh\n# HOST mpirun --umpi-daemon URI VERTEX TOKEN\necho "$4" >>"%s"\nshift\nexec "$@"\n' \
    "$WORK/uris" >"$AGENT"
chmod +x "$AGENT"
: >"$WORK/uris"

# job LABEL: mpirun --host a:1,b:1 hello through the agent, expected to pass on both "hosts".
job() {
    : >"$WORK/uris"
    run --launch-agent "$AGENT" --host a:1,b:1 "$WORK/hello"
    expect_rc 0 "$1"
    expect_out_lines "^hello from rank [01] of 2\$" 2 "$1"
}

# The default: every address of ours, IPv4 ones first, IPv6 next, the loopbacks last.
unset UMPI_LAUNCH_ADDRESS
job "default addresses"
uri=$(head -1 "$WORK/uris")
addrs=${uri%:*}
echo "offered: $addrs"
case ",$addrs," in *,127.0.0.1,*) ;; *) fail "default: 127.0.0.1 not offered ($addrs)" ;; esac
case ",$addrs," in *,fe80:*|*,FE80:*) fail "default: a link-local IPv6 address offered ($addrs)" ;; esac
v6=$(ip -6 -o addr show scope global 2>/dev/null | awk '{print $4}' | cut -d/ -f1 | head -1)
v4=$(ip -4 -o addr show scope global 2>/dev/null | awk '{print $4}' | cut -d/ -f1 | head -1)
if [ -n "$v6" ]; then
    case ",$addrs," in *,"$v6",*) ;; *) fail "default: this machine's IPv6 address $v6 not offered ($addrs)" ;; esac
    # IPv4 before IPv6, and IPv6 before the loopbacks
    if [ -n "$v4" ]; then
        before=${addrs%%"$v6"*}
        case ",$before" in *,"$v4",*) ;; *) fail "default: $v4 not before $v6 ($addrs)" ;; esac
    fi
    after=${addrs#*"$v6"}
    case "$after," in *,127.0.0.1,*) ;; *) fail "default: 127.0.0.1 not after $v6 ($addrs)" ;; esac
else
    echo "note: no global IPv6 address here; only the loopback ::1 is tried below"
fi

# The daemons reach mpirun through the one address given: IPv6 loopback, a name, IPv4.
if ip -6 -o addr show dev lo 2>/dev/null | grep -q '::1/128'; then
    UMPI_LAUNCH_ADDRESS=::1 job "UMPI_LAUNCH_ADDRESS=::1"
    grep -qx '::1:[0-9]*' "$WORK/uris" || fail "UMPI_LAUNCH_ADDRESS=::1: offered $(head -1 "$WORK/uris")"
else
    echo "note: no ::1 on lo (IPv6 off): the IPv6 job is not run"
fi
UMPI_LAUNCH_ADDRESS=localhost job "UMPI_LAUNCH_ADDRESS=localhost"
UMPI_LAUNCH_ADDRESS=127.0.0.1 job "UMPI_LAUNCH_ADDRESS=127.0.0.1"

# A name that does not resolve: the daemons cannot connect, say why, and the job ends at once.
UMPI_LAUNCH_ADDRESS=no-such-host.invalid run --launch-agent "$AGENT" --host a:1,b:1 "$WORK/hello"
expect_rc 1 "unresolvable UMPI_LAUNCH_ADDRESS"
expect_err "cannot reach the parent umpi process on port [0-9]* (no-such-host.invalid: " "unresolvable UMPI_LAUNCH_ADDRESS"
# both daemons fail; whichever mpirun hears of first is named
expect_err "lost the umpi daemon on [ab]" "unresolvable UMPI_LAUNCH_ADDRESS"
expect_within 10000 "unresolvable UMPI_LAUNCH_ADDRESS"
finish
