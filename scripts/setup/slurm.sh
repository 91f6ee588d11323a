#!/usr/bin/env bash
# A real Slurm cluster on this one machine, for the slurm backend's tests and for trying it out.
#
# Debian's own packages (slurm-wlm 22.05 on bookworm), run as root. No systemd (every daemon is started
# directly and stopped by its PID file), no cgroups, no container images, nothing listening beyond
# 127.0.0.1. Usage is gathered from /proc (jobacct_gather/linux, every second) and --mem is enforced by
# killing a step whose gathered RSS exceeds it (JobAcctGatherParams=OverMemoryKill). What runs:
#
#   munged                 authentication (unix socket)
#   mariadbd + slurmdbd    accounting, so `sacct` knows finished jobs (SLURM_ACCOUNTING=1, the default)
#   slurmctld              the controller, port 6817
#   slurmd x N             "nodes" node1..nodeN, one process each, ports 6821..6820+N
#
# Usage: scripts/setup/slurm.sh [ACTION]
#   (no action)  install + configure + start; fast when the cluster is already up with this config
#   install      apt-get what is missing: slurm-wlm, munge, and for accounting slurmdbd + mariadb-server
#                (apt-get update once, first; nothing at all when everything is installed)
#   configure    write /etc/slurm/slurm.conf (and slurmdbd.conf); nothing is started
#   start        configure, then start whatever is not running and wait until the nodes are idle
#   stop         cancel every job, stop the daemons (SIGTERM by PID file, SIGKILL after 15 s)
#   reset        stop, wipe Slurm's state, logs and accounting DB (job ids restart at 1), start
#   status       the daemons, sinfo and squeue; exit status 0 only if every node answers
#
# Environment:
#   SLURM_NODES=4            slurmd "nodes" (each replica of an app needs a node of its own)
#   SLURM_CPUS_PER_NODE=2    CPUs each node advertises (bookkeeping only: nothing enforces it)
#   SLURM_MEM_PER_NODE=4000  RealMemory (MB) each node advertises; a job without --mem gets
#                            SLURM_MEM_PER_NODE / SLURM_CPUS_PER_NODE per CPU, and a step is killed above it
#   SLURM_ACCOUNTING=1       0: no slurmdbd/MariaDB (sacct then only reads the jobcomp text file)
#   SLURM_START_TIMEOUT=60   seconds to wait for each daemon / for the nodes to be idle
set -euo pipefail
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

# shellcheck source=scripts/setup/common.sh
source "$(dirname -- "${BASH_SOURCE[0]}")/common.sh"

SLURM_NODES="${SLURM_NODES:-4}"
SLURM_CPUS_PER_NODE="${SLURM_CPUS_PER_NODE:-2}"
SLURM_MEM_PER_NODE="${SLURM_MEM_PER_NODE:-4000}"
SLURM_ACCOUNTING="${SLURM_ACCOUNTING:-1}"
SLURM_START_TIMEOUT="${SLURM_START_TIMEOUT:-60}"

CONF_DIR=/etc/slurm
STATE_DIR=/var/spool/slurmctld
SPOOL_DIR=/var/spool/slurmd
LOG_DIR=/var/log/slurm
FIRST_NODE_PORT=6821
DB_NAME=slurm_acct_db
DB_USER=slurm
DB_PASS=slurm-local-test # reachable through the local unix socket only; a throw-away test cluster

[[ "$SLURM_NODES" =~ ^[1-9][0-9]*$ ]] || die "SLURM_NODES=$SLURM_NODES: expected a positive number"
[[ "$SLURM_ACCOUNTING" == 0 || "$SLURM_ACCOUNTING" == 1 ]] || die "SLURM_ACCOUNTING must be 0 or 1"

# --- helpers ------------------------------------------------------------------------------------------------

# wait_for SECONDS WHAT LOGFILE CMD...: poll CMD every 0.1 s; on timeout show LOGFILE's tail and fail.
wait_for() {
    local secs=$1 what=$2 logfile=$3
    shift 3
    local deadline=$((SECONDS + secs))
    until "$@" >/dev/null 2>&1; do
        if ((SECONDS >= deadline)); then
            log "timed out after ${secs}s waiting for $what"
            show_tail "$logfile"
            die "$what did not come up"
        fi
        sleep 0.1
    done
}

show_tail() {
    local f
    for f in "$@"; do
        [[ -f "$f" ]] || continue
        log "last lines of $f:"
        tail -n 20 "$f" | sed 's/^/    /' >&2
    done
}

pidfile_alive() { [[ -f "$1" ]] && pid_alive "$(cat "$1" 2>/dev/null)"; }

