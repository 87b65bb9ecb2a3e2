#!/usr/bin/env bash
# Every floating-point flag of ddlrun, train_cifar, sync_study and ddl-grade refuses nan,
# inf and values out of its range as a usage error: exit 2, naming the flag, before
# anything runs. CLI::Range let NaN through (its comparisons are false): `ddlrun --grace
# inf` used to SIGKILL the workers at once. Also every other flag error exits 2.
set -uo pipefail
: "${TRAIN_CIFAR:?}" "${DDLRUN:?}" "${SYNC_STUDY:?}" "${DDL_GRADE:?}"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

# refuses FLAG VALUE PROGRAM [ARGS...]: PROGRAM FLAG VALUE ARGS... exits 2, naming the flag.
refuses() {
  local flag=$1 value=$2 prog=$3
  shift 3
  timeout 20 "$prog" "$flag" "$value" "$@" >"$dir/out.txt" 2>&1
  local rc=$?
  check "$(basename "$prog") $flag $value exits 2 naming the flag (rc $rc: $(head -c 160 "$dir/out.txt" | tr '\n' ' '))" \
    '[ "$rc" = 2 ] && grep -q -- "$flag" "$dir/out.txt"'
}

for v in nan inf -inf 1e300; do
  refuses --grace "$v" "$DDLRUN" --nproc 1 true
  refuses --timeout "$v" "$DDLRUN" --nproc 1 true
  for f in --lr --momentum --weight-decay --warmup-epochs --label-smoothing --timeout --target-accuracy; do
    refuses "$f" "$v" "$TRAIN_CIFAR" --dataset synthetic --model mlp --epochs 0
  done
  refuses --timeout "$v" "$DDL_GRADE" --lab ring
done
refuses --grace 3601 "$DDLRUN" --nproc 1 true
refuses --grace -1 "$DDLRUN" --nproc 1 true
# sync_study's --cpu fractions are checked by sync_study itself: a usage error too.
refuses --cpu host1=nan "$SYNC_STUDY" --hosts 2 --links 1gbit
refuses --nproc 1 "$SYNC_STUDY"
# Other flag errors (a value that is no number, an unknown flag) also exit 2.
refuses --nproc x "$DDLRUN" true
refuses --epochs x "$TRAIN_CIFAR"
refuses --repeat x "$SYNC_STUDY"
refuses --ranks-of-nobody 1 "$DDL_GRADE"
refuses --no-such-flag 1 "$TRAIN_CIFAR"
refuses --no-such-flag 1 "$SYNC_STUDY"

# A sane --grace still works.
"$DDLRUN" --nproc 1 --grace 0.5 true >"$dir/ok.txt" 2>&1
ok_rc=$?
check "ddlrun --grace 0.5 runs (rc $ok_rc)" '[ "$ok_rc" = 0 ]'
exit $fail
