#!/bin/sh
# mpirun --host/--hostfile: each "host" is a umpi daemon of its own on this machine
# (local_agent.sh runs the daemon here whatever the host name), so each is a node with its own
# node id. Checks the nodes the ranks see (MPI_Comm_split_type SHARED), a ring and allreduces, the
# mappings, both hostfile formats, the head hosting the ranks of "localhost", output tags, stdin
# to a rank 0 on another node, the hierarchical collectives across the nodes, a tree of daemons
# deeper than one level, and that no daemon is left behind.
. "$(dirname "$0")/common.sh"
build multinode coll_model echo_stdin hello lines
AGENT=$SRCDIR/local_agent.sh
LOCAL_AGENT_PIDS=$WORK/daemons
# The PMIx directories of daemons killed on purpose stay in the scratch folder, not in /tmp.
TMPDIR=$WORK/tmp
export LOCAL_AGENT_PIDS TMPDIR
mkdir -p "$TMPDIR"
: >"$LOCAL_AGENT_PIDS"

runh() { run --launch-agent "$AGENT" "$@"; }

# expect_node RANK MEMBERS NODES LABEL: rank RANK saw MEMBERS on its node and NODES nodes.
expect_node() {
    grep -q "^rank $1 of [0-9]*: node members $2; nodes $3\$" "$OUT" ||
        fail "$4: rank $1 did not see node members $2 and $3 nodes ($(grep "^rank $1 " "$OUT"))"
}

# expect_daemons N LABEL: the last job started N daemons, and none is left (they exit with it).
expect_daemons() {
    n=$(wc -l <"$LOCAL_AGENT_PIDS")
    [ "$n" -eq "$1" ] || fail "$2: $n daemons started, expected $1"
    for i in 1 2 3 4 5 6 7 8 9 10; do
        left=""
        while read -r pid host; do
            st=$(ps -o stat= -p "$pid")
            case $st in ''|Z*) ;; *) left="$left $pid($host)" ;; esac
        done <"$LOCAL_AGENT_PIDS"
        [ -z "$left" ] && break
        sleep 0.2
    done
    [ -z "$left" ] || fail "$2: daemons left behind:$left"
    : >"$LOCAL_AGENT_PIDS"
}

# Two nodes of two ranks: ranks, nodes, ring, allreduce.
runh --host a:2,b:2 -n 4 "$WORK/multinode"
expect_rc 0 "a:2,b:2"
grep -q "^ No Errors" "$OUT" || fail "a:2,b:2: no 'No Errors' ($(head -c 300 "$OUT"))"
expect_node 0 0,1 2 "a:2,b:2"
expect_node 1 0,1 2 "a:2,b:2"
expect_node 2 2,3 2 "a:2,b:2"
expect_node 3 2,3 2 "a:2,b:2"
expect_daemons 2 "a:2,b:2"
check_no_orphans "a:2,b:2"

# -n defaults to the slots; --map-by node deals the ranks round robin.
runh --host a:2,b:2 --map-by node "$WORK/multinode"
expect_rc 0 "--map-by node"
expect_out_lines "^rank [0-9] of 4: " 4 "--map-by node (default -n)"
expect_node 0 0,2 2 "--map-by node"
expect_node 3 1,3 2 "--map-by node"
expect_daemons 2 "--map-by node"

# A hostfile mixing Open MPI's and MPICH's lines, a comment, a repeated host: a has 3 slots, b 1.
printf '# two hosts\na slots=2\n\nb:1   # MPICH style\na\n' >"$WORK/hostfile"
runh --hostfile "$WORK/hostfile" "$WORK/multinode"
expect_rc 0 "hostfile"
expect_node 0 0,1,2 2 "hostfile"
expect_node 3 3 2 "hostfile"
expect_daemons 2 "hostfile"

# ppr: one rank on each of three hosts; -ppn 2 is ppr:2:node.
runh --host a:2,b:2,c:2 --map-by ppr:1:node "$WORK/multinode"
expect_rc 0 "ppr:1:node"
for r in 0 1 2; do expect_node $r $r 3 "ppr:1:node"; done
expect_daemons 3 "ppr:1:node"
runh --host a:2,b:2,c:2 -ppn 2 -n 4 "$WORK/multinode"
expect_rc 0 "-ppn 2"
expect_node 1 0,1 2 "-ppn 2"
expect_node 2 2,3 2 "-ppn 2"
expect_daemons 2 "-ppn 2"

# "localhost" is mpirun's own node: it forks those ranks itself, the other host gets a daemon.
runh --host localhost:2,b:2 "$WORK/multinode"
expect_rc 0 "localhost:2,b:2"
grep -q "^ No Errors" "$OUT" || fail "localhost:2,b:2: no 'No Errors'"
expect_node 1 0,1 2 "localhost:2,b:2"
expect_node 2 2,3 2 "localhost:2,b:2"
expect_daemons 1 "localhost:2,b:2"

