#!/usr/bin/env bash
# The examples resume through ft/ (docs/fault_tolerance.md):
#  1. custom_training (a user's own loop, one process) stopped after epoch 2 and run again
#     to epoch 3 resumes from its snapshot and ends as the uninterrupted run: the same
#     epoch-3 loss and accuracy and the same held-out accuracy;
#  2. char_lm under ddlrun --nproc 2, SIGKILLed after a snapshot and run again, resumes and
#     ends with the uninterrupted run's validation loss and sample (skipped without the
#     fortunes corpus).
# usage: test_ft_examples.sh   (CUSTOM_TRAINING, CHAR_LM and DDLRUN set by meson)
set -uo pipefail
: "${CUSTOM_TRAINING:?}" "${CHAR_LM:?}" "${DDLRUN:?}"
here=$(cd "$(dirname "$0")/../apps" && pwd)
. "$here/lib.sh"
# The lines that must agree: epoch 3's, the held-out accuracy, char_lm's result and sample.
result() { tr '\r' '\n' <"$1" | grep -aE '^epoch 3:|^ +accuracy |^final: val loss|^sample:' -A1 | sed 's/, [0-9.]* s$//'; }

mkdir -p "$dir/a" "$dir/b"
"$CUSTOM_TRAINING" "$dir/a" >"$dir/straight.txt" 2>&1
check "custom_training runs uninterrupted" "[ $? -eq 0 ]"
"$CUSTOM_TRAINING" "$dir/b" "$dir/ct.snap" 2 >"$dir/first.txt" 2>&1 &&
  "$CUSTOM_TRAINING" "$dir/b" "$dir/ct.snap" 3 >"$dir/second.txt" 2>&1
check "custom_training stopped after epoch 2 resumes at epoch 3" \
  "[ $? -eq 0 ] && grep -q 'resumed from $dir/ct.snap at epoch 3' '$dir/second.txt'"
check "... and ends as the uninterrupted run" \
  "[ -n \"\$(result '$dir/straight.txt')\" ] && [ \"\$(result '$dir/straight.txt')\" = \"\$(result '$dir/second.txt')\" ]"

corpus=/usr/share/games/fortunes
if [ -d "$corpus" ]; then
  lm=(--model lstm --hidden 32 --context 16 --batch 8 --threads 1 --log-every 10 --sample-chars 20 --max-steps 200
      --seed 3)
  "$DDLRUN" --nproc 2 "$CHAR_LM" "${lm[@]}" >"$dir/lm_straight.txt" 2>&1
  check "char_lm runs uninterrupted under ddlrun" "[ $? -eq 0 ]"
  "$DDLRUN" --nproc 2 "$CHAR_LM" "${lm[@]}" --snapshot "$dir/lm.snap" --snapshot-every 20 >"$dir/lm_first.txt" 2>&1 &
  job=$!
  for _ in $(seq 1 600); do [ -f "$dir/lm.snap" ] && break; sleep 0.05; done
  for p in $(pgrep -f -- "--snapshot $dir/lm.snap" || true); do kill -9 "$p" 2>/dev/null; done  # this job's only
  wait $job 2>/dev/null
  first=$?
  check "char_lm's first run was killed before its end" "[ $first -ne 0 ] && [ -z \"\$(result '$dir/lm_first.txt')\" ]"
  "$DDLRUN" --nproc 2 "$CHAR_LM" "${lm[@]}" --snapshot "$dir/lm.snap" --snapshot-every 20 >"$dir/lm_second.txt" 2>&1
  check "char_lm killed after a snapshot resumes from it" "[ $? -eq 0 ] && grep -q 'resumed from $dir/lm.snap' '$dir/lm_second.txt'"
  check "... and ends with the uninterrupted run's validation loss and sample" \
    "[ -n \"\$(result '$dir/lm_straight.txt')\" ] && [ \"\$(result '$dir/lm_straight.txt')\" = \"\$(result '$dir/lm_second.txt')\" ]"
fi

[ $fail -eq 0 ] || { for f in "$dir"/*.txt; do echo "== $f"; tail -5 "$f"; done; }
exit $fail
