#!/bin/bash
# A Slurm cluster of several nodes on one machine, for tests and measurements.
#
#   testbed.sh up [N]            bring up N nodes (default 2), replacing leftovers of a crashed run
#   testbed.sh down              stop everything, remove namespaces, links and the scratch folder
#   testbed.sh exec NODE CMD...  run CMD inside node NODE (node1..nodeN): its network, hostname,
#                                PID, IPC and mount namespaces, as a process started on that node
#   testbed.sh status            nodes as Slurm sees them
#   testbed.sh env               the variables that make sinfo/srun/salloc/sbatch talk to it
#
# or sourced (`. testbed.sh`), which defines tb_up, tb_down, tb_exec, tb_env, tb_node_pids and the
# TB_* variables below without running anything.
#
# The picture, for TB_NODES=2 (addresses with the default TB_NET=10.218.0):
#
#   root namespace                               node1 (netns umpitb-node1)   node2 ...
#   munged (own key, socket)                     pid 1: this script (reaper)
#   slurmctld :TB_PORT on all addresses          slurmd -N node1
#   bridge umpitbbr 10.218.0.1/24 --veth-------- eth0 10.218.0.11           eth0 10.218.0.12
#          fd00:10:218:0::1/64                        fd00:10:218:0::11           ...
#   srun/salloc/sbatch run here or in a node      own hostname, /dev/shm, /etc/hosts,
#                                                 boot_id and machine-id (bind mounts)
#                                                sshd on 10.218.0.11:22 (root, key only)
#
# Each node is a network namespace with a veth link to a bridge in the root namespace, plus its
# own UTS, PID, IPC and mount namespaces. UCX takes two processes for one host when their boot_id
# and namespaces match, so each node gets its own boot_id and machine-id and /dev/shm: UCX then
# carries traffic between nodes over TCP (through the bridge) and within a node by shared memory.
# Killing a node's PID 1 makes the kernel kill everything on that node, which is how `down` leaves
# no process behind. Every name starts with TB_NAME, so a later `up` or `down` finds and removes
# what a crashed run left, and nothing else.
#
# Every node also runs an sshd on its own address, so that `mpirun --hostfile` can start its
# daemons with the real default launch agent (`ssh -o BatchMode=yes`). Host keys, a root key pair,
# known_hosts and the configurations are generated into TB_DIR/ssh at each `up`; nothing of the
# machine's own ssh setup is read or changed (tb__ssh_setup says how).
#
# Settings (environment): TB_NAME (umpitb), TB_DIR (scratch folder, /tmp/$TB_NAME), TB_NODES (2),
# TB_CPUS (CPUs a node declares, 2), TB_NET (first three octets of the /24, 10.218.0), TB_NET6
# (the IPv6 /64 of the same links where the machine has IPv6: fd00:10:218:0 for TB_NET 10.218.0,
# bridge ::1, node N ::(10+N)), TB_PORT
# (slurmctld's port, 16830), TB_SLURMD_TIMEOUT (seconds without an answer from a node before
# Slurm declares it failed and ends its jobs, 10), TB_TREE_WIDTH (Slurm's TreeWidth: fan-out of
# the tree of slurmds that forwards a launch, 50 as Slurm's default), TB_TASK_PLUGIN (Slurm's
# TaskPlugin, task/none; task/affinity makes srun --cpu-bind bind the tasks, with no binding
# unless asked: TaskPluginParam=None). Needs root, iproute2,
# util-linux (unshare, nsenter) and the Debian packages slurm-wlm, slurm-wlm-basic-plugins, munge,
# openssh-server and openssh-client.

TB_GIVEN=${TB_NAME:+1}   # a name from the environment: tb_claim keeps it
TB_NAME=${TB_NAME:-umpitb}
TB_DIR=${TB_DIR:-/tmp/$TB_NAME}
TB_NODES=${TB_NODES:-2}
TB_CPUS=${TB_CPUS:-2}
TB_NET=${TB_NET:-10.218.0}
TB_PORT=${TB_PORT:-16830}
TB_SLURMD_TIMEOUT=${TB_SLURMD_TIMEOUT:-10}
TB_TREE_WIDTH=${TB_TREE_WIDTH:-50}
TB_TASK_PLUGIN=${TB_TASK_PLUGIN:-task/none}
TB_NET6_GIVEN=${TB_NET6:+1}  # else derived from TB_NET, here and again by tb_claim
TB_NET6=${TB_NET6:-fd00:$(echo "$TB_NET" | tr . :)}
TB_CONF=$TB_DIR/etc/slurm.conf
TB_BRIDGE=${TB_NAME}br
TB_SELF=$(readlink -f "${BASH_SOURCE[0]}")

