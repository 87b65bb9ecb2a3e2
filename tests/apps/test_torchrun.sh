#!/usr/bin/env bash
# ddl under plain torchrun, whose agent serves a PyTorch TCPStore (its default static
# rendezvous; TORCHELASTIC_USE_AGENT_STORE=True), so ddl ranks are clients of it (TorchStore):
#  1. ddl's TorchStore against PyTorch's own TCPStore, each side reading what the other wrote;
#  2. a 2-rank train_cifar under torchrun ends with the weights a 2-rank ddlrun run gets;
#  3. a crash restarted by --max_restarts rendezvouses again (fresh keys), resumes, same
#     weights; a bare rank shows the retry's keys are attempt 1's.
# Needs Debian's python3-torch (1.13): installed when missing (unless DDL_TESTS_NO_INSTALL is
# set); exit 77 (skip) when it cannot be.
set -uo pipefail
: "${TRAIN_CIFAR:?}" "${DDLRUN:?}" "${TORCH_STORE_CLIENT:?}"
PY=/usr/bin/python3         # the python3 on PATH may lack torch
TORCHRUN=/usr/bin/torchrun  # Debian's, matching PY's torch

dir=$(mktemp -d)
groups=()  # process groups this script started (each job runs under setsid)
cleanup() {
  local g
  for g in "${groups[@]}"; do kill -TERM -- "-$g" 2>/dev/null; done
  for g in "${groups[@]}"; do
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 -- "-$g" 2>/dev/null && sleep 0.2; done
    kill -KILL -- "-$g" 2>/dev/null
  done
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
# run SECONDS CMD...: CMD in its own session, so cleanup reaches torchrun's workers too;
# timeout signals that whole group when CMD runs over. Returns CMD's status.
run() {
  local limit=$1
  shift
  setsid timeout -k 5 "$limit" "$@" &
  local pid=$!
  groups+=("$pid")
  wait "$pid"
}
free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

if ! dpkg -s python3-torch >/dev/null 2>&1; then
  # A machine without a package registry (the GPU check) would wait on apt-get's downloads.
  if [ -n "${DDL_TESTS_NO_INSTALL:-}" ]; then
    echo "SKIP: Debian's python3-torch is not installed (DDL_TESTS_NO_INSTALL: no apt-get)"
    exit 77
  fi
  echo "python3-torch is missing: installing it (apt-get)"
  if ! apt-get -o DPkg::Lock::Timeout=600 install -y python3-torch >"$dir/apt.txt" 2>&1; then
    tail -5 "$dir/apt.txt"
    echo "SKIP: Debian's python3-torch is not installed and apt-get could not install it"
    exit 77
  fi
fi
if ! [ -x "$TORCHRUN" ] || ! "$PY" -c 'import torch.distributed' 2>"$dir/import.txt"; then
  cat "$dir/import.txt"
  echo "SKIP: $TORCHRUN or torch.distributed for $PY is missing despite python3-torch"
  exit 77
fi
echo "torch $("$PY" -c 'import torch; print(torch.__version__)')"

# 1. PyTorch's TCPStore server, ddl's client (tests/dist/helpers/torch_store_client.cpp).
cat >"$dir/store.py" <<'EOF'
import subprocess, sys, time
from datetime import timedelta
import torch.distributed as dist
client, port = sys.argv[1], int(sys.argv[2])
proc = subprocess.Popen([client, "127.0.0.1", str(port)])
# world_size 2: PyTorch's master returns once a second client counted itself in "init/"
# (or, silently, after its 20 s timeout: hence the clock).
t0 = time.time()
store = dist.TCPStore("127.0.0.1", port, 2, True, timedelta(seconds=20))
if time.time() - t0 > 15 or proc.poll() is not None:
    print("FAIL PyTorch's TCPStore master never saw ddl's client join")
    proc.kill()
    sys.exit(1)
print("ok   PyTorch's TCPStore master saw ddl's client join")
store.add("py/n", 40)
store.set("py/k", "from-python")  # the client's blocking get waits for this one
store.wait(["cpp/done"], timedelta(seconds=30))
ok = store.get("cpp/k") == b"from-c++\0bin" and store.add("cpp/counter", 0) == 7
print("ok  " if ok else "FAIL", "Python reads what ddl's client set and added")
store.set("py/verdict", "ok" if ok else "bad")
rc = proc.wait(timeout=60)
print("ok  " if rc == 0 else "FAIL", "ddl's client passed its checks (exit %d)" % rc)
sys.exit(0 if ok and rc == 0 else 1)
EOF
run 90 "$PY" "$dir/store.py" "$TORCH_STORE_CLIENT" "$(free_port)" >"$dir/store.txt" 2>&1
rc=$?
sed 's/^/  /' "$dir/store.txt"
check "ddl's TorchStore and PyTorch's TCPStore agree both ways" "[ $rc -eq 0 ] && ! grep -q FAIL '$dir/store.txt'"

# 2. Training under torchrun with its default rendezvous (no --standalone, no --rdzv_backend).
common=(--dataset synthetic --model mlp --train-samples 192 --test-samples 64 --batch-size 16 --lr 0.05
        --threads 1 --loader-workers 1 --log-every 1 --no-progress --seed 5 --epochs 3)
# --redirects 1 --tee 1: torchrun 1.13 on Python 3.11 crashes before starting any worker
# without them (docs/dist.md); they only send stdout through torchrun's log files as well.
torchrun() {
  run 120 "$TORCHRUN" --nproc_per_node 2 --no_python --redirects 1 --tee 1 --monitor_interval 1 \
    --master_addr 127.0.0.1 --master_port "$(free_port)" --log_dir "$dir/logs$1" "${@:2}"
}
run 120 "$DDLRUN" --nproc 2 "$TRAIN_CIFAR" "${common[@]}" --save "$dir/ddlrun.safetensors" >"$dir/ddlrun.txt" 2>&1
check "the reference run under ddlrun finished" "[ $? -eq 0 ] && [ -s '$dir/ddlrun.safetensors' ]"
torchrun 1 "$TRAIN_CIFAR" "${common[@]}" --save "$dir/torchrun.safetensors" >"$dir/torchrun.txt" 2>&1
check "train_cifar under plain torchrun exits 0" "[ $? -eq 0 ]"
# Had a ddl rank tried to serve the store itself, it would have found MASTER_PORT taken.
check "both ranks joined one 2-rank group" \
  "[ \$(grep -cE '^\[default[01]\]:\[rank [01]/2\] model .*world size 2' '$dir/torchrun.txt') -eq 2 ]"
check "torchrun's run ends with ddlrun's weights" "cmp -s '$dir/ddlrun.safetensors' '$dir/torchrun.safetensors'"

# 3. Rank 0 exits with status 3 at global step 11; torchrun restarts both workers with
# TORCHELASTIC_RESTART_COUNT=1, which rendezvous again in fresh keys of the same agent store.
torchrun 2 --max_restarts 1 "$TRAIN_CIFAR" "${common[@]}" --snapshot "$dir/snap.safetensors" \
  --snapshot-every-steps 4 --crash-at-step 11 --save "$dir/resumed.safetensors" >"$dir/restart.txt" 2>&1
check "the restarted torchrun job exits 0" "[ $? -eq 0 ]"
check "rank 0 crashed once (exit code 3)" "[ \$(grep -c 'exitcode: 3' '$dir/restart.txt') -eq 1 ]"
check "both restarted ranks resumed from the snapshot" \
  "[ \$(grep -cE '^\[default[01]\]:.*resumed from' '$dir/restart.txt') -eq 2 ]"
check "the resumed run ends with the uninterrupted run's weights" \
  "cmp -s '$dir/ddlrun.safetensors' '$dir/resumed.safetensors'"

# The restart's keys: ddl's store prefix follows TORCHELASTIC_RESTART_COUNT.
torchrun 3 --max_restarts 1 "$TORCH_STORE_CLIENT" --torchrun >"$dir/attempts.txt" 2>&1
check "a bare rank restarted by torchrun exits 0" "[ $? -eq 0 ]"
check "both attempts all-reduced (0 + 1), the retry in attempt 1's keys" \
  "[ \$(grep -cE '^\[default[01]\]:rank [01]/2 attempt 0 sum 1\$' '$dir/attempts.txt') -eq 2 ] &&
   [ \$(grep -cE '^\[default[01]\]:rank [01]/2 attempt 1 sum 1\$' '$dir/attempts.txt') -eq 2 ]"

[ $fail -eq 0 ] || { for f in "$dir"/*.txt; do echo "== $f"; tail -8 "$f"; done; }
exit $fail
