#!/usr/bin/env bash
# Runs one of ddl's versions of the pytorch/examples C++ programs (apps/examples/) briefly
# and checks a result it must reach, not only that it ran:
#   mnist          1 epoch on 6,000 Fashion-MNIST images: the loss falls, test accuracy above
#                  0.40 (chance 0.10; the original's lr 0.01 and momentum 0.5 learn slowly)
#   regression     the polynomial's 5 coefficients recovered within 0.05
#   autograd_tour  every gradient of the tour equals its closed form
#   dcgan          the discriminator learns (D(x) above D(G(z))), samples and checkpoints
#                  are written, and a run resumes from them
#   custom_dataset images generated here, read through the list file: test accuracy above 0.89
#   dist_mnist     2 ranks under ddlrun end with bit-identical weights, test accuracy above 45%
# Usage: test_examples.sh NAME; env EXAMPLE (the program), DDLRUN (for dist_mnist).
set -euo pipefail
name=${1:?usage: test_examples.sh NAME}
EXAMPLE=${EXAMPLE:?EXAMPLE: the example program}
here=$(cd "$(dirname "$0")" && pwd)
fashion=/usr/share/datasets/fashion-mnist
tmp=$(mktemp -d "/tmp/ddl-example-$name.$$.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "example $name: FAIL: $*" >&2
  exit 1
}
run() {  # the program's output goes to $tmp/out and to the test log
  "$@" > "$tmp/out" 2>&1 || { cat "$tmp/out"; fail "exit status $? from: $*"; }
  cat "$tmp/out"
}
above() { python3 -c "import sys; sys.exit(0 if float('$1') > float('$2') else 1)"; }
needs_fashion() {
  [ -f "$fashion/train-images-idx3-ubyte.gz" ] || { echo "SKIP: $fashion is missing (dataset-fashion-mnist)"; exit 77; }
}

case "$name" in
  mnist)
    needs_fashion
    run "$EXAMPLE" --epochs 1 --train-samples 6000 --test-samples 2000 --log-interval 20 --threads 2
    acc=$(sed -n 's/^Test set: .*Accuracy: \([0-9.]*\)$/\1/p' "$tmp/out")
    [ -n "$acc" ] || fail "no 'Test set: ... Accuracy:' line"
    above "$acc" 0.40 || fail "test accuracy $acc is not above 0.40 (chance: 0.10)"
    first=$(grep -m1 '^Train Epoch' "$tmp/out" | sed 's/.*Loss: //')
    last=$(grep '^Train Epoch' "$tmp/out" | tail -1 | sed 's/.*Loss: //')
    above "$first" "$last" || fail "the training loss did not fall ($first -> $last)"
    ;;
  regression)
    run "$EXAMPLE" --seed 3 --stop-loss 1e-4
    err=$(sed -n 's/^max coefficient error: //p' "$tmp/out")
    [ -n "$err" ] || fail "no 'max coefficient error' line"
    above 0.05 "$err" || fail "a coefficient is off by $err (more than 0.05)"
    ;;
  autograd_tour)
    run "$EXAMPLE"
    [ "$(grep -c '^check .*: ok$' "$tmp/out")" = 8 ] || fail "expected 8 checks reported ok"
    grep -qx 'all checks ok' "$tmp/out" || fail "no 'all checks ok'"
    ;;
  dcgan)
    needs_fashion
    run "$EXAMPLE" --iterations 40 --width 8 --batch-size 32 --checkpoint-every 20 --log-interval 10 --samples 6 \
      --out "$tmp/run"
    # The last logged batch: the discriminator tells real (D(x)) from generated (D(G(z))).
    read -r dx dgz < <(grep 'D(x)' "$tmp/out" | tail -1 | sed 's/.*D(x): \([0-9.]*\) | D(G(z)): \([0-9.]*\)/\1 \2/')
    above "$dx" "$dgz" || fail "D(x) $dx is not above D(G(z)) $dgz after 40 batches"
    [ ! -e "$tmp/run/dcgan-sample-3.pgm" ] || fail "batch 40 was saved twice (dcgan-sample-3.pgm)"
    for n in 1 2; do
      f="$tmp/run/dcgan-sample-$n.pgm"
      [ -f "$f" ] || fail "no $f"
      # A binary PGM of 6 samples side by side, 28 x 28 each, not all one grey.
      python3 - "$f" << 'PY' || fail "$f is not a 168 x 28 PGM with varied pixels"