tb_log() { echo "testbed: $*" >&2; }

# Starts "$@" in the background with no file descriptor above 2: a daemon must not keep open a
# lock or a pipe of whoever started the test bed (a lock would outlive its holder, a pipe would
# keep a reader waiting). $! is its pid.
tb__spawn() {
    (
        for fd in $(ls /proc/$BASHPID/fd); do
            [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null
        done
        exec "$@"
    ) &
    disown $!   # its end (killed by tb_down) is no news to report
}

# tb_claim: picks a free instance for a test run and holds it until the calling shell exits:
# TB_NAME=umpitbK, TB_NET=10.217.K, TB_PORT=16817+K for the first K in 0..9 whose lock
# (/run/lock/umpitbK.lock, on fd 9) is free. Concurrent test runs on one machine then never share
# names, addresses or ports; the leftovers of a crashed run of that instance are cleaned by tb_up.
# A TB_NAME given in the environment is kept (its TB_NET and TB_PORT are the caller's to choose).
tb_claim() {
    local k
    mkdir -p /run/lock
    # TB_NAME (with TB_NET, TB_PORT) set by the caller: that instance, held by its own lock.
    if [ -n "$TB_GIVEN" ]; then
        exec 9>"/run/lock/$TB_NAME.lock" && flock -n 9 && return 0
        tb_log "test bed instance $TB_NAME is in use"
        return 1
    fi
    for k in 0 1 2 3 4 5 6 7 8 9; do
        exec 9>"/run/lock/umpitb$k.lock" || continue
        if flock -n 9; then
            TB_NAME=umpitb$k TB_NET=10.217.$k TB_PORT=$((16817 + k))
            TB_DIR=/tmp/$TB_NAME TB_CONF=$TB_DIR/etc/slurm.conf TB_BRIDGE=${TB_NAME}br
            # concurrent instances must not share the IPv6 prefix either
            [ -n "$TB_NET6_GIVEN" ] || TB_NET6=fd00:$(echo "$TB_NET" | tr . :)
            return 0
        fi
    done
    exec 9>&-
    tb_log "all ten test bed instances (umpitb0..9) are in use"
    return 1
}

# Why the test bed cannot run here, or nothing when it can (tests skip with this reason).
tb_missing() {
    [ "$(id -u)" -eq 0 ] || { echo "needs root (network namespaces)"; return; }
    local c
    for c in ip unshare nsenter munged slurmctld slurmd srun sinfo scontrol; do
        command -v "$c" >/dev/null 2>&1 || {
            echo "no $c (apt-get install slurm-wlm slurm-wlm-basic-plugins munge iproute2)"
            return
        }
    done
    for c in /usr/sbin/sshd ssh ssh-keygen; do
        command -v "$c" >/dev/null 2>&1 || { echo "no $c (apt-get install openssh-server openssh-client)"; return; }
    done
    [ -e /usr/lib/x86_64-linux-gnu/slurm-wlm/mpi_pmix.so ] || [ -n "$(find /usr/lib -name mpi_pmix.so 2>/dev/null | head -1)" ] ||
        { echo "no Slurm PMIx plugin mpi_pmix.so (apt-get install slurm-wlm-basic-plugins)"; return; }
    ip netns list >/dev/null 2>&1 || { echo "ip netns does not work here"; return; }
}

tb_node_ip() { echo "$TB_NET.$((10 + ${1#node}))"; }
tb_node_ip6() { echo "$TB_NET6::$((10 + ${1#node}))"; }

# Prints "SLURM_CONF=..." for eval/export by whoever runs Slurm commands against the test bed.
tb_env() { echo "SLURM_CONF=$TB_CONF"; }

# Root-namespace pid of node NODE's PID 1 (empty when the node is not up).
tb_node_pid() {
    local f=$TB_DIR/nodes/$1/pid1 p
    [ -r "$f" ] || return 0
    p=$(cat "$f")
    [ -n "$p" ] && [ -d "/proc/$p" ] && echo "$p"
}

# tb_exec NODE CMD...: runs CMD inside the node's namespaces (cwd kept when it exists there).
tb_exec() {
    local node=$1 pid
    shift
    pid=$(tb_node_pid "$node")
    [ -n "$pid" ] || { tb_log "no node $node is up"; return 125; }
    nsenter -t "$pid" -m -u -i -n -p --wd="$PWD" -- "$@"
}

# Root-namespace pids of every process on NODE except its PID 1 (the reaper), slurmd and the
# listening sshd (a child of PID 1); ssh sessions (children of that sshd) are listed.
tb_node_pids() {
    local pid1 ns p comm ppid
    pid1=$(tb_node_pid "$1")
    [ -n "$pid1" ] || return 0
    ns=$(readlink "/proc/$pid1/ns/pid")
    for p in /proc/[0-9]*; do
        p=${p#/proc/}
        [ "$p" = "$pid1" ] && continue
        [ "$(readlink "/proc/$p/ns/pid" 2>/dev/null)" = "$ns" ] || continue
        comm=$(cat "/proc/$p/comm" 2>/dev/null)
        case $comm in slurmd|"") continue ;; esac
        if [ "$comm" = sshd ]; then
            ppid=$(awk '/^PPid:/ {print $2}' "/proc/$p/status" 2>/dev/null)
            [ "$ppid" = "$pid1" ] && continue
        fi
        echo "$p"
    done
}

tb__alive() {
    local state
    state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)
    [ -n "$state" ] && [ "$state" != Z ]
}

