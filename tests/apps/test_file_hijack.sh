#!/usr/bin/env bash
# Another local user cannot redirect the files root's train_cifar and ddlrun write (suite
# "apps"). In a shared folder (mode 0777, not sticky) the user nobody plants, before the run,
# symlinks to a file only root may write at every name the writers used to choose for
# their temporary files (PATH.tmp, PATH.tmp.PID for the next PIDs, PATH.probe-PID) and at
# the final paths, and a FIFO where a log goes. Then:
#  1. --snapshot, --save, --report and --trace write their files whole and the victim is
#     untouched; each final path is a regular file, no longer nobody's link;
#  2. --metrics at nobody's symlink is refused at once with an error naming the path, and so
#     is a --snapshot to resume from that is nobody's symlink (root would load weights of
#     nobody's choosing); ddlrun --log-dir with a FIFO at rank0.log refuses it instead of
#     blocking;
#  3. on a full disk (a 64 KiB tmpfs, in a private mount namespace so nothing outlives the
#     test) --save fails naming the file and leaves the old one whole and nothing beside it.
# Needs root and setpriv (util-linux); exits 77 otherwise.
set -uo pipefail
: "${TRAIN_CIFAR:?}" "${DDLRUN:?}"
[ "$(id -u)" = 0 ] || { echo "needs root: it plants files as another user"; exit 77; }
command -v setpriv >/dev/null || { echo "needs setpriv (util-linux)"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

shared="$dir/shared"
chmod 0711 "$dir"  # nobody may pass through to the shared folder
mkdir -m 0777 "$shared" && chmod 0777 "$shared"
victim="$dir/victim"  # in root's own folder: only root may write it
echo precious >"$victim" && chmod 0644 "$victim"
next=$(($(cat /proc/sys/kernel/ns_last_pid 2>/dev/null || echo 1000) + 1))
for f in snap.safetensors model.safetensors report.html trace.json; do
  as_nobody ln -s "$victim" "$shared/$f.tmp"
  [ $f = snap.safetensors ] || as_nobody ln -s "$victim" "$shared/$f"  # a snapshot that exists is read
  for pid in $(seq "$next" $((next + 200))); do
    as_nobody ln -s "$victim" "$shared/$f.tmp.$pid"
    as_nobody ln -s "$victim" "$shared/$f.probe-$pid"
  done 2>/dev/null
done
as_nobody ln -s "$victim" "$shared/metrics.jsonl"
as_nobody mkdir -m 0777 "$shared/logs"
as_nobody mkfifo -m 0666 "$shared/logs/rank0.log"

base=(--dataset synthetic --model mlp --train-samples 64 --test-samples 16 --batch-size 16
      --threads 1 --loader-workers 1 --log-every 100 --no-progress --epochs 1)
"$TRAIN_CIFAR" "${base[@]}" --snapshot "$shared/snap.safetensors" --save "$shared/model.safetensors" \
  --report "$shared/report.html" --trace "$shared/trace.json" >"$dir/run.out" 2>&1
code=$?
check "1. the run with every output in the shared folder succeeds ($code)" '[ $code = 0 ]'
check "1. the victim is untouched" '[ "$(cat "$victim")" = precious ]'
for f in snap.safetensors model.safetensors report.html trace.json; do
  check "1. $f is a regular file of root's, not nobody's link" \
    '[ -f "$shared/$f" ] && [ ! -L "$shared/$f" ] && [ "$(stat -c %u "$shared/$f")" = 0 ]'
done
check "1. the report is whole HTML, the trace whole JSON" \
  'tail -c 8 "$shared/report.html" | grep -q "</html>" && python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$shared/trace.json"'

timeout 60 "$TRAIN_CIFAR" "${base[@]}" --metrics "$shared/metrics.jsonl" >"$dir/metrics.out" 2>&1
code=$?
check "2. --metrics at nobody's symlink: refused ($code), naming the path" \
  '[ $code != 0 ] && [ $code != 124 ] && grep -q "$shared/metrics.jsonl.* is a symbolic link (made by user 65534) in" "$dir/metrics.out"'
as_nobody ln -s "$victim" "$shared/planted.safetensors"
timeout 60 "$TRAIN_CIFAR" "${base[@]}" --snapshot "$shared/planted.safetensors" >"$dir/planted.out" 2>&1
code=$?
check "2. --snapshot at nobody's symlink: refused ($code), naming the path" \
  '[ $code != 0 ] && [ $code != 124 ] && grep -q "planted.safetensors.* is a symbolic link (made by user 65534) in" "$dir/planted.out"'
timeout 30 "$DDLRUN" --nproc 1 --log-dir "$shared/logs" true >"$dir/logs.out" 2>&1
code=$?
check "2. ddlrun --log-dir with a FIFO at rank0.log: status 2 at once ($code), naming it" \
  '[ $code = 2 ] && grep -q "rank0.log.* is a FIFO that nobody reads" "$dir/logs.out"'
check "2. the victim is still untouched" '[ "$(cat "$victim")" = precious ]'
# 3. A full disk: unshare -m gives the tmpfs a mount namespace of its own.
mkdir "$dir/small"
unshare -m --propagation private sh -c '
  d=$1 tc=$2; shift 2
  mount -t tmpfs -o size=64k ddl-test "$d" && echo old > "$d/model.safetensors" || exit
  "$tc" "$@" --save "$d/model.safetensors"; echo "exit $?"; cat "$d/model.safetensors"; ls -A "$d"' \
  sh "$dir/small" "$TRAIN_CIFAR" "${base[@]}" >"$dir/full.out" 2>&1 </dev/null
check "3. --save on a full disk: fails naming the file and 'disk full', the old file whole, nothing beside it" \
  'grep -q "^exit 1$" "$dir/full.out" && grep -q "model.safetensors.*disk full" "$dir/full.out" &&
   [ "$(tail -n 2 "$dir/full.out" | head -n 1)" = old ] && [ "$(tail -n 1 "$dir/full.out")" = model.safetensors ]'
[ $fail = 0 ] || { echo "--- run output"; cat "$dir/run.out" "$dir/metrics.out" "$dir/planted.out" "$dir/logs.out" "$dir/full.out"; }
exit $fail