import sys
data = open(sys.argv[1], "rb").read()
head, pixels = data.split(b"\n", 3)[:3], data.split(b"\n", 3)[3]
assert head == [b"P5", b"168 28", b"255"], head
assert len(pixels) == 168 * 28 and len(set(pixels)) > 20
PY
    done
    for f in generator discriminator generator-optimizer discriminator-optimizer; do
      [ -s "$tmp/run/$f-checkpoint.safetensors" ] || fail "no $f-checkpoint.safetensors"
    done
    cp "$tmp/run/generator-checkpoint.safetensors" "$tmp/before.safetensors"
    run "$EXAMPLE" --iterations 2 --width 8 --batch-size 32 --samples 6 --out "$tmp/run" --restore
    grep -q "^restored from $tmp/run" "$tmp/out" || fail "--restore did not say it restored"
    ! cmp -s "$tmp/before.safetensors" "$tmp/run/generator-checkpoint.safetensors" ||
      fail "the resumed run did not change the generator"
    # A checkpoint of another width does not fit: an error, not a crash.
    if "$EXAMPLE" --iterations 1 --width 4 --batch-size 8 --out "$tmp/run" --restore > "$tmp/err" 2>&1; then
      fail "restoring width-8 checkpoints into a width-4 model succeeded"
    fi
    grep -q '^dcgan: error: ' "$tmp/err" || { cat "$tmp/err"; fail "no 'dcgan: error:' for mismatched checkpoints"; }
    ;;
  custom_dataset)
    python3 "$here/make_images.py" "$tmp/images" 30 0
    run "$EXAMPLE" --root "$tmp/images" --info "$tmp/images/info.txt" --epochs 10
    grep -q '^60 training and 30 test images, 3 classes$' "$tmp/out" || fail "the list was not read as 60 + 30 images"
    acc=$(grep '^Epoch' "$tmp/out" | tail -1 | sed 's/.*test loss [0-9.]* acc //')
    above "$acc" 0.89 || fail "test accuracy $acc is not above 0.89"
    echo "nonexistent.ppm 0 train" >> "$tmp/images/info.txt"
    if "$EXAMPLE" --root "$tmp/images" --info "$tmp/images/info.txt" --epochs 1 > "$tmp/err" 2>&1; then
      fail "a listed image that does not exist did not fail the run"
    fi
    grep -q 'nonexistent.ppm' "$tmp/err" || { cat "$tmp/err"; fail "the error does not name the missing file"; }
    ;;
  dist_mnist)
    needs_fashion
    DDLRUN=${DDLRUN:?DDLRUN: the launcher}
    run timeout 240 "$DDLRUN" --nproc 2 --master-port 0 --all-ranks "$EXAMPLE" --epochs 1 --train-samples 16000 \
      --test-samples 2000 --threads 1 --save "$tmp/weights"
    grep -q 'Accuracy in rank 1 in epoch 1' "$tmp/out" || fail "rank 1 did not report its epoch"
    cmp "$tmp/weights/rank0.safetensors" "$tmp/weights/rank1.safetensors" || fail "the ranks' final weights differ"
    acc=$(sed -n 's/.*Test Accuracy - //p' "$tmp/out")
    [ -n "$acc" ] || fail "no 'Test Accuracy' line"
    above "$acc" 45 || fail "test accuracy $acc% is not above 45% (chance: 10%)"
    ;;
  *) fail "unknown example $name" ;;
esac
echo "example $name: ok"