# Our daemons' pids, from their pid files: slurmctld, munged and each node's PID 1.
tb__pids() {
    local f
    for f in "$TB_DIR"/run/slurmctld.pid "$TB_DIR"/run/munged.pid "$TB_DIR"/nodes/*/pid1; do
        [ -r "$f" ] && cat "$f"
    done
}

# Links of ours: the bridge and the root ends of the veths.
tb__links() {
    ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' |
        grep -E "^(${TB_NAME}br|${TB_NAME}v[0-9]+)$"
}

# Kills what a test bed of this name started, running or left by a crash: by pid files, by
# namespace membership, then the namespaces and links, waiting until the kernel has removed them.
tb_down() {
    local f p n i
    # A node's PID 1 first: the kernel then kills everything else on that node.
    for f in "$TB_DIR"/nodes/*/pid1; do
        [ -r "$f" ] && p=$(cat "$f") && [ -n "$p" ] && kill -KILL "$p" 2>/dev/null
    done
    # Anything else still inside a netns of ours (e.g. an `exec` whose PID 1 was gone).
    for n in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$TB_NAME-node[0-9]+$"); do
        for p in $(ip netns pids "$n" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
    done
    for p in $(tb__pids); do kill -TERM "$p" 2>/dev/null; done
    for i in $(seq 1 50); do
        local alive=
        for p in $(tb__pids); do tb__alive "$p" && alive="$alive $p"; done
        [ -z "$alive" ] && break
        [ "$i" -eq 20 ] && kill -KILL $alive 2>/dev/null
        sleep 0.1
    done
    for n in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$TB_NAME-node[0-9]+$"); do
        ip netns del "$n" 2>/dev/null
    done
    for n in $(tb__links); do ip link del "$n" 2>/dev/null; done
    # Veth ends go away asynchronously after their namespace: wait, or a new `up` collides.
    for i in $(seq 1 100); do
        [ -z "$(tb__links)" ] && break
        sleep 0.05
    done
    [ -n "$(tb__links)" ] && tb_log "links still there: $(tb__links | tr '\n' ' ')"
    case $TB_DIR in /tmp/?*|/var/tmp/?*|*/"$TB_NAME"*) rm -rf "$TB_DIR" ;; esac
    return 0
}

