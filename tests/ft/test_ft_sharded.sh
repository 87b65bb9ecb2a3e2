#!/usr/bin/env bash
# Snapshots of sharded runs (train_cifar --sync zero2|fsdp, ddlrun, synthetic data, an MLP),
# through ft::save / ft::resume (docs/fault_tolerance.md, "Sharded runs"):
#  1. the snapshot holds the whole, unsharded model and optimizer state: PyTorch reads one
#     momentum buffer per parameter, of its shape;
#  2. two ranks, rank 1 killed with SIGKILL after a mid-epoch snapshot, ddlrun restarts the
#     job: it ends with the uninterrupted run's weights, bit for bit;
#  3. a two-rank snapshot resumed at three ranks and at one, keeping the global batch (48 =
#     24 x 2 = 16 x 3 = 48 x 1, so every step takes the same samples): the final weights are
#     within 1e-5 (relative) of the uninterrupted two-rank run's; only the order of the
#     gradient sums differs.
# usage: test_ft_sharded.sh zero2|fsdp   (TRAIN_CIFAR and DDLRUN set by meson)
set -uo pipefail
: "${TRAIN_CIFAR:?}" "${DDLRUN:?}"
sync=${1:?zero2 or fsdp}
here=$(cd "$(dirname "$0")/../apps" && pwd)
. "$here/lib.sh"
torch_python=/usr/bin/python3
common=(--dataset synthetic --model mlp --train-samples 192 --test-samples 32 --lr 0.05 --momentum 0.9 --threads 1
        --loader-workers 1 --no-progress --seed 5 --epochs 2 --sync "$sync")

# Runs a job in the background whose rank 1 stops itself (SIGSTOP) at global step $1, kills
# that rank with SIGKILL, and waits for the job; $2 is the snapshot path, the rest ddlrun's
# arguments. Sets `killed`. While rank 1 is stopped no rank can reach the next snapshot, so
# the file is copied to $2.at_kill first: the snapshot the restart resumes from.
kill_stopped_rank() {
  local step=$1 snap=$2
  shift 2
  "$DDLRUN" "$@" --snapshot "$snap" --snapshot-every-steps 2 --hang-at-step "$step" --hang-rank 1 &
  local job=$!
  killed=0
  for _ in $(seq 1 300); do
    for p in $(pgrep -f -- "--snapshot $snap" || true); do
      if [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" = T ]; then
        cp "$snap" "$snap.at_kill" && kill -9 "$p" && killed=1
      fi
    done
    [ $killed -eq 1 ] && break
    sleep 0.1
  done
  wait $job
}

# The uninterrupted run: two ranks of 24.
"$DDLRUN" --nproc 2 "$TRAIN_CIFAR" "${common[@]}" --batch-size 24 --save "$dir/straight.safetensors" \
  --snapshot "$dir/end.snap" >"$dir/straight.txt" 2>&1
check "--sync $sync --snapshot runs at two ranks" "[ $? -eq 0 ]"

# 1. PyTorch reads the whole state.
if "$torch_python" -c 'import torch' 2>/dev/null; then
  "$torch_python" - "$here/../golden" "$dir/end.snap" >"$dir/py.txt" 2>&1 <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from torch_interop import load
t = load(sys.argv[2])
params = sorted(tuple(v.shape) for k, v in t.items() if not k.startswith("optimizer."))
bufs = sorted(tuple(v.shape) for k, v in t.items() if k.endswith(".momentum_buffer"))
assert params and params == bufs, (params, bufs)
print("ok", len(bufs))
PY
  check "PyTorch reads the $sync snapshot: a whole momentum buffer per parameter" "grep -q '^ok' '$dir/py.txt'"
fi

# 2. Killed at step 3 (after the snapshot of step 2, mid-epoch 1), restarted, resumed.
kill_stopped_rank 3 "$dir/k.snap" --nproc 2 --max-restarts 1 "$TRAIN_CIFAR" "${common[@]}" --batch-size 24 \
  --save "$dir/resumed.safetensors" >"$dir/r.txt" 2>&1
rc=$?
check "rank 1 was found stopped and killed with SIGKILL" "[ $killed -eq 1 ]"
check "the restarted $sync job finished (exit $rc) after resuming at epoch 1, step 2" \
  "[ $rc -eq 0 ] && grep -q 'resumed from .* at epoch 1, step 2' '$dir/r.txt'"
check "resumed weights equal the uninterrupted run's, bit for bit" \
  "cmp -s '$dir/straight.safetensors' '$dir/resumed.safetensors'"

# 3. The snapshot of step 2, as the kill left it, resumed at 3 ranks and at 1.
cp "$dir/k.snap.at_kill" "$dir/mid3.snap" && cp "$dir/k.snap.at_kill" "$dir/mid1.snap"
"$DDLRUN" --nproc 3 "$TRAIN_CIFAR" "${common[@]}" --batch-size 16 --snapshot "$dir/mid3.snap" \
  --save "$dir/n3.safetensors" >"$dir/n3.txt" 2>&1
check "the two-rank snapshot resumes at three ranks, at epoch 1, step 2" \
  "[ $? -eq 0 ] && grep -q 'world size 2 -> 3; the same global batch' '$dir/n3.txt' && grep -q 'at epoch 1, step 2' '$dir/n3.txt'"
"$TRAIN_CIFAR" "${common[@]}" --batch-size 48 --snapshot "$dir/mid1.snap" --save "$dir/n1.safetensors" \
  >"$dir/n1.txt" 2>&1
check "... and at one process" "[ $? -eq 0 ] && grep -q 'world size 2 -> 1; the same global batch' '$dir/n1.txt'"
if "$torch_python" -c 'import torch' 2>/dev/null; then
  "$torch_python" "$here/close_weights.py" "$dir/straight.safetensors" "$dir/n3.safetensors" "$dir/n1.safetensors" \
    >"$dir/py3.txt" 2>&1
  check "resumed at 3 and 1 ranks: within 1e-5 of the uninterrupted run ($(grep -h 'max relative' "$dir/py3.txt" | tr '\n' ' '))" \
    "grep -q '^ok' '$dir/py3.txt'"
fi

[ $fail -eq 0 ] || { for f in "$dir"/*.txt; do echo "== $f"; tail -5 "$f"; done; }
exit $fail
