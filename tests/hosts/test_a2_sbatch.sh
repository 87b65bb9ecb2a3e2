#!/bin/bash
# scripts/cluster/a2.sbatch on a real one-node Slurm cluster on this machine: munged,
# slurmctld and slurmd from Debian's slurm-wlm, started here with a generated slurm.conf
# (NodeName=localhost CPUs=2, one partition) and everything in a temporary folder (own
# ports, munge socket and key), then the template submitted with 2 tasks on the one node
# (its three strategies, gather-scatter, allreduce and ddp, as three job steps, on synthetic
# data, a short run). Checks that the job completed, each rank of each step trained (its
# --metrics summary), both ranks ended with the same weights (model_digest), and ddl took
# its rank, world and store from Slurm's variables. Daemons are stopped on any
# exit. Skips (77) when not root or slurm-wlm/munge are missing.
set -u
: "${TRAIN_CIFAR:?}"
here=$(cd "$(dirname "$0")" && pwd)
template=$here/../../scripts/cluster/a2.sbatch
[ "$(id -u)" = 0 ] || { echo "skipped: needs root (slurmd runs jobs as their user, munged's key is ours)"; exit 77; }
for p in munged slurmctld slurmd sbatch squeue scontrol sacct sinfo scancel; do
  command -v "$p" >/dev/null || { echo "skipped: $p missing (apt-get install slurm-wlm munge)"; exit 77; }
done
command -v python3 >/dev/null || { echo "skipped: python3 is needed to read the metrics"; exit 77; }

tmp=$(mktemp -d /tmp/ddl_a2_slurm.XXXXXX)
chmod 755 "$tmp"  # slurmd's spool and the job's output live here
pids=()
cleanup() {
  # Our daemons only, by the pids we started (never by name: other tests may run Slurm).
  # A cancelled job's steps end under slurmd: wait (bounded) until squeue no longer lists it,
  # so that stopping the daemons leaves no rank running.
  if [ -f "$tmp/slurm.conf" ] && [ -n "${jobid:-}" ]; then
    SLURM_CONF=$tmp/slurm.conf timeout 10 scancel --quiet --full "$jobid" 2>/dev/null
    for _ in $(seq 30); do
      [ -z "$(SLURM_CONF=$tmp/slurm.conf timeout 5 squeue -h -j "$jobid" -o %i 2>/dev/null)" ] && break
      sleep 0.5
    done
  fi
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  sleep 0.5
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
logs() { for f in "$tmp"/*.log "$tmp"/out/*.log "$tmp"/job.out; do [ -f "$f" ] && { echo "--- $f"; tail -n 15 "$f"; }; done; }

# Free ports for slurmctld and slurmd, different for every run of this test.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')

# munge: a fresh key and socket of our own.
dd if=/dev/urandom of="$tmp/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$tmp/munge.key"
munged --force --foreground --key-file="$tmp/munge.key" --socket="$tmp/munge.sock" --pid-file="$tmp/munged.pid" \
  --log-file="$tmp/munged.log" --seed-file="$tmp/munged.seed" >"$tmp/munged.stdout" 2>&1 &
pids+=($!)

mkdir -p "$tmp/state" "$tmp/spool" "$tmp/out"
cat >"$tmp/slurm.conf" <<CONF
ClusterName=ddla2$$
SlurmctldHost=localhost
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$tmp/munge.sock
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
SlurmdTimeout=30
NodeName=localhost CPUs=2 State=UNKNOWN
PartitionName=ddl Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$tmp/slurm.conf
for i in $(seq 50); do [ -S "$tmp/munge.sock" ] && break; sleep 0.1; done
slurmctld -D -i -f "$SLURM_CONF" >"$tmp/slurmctld.stdout" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N localhost >"$tmp/slurmd.stdout" 2>&1 &
pids+=($!)

# The node comes up idle within seconds (ReturnToService=2).
up=0
for i in $(seq 120); do
  state=$(timeout 5 sinfo -h -n localhost -o %t 2>/dev/null)
  case "$state" in idle*) up=1; break ;; esac
  sleep 0.5
done
check "a one-node Slurm cluster came up (node state: ${state:-none})" "[ $up = 1 ]"
[ $up = 1 ] || { logs; exit 1; }

# The template as written, with 2 tasks on the one node (command-line options override its
# #SBATCH lines); its three strategies on synthetic data, a few steps each. The ranks
# authenticate to the store with this cluster's munged (DDL_MUNGE_SOCKET, as srun passes
# the environment on; docs/dist.md, "Launchers and the job token").
syncs="gather-scatter allreduce ddp"
jobid=$(cd "$tmp" && A2_DATASET=synthetic A2_MODEL=mlp A2_GLOBAL_BATCH=32 A2_OUT="$tmp/out" \
  DDL_MUNGE_SOCKET="$tmp/munge.sock" \
  TRAIN_CIFAR="$TRAIN_CIFAR" A2_ARGS="--train-samples 256 --test-samples 64" \
  sbatch --parsable --nodes=1 --ntasks=2 --ntasks-per-node=2 --cpus-per-task=1 --mem-per-cpu=0 \
  --time=00:05:00 --output="$tmp/job.out" "$template" 2>"$tmp/sbatch.err")
check "sbatch accepted the template (job ${jobid:-none})" "[ -n '$jobid' ]"
[ -n "$jobid" ] || { cat "$tmp/sbatch.err"; logs; exit 1; }

# Wait for the job to leave the queue (at most 3 minutes).
state=
for i in $(seq 360); do
  state=$(timeout 5 scontrol show job "$jobid" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
  case "$state" in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) break ;; esac
  sleep 0.5
done
check "the job completed (state $state)" "[ '$state' = COMPLETED ]"
summary() { python3 -c '
import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if "\"summary\"" in l][-1]
print(s[sys.argv[2]])' "$1" "$2" 2>/dev/null; }
for s in $syncs; do
  d0=$(summary "$tmp/out/$s.rank0.jsonl" model_digest) d1=$(summary "$tmp/out/$s.rank1.jsonl" model_digest)
  for r in 0 1; do
    check "$s: rank $r trained (its summary has train and test figures)" \
      "[ -n \"\$(summary '$tmp/out/$s.rank$r.jsonl' train_loss)\" ] && [ -n \"\$(summary '$tmp/out/$s.rank$r.jsonl' test_accuracy_pct)\" ]"
  done
  check "$s: both ranks ended with the same weights (model_digest $d0, $d1)" "[ -n '$d0' ] && [ '$d0' = '$d1' ]"
  check "$s: 2 ranks of one world, from Slurm's variables (no ddl launcher)" \
    "grep -q 'world size 2, sync $s' '$tmp/out/$s.log' && [ \$(grep -c '^\[rank [01]/2\] ' '$tmp/out/$s.log') -gt 0 ]"
  check "$s: the batch script reported the step done" "grep -q 'a2: $s done' '$tmp/job.out'"
done
[ $fail = 0 ] || logs
exit $fail