# Runs as PID 1 of a node (its own namespaces already entered): makes the node look like another
# host, starts slurmd, and reaps every process of the node until it is killed.
tb__node_main() {
    local node=$1 nd=$TB_DIR/nodes/$1
    hostname "$node" || exit 1
    mount -t tmpfs -o mode=1777,size=1g tmpfs /dev/shm || exit 1
    mount --bind "$nd/boot_id" /proc/sys/kernel/random/boot_id || exit 1
    mount --bind "$nd/machine-id" /etc/machine-id || exit 1
    [ -e /var/lib/dbus/machine-id ] && mount --bind "$nd/machine-id" /var/lib/dbus/machine-id
    mount --bind "$TB_DIR/etc/hosts" /etc/hosts || exit 1
    # ssh clients of this node read the test bed's configuration (tb__ssh_setup says why).
    mount --bind "$TB_DIR/ssh/ssh_config" /etc/ssh/ssh_config || exit 1
    [ -d /root/.ssh ] && { mount --bind "$TB_DIR/ssh/empty" /root/.ssh || exit 1; }
    slurmd -D -N "$node" -f "$TB_CONF" </dev/null >>"$nd/slurmd.out" 2>&1 &
    # sshd re-executes itself, hence the absolute path; it writes its pid file once it listens.
    /usr/sbin/sshd -D -e -f "$TB_DIR/ssh/sshd_config" -o "ListenAddress=$(tb_node_ip "$node")" \
        -o "HostKey=$nd/ssh_host_ed25519_key" -o "PidFile=$nd/sshd.pid" </dev/null >>"$nd/sshd.out" 2>&1 &
    # bash reaps any child on SIGCHLD, including daemons reparented to us (slurmstepd).
    while :; do
        wait
        sleep 1
    done
}

tb__write_conf() {
    local n
    mkdir -p "$TB_DIR"/{etc,run,log,state} || return 1
    {
        echo "127.0.0.1 localhost"
        echo "$TB_NET.1 $(hostname -s)"
        for n in $(seq 1 "$TB_NODES"); do echo "$(tb_node_ip node$n) node$n"; done
    } >"$TB_DIR/etc/hosts"
    # cgroup/v1 only because slurmd loads a cgroup plugin even with proctrack/linuxproc, and
    # its auto-detection fails on the fresh /sys of a network namespace.
    echo "CgroupPlugin=cgroup/v1" >"$TB_DIR/etc/cgroup.conf"
    cat >"$TB_CONF" <<EOF
# Written by test/slurm/testbed.sh: a test cluster in network namespaces.
ClusterName=$TB_NAME
SlurmctldHost=$(hostname -s)($TB_NET.1)
SlurmctldPort=$TB_PORT
SlurmdPort=6818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$TB_DIR/run/munge.sock
StateSaveLocation=$TB_DIR/state
SlurmdSpoolDir=$TB_DIR/nodes/%n/spool
SlurmctldPidFile=$TB_DIR/run/slurmctld.pid.slurm
SlurmdPidFile=$TB_DIR/nodes/%n/slurmd.pid
SlurmctldLogFile=$TB_DIR/log/slurmctld.log
SlurmdLogFile=$TB_DIR/nodes/%n/slurmd.log
TmpFS=$TB_DIR/nodes/%n/tmp
ProctrackType=proctrack/linuxproc
TaskPlugin=$TB_TASK_PLUGIN
TaskPluginParam=None
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
ReturnToService=2
SlurmdParameters=config_overrides
SlurmctldTimeout=30
SlurmdTimeout=$TB_SLURMD_TIMEOUT
TreeWidth=$TB_TREE_WIDTH
InactiveLimit=0
KillWait=2
MinJobAge=5
MessageTimeout=5
UnkillableStepTimeout=20
SlurmctldDebug=info
SlurmdDebug=info
EOF
    for n in $(seq 1 "$TB_NODES"); do
        echo "NodeName=node$n NodeAddr=$(tb_node_ip node$n) CPUs=$TB_CPUS Boards=1 SocketsPerBoard=1" \
             "CoresPerSocket=$TB_CPUS ThreadsPerCore=1 RealMemory=1000 State=UNKNOWN"
    done >>"$TB_CONF"
    echo "PartitionName=tb Nodes=node[1-$TB_NODES] Default=YES MaxTime=INFINITE State=UP" >>"$TB_CONF"
}

