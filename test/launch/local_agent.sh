#!/bin/sh
# Launch agent for the tests of mpirun --host: mpirun calls it as `local_agent.sh HOST COMMAND...`
# (as it would call ssh); it ignores HOST and runs COMMAND here, so that each "host" is a umpi
# daemon of its own, a node of its own for the job, on this one machine. With LOCAL_AGENT_PIDS
# set, it appends "pid host" of the daemon to that file (exec keeps the pid).
host=$1
shift
if [ -n "${LOCAL_AGENT_PIDS:-}" ]; then
    echo "$$ $host" >>"$LOCAL_AGENT_PIDS"
fi
exec "$@"