# Output: every line whole and tagged with rank and host, in order per rank, stderr to stderr,
# the partial last line ended.
runh --tag-output --host a:2,b:2 "$WORK/lines" 100
expect_rc 0 "lines"
for r in 0 1 2 3; do
    h=a
    [ $r -ge 2 ] && h=b
    grep "^\[$r@$h\] rank $r line" "$OUT" | awk '{print $5}' >"$WORK/order.$r"
    seq 0 99 | cmp -s - "$WORK/order.$r" || fail "lines: rank $r's 100 lines tagged [$r@$h] not all there in order"
    grep -q "^\[$r@$h\] rank $r to stderr\$" "$ERR" || fail "lines: rank $r's stderr line missing"
    grep -q "^\[$r@$h\] rank $r partial\$" "$OUT" || fail "lines: rank $r's partial last line missing"
done
untagged=$(grep -vc '^\[[0-3]@[ab]\] ' "$OUT")
[ "$untagged" -eq 0 ] || fail "lines: $untagged stdout lines without a tag"
runh --tag-output --host a:1,b:1 "$WORK/hello"
expect_rc 0 "--tag-output"
grep -q "^\[0@a\] hello from rank 0 of 2\$" "$OUT" || fail "--tag-output: no '[0@a] hello from rank 0 of 2'"
grep -q "^\[1@b\] hello from rank 1 of 2\$" "$OUT" || fail "--tag-output: no '[1@b] hello from rank 1 of 2'"
expect_daemons 4 "lines and tags"

# Binding options reach the daemons: each plans and reports the binding of its own ranks.
runh --host a:1,b:1 --bind-to none --report-bindings "$WORK/hello"
expect_rc 0 "--report-bindings across hosts"
expect_err "rank 0 on a: not bound" "--report-bindings across hosts (host a)"
expect_err "rank 1 on b: not bound" "--report-bindings across hosts (host b)"
expect_daemons 2 "--report-bindings across hosts"

# stdin goes to rank 0 on another node: from a file, from a pipe, and nothing from /dev/null.
seq 1 20000 >"$WORK/stdin.txt"
runh --host b:1,a:2 "$WORK/echo_stdin" <"$WORK/stdin.txt"
expect_rc 0 "stdin from a file"
grep -v '^rank' "$OUT" | cmp -s - "$WORK/stdin.txt" || fail "stdin from a file: rank 0 on b did not echo it whole"
expect_out_lines "^rank [12] read 0 bytes of stdin\$" 2 "stdin from a file"
seq 1 5000 | "$MPIRUN" --launch-agent "$AGENT" --host b:1,a:1 "$WORK/echo_stdin" >"$OUT" 2>"$ERR"
RC=$?
expect_rc 0 "stdin from a pipe"
grep -v '^rank' "$OUT" >"$OUT.in"
seq 1 5000 | cmp -s - "$OUT.in" || fail "stdin from a pipe: rank 0 on b did not echo 1..5000"
runh --host b:1,a:1 "$WORK/echo_stdin" </dev/null
expect_rc 0 "stdin from /dev/null"
expect_out_lines "^rank 1 read 0 bytes" 1 "stdin from /dev/null"
expect_daemons 6 "stdin"

# The collectives see two real nodes: the hierarchical algorithms are chosen (UMPI_DEBUG=1).
for k in BARRIER BCAST ALLREDUCE; do export UMPI_${k}_ALGORITHM=auto; done
unset UMPI_COLL_RANKS_PER_NODE
# hosts a and b are this machine: UCX's estimate of their link (UMPI_COLL_NET_COST=auto) is shared
# memory, where flat algorithms rightly win; the built-in network guess makes them a network
UMPI_COLL_NET_COST=builtin UMPI_DEBUG=1 runh --host a:2,b:2 "$WORK/coll_model"
expect_rc 0 "hierarchical collectives"
for kind in barrier bcast allreduce; do
    grep -q "^umpi\[0\] debug: $kind on MPI_COMM_WORLD (size 4, [0-9]* bytes): algorithm hier\$" "$ERR" ||
        fail "hierarchical collectives: rank 0 did not choose hier for $kind across the two nodes"
done
expect_daemons 2 "hierarchical collectives"

# An agent with ssh's manners: its own options first, then the host, then one command line for a
# shell (the daemon's command must survive being joined and split again).
printf '#!/bin/sh\nwhile [ "${1#-}" != "$1" ]; do shift; shift; done\nhost=$1\nshift\necho $$ "$host" >>"$LOCAL_AGENT_PIDS"\nexec sh -c "exec $*"\n' >"$WORK/ssh_like.sh"
chmod +x "$WORK/ssh_like.sh"
run --launch-agent "$WORK/ssh_like.sh -o BatchMode=yes" --host a:2,b:2 "$WORK/multinode"
expect_rc 0 "ssh-like agent"
grep -q "^ No Errors" "$OUT" || fail "ssh-like agent: no 'No Errors' ($(head -c 300 "$ERR"))"
expect_node 2 2,3 2 "ssh-like agent"
expect_daemons 2 "ssh-like agent"

# A tree: five hosts, two daemons per daemon, so the head starts two and they start the rest.
UMPI_LAUNCH_FANOUT=2 runh --host a,b,c,d,e "$WORK/multinode"
expect_rc 0 "5 hosts, fan-out 2"
grep -q "^ No Errors" "$OUT" || fail "5 hosts, fan-out 2: no 'No Errors'"
for r in 0 1 2 3 4; do expect_node $r $r 5 "5 hosts, fan-out 2"; done
expect_daemons 5 "5 hosts, fan-out 2"
check_no_orphans "multinode"
finish
