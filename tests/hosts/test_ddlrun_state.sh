#!/bin/bash
# ddlrun's job records (cluster/state.h) in a private state folder
# (DDLRUN_STATE_DIR), so other jobs on this machine are never read or touched:
#  1. a job folder whose state file is empty (a launcher killed before its first record) is
#     removed by --cleanup once a minute old, with the namespaces named after the job; a
#     younger one is left alone;
#  2. a dead job's namespaces that its record does not name (<job>-*) are removed too;
#  3. a full state folder (a small tmpfs): ddlrun --hosts refuses to build, naming the
#     record, and leaves no namespace or folder behind; so does one with room for the first
#     record only;
#  4. a launcher SIGKILLed once its hosts are up: --cleanup removes all its record names.
# Needs root and ip; skipped (77) otherwise. Every name made here holds this shell's pid.
: "${DDLRUN:?}"
[ "$(id -u)" = 0 ] || { echo "skipped: needs root (network namespaces, mount)"; exit 77; }
command -v ip >/dev/null || { echo "skipped: ip (iproute2) is not installed"; exit 77; }
[ -x "$DDLRUN" ] || { echo "FAIL $DDLRUN is not built"; exit 1; }
st=$(mktemp -d "${TMPDIR:-/tmp}/ddlrun_state.$$.XXXXXX")
old=ddl$$9-beef young=ddl$$8-beef partial=ddl$$7-beef
fail=0
made_ns=()
cleanup_all() {
  local n
  for n in "${made_ns[@]}"; do ip netns del "$n" 2>/dev/null; done
  # Namespaces a ddlrun of ours made (its job id starts with its pid).
  for n in $(ip netns list 2>/dev/null | awk '{ print $1 }'); do
    for p in "${DDLRUN_PIDS[@]}"; do case $n in "ddl$p-"*) ip netns del "$n" 2>/dev/null ;; esac; done
  done
  for m in "$st/full" "$st/one"; do mountpoint -q "$m" && umount "$m"; done
  rm -rf "$st"
}
DDLRUN_PIDS=()
trap cleanup_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
add_ns() { ip netns add "$1" && made_ns+=("$1"); }
has_ns() { ip netns list | awk '{ print $1 }' | grep -qx "$1"; }

# 1 and 2: records left by dead launchers.
mkdir -p "$st/root/$old" "$st/root/$young" "$st/root/$partial"
: >"$st/root/$old/state"
: >"$st/root/$young/state"
touch -d '2 minutes ago' "$st/root/$old/state" "$st/root/$old"
printf 'launcher 999999999 1\nnetns %s-sw\n' "$partial" >"$st/root/$partial/state"
add_ns "$old-host0" && add_ns "$partial-sw" && add_ns "$partial-host1" || { echo "FAIL cannot add namespaces"; exit 1; }
DDLRUN_STATE_DIR=$st/root "$DDLRUN" --cleanup >"$st/cleanup" 2>&1
code=$?
check "--cleanup exits 0 ($code)" "[ $code = 0 ]"
check "an empty state file a minute old: folder and <job>-* namespace removed" \
  "[ ! -e '$st/root/$old' ] && ! has_ns '$old-host0'"
check "an empty state file just made: left alone, saying so" \
  "[ -e '$st/root/$young' ] && grep -q '$young has an empty state file less than a minute old' '$st/cleanup'"
check "a dead job: the recorded and the unrecorded namespace removed" \
  "[ ! -e '$st/root/$partial' ] && ! has_ns '$partial-sw' && ! has_ns '$partial-host1'"

# 3: no room for the record. ddlrun's job id starts with its pid.
build_in() {  # build_in STATE_DIR LOG: runs a 2-host job there; prints ddlrun's exit code
  DDLRUN_STATE_DIR=$1 "$DDLRUN" --hosts 2 --link 100mbit true >"$2" 2>&1 &
  local pid=$!
  DDLRUN_PIDS+=("$pid")
  wait "$pid"
  echo "$? $pid"
}
mkdir -p "$st/full" "$st/one"
mount -t tmpfs -o size=4k,mode=755 "ddlrun-state-test-$$" "$st/full" &&
  mount -t tmpfs -o size=4k,mode=755 "ddlrun-state-test-$$" "$st/one" || { echo "FAIL cannot mount a tmpfs"; exit 1; }
dd if=/dev/zero of="$st/full/fill" bs=4k count=4 2>/dev/null
read -r code pid < <(build_in "$st/full" "$st/full.log")
check "full state folder: ddlrun fails ($code) naming the record" \
  "[ $code != 0 ] && grep -q 'record --cleanup needs' '$st/full.log'"
check "full state folder: no namespace of ddl$pid-* and no job folder" \
  "! ip netns list | grep -q '^ddl$pid-' && [ -z \"\$(ls '$st/full' | grep -v fill)\" ]"
read -r code pid < <(build_in "$st/one" "$st/one.log")
check "room for one record: ddlrun fails ($code) naming the record" \
  "[ $code != 0 ] && grep -q 'record --cleanup needs' '$st/one.log'"
check "room for one record: no namespace of ddl$pid-* and no job folder" \
  "! ip netns list | grep -q '^ddl$pid-' && [ -z \"\$(ls -A '$st/one')\" ]"
# 4: a launcher SIGKILLed after building: its record names everything, --cleanup removes it.
mkdir -p "$st/live"
DDLRUN_STATE_DIR=$st/live "$DDLRUN" --hosts 2 --link 100mbit sleep 100 >"$st/killed.log" 2>&1 &
pid=$!
DDLRUN_PIDS+=("$pid")
for _ in $(seq 300); do grep -q 'host1 10' "$st/killed.log" && break; sleep 0.1; done
kill -KILL "$pid"
wait "$pid" 2>/dev/null
job=$(sed -n 's/^ddlrun: job \([^:]*\):.*/\1/p' "$st/killed.log" | head -n 1)
check "SIGKILL: job '$job' left its record and namespaces" \
  "[ -n '$job' ] && grep -q '^netns $job-host1\$' '$st/live/$job/state' && has_ns '$job-host1'"
DDLRUN_STATE_DIR=$st/live "$DDLRUN" --cleanup >"$st/cleanup2" 2>&1
code=$?
check "SIGKILL: --cleanup exits 0 ($code) and removes the record and every namespace of the job" \
  "[ $code = 0 ] && [ -z \"\$(ls -A '$st/live')\" ] && ! ip netns list | grep -q '^$job-'"
[ "$fail" = 0 ] || for f in cleanup full.log one.log killed.log cleanup2; do echo "--- $f:"; tail -n 8 "$st/$f"; done
exit "$fail"
