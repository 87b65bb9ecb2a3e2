#!/usr/bin/env bash
# train_cifar's DDP bucket sizes (apps/train_cifar/buckets.h): --bucket-cap-mb and
# --first-bucket-mb, or DDL_BUCKET_CAP_MB and DDL_FIRST_BUCKET_MB, the flag winning. Bad
# values (0, negative, nan, inf, not a number) are a usage error naming the flag or the
# variable; good ones are shown in the run header with where they came from, and change
# the buckets DDP builds (the header's layout and the "ddp_buckets" metrics line), which
# always hold every parameter: 4 bytes each.
set -uo pipefail
: "${TRAIN_CIFAR:?}" "${DDLRUN:?}"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
small="--dataset synthetic --model mlp --threads 1 --epochs 1 --batch-size 8 --train-samples 16 --test-samples 8 --no-progress"

# refused WHAT NAME [VAR=VALUE...] -- [FLAGS...]: train_cifar FLAGS, with the variables,
# exits 2 naming NAME.
refused() {
  local what=$1 name=$2 vars=()
  shift 2
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  # shellcheck disable=SC2086
  env "${vars[@]}" timeout 20 "$TRAIN_CIFAR" $small "$@" >"$dir/out.txt" 2>&1
  local rc=$?
  check "$what: exit 2 naming $name (rc $rc: $(head -c 200 "$dir/out.txt" | tr '\n' ' '))" \
    '[ "$rc" = 2 ] && grep -q -- "^$name.*a bucket size is a number of MiB above 0" "$dir/out.txt"'
}
for v in 0 -1 nan abc 1e300; do
  refused "--bucket-cap-mb $v" --bucket-cap-mb -- --bucket-cap-mb "$v"
  refused "--first-bucket-mb $v" --first-bucket-mb -- --first-bucket-mb "$v"
  refused "DDL_BUCKET_CAP_MB=$v" "DDL_BUCKET_CAP_MB=$v" "DDL_BUCKET_CAP_MB=$v" --
  refused "DDL_FIRST_BUCKET_MB=$v" "DDL_FIRST_BUCKET_MB=$v" "DDL_FIRST_BUCKET_MB=$v" --
done

# run NAME [VAR=VALUE...] -- [FLAGS...]: two ranks, output in $dir/NAME, metrics $dir/NAME.jsonl.
run() {
  local name=$1 vars=()
  shift
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  # shellcheck disable=SC2086
  env "${vars[@]}" timeout 60 "$DDLRUN" --nproc 2 "$TRAIN_CIFAR" $small --metrics "$dir/$name.jsonl" "$@" \
    >"$dir/$name" 2>&1 || echo "(exit $?)" >>"$dir/$name"
}
# layout NAME: the bucket sizes in the header, one line ("537640 6291456").
layout() { sed -n 's/.*ddp buckets: .*: [0-9]* buckets\{0,1\} of \(.*\) bytes$/\1/p' "$dir/$1" | head -n 1 | tr -d ,; }
params() { sed -n 's/.*model mlp (\([0-9]*\) parameters).*/\1/p' "$dir/$1" | head -n 1; }
total() { local s=0 b; for b in $(layout "$1"); do s=$((s + b)); done; echo $s; }

run default --
run flags -- --bucket-cap-mb 1 --first-bucket-mb 0.25
run env DDL_BUCKET_CAP_MB=1 DDL_FIRST_BUCKET_MB=0.25 --
run wins DDL_BUCKET_CAP_MB=-3 DDL_FIRST_BUCKET_MB=abc -- --bucket-cap-mb 1 --first-bucket-mb 0.25
check "default: the header says the defaults" "grep -q 'ddp buckets: first 1 MiB (default), then 25 MiB (default): ' '$dir/default'"
check "flags: the header names the flags" \
  "grep -q 'ddp buckets: first 0.25 MiB (--first-bucket-mb), then 1 MiB (--bucket-cap-mb): ' '$dir/flags'"
check "env: the header names the variables" \
  "grep -q 'ddp buckets: first 0.25 MiB (DDL_FIRST_BUCKET_MB), then 1 MiB (DDL_BUCKET_CAP_MB): ' '$dir/env'"
n=$(params default)
for r in default flags env wins; do
  check "$r: the buckets hold every parameter, 4 bytes each ($(total $r) = 4 x $n)" "[ -n '$n' ] && [ $(total $r) = $((4 * n)) ]"
done
check "flags: more buckets than the defaults ($(layout flags) vs $(layout default))" \
  "[ $(layout flags | wc -w) -gt $(layout default | wc -w) ]"
check "flags: the first bucket fits 0.25 MiB" "[ $(layout flags | cut -d' ' -f1) -le $((1 << 18)) ]"
check "env: the same buckets as the flags" "[ '$(layout env)' = '$(layout flags)' ]"
check "the flags win over bad variables" "[ '$(layout wins)' = '$(layout flags)' ] && ! grep -q '(exit' '$dir/wins'"
check "the metrics' ddp_buckets line is the header's layout" \
  "grep -q '\"bucket_bytes\":\[$(layout flags | tr ' ' ,)\]' '$dir/flags.rank0.jsonl'"
[ "$fail" = 0 ] || tail -n 20 "$dir"/default "$dir"/flags
exit "$fail"
