# shellcheck shell=bash disable=SC2034  # sourced: its variables are for the caller
# Shared by the test_ddlrun_hosts*.sh scripts (ddlrun --hosts, docs/cluster.md): a scratch
# folder, check(), copies of the programs (so a rebuild cannot pull them from under a run),
# and the checks that a job left nothing behind. Sourced with `here` set; needs root.
: "${DDLRUN:?}" "${TRAIN_CIFAR:?}" "${DDL_BENCH:?}"
command -v ip >/dev/null || { echo "skipped: ip (iproute2) is not installed: ddlrun --hosts needs it"; exit 77; }
for p in "$DDLRUN" "$TRAIN_CIFAR" "$DDL_BENCH"; do
  [ -x "$p" ] || { echo "FAIL $p is not built (ninja -C build)"; exit 1; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ddlrun_hosts.XXXXXX")
BG_PIDS=()   # background ddlruns, killed on exit
JOBS=()      # every job id seen: what the exit trap removes if a check failed
fail=0
cleanup_all() {
  local p
  for p in "${BG_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  for p in "${BG_PIDS[@]}"; do wait "$p" 2>/dev/null; done
  "$DDLRUN" --cleanup >/dev/null 2>&1  # whatever a killed ddlrun of ours left behind
  rm -rf "$tmp"
}
trap cleanup_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

# Copies (RUNPATH $ORIGIN/.. finds libddl.so beside the apps/ and bench/ folders).
mkdir -p "$tmp/bin/apps" "$tmp/bin/bench"
cp "$DDLRUN" "$TRAIN_CIFAR" "$tmp/bin/apps/" && cp "$DDL_BENCH" "$tmp/bin/bench/" &&
  cp "$(dirname "$TRAIN_CIFAR")/../libddl.so" "$tmp/bin/" || { echo "FAIL cannot copy the programs"; exit 1; }
DDLRUN=$tmp/bin/apps/ddlrun TRAIN_CIFAR=$tmp/bin/apps/train_cifar DDL_BENCH=$tmp/bin/bench/ddl-bench
[ "$(id -u)" = 0 ] || echo "note: not root; ddlrun --hosts needs CAP_NET_ADMIN and CAP_SYS_ADMIN" >&2

# The MLP on synthetic data, small (tests/hosts/link_lib.sh): STEPS steps per rank.
train_flags() {  # train_flags WORLD STEPS
  echo "--dataset synthetic --model mlp --threads 1 --epochs 1 --batch-size 32" \
    "--train-samples $(($1 * 32 * $2)) --test-samples 64"
}

# job_of LOG: the job id ddlrun printed ("ddlrun: job ddl123-abcd: ...").
job_of() { sed -n 's/^ddlrun: job \([^:]*\):.*/\1/p' "$1" | head -n 1; }

# leftovers JOB: what of that job still exists (empty when nothing): namespaces, its state
# folder, cgroups; the job's veths and qdiscs live only in its namespaces.
leftovers() {
  local job=$1 d
  [ -n "$job" ] || { echo "no job id"; return; }
  ip netns list 2>/dev/null | awk -v j="$job-" 'index($1, j) == 1 { print "netns " $1 }'
  [ -e "/run/ddlrun/$job" ] && echo "state /run/ddlrun/$job"
  for d in /sys/fs/cgroup/*/ddlrun-"$job" /sys/fs/cgroup/ddlrun-"$job"; do
    [ -e "$d" ] && echo "cgroup $d"
  done
}

# alive PIDS...: which of them still run. Not a zombie, nor a process that has released its
# memory and namespaces and only waits in exit (empty cmdline): after a SIGKILLed launcher
# both wait for the machine's pid 1 to reap the orphans (docs/cluster.md, "Cleaning up").
alive() {
  local p
  for p in "$@"; do
    kill -0 "$p" 2>/dev/null && [ "$(awk '{ print $3 }' "/proc/$p/stat" 2>/dev/null)" != Z ] &&
      [ -n "$(tr -d '\0' <"/proc/$p/cmdline" 2>/dev/null)" ] && echo "$p"
  done
}

# json_field FILE FIELD: the FIELD of the last line of a metrics file that has it.
json_field() { grep -o "\"$2\":[^,}]*" "$1" | tail -n 1 | cut -d: -f2; }
