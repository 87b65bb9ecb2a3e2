#!/usr/bin/env bash
# End-to-end checks of train_cifar's datasets (suite "apps"): every --dataset reads its
# on-disk format and honours --train-samples / --test-samples:
#  1. fashion-mnist (the installed files) with 256/128 samples: the header, the batches,
#     the class names, and per-class supports equal to the first 128 test labels;
#  2. mnist from a --data directory of IDX files written here (and refused without --data);
#  3. folder: PNGs in train/<class>/ and test/<class>/, classes named after the folders;
#  4. cifar10 from the five data_batch files and test_batch written here; augmentation is
#     on by default for cifar10 (the run equals --augment true, not --augment false) and
#     off for the others.
# Generated data: make_datasets.py, class patterns plus noise that a few steps learn.
set -uo pipefail
: "${TRAIN_CIFAR:?}"
command -v python3 >/dev/null || { echo "python3 is needed to write the data files"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
# (CLI11 refuses a flag given twice: the runs below add what they vary.)
common=(--model mlp --threads 1 --loader-workers 1 --log-every 100 --no-progress --seed 3)
params() { grep -oE 'model mlp \([0-9]+ parameters\)' "$1" | grep -oE '[0-9]+'; }
# The MLP's input width, from its parameter count (in x 512 x 256 x CLASSES, with biases).
inputs() { local p; p=$(params "$1") && echo $(((p - 512 - 512 * 256 - 256 - 257 * $2) / 512)); }
accuracy() { grep -oE 'test accuracy [0-9.]+% on' "$1" | grep -oE '[0-9.]+' | head -1; }
above() { python3 -c "import sys; sys.exit(not float('$1' or 0) > $2)"; }
losses() { grep -o '"loss":[^,]*' "$1"; }

# 1. Fashion-MNIST at its default path, when installed.
fm=/usr/share/datasets/fashion-mnist
if [ -e "$fm/t10k-labels-idx1-ubyte.gz" ] || [ -e "$fm/t10k-labels-idx1-ubyte" ]; then
  "$TRAIN_CIFAR" "${common[@]}" --dataset fashion-mnist --train-samples 256 --test-samples 128 --batch-size 32 --epochs 1 \
    --metrics "$dir/fm.jsonl" >"$dir/fm.txt" 2>&1
  check "fashion-mnist: runs (exit 0)" "[ $? -eq 0 ]"
  check "fashion-mnist: the header counts 256 train / 128 test, 8 batches per epoch" \
    "grep -q 'dataset fashion-mnist (256 train / 128 test).* 8 batches per epoch' '$dir/fm.txt'"
  check "fashion-mnist: 8 steps logged" "[ \$(grep -c '\"event\":\"step\"' '$dir/fm.jsonl') -eq 8 ]"
  # Per-class counts of the first 128 test labels, read from the file itself.
  support=$(python3 -c 'import gzip, sys
p = sys.argv[1]; raw = open(p, "rb").read()
raw = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
print(",".join(str(raw[8:8 + 128].count(bytes([c]))) for c in range(10)))' \
    "$(ls "$fm"/t10k-labels-idx1-ubyte* | head -1)")
  check "fashion-mnist: report and matrix consistent, supports those of the first 128 labels ($support)" \
    "checks report '$dir/fm.txt' --images 128 --support '$support' \
       --classes 'T-shirt/top,Trouser,Pullover,Dress,Coat,Sandal,Shirt,Sneaker,Bag,Ankle boot'"
else
  echo "skip fashion-mnist: not installed at $fm"
fi

# 2. MNIST from IDX files.
python3 "$here/make_datasets.py" mnist "$dir/mnist" --train 80 --test 40
"$TRAIN_CIFAR" "${common[@]}" --batch-size 16 --dataset mnist --data "$dir/mnist" --epochs 2 >"$dir/mn.txt" 2>&1
check "mnist: runs on the IDX files (exit 0)" "[ $? -eq 0 ]"
check "mnist: the header counts 80 train / 40 test, 5 batches per epoch" \
  "grep -q 'dataset mnist (80 train / 40 test).* 5 batches per epoch' '$dir/mn.txt'"
check "mnist: classes 0..9, report and matrix consistent" \
  "checks report '$dir/mn.txt' --images 40 --classes 0,1,2,3,4,5,6,7,8,9"
check "mnist: it learns the labelled patterns (test accuracy $(accuracy "$dir/mn.txt") > 50%)" \
  "above '$(accuracy "$dir/mn.txt")' 50"
"$TRAIN_CIFAR" "${common[@]}" --batch-size 16 --dataset mnist --data "$dir/mnist" --train-samples 48 --test-samples 24 --epochs 1 \
  >"$dir/mn48.txt" 2>&1
check "mnist: --train-samples 48 --test-samples 24" "grep -q 'dataset mnist (48 train / 24 test).* 3 batches per epoch' '$dir/mn48.txt'"
"$TRAIN_CIFAR" "${common[@]}" --batch-size 16 --dataset mnist --epochs 1 --train-samples 16 --test-samples 16 >"$dir/mnd.txt" 2>&1
check "mnist without --data is refused, naming --data" "[ $? -ne 0 ] && grep -q -- '--data' '$dir/mnd.txt'"

# 3. An image folder of PNGs (16x16, resized to 32x32).
python3 "$here/make_datasets.py" folder "$dir/folder" --train 48 --test 24
"$TRAIN_CIFAR" "${common[@]}" --batch-size 16 --dataset folder --data "$dir/folder" --epochs 2 >"$dir/fo.txt" 2>&1
check "folder: runs on the PNGs (exit 0)" "[ $? -eq 0 ]"
check "folder: the header counts 48 train / 24 test" "grep -q 'dataset folder (48 train / 24 test)' '$dir/fo.txt'"
check "folder: three classes named after the folders, report and matrix consistent" \
  "checks report '$dir/fo.txt' --images 24 --classes circle,square,star --support 8,8,8"
check "folder: it learns (test accuracy $(accuracy "$dir/fo.txt") > 60%)" "above '$(accuracy "$dir/fo.txt")' 60"
"$TRAIN_CIFAR" "${common[@]}" --batch-size 16 --dataset folder --data "$dir/folder" --train-samples 32 --test-samples 12 --epochs 1 \
  >"$dir/fo32.txt" 2>&1
check "folder: --train-samples 32 --test-samples 12" "grep -q 'dataset folder (32 train / 12 test).* 2 batches per epoch' '$dir/fo32.txt'"

# 4. CIFAR-10's binary version: 80 training records over five files, 40 test records.
python3 "$here/make_datasets.py" cifar10 "$dir/cifar" --train 80 --test 40
cf() { "$TRAIN_CIFAR" "${common[@]}" --batch-size 16 --dataset cifar10 --data "$dir/cifar" "$@"; }
cf --epochs 2 --metrics "$dir/cf.jsonl" >"$dir/cf.txt" 2>&1
check "cifar10: runs on the binary files (exit 0)" "[ $? -eq 0 ]"
check "cifar10: the header counts 80 train / 40 test, 5 batches per epoch" \
  "grep -q 'dataset cifar10 (80 train / 40 test).* 5 batches per epoch' '$dir/cf.txt'"
check "cifar10: CIFAR's class names, report and matrix consistent" \
  "checks report '$dir/cf.txt' --images 40 --classes airplane,automobile,bird,cat,deer,dog,frog,horse,ship,truck"
check "cifar10: it learns (test accuracy $(accuracy "$dir/cf.txt") > 30%)" "above '$(accuracy "$dir/cf.txt")' 30"
cf --train-samples 48 --test-samples 24 --epochs 1 >"$dir/cf48.txt" 2>&1
check "cifar10: --train-samples 48 --test-samples 24" "grep -q 'dataset cifar10 (48 train / 24 test).* 3 batches per epoch' '$dir/cf48.txt'"
cf --epochs 2 --augment true --metrics "$dir/cft.jsonl" >/dev/null 2>&1
cf --epochs 2 --augment false --metrics "$dir/cff.jsonl" >/dev/null 2>&1
check "cifar10: augmentation is on by default (same losses as --augment true)" \
  "[ -n \"\$(losses '$dir/cf.jsonl')\" ] && diff <(losses '$dir/cf.jsonl') <(losses '$dir/cft.jsonl') >/dev/null"
check "cifar10: --augment false changes the losses" "! diff <(losses '$dir/cf.jsonl') <(losses '$dir/cff.jsonl') >/dev/null"
check "cifar10: the header says augmentation is on" "grep -q 'augmentation on (random crop, horizontal flip)' '$dir/cf.txt'"
check "mnist: the header says augmentation is off" "grep -q 'augmentation off' '$dir/mn.txt'"
"$TRAIN_CIFAR" "${common[@]}" --batch-size 16 --dataset mnist --data "$dir/mnist" --epochs 1 --metrics "$dir/mn1.jsonl" >/dev/null 2>&1
"$TRAIN_CIFAR" "${common[@]}" --batch-size 16 --dataset mnist --data "$dir/mnist" --epochs 1 --augment false --metrics "$dir/mn0.jsonl" >/dev/null 2>&1
check "mnist: augmentation is off by default (same losses as --augment false)" \
  "[ -n \"\$(losses '$dir/mn1.jsonl')\" ] && diff <(losses '$dir/mn1.jsonl') <(losses '$dir/mn0.jsonl') >/dev/null"
"$TRAIN_CIFAR" "${common[@]}" --batch-size 16 --dataset cifar10 >"$dir/cfd.txt" 2>&1
check "cifar10 without --data is refused, naming --data" "[ $? -ne 0 ] && grep -q -- '--data' '$dir/cfd.txt'"
# The images' size as the model sees it: mnist's 28x28 are padded to 32x32, folder's resized.
check "folder and cifar10 images are 3x32x32 (3072 inputs), mnist 1x32x32 (1024): the MLP's size says \
$(inputs "$dir/fo.txt" 3), $(inputs "$dir/cf.txt" 10) and $(inputs "$dir/mn.txt" 10)" \
  "[ \"\$(inputs '$dir/fo.txt' 3)\" = 3072 ] && [ \"\$(inputs '$dir/cf.txt' 10)\" = 3072 ] &&
   [ \"\$(inputs '$dir/mn.txt' 10)\" = 1024 ]"

[ $fail -eq 0 ] || { for f in "$dir"/*.txt; do echo "== $f"; tail -5 "$f"; done; }
exit $fail
