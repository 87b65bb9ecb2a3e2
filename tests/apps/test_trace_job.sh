#!/usr/bin/env bash
# --trace end to end (suite trace): 2-rank jobs under ddlrun write one merged file with a
# track per rank, compute/comm/data loader threads, phase, module, optimizer and DDP bucket
# spans that overlap backward (ddp) or ring steps with their sends and receives (ring);
# a clock skew injected into rank 1 is recovered within the file's own error bound and
# the ranks line up after the shift; a cap too small warns and leaves no bucket slice
# open; DDL_HOST names the tracks; a lone process writes its
# own file; an unwritable path is an error naming it; sync_study --trace writes one file
# per strategy.
set -u
: "${TRAIN_CIFAR:?}" "${DDLRUN:?}" "${SYNC_STUDY:?}"
command -v python3 >/dev/null || { echo "python3 is needed to read the trace files"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
run() { "$@" >"$dir/out.txt" 2>&1 || { echo "FAIL: $*"; tail -20 "$dir/out.txt"; fail=1; }; }
common=(--dataset synthetic --model vgg11_bn --train-samples 96 --test-samples 32 --batch-size 16 --threads 1
        --loader-workers 1 --no-progress --seed 3)

run "$DDLRUN" --nproc 2 "$TRAIN_CIFAR" "${common[@]}" --sync ddp --trace "$dir/ddp.json"
check "ddp: merged trace checks" "python3 '$here/check_trace.py' '$dir/ddp.json' 2 --ddp"
check "ddp: rank 0 says where the trace is" "grep -q 'trace: $dir/ddp.json' '$dir/out.txt'"

run "$DDLRUN" --nproc 2 "$TRAIN_CIFAR" "${common[@]}" --sync ring --trace "$dir/ring.json"
check "ring: merged trace checks" "python3 '$here/check_trace.py' '$dir/ring.json' 2 --ring"

# Rank 1's trace clock runs 3 s ahead (a test-only skew, read by the trace clock alone).
skewed='if [ "$RANK" = 1 ]; then export DDL_TRACE_TEST_CLOCK_SKEW_US=3000000; fi; exec "$0" "$@"'
run "$DDLRUN" --nproc 2 bash -c "$skewed" "$TRAIN_CIFAR" "${common[@]}" --sync ddp --trace "$dir/skew.json"
check "skew: recovered within its bound, ranks aligned" \
  "python3 '$here/check_trace.py' '$dir/skew.json' 2 --ddp --skew-rank 1 --skew-us 3000000"

# A cap far below what the run records: rank 0 names every rank's drops, and no bucket
# slice is left without an end in the file.
run env DDL_TRACE_MAX_EVENTS=300 "$DDLRUN" --nproc 2 "$TRAIN_CIFAR" "${common[@]}" --sync ddp --trace "$dir/cap.json"
check "capped: rank 0 warns with each rank's drops" \
  "grep -q 'trace: warning: events dropped.* rank 0 [1-9][0-9]*, rank 1 [1-9]' '$dir/out.txt'"
check "capped: every async begin has an end" "python3 -c '
import json, sys, collections
n = collections.Counter((e[\"pid\"], e[\"ph\"]) for e in json.load(open(sys.argv[1]))[\"traceEvents\"] if e[\"ph\"] in \"be\")
sys.exit(0 if n and all(n[(p, \"b\")] == n[(p, \"e\")] for p in (0, 1)) else 1)' '$dir/cap.json'"

run env DDL_HOST=node-a "$DDLRUN" --nproc 2 "$TRAIN_CIFAR" "${common[@]}" --sync ddp --trace "$dir/host.json"
check "DDL_HOST names the rank tracks" "python3 '$here/check_trace.py' '$dir/host.json' 2 --host node-a"

run "$TRAIN_CIFAR" "${common[@]}" --trace "$dir/one.json"
check "a single process writes its own trace" "python3 '$here/check_trace.py' '$dir/one.json' 1"

"$TRAIN_CIFAR" "${common[@]}" --epochs 50 --trace /nonexistent-dir/t.json >"$dir/bad.txt" 2>&1
rc=$?
check "an unwritable trace path fails before training, naming the file" \
  "[ $rc -ne 0 ] && grep -q '/nonexistent-dir/t.json' '$dir/bad.txt' && ! grep -q 'batch *0: loss' '$dir/bad.txt'"
run "$SYNC_STUDY" --nproc 2 --train-samples 64 --test-samples 32 --batch-size 16 --strategies ddp ring \
  --out "$dir/study" --trace "$dir/study/tl.json"
check "sync_study says where the timelines are" "grep -q 'timelines in $dir/study/tl.<strategy>.json' '$dir/out.txt'"
check "sync_study: ddp's timeline (an mlp: blocks 0..4)" \
  "python3 '$here/check_trace.py' '$dir/study/tl.ddp.json' 2 --ddp --module 0"
check "sync_study: ring's timeline" "python3 '$here/check_trace.py' '$dir/study/tl.ring.json' 2 --ring --module 4"
exit $fail