# ssh between the nodes, as root, with keys only. Generated here: one host key per node, a root
# key pair, known_hosts naming every node (by name and address) with its key, an sshd_config and a
# client ssh_config. The client side must find that key and those known hosts without reading or
# changing the machine's /root/.ssh (which may not exist, or hold someone's real keys), and the
# default launch agent is a bare `ssh -o BatchMode=yes`, so no -F or -i can be added: each node
# bind-mounts TB_DIR/ssh/ssh_config over /etc/ssh/ssh_config in its own mount namespace (private,
# so the machine's file is untouched), naming the key and known hosts by absolute path, and hides
# an existing /root/.ssh under an empty folder, whose config would otherwise come first.
# sshd: no PAM (nothing of the machine's login stack runs inside the namespaces), privilege
# separation as packaged (its empty chroot /run/sshd, which Debian's service creates at start),
# StrictModes off because the scratch folder lies under the world-writable /tmp.
tb__ssh_setup() {
    local sd=$TB_DIR/ssh n nd
    mkdir -p "$sd/empty" /run/sshd || return 1
    chmod 700 "$sd"
    ssh-keygen -q -t ed25519 -N '' -C "root@$TB_NAME" -f "$sd/id_ed25519" || return 1
    cp "$sd/id_ed25519.pub" "$sd/authorized_keys"
    : >"$sd/known_hosts"
    for n in $(seq 1 "$TB_NODES"); do
        nd=$TB_DIR/nodes/node$n
        mkdir -p "$nd"
        ssh-keygen -q -t ed25519 -N '' -C "node$n" -f "$nd/ssh_host_ed25519_key" || return 1
        echo "node$n,$(tb_node_ip node$n) $(cut -d' ' -f1-2 "$nd/ssh_host_ed25519_key.pub")" >>"$sd/known_hosts"
    done
    cat >"$sd/sshd_config" <<EOF
# Written by test/slurm/testbed.sh; ListenAddress, HostKey and PidFile are given per node.
Port 22
AuthorizedKeysFile $sd/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
UseDNS no
PrintMotd no
PrintLastLog no
X11Forwarding no
MaxStartups 200
MaxSessions 200
LogLevel ERROR
EOF
    # (also usable from the root namespace, which lacks the nodes' names: ssh -F this file)
    cat >"$sd/ssh_config" <<EOF
# Written by test/slurm/testbed.sh, mounted over /etc/ssh/ssh_config inside the nodes only.
$(for n in $(seq 1 "$TB_NODES"); do printf 'Host node%s\n    HostName %s\n' "$n" "$(tb_node_ip node$n)"; done)
Host *
    IdentityFile $sd/id_ed25519
    IdentitiesOnly yes
    UserKnownHostsFile $sd/known_hosts
    GlobalKnownHostsFile /dev/null
    StrictHostKeyChecking yes
    ConnectTimeout 10
    LogLevel ERROR
EOF
}

