#!/usr/bin/env bash
# A real one-node SLURM cluster on localhost, self-contained in one directory, for the cluster test.
#
#   tests/cluster/local_slurm.sh start DIR    start munged, slurmctld and slurmd with their files under DIR
#   tests/cluster/local_slurm.sh stop DIR     stop them, by the PIDs recorded under DIR
#
# Needs Debian's slurmctld, slurmd, slurm-client and munge packages (.ci/run installs them) and root (slurmd
# runs jobs as their submitting user). The configuration, munge key and socket, state, spool, logs and PID
# files all live in DIR, on ports of their own. One thing lives outside: /etc/slurm/slurm.conf (and gres.conf)
# become links to DIR's, because Snakemake's SLURM job step drops SLURM_CONF from the environment of the `srun`
# it starts inside each job, which then only finds the default path. A slurm.conf that is not such a link is
# never touched: `start` refuses to run beside a real cluster's configuration. `stop` removes the links.
#
# Environment: FAKE_GPUS (default 2) devices exposed as gres/gpu, so that `--gpus=1` jobs are scheduled and
# get CUDA_VISIBLE_DEVICES; CPUS (default: the machine's) CPUs of the node; MIN_JOB_AGE (default 300) seconds
# a finished job stays visible to squeue, which is how Snakemake's SLURM executor sees it finish when there
# is no accounting database (sacct).
set -euo pipefail

action=${1:?usage: $0 start|stop DIR}
dir=${2:?usage: $0 start|stop DIR}
FAKE_GPUS=${FAKE_GPUS:-2}
CPUS=${CPUS:-$(nproc)}
MIN_JOB_AGE=${MIN_JOB_AGE:-300}
CTLD_PORT=${CTLD_PORT:-16817}
SLURMD_PORT=${SLURMD_PORT:-16818}

say() { echo "[local_slurm] $*" >&2; }

stop_pid() {  # name pidfile: TERM, then KILL after 10 s
    local name=$1 file=$2 pid
    [ -s "$file" ] || return 0
    pid=$(cat "$file")
    if kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
        kill -0 "$pid" 2>/dev/null && { say "$name ($pid) did not stop: killing it"; kill -9 "$pid" 2>/dev/null || true; }
    fi
    rm -f "$file"
}

ETC=/etc/slurm
ours() {  # is $ETC/$1 our link into a local_slurm directory?
    [ -L "$ETC/$1" ] && [ -e "$(dirname "$(readlink "$ETC/$1")")/local_slurm.dir" ]
}

if [ "$action" = stop ]; then
    stop_pid slurmd "$dir/slurmd.pid"
    stop_pid slurmctld "$dir/slurmctld.pid"
    stop_pid munged "$dir/munged.pid"
    for f in slurm.conf gres.conf; do ours "$f" && rm -f "$ETC/$f"; done
    exit 0
fi
[ "$action" = start ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

for cmd in munged slurmctld slurmd sbatch squeue scontrol; do
    command -v "$cmd" >/dev/null || { say "$cmd not found: install Debian's slurmctld slurmd slurm-client munge"; exit 3; }
done
[ "$(id -u)" = 0 ] || { say "must run as root (slurmd starts jobs as their submitting user)"; exit 3; }

for f in slurm.conf gres.conf; do
    if [ -L "$ETC/$f" ] && [ ! -e "$ETC/$f" ]; then  # a link into a test directory since deleted
        rm -f "$ETC/$f"
    elif [ -e "$ETC/$f" ]; then
        ours "$f" || { say "$ETC/$f exists and is not ours: not starting a test cluster beside it"; exit 3; }
    fi
done
# a test cluster left running by an earlier run (killed before its stop) holds the ports: stop it first
if ours slurm.conf; then
    old=$(dirname "$(readlink "$ETC/slurm.conf")")
    [ "$old" = "$(cd "$dir" 2>/dev/null && pwd)" ] || bash "$0" stop "$old"
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
touch "$dir/local_slurm.dir"
chmod 0700 "$dir"
mkdir -p "$dir/state" "$dir/spool" "$dir/gpus"
host=$(hostname -s)

# munge: our own key and socket
[ -s "$dir/munge.key" ] || dd if=/dev/urandom of="$dir/munge.key" bs=1 count=1024 status=none
chmod 0400 "$dir/munge.key"
munged --force --key-file="$dir/munge.key" --socket="$dir/munge.sock" --pid-file="$dir/munged.pid" \
    --log-file="$dir/munged.log" --seed-file="$dir/munge.seed"
for _ in $(seq 50); do munge -S "$dir/munge.sock" -n 2>/dev/null | unmunge -S "$dir/munge.sock" >/dev/null 2>&1 && break; sleep 0.1; done

# one device file per fake GPU: gres/gpu counts them and sets CUDA_VISIBLE_DEVICES (links to /dev/null are
# character devices, which it needs)
gres_node=""
if [ "$FAKE_GPUS" -gt 0 ]; then
    for i in $(seq 0 $((FAKE_GPUS - 1))); do ln -sfn /dev/null "$dir/gpus/nvidia$i"; done
    gres_node="Gres=gpu:$FAKE_GPUS"
fi
mem_mb=$(awk '/^MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)

cat > "$dir/slurm.conf" <<CONF
ClusterName=nmtci
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.sock,cred_expire=10
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
SchedulerType=sched/backfill
ReturnToService=2
MinJobAge=$MIN_JOB_AGE
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MailProg=/bin/true
GresTypes=gpu
NodeName=$host NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$mem_mb $gres_node State=UNKNOWN
PartitionName=ci Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
{
    echo "AutoDetect=off"
    [ "$FAKE_GPUS" -gt 0 ] && echo "NodeName=$host Name=gpu File=$dir/gpus/nvidia[0-$((FAKE_GPUS - 1))]"
} > "$dir/gres.conf"

mkdir -p "$ETC"
ln -sfn "$dir/slurm.conf" "$ETC/slurm.conf"
ln -sfn "$dir/gres.conf" "$ETC/gres.conf"
export SLURM_CONF="$dir/slurm.conf"
slurmctld -f "$SLURM_CONF"
for _ in $(seq 100); do scontrol ping 2>/dev/null | grep -q ' is UP' && break; sleep 0.1; done
slurmd -f "$SLURM_CONF"
state=""
for _ in $(seq 150); do
    state=$(sinfo -h -N -n "$host" -o '%T' 2>/dev/null | head -1)
    case "$state" in idle|mixed|allocated) break ;; esac
    sleep 0.2
done
case "$state" in
    idle|mixed|allocated) say "node $host is $state: $CPUS CPUs, $FAKE_GPUS fake GPUs (SLURM_CONF=$SLURM_CONF)" ;;
    *) say "node $host is not usable (state '$state'):"; tail -n 20 "$dir/slurmctld.log" "$dir/slurmd.log" >&2; exit 1 ;;
esac
