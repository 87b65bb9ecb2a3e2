#!/usr/bin/env bash
# train_cifar --sync zero1|zero2 end to end (ddlrun --nproc 2, synthetic data, an MLP):
#  1. zero1 and zero2 end with DDP's weights, bit for bit (two ranks: see Note [ZeRO against
#     DDP] in tests/dist/test_zero.cpp), and their snapshots (model and consolidated
#     optimizer state) are byte for byte DDP's: whole, unsharded, as one process holds them;
#  2. PyTorch reads the snapshot: one momentum buffer per parameter, of its shape;
#  3. a zero1 run whose rank 1 is killed with SIGKILL after a snapshot, restarted by
#     ddlrun --max-restarts, ends with the uninterrupted run's weights;
#  4. at three ranks zero1 and zero2 end within 1e-5 (relative) of DDP's weights: the ring
#     reduce-scatter and the all-reduce add three terms in different orders.
set -uo pipefail
: "${TRAIN_CIFAR:?}" "${DDLRUN:?}"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
torch_python=/usr/bin/python3
common=(--dataset synthetic --model mlp --train-samples 128 --test-samples 32 --batch-size 16 --lr 0.05
        --momentum 0.9 --threads 1 --loader-workers 1 --no-progress --seed 5 --epochs 2)

# 1. Against DDP.
for s in ddp zero1 zero2; do
  "$DDLRUN" --nproc 2 "$TRAIN_CIFAR" "${common[@]}" --sync "$s" --save "$dir/$s.safetensors" \
    --snapshot "$dir/snap_$s.safetensors" >"$dir/$s.txt" 2>&1
  check "--sync $s runs" "[ $? -eq 0 ]"
done
for s in zero1 zero2; do
  check "$s ends with DDP's weights" "cmp -s '$dir/ddp.safetensors' '$dir/$s.safetensors'"
  check "$s's snapshot (model and whole optimizer state) is DDP's" \
    "cmp -s '$dir/snap_ddp.safetensors' '$dir/snap_$s.safetensors'"
done

# 2. PyTorch reads it (tests/golden/torch_interop.py's reader; no safetensors package needed).
if "$torch_python" -c 'import torch' 2>/dev/null; then
  "$torch_python" - "$here/../golden" "$dir/snap_zero1.safetensors" >"$dir/py.txt" 2>&1 <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from torch_interop import load
t = load(sys.argv[2])
params = sorted(tuple(v.shape) for k, v in t.items() if not k.startswith("optimizer."))
bufs = sorted(tuple(v.shape) for k, v in t.items() if k.endswith(".momentum_buffer"))
assert params and params == bufs, (params, bufs)
print("ok", len(bufs))
PY
  check "PyTorch reads the zero1 snapshot: a whole momentum buffer per parameter" "grep -q '^ok' '$dir/py.txt'"
fi

# 3. SIGKILL after the snapshot at global step 3: rank 1 stops itself at step 5, is killed
#    here, and ddlrun restarts the job, which resumes from the snapshot. The uninterrupted
#    run is part 1's (its snapshots do not change its weights).
"$DDLRUN" --nproc 2 --max-restarts 1 "$TRAIN_CIFAR" "${common[@]}" --sync zero1 --snapshot "$dir/k.safetensors" \
  --snapshot-every-steps 3 --hang-at-step 5 --hang-rank 1 --save "$dir/resumed.safetensors" >"$dir/r.txt" 2>&1 &
job=$!
start=$SECONDS
killed=0
for _ in $(seq 1 200); do
  for p in $(pgrep -f -- "--snapshot $dir/k.safetensors" || true); do
    if [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" = T ]; then kill -9 "$p" && killed=1; fi
  done
  [ $killed -eq 1 ] && break
  sleep 0.1
done
wait $job
rc=$?
echo "the killed job took $((SECONDS - start)) s"
check "rank 1 was found stopped and killed with SIGKILL" "[ $killed -eq 1 ]"
check "the restarted zero1 job finished (exit $rc) after resuming" "[ $rc -eq 0 ] && grep -q 'resumed from' '$dir/r.txt'"
check "resumed weights equal the uninterrupted run's" "cmp -s '$dir/zero1.safetensors' '$dir/resumed.safetensors'"

# 4. Three ranks.
for s in ddp zero1 zero2; do
  "$DDLRUN" --nproc 3 "$TRAIN_CIFAR" "${common[@]}" --sync "$s" --save "$dir/n3_$s.safetensors" >"$dir/n3_$s.txt" 2>&1
  check "--sync $s runs at three ranks" "[ $? -eq 0 ]"
done
if "$torch_python" -c 'import torch' 2>/dev/null; then
  "$torch_python" "$here/close_weights.py" "$dir/n3_ddp.safetensors" "$dir/n3_zero1.safetensors" \
    "$dir/n3_zero2.safetensors" >"$dir/py3.txt" 2>&1
  check "three ranks: zero1 and zero2 within 1e-5 of DDP ($(grep -h 'max relative' "$dir/py3.txt" | tr '\n' ' '))" \
    "grep -q '^ok' '$dir/py3.txt'"
fi

[ $fail -eq 0 ] || { for f in "$dir"/*.txt; do echo "== $f"; tail -5 "$f"; done; }
exit $fail
