#!/usr/bin/env bash
# Starts and stops a real single-node Slurm cluster on this machine (Debian 12,
# no systemd), so that tests can submit real `sbatch` job arrays and watch them
# with squeue/scontrol. There is deliberately no slurmdbd: sacct is unavailable.
#
# Usage: scripts/slurm_cluster.sh start|stop|status|env
#   start   install packages if missing, start munged, slurmctld and slurmd,
#           wait until the node is idle and a trivial job runs. Idempotent.
#   stop    stop slurmd, slurmctld and munged (TERM, then KILL after 10 s).
#   status  exit 0 and print sinfo when the cluster answers, exit 1 otherwise.
#   env     print `export SLURM_CONF=...` when the config is not at the path the
#           Slurm commands read by default (prints nothing otherwise).
#
# Environment:
#   LAB_SLURM_STATE  state dir for spool, logs and pid files (/var/lib/lab-slurm)
#   LAB_SLURM_CONF   where slurm.conf is written (/etc/slurm/slurm.conf, the
#                    path Debian's slurm-client reads without SLURM_CONF)
set -euo pipefail

STATE="${LAB_SLURM_STATE:-/var/lib/lab-slurm}"
DEFAULT_CONF=/etc/slurm/slurm.conf
CONF="${LAB_SLURM_CONF:-$DEFAULT_CONF}"
MARKER="# written by lab scripts/slurm_cluster.sh"
CLUSTER=lab
PARTITIONS=(debug cpu2)
# munged keeps its default socket so that Slurm's auth/munge plugin and the
# munge/unmunge clients find it without extra configuration.
MUNGE_KEY=/etc/munge/munge.key
MUNGE_RUN=/run/munge
MUNGE_PID="$MUNGE_RUN/munged.pid"
CTLD_PID="$STATE/slurmctld.pid"
SLURMD_PID="$STATE/slurmd.pid"
CTLD_LOG="$STATE/log/slurmctld.log"
SLURMD_LOG="$STATE/log/slurmd.log"
WAIT_S="${LAB_SLURM_WAIT:-60}"

# The daemons must run as root (SlurmUser=root, munged needs its key); use sudo
# only when we are not root already.
if [[ $(id -u) -eq 0 ]]; then SUDO=(); else SUDO=(sudo); fi

# Non-default config path: every Slurm command (ours and the tests') needs it.
if [[ "$CONF" != "$DEFAULT_CONF" ]]; then export SLURM_CONF="$CONF"; fi

NODE="$(hostname -s)"

log() { echo "slurm: $*" >&2; }

# Show the end of every log that can explain a failure, then exit 1.
fail() {
    echo "slurm: start failed: $*" >&2
    local f
    for f in "$CTLD_LOG" "$SLURMD_LOG" /var/log/munge/munged.log; do
        if "${SUDO[@]}" test -r "$f"; then
            echo "---- last lines of $f ----" >&2
            "${SUDO[@]}" tail -n 20 "$f" >&2 || true
        fi
    done
    exit 1
}

# running PID: true when PID is a live process. A zombie counts as dead: the
# daemons are reparented to PID 1, which here may reap them only seconds later,
# and kill -0 succeeds on a zombie.
running() {
    local stat
    "${SUDO[@]}" kill -0 "$1" 2>/dev/null || return 1
    stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
    stat="${stat##*) }"
    [[ "${stat:0:1}" != Z ]]
}

# pid_alive FILE: true when FILE names a running process.
pid_alive() {
    local pid
    pid="$("${SUDO[@]}" cat "$1" 2>/dev/null || true)"
    [[ "$pid" =~ ^[0-9]+$ ]] && running "$pid"
}

# stop_pid NAME FILE: TERM the process, wait up to 10 s, then KILL it.
stop_pid() {
    local name="$1" file="$2" pid i
    pid="$("${SUDO[@]}" cat "$file" 2>/dev/null || true)"
    if [[ ! "$pid" =~ ^[0-9]+$ ]] || ! running "$pid"; then
        "${SUDO[@]}" rm -f "$file"
        return 0
    fi
    "${SUDO[@]}" kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
        running "$pid" || break
        sleep 0.1
    done
    if running "$pid"; then
        log "$name (pid $pid) ignored TERM for 10 s, killing it"
        "${SUDO[@]}" kill -KILL "$pid" 2>/dev/null || true
    fi
    "${SUDO[@]}" rm -f "$file"
}