# stop_pidfiles FILE...: SIGTERM every live PID, wait up to 15 s, then SIGKILL the survivors.
stop_pidfiles() {
    local f pid pids=() i alive
    for f in "$@"; do
        if pidfile_alive "$f"; then
            pid="$(cat "$f")"
            log "stopping $(basename "$f" .pid) (pid $pid)"
            kill "$pid" 2>/dev/null || true
            pids+=("$pid")
        fi
        rm -f "$f"
    done
    ((${#pids[@]})) || return 0
    for i in $(seq 1 150); do
        alive=0
        for pid in "${pids[@]}"; do pid_alive "$pid" && alive=1; done
        ((alive)) || return 0
        sleep 0.1
    done
    for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
}

packages() {
    local pkgs=(slurm-wlm slurmctld slurmd slurm-client munge) # slurm-wlm: the three slurm packages
    [[ "$SLURM_ACCOUNTING" == 1 ]] && pkgs+=(slurmdbd mariadb-server)
    echo "${pkgs[@]}"
}

require_cmds() {
    local c
    for c in "$@"; do
        command -v "$c" >/dev/null || die "$c not found: run '$0 install' (or '$0' with no action) first"
    done
}

nodes_idle() { # all N nodes answer and are idle (or busy with jobs: mixed/allocated)
    local n
    n="$(sinfo -h -N -o '%N %t' 2>/dev/null | awk '$2 ~ /^(idle|mix|alloc)$/ {print $1}' | sort -u | wc -l)"
    ((n >= SLURM_NODES))
}

# Up means: the controller answers, the nodes are idle, and (with accounting) the database answers too:
# slurmdbd stays up when MariaDB dies, so sacct then fails while sinfo looks healthy.
accounting_up() { [[ "$SLURM_ACCOUNTING" != 1 ]] || sacct -n -X -S now >/dev/null 2>&1; }
cluster_up() { scontrol ping >/dev/null 2>&1 && nodes_idle && accounting_up; }

# --- actions --------------------------------------------------------------------------------------------------

do_install() {
    require_root
    # postinst scripts cannot start the daemons here (no systemd; policy-rc.d denies it), which is what
    # we want: start() runs them directly.
    # shellcheck disable=SC2046
    apt_install $(packages)
}

render_slurm_conf() {
    local last_port=$((FIRST_NODE_PORT + SLURM_NODES - 1)) acct
    if [[ "$SLURM_ACCOUNTING" == 1 ]]; then
        acct="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=6819"
    else
        acct="AccountingStorageType=accounting_storage/none"
    fi
    cat <<EOF
# Written by jupyter_sched scripts/setup/slurm.sh: a single-host test cluster. Edits are overwritten.
ClusterName=local
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
CredType=cred/munge
# Step credentials expire after 10 s (default 120). A requeued job (a retry) may start again only then.
AuthInfo=cred_expire=10
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$STATE_DIR
SlurmdSpoolDir=$SPOOL_DIR/%n
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd-%n.pid
SlurmctldLogFile=$LOG_DIR/slurmctld.log
SlurmdLogFile=$LOG_DIR/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
ReturnToService=2
MpiDefault=none
# No cgroups in containers/sandboxes: track processes through /proc and bind nothing.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
# Usage (sstat, sacct MaxRSS/TotalCPU) is polled from /proc every second; a step whose polled RSS exceeds
# its memory (--mem) is killed (OverMemoryKill: task/cgroup would need a memory controller per node).
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=1
JobAcctGatherParams=OverMemoryKill
SelectType=select/cons_tres
# Memory is allocated (and so limited) too; a job without --mem gets its CPUs' share of the node.
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=$((SLURM_MEM_PER_NODE / SLURM_CPUS_PER_NODE))
SchedulerType=sched/backfill
# Heterogeneous jobs are started by the backfill scheduler only: run it every second (default 30 s).
SchedulerParameters=bf_interval=1,sched_interval=1
$acct
JobCompType=jobcomp/filetxt
JobCompLoc=$LOG_DIR/jobcomp.log
# Finished jobs stay in the controller (squeue/scontrol) for 5 minutes; sacct knows them after that.
MinJobAge=300
InactiveLimit=0
KillWait=5
Waittime=0
SlurmctldTimeout=30
SlurmdTimeout=60
# Trust the node sizes below rather than the real hardware.
SlurmdParameters=config_overrides
NodeName=node[1-$SLURM_NODES] NodeHostname=localhost NodeAddr=127.0.0.1 Port=[$FIRST_NODE_PORT-$last_port] CPUs=$SLURM_CPUS_PER_NODE RealMemory=$SLURM_MEM_PER_NODE State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
}

render_slurmdbd_conf() {
    cat <<EOF
# Written by jupyter_sched scripts/setup/slurm.sh. Edits are overwritten.
AuthType=auth/munge
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=6819
SlurmUser=root
LogFile=$LOG_DIR/slurmdbd.log
PidFile=/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=$DB_USER
StoragePass=$DB_PASS
StorageLoc=$DB_NAME
EOF
}

# write_if_changed FILE MODE: stdin -> FILE unless identical; returns 0 if the file changed.
write_if_changed() {
    local file=$1 mode=$2 tmp
    tmp="$(mktemp "$file.XXXXXX")"
    cat >"$tmp"
    chmod "$mode" "$tmp"
    if [[ -f "$file" ]] && cmp -s "$tmp" "$file"; then
        rm -f "$tmp"
        return 1
    fi
    mv -f "$tmp" "$file"
    return 0
}

CONFIG_CHANGED=0
do_configure() {
    require_root
    mkdir -p "$CONF_DIR" "$STATE_DIR" "$SPOOL_DIR" "$LOG_DIR"
    if render_slurm_conf | write_if_changed "$CONF_DIR/slurm.conf" 644; then
        CONFIG_CHANGED=1
        log "wrote $CONF_DIR/slurm.conf ($SLURM_NODES nodes x $SLURM_CPUS_PER_NODE CPUs, ${SLURM_MEM_PER_NODE} MB)"
    fi
    if [[ "$SLURM_ACCOUNTING" == 1 ]]; then
        if render_slurmdbd_conf | write_if_changed "$CONF_DIR/slurmdbd.conf" 600; then
            CONFIG_CHANGED=1
            log "wrote $CONF_DIR/slurmdbd.conf"
        fi
    fi
    return 0
}

start_munge() {
    if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then return 0; fi
    if [[ ! -s /etc/munge/munge.key ]]; then
        log "creating the munge key"
        runuser -u munge -- mungekey --create --keyfile=/etc/munge/munge.key
    fi
    install -d -o munge -g munge -m 0755 /run/munge
    log "starting munged"
    runuser -u munge -- /usr/sbin/munged # forks; pid in /run/munge/munged.pid
    wait_for "$SLURM_START_TIMEOUT" munged /var/log/munge/munged.log sh -c 'munge -n | unmunge'
}

start_mariadb() {
    if ! mariadb -e 'select 1' >/dev/null 2>&1; then
        install -d -o mysql -g mysql -m 0755 /run/mysqld
        mkdir -p "$LOG_DIR"
        log "starting mariadbd (unix socket only)"
        # setsid: its own session, so it outlives the shell (or CI job) that started it.
        setsid nohup /usr/sbin/mariadbd --user=mysql --skip-networking \
            --pid-file=/run/mysqld/mysqld.pid --socket=/run/mysqld/mysqld.sock \
            >>"$LOG_DIR/mariadb.log" 2>&1 </dev/null &
        wait_for "$SLURM_START_TIMEOUT" mariadb "$LOG_DIR/mariadb.log" mariadb -e 'select 1'
    fi
    mariadb <<EOF
CREATE DATABASE IF NOT EXISTS $DB_NAME;
CREATE USER IF NOT EXISTS '$DB_USER'@'localhost' IDENTIFIED BY '$DB_PASS';
GRANT ALL ON $DB_NAME.* TO '$DB_USER'@'localhost';
FLUSH PRIVILEGES;
EOF
}

dbd_port_open() { (exec 3<>/dev/tcp/127.0.0.1/6819) 2>/dev/null; }

start_daemons() {
    start_munge
    if [[ "$SLURM_ACCOUNTING" == 1 ]]; then
        start_mariadb
        if ! pidfile_alive /run/slurmdbd.pid; then
            log "starting slurmdbd"
            slurmdbd
        fi
        wait_for "$SLURM_START_TIMEOUT" slurmdbd "$LOG_DIR/slurmdbd.log" dbd_port_open
    fi
    if pidfile_alive /run/slurmctld.pid; then
        if ((CONFIG_CHANGED)); then log "config changed: scontrol reconfigure"; scontrol reconfigure || true; fi
    else
        log "starting slurmctld"
        slurmctld
    fi
    wait_for "$SLURM_START_TIMEOUT" slurmctld "$LOG_DIR/slurmctld.log" scontrol ping
    local n
    for n in $(seq 1 "$SLURM_NODES"); do
        pidfile_alive "/run/slurmd-node$n.pid" && continue
        mkdir -p "$SPOOL_DIR/node$n"
        slurmd -N "node$n"
    done
    log "waiting until $SLURM_NODES nodes are idle"
    local logs=("$LOG_DIR/slurmctld.log")
    for n in $(seq 1 "$SLURM_NODES"); do logs+=("$LOG_DIR/slurmd-node$n.log"); done
    local deadline=$((SECONDS + SLURM_START_TIMEOUT))
    until nodes_idle; do
        if ((SECONDS >= deadline)); then
            log "timed out after ${SLURM_START_TIMEOUT}s waiting for idle nodes"
            sinfo -N >&2 || true
            show_tail "${logs[@]}"
            die "the nodes did not become idle"
        fi
        sleep 0.1
    done
}

do_start() {
    require_root
    require_cmds munged slurmctld slurmd sbatch
    [[ "$SLURM_ACCOUNTING" == 1 ]] && require_cmds slurmdbd mariadbd
    local t0
    t0="$(now)"
    do_configure
    if ((CONFIG_CHANGED)) && pidfile_alive /run/slurmctld.pid; then
        # Node names, ports and sizes are read at daemon start: restart rather than reconfigure.
        log "config changed while the cluster was up: restarting it"
        stop_daemons
    fi
    start_daemons
    log "cluster up in $(elapsed "$t0"): $(sinfo -h -o '%D nodes, partition %P, %c CPUs and %m MB per node')"
}

cancel_all_jobs() {
    pidfile_alive /run/slurmctld.pid || return 0
    local jobs
    jobs="$(squeue -h -o %A 2>/dev/null | sort -u | tr '\n' ' ')"
    [[ -n "${jobs// /}" ]] || return 0
    log "cancelling jobs: $jobs"
    # shellcheck disable=SC2086
    scancel $jobs 2>/dev/null || true
    local i
    for i in $(seq 1 50); do
        [[ -z "$(squeue -h -t running,completing -o %A 2>/dev/null)" ]] && return 0
        sleep 0.1
    done
}

stop_daemons() {
    shopt -s nullglob
    local slurmds=(/run/slurmd-*.pid)
    shopt -u nullglob
    ((${#slurmds[@]})) && stop_pidfiles "${slurmds[@]}"
    stop_pidfiles /run/slurmctld.pid
    stop_pidfiles /run/slurmdbd.pid
}

do_stop() {
    require_root
    cancel_all_jobs
    stop_daemons
    stop_pidfiles /run/mysqld/mysqld.pid /run/munge/munged.pid
}

do_reset() {
    require_root
    do_stop
    log "wiping Slurm state, spool, logs and config"
    rm -rf "$STATE_DIR" "$SPOOL_DIR" "$LOG_DIR" "$CONF_DIR/slurm.conf" "$CONF_DIR/slurmdbd.conf"
    # Job ids restart at 1 without the state dir: drop the accounting DB too, or sacct would answer for a
    # new job with an old job's record of the same id.
    if command -v mariadbd >/dev/null; then
        start_mariadb
        mariadb -e "DROP DATABASE IF EXISTS $DB_NAME"
        [[ "$SLURM_ACCOUNTING" == 1 ]] || stop_pidfiles /run/mysqld/mysqld.pid
    fi
    do_start
}

do_status() {
    local f ok=0
    for f in /run/munge/munged.pid /run/mysqld/mysqld.pid /run/slurmdbd.pid /run/slurmctld.pid /run/slurmd-*.pid; do
        [[ -e "$f" ]] || continue
        if pidfile_alive "$f"; then echo "up    pid $(cat "$f")  $f"; else echo "DEAD  $f"; fi
    done
    if command -v sinfo >/dev/null; then
        if cluster_up; then
            sinfo -N
            squeue
        else
            echo "the cluster is not up (start it: $0)"
            ok=1
        fi
    else
        echo "Slurm is not installed (run: $0)"
        ok=1
    fi
    return "$ok"
}

do_up() {
    if command -v sinfo >/dev/null && cluster_up && [[ -f "$CONF_DIR/slurm.conf" ]] &&
        render_slurm_conf | cmp -s - "$CONF_DIR/slurm.conf"; then
        log "cluster already up: $(sinfo -h -o '%D nodes, partition %P')"
        return 0
    fi
    local t0
    t0="$(now)"
    do_install
    do_start
    log "ready in $(elapsed "$t0")"
}

case "${1:-up}" in
    up) do_up ;;
    install) do_install ;;
    configure) do_configure ;;
    start) do_start ;;
    stop) do_stop ;;
    reset) do_install; do_reset ;;
    status) do_status ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0" ;;
    *) echo "usage: $0 [install|configure|start|stop|reset|status]" >&2; exit 2 ;;
esac