tb_up() {
    local n i node nd ip why
    why=$(tb_missing)
    [ -z "$why" ] || { tb_log "$why"; return 77; }
    [ "$TB_NODES" -ge 1 ] && [ "$TB_NODES" -le 200 ] || { tb_log "TB_NODES=$TB_NODES: 1 to 200"; return 2; }
    tb_down
    tb__write_conf || return 1
    tb__ssh_setup || { tb_log "cannot generate the ssh keys and configuration"; return 1; }

    # munge: a key of our own, its socket and files in the scratch folder.
    dd if=/dev/urandom of="$TB_DIR/etc/munge.key" bs=1024 count=1 status=none && chmod 400 "$TB_DIR/etc/munge.key"
    chmod 700 "$TB_DIR/run" "$TB_DIR/etc"
    tb__spawn munged --foreground --force --socket="$TB_DIR/run/munge.sock" --key-file="$TB_DIR/etc/munge.key" \
        --log-file="$TB_DIR/log/munged.log" --pid-file="$TB_DIR/run/munged.pid.munge" \
        --seed-file="$TB_DIR/run/munged.seed" </dev/null >>"$TB_DIR/log/munged.out" 2>&1
    echo $! >"$TB_DIR/run/munged.pid"
    for i in $(seq 1 100); do
        [ -S "$TB_DIR/run/munge.sock" ] && break
        tb__alive "$(cat "$TB_DIR/run/munged.pid")" ||
            { tb_log "munged did not start: $(tail -3 "$TB_DIR/log/munged.out")"; return 1; }
        sleep 0.02
    done

    ip link add "$TB_BRIDGE" type bridge && ip addr add "$TB_NET.1/24" dev "$TB_BRIDGE" &&
        ip link set "$TB_BRIDGE" up || { tb_log "cannot create bridge $TB_BRIDGE"; return 1; }
    # IPv6 too where the machine has it (nodad: usable at once, no duplicate detection wait).
    ip -6 addr add "$TB_NET6::1/64" dev "$TB_BRIDGE" nodad 2>/dev/null || tb_log "no IPv6 on the bridge"
    for n in $(seq 1 "$TB_NODES"); do
        node=node$n ns=$TB_NAME-$node ip=$(tb_node_ip $node) nd=$TB_DIR/nodes/$node
        mkdir -p "$nd/spool" "$nd/tmp"
        cat /proc/sys/kernel/random/uuid >"$nd/boot_id"
        tr -d '-' </proc/sys/kernel/random/uuid >"$nd/machine-id"
        ip netns add "$ns" &&
            ip link add "${TB_NAME}v$n" type veth peer name eth0 netns "$ns" &&
            ip link set "${TB_NAME}v$n" master "$TB_BRIDGE" up &&
            ip -n "$ns" addr add "$ip/24" dev eth0 &&
            ip -n "$ns" link set eth0 up && ip -n "$ns" link set lo up ||
            { tb_log "cannot set up the network of $node"; return 1; }
        ip -n "$ns" -6 addr add "$(tb_node_ip6 $node)/64" dev eth0 nodad 2>/dev/null
        # ip netns exec mounts a /sys of the namespace (UCX reads interfaces there); unshare adds
        # the other namespaces. PID 1 of the node is this script in tb__node_main.
        TB_DIR=$TB_DIR TB_NAME=$TB_NAME TB_NODES=$TB_NODES TB_NET=$TB_NET \
            tb__spawn ip netns exec "$ns" unshare --uts --ipc --mount --pid --fork --mount-proc --kill-child \
            bash "$TB_SELF" __node "$node" </dev/null >>"$nd/node.out" 2>&1
        echo $! >"$nd/unshare.pid"
    done

    tb__spawn slurmctld -D -i -f "$TB_CONF" </dev/null >>"$TB_DIR/log/slurmctld.out" 2>&1
    echo $! >"$TB_DIR/run/slurmctld.pid"

    # PID 1 of each node is the only child of its unshare.
    for n in $(seq 1 "$TB_NODES"); do
        nd=$TB_DIR/nodes/node$n
        for i in $(seq 1 100); do
            local child
            child=$(cat "/proc/$(cat "$nd/unshare.pid")/task/"*/children 2>/dev/null | awk '{print $1}')
            [ -n "$child" ] && { echo "$child" >"$nd/pid1"; break; }
            sleep 0.02
        done
        [ -s "$nd/pid1" ] || { tb_log "node$n did not start: $(tail -3 "$nd/node.out")"; return 1; }
    done

    # Up when every node is idle.
    local deadline=$((SECONDS + 30)) idle
    while [ $SECONDS -lt $deadline ]; do
        [ -d "/proc/$(cat "$TB_DIR/run/slurmctld.pid")" ] ||
            { tb_log "slurmctld died: $(tail -3 "$TB_DIR/log/slurmctld.out")"; return 1; }
        idle=$(SLURM_CONF=$TB_CONF timeout 5 sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)
        if [ "$idle" -eq "$TB_NODES" ]; then
            tb__ssh_wait "$deadline" && return 0
            return 1
        fi
        sleep 0.1
    done
    tb_log "nodes not idle after 30 s:"
    SLURM_CONF=$TB_CONF sinfo -N >&2
    tail -5 "$TB_DIR/log/slurmctld.log" "$TB_DIR"/nodes/*/slurmd.log "$TB_DIR"/nodes/*/node.out >&2
    return 1
}

# Waits (until SECONDS reaches $1) for every node's sshd to listen: it writes its pid file then.
tb__ssh_wait() {
    local n nd
    for n in $(seq 1 "$TB_NODES"); do
        nd=$TB_DIR/nodes/node$n
        while [ ! -s "$nd/sshd.pid" ]; do
            [ $SECONDS -lt "$1" ] || { tb_log "sshd of node$n not up: $(tail -3 "$nd/sshd.out")"; return 1; }
            sleep 0.02
        done
    done
}

# Command line (not when sourced).
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    cmd=${1:-}
    shift || true
    case $cmd in
        up)     [ $# -ge 1 ] && TB_NODES=$1; tb_up ;;
        down)   tb_down ;;
        exec)   [ $# -ge 2 ] || { echo "usage: $0 exec NODE CMD..." >&2; exit 2; }; tb_exec "$@" ;;
        status) SLURM_CONF=$TB_CONF sinfo -N ;;
        env)    tb_env ;;
        __node) tb__node_main "$1" ;;
        *)      sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    esac
fi