install_packages() {
    local pkgs=(slurmctld slurmd slurm-client munge) missing=() p
    for p in "${pkgs[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    [[ ${#missing[@]} -eq 0 ]] && return 0
    log "installing ${missing[*]}"
    local apt=("${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends)
    # Only refresh the package lists when the install fails: stale lists are the
    # usual cause, and `apt-get update` costs time on every other run.
    if ! "${apt[@]}" "${missing[@]}" >/dev/null; then
        "${SUDO[@]}" apt-get update -qq
        "${apt[@]}" "${missing[@]}" >/dev/null || fail "apt-get install ${missing[*]}"
    fi
}

munge_works() { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }

start_munge() {
    # munged refuses a key that is not private to the munge user.
    if ! "${SUDO[@]}" test -s "$MUNGE_KEY"; then
        log "creating $MUNGE_KEY"
        "${SUDO[@]}" install -d -o munge -g munge -m 700 /etc/munge
        if command -v mungekey >/dev/null; then
            "${SUDO[@]}" mungekey --create --keyfile="$MUNGE_KEY" --force
        else
            "${SUDO[@]}" dd if=/dev/urandom of="$MUNGE_KEY" bs=1 count=1024 status=none
        fi
    fi
    "${SUDO[@]}" chown munge:munge "$MUNGE_KEY"
    "${SUDO[@]}" chmod 400 "$MUNGE_KEY"
    munge_works && return 0
    # Without systemd nothing creates the runtime dir; munged insists that it
    # belongs to the munge user and is not writable by others.
    "${SUDO[@]}" install -d -o munge -g munge -m 755 "$MUNGE_RUN" /var/log/munge /var/lib/munge
    # --force: a socket left behind by a killed munged would make it refuse.
    "${SUDO[@]}" runuser -u munge -- /usr/sbin/munged --force --pid-file="$MUNGE_PID" ||
        fail "munged did not start"
    local i
    for ((i = 0; i < 50; i++)); do
        munge_works && return 0
        sleep 0.1
    done
    fail "munge -n | unmunge does not work"
}

write_conf() {
    if "${SUDO[@]}" test -e "$CONF" && ! "${SUDO[@]}" grep -qxF "$MARKER" "$CONF"; then
        local backup
        backup="$CONF.bak.$(date +%Y%m%d%H%M%S)"
        log "backing up existing $CONF to $backup"
        "${SUDO[@]}" cp -p "$CONF" "$backup"
    fi
    # `slurmd -C` prints the node's real hardware as a NodeName line, e.g.
    # "NodeName=vm CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2
    # ThreadsPerCore=1 RealMemory=24036". Memory is not a consumable here
    # (CR_Core), but a RealMemory above what slurmd measures at registration
    # drains the node, so leave ~5% headroom.
    local hw mem
    hw="$(slurmd -C | grep -m1 '^NodeName=')" || fail "slurmd -C printed no NodeName line"
    mem="$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$hw")"
    mem=$((${mem:-1024} * 95 / 100))
    hw="$(sed -e "s/^NodeName=[^ ]*//" -e "s/RealMemory=[0-9]*/RealMemory=$mem/" <<<"$hw")"

    local tmp
    tmp="$(mktemp)"
    cat >"$tmp" <<EOF
$MARKER
# Single-node test cluster; regenerated on every start, edits are lost.
ClusterName=$CLUSTER
# NodeAddr/SlurmctldHost address pinned to loopback: no dependence on DNS.
SlurmctldHost=$NODE(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$STATE/ctld
SlurmdSpoolDir=$STATE/slurmd
SlurmctldPidFile=$CTLD_PID
SlurmdPidFile=$SLURMD_PID
SlurmctldLogFile=$CTLD_LOG
SlurmdLogFile=$SLURMD_LOG
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups: these two plugins need no cgroup.conf and work in a VM/container.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
# One core per job so that array tasks run side by side.
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# No slurmdbd, no job completion log: sacct is unavailable on purpose.
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
# No mail on this box; the default /usr/bin/mail is missing and logs an error.
MailProg=/bin/true
# A node that was down comes back by itself once slurmd registers.
ReturnToService=2
SlurmctldTimeout=10
SlurmdTimeout=10
MessageTimeout=5
InactiveLimit=0
KillWait=5
# Finished jobs stay visible to squeue/scontrol for 5 minutes.
MinJobAge=300
# Schedule on every submit/completion and at least every 2 s.
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2,sched_min_interval=100000,bf_interval=1
MaxArraySize=10001
NodeName=$NODE NodeAddr=127.0.0.1 $hw State=UNKNOWN
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
PartitionName=cpu2 Nodes=$NODE Default=NO MaxTime=INFINITE State=UP
EOF
    "${SUDO[@]}" install -d -m 755 "$(dirname "$CONF")"
    "${SUDO[@]}" install -m 644 "$tmp" "$CONF"
    rm -f "$tmp"
}

# wait_pidfile NAME FILE: a daemonising Slurm daemon writes its pid file only
# after the parent has returned, so give it a moment before judging it dead.
wait_pidfile() {
    local i
    for ((i = 0; i < 100; i++)); do
        pid_alive "$2" && return 0
        sleep 0.1
    done
    fail "$1 did not start (no live pid in $2)"
}

node_state() { sinfo -h -N -n "$NODE" -o %t 2>/dev/null | head -n1; }

cluster_answers() { pid_alive "$CTLD_PID" && pid_alive "$SLURMD_PID" && sinfo -h >/dev/null 2>&1; }

# The one line callers may parse; identical whether we started it or not.
up_line() {
    local IFS=,
    echo "slurm: up (node $NODE, partitions ${PARTITIONS[*]})"
}

wait_node_idle() {
    local deadline=$((SECONDS + WAIT_S)) st resumed=0
    while ((SECONDS < deadline)); do
        # slurmd daemonises before it binds its port, so it can die after a
        # successful start; slurmctld meanwhile reports the node state it saved.
        pid_alive "$SLURMD_PID" || fail "slurmd exited"
        pid_alive "$CTLD_PID" || fail "slurmctld exited"
        st="$(node_state || true)"
        case "$st" in
            idle | mix | alloc) return 0 ;;
            down | drain | drng | drained | fail)
                # Left down/drained by an earlier unclean stop: put it back.
                if ((resumed == 0)); then
                    "${SUDO[@]}" scontrol update nodename="$NODE" state=resume >/dev/null 2>&1 || true
                    resumed=1
                fi
                ;;
        esac
        sleep 0.5
    done
    fail "node $NODE not idle after ${WAIT_S}s (state: '${st:-no answer}')"
}

