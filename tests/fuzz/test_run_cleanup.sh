#!/usr/bin/env bash
# run.sh's scratch folders: a target that crashes (SIGSEGV) or is stopped (SIGTERM to
# run.sh) leaves nothing under /dev/shm, and a run never removes the folder of another run
# going on beside it (an earlier cleanup that globbed ddl-fuzz-* broke parallel runs).
set -u
run=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A stand-in target: writes an input file where fuzz_util.h's TempDir would, reports its
# folder, waits, then crashes.
cat > "$tmp/fake_target" <<'TARGET'
#!/usr/bin/env bash
mkdir -p "$DDL_FUZZ_TMPDIR/ddl-fuzz-input" && echo data > "$DDL_FUZZ_TMPDIR/ddl-fuzz-input/input.img"
echo "$DDL_FUZZ_TMPDIR" > "$FAKE_REPORT"
trap 'kill "$nap"; exit 143' TERM
sleep "$FAKE_SLEEP" &
nap=$!
wait "$nap"
kill -SEGV $$
TARGET
chmod +x "$tmp/fake_target"
fail() { echo "FAIL: $*"; exit 1; }
wait_for() { for _ in $(seq 100); do [ -s "$1" ] && return 0; sleep 0.1; done; fail "no report in $1"; }

# A slow run, and beside it a run that crashes at once.
FAKE_REPORT=$tmp/slow FAKE_SLEEP=3 DDL_FUZZ_ARTIFACTS=$tmp "$run" "$tmp/fake_target" "$tmp" >/dev/null 2>&1 &
slow=$!
wait_for "$tmp/slow"
FAKE_REPORT=$tmp/fast FAKE_SLEEP=0 DDL_FUZZ_ARTIFACTS=$tmp "$run" "$tmp/fake_target" "$tmp" >/dev/null 2>&1
rc=$?
[ "$rc" -ne 0 ] || fail "a crashing target made run.sh exit 0"
fast_dir=$(dirname "$(cat "$tmp/fast")") slow_dir=$(dirname "$(cat "$tmp/slow")")
[ ! -e "$fast_dir" ] || fail "the crashed run left $fast_dir"
[ -f "$slow_dir/inputs/ddl-fuzz-input/input.img" ] || fail "the crashed run removed the other run's $slow_dir"
wait "$slow"
[ ! -e "$slow_dir" ] || fail "the slow run left $slow_dir"

# A run stopped from outside (meson's timeout sends SIGTERM) removes its folder too.
FAKE_REPORT=$tmp/stopped FAKE_SLEEP=60 DDL_FUZZ_ARTIFACTS=$tmp "$run" "$tmp/fake_target" "$tmp" >/dev/null 2>&1 &
stopped=$!
wait_for "$tmp/stopped"
kill -TERM "$stopped"
wait "$stopped"
stopped_dir=$(dirname "$(cat "$tmp/stopped")")
[ ! -e "$stopped_dir" ] || fail "the stopped run left $stopped_dir"
echo "ok: crashed, parallel and stopped runs each removed only their own folder"