cmd_start() {
    local t0=$SECONDS
    if command -v sinfo >/dev/null && cluster_answers; then
        wait_node_idle
        log "already running"
        up_line
        return 0
    fi
    install_packages
    start_munge
    "${SUDO[@]}" install -d -m 755 "$STATE" "$STATE/ctld" "$STATE/slurmd" "$STATE/log"
    write_conf
    local cflag=()
    [[ "$CONF" != "$DEFAULT_CONF" ]] && cflag=(-f "$CONF")
    # Both daemonise themselves (no -D) and write the pid files named in the
    # config; slurmctld first so that slurmd can register at once.
    if ! pid_alive "$CTLD_PID"; then
        "${SUDO[@]}" slurmctld "${cflag[@]}" || fail "slurmctld did not start"
        wait_pidfile slurmctld "$CTLD_PID"
    fi
    local i
    for ((i = 0; i < 100; i++)); do
        scontrol ping >/dev/null 2>&1 && break
        sleep 0.2
    done
    scontrol ping >/dev/null 2>&1 || fail "slurmctld does not answer scontrol ping"
    if ! pid_alive "$SLURMD_PID"; then
        "${SUDO[@]}" slurmd "${cflag[@]}" || fail "slurmd did not start"
        wait_pidfile slurmd "$SLURMD_PID"
    fi
    wait_node_idle
    # A job that really runs proves slurmd, munge credentials and step launch.
    timeout "$WAIT_S" srun -N1 -n1 -t 1 -J lab-slurm-check true >/dev/null 2>&1 ||
        fail "trivial job 'srun -N1 -n1 true' did not complete"
    up_line
    log "started in $((SECONDS - t0))s"
}

cmd_stop() {
    # slurmd first, so that slurmctld does not mark the node down meanwhile.
    stop_pid slurmd "$SLURMD_PID"
    stop_pid slurmctld "$CTLD_PID"
    stop_pid munged "$MUNGE_PID"
    echo "slurm: stopped"
}

cmd_status() {
    if command -v sinfo >/dev/null && cluster_answers; then
        sinfo
        return 0
    fi
    echo "slurm: not running" >&2
    return 1
}

cmd_env() {
    if [[ "$CONF" != "$DEFAULT_CONF" ]]; then
        printf 'export SLURM_CONF=%q\n' "$CONF"
    fi
}

case "${1:-}" in
    start) cmd_start ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    env) cmd_env ;;
    *)
        echo "usage: $0 start|stop|status|env" >&2
        exit 2
        ;;
esac
