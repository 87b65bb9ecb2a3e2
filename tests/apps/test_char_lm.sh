#!/usr/bin/env bash
# apps/examples/char_lm end to end on Debian's fortunes corpus: a small LSTM and a small
# Transformer each train under ddlrun --nproc 2 (DDP over gloo) and must get their
# validation loss well under the 4.74 nats/char of a model that knows nothing (ln 114)
# and under the 3.36 of a unigram model (counts from the training split); bad input
# (an unknown flag, a folder without text) gets a clear error. Skipped without the corpus.
set -uo pipefail
: "${CHAR_LM:?}" "${DDLRUN:?}"
corpus=/usr/share/games/fortunes
[ -d "$corpus" ] || { echo "the fortunes corpus is not installed (apt-get install fortunes): skipped"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
common=(--context 64 --batch 32 --threads 1 --log-every 40 --sample-chars 40)

"$DDLRUN" --nproc 2 "$CHAR_LM" --model lstm --hidden 128 --max-steps 120 --target-val-loss 3.1 \
  "${common[@]}" >"$dir/lstm.txt" 2>&1
status=$?
check "the LSTM trains under ddlrun --nproc 2 to a validation loss below 3.1 nats/char (exit $status)" "[ $status -eq 0 ]"
check "the LSTM run says it used 2 ranks and prints a final validation loss and a sample" \
  "grep -q '2 rank(s)' '$dir/lstm.txt' && grep -q 'final: val loss' '$dir/lstm.txt' && grep -q 'sample:' '$dir/lstm.txt'"

"$DDLRUN" --nproc 2 "$CHAR_LM" --model transformer --d-model 64 --heads 4 --layers 2 --max-steps 80 \
  --target-val-loss 3.2 "${common[@]}" >"$dir/transformer.txt" 2>&1
status=$?
check "a small Transformer trains under ddlrun --nproc 2 to a validation loss below 3.2 (exit $status)" \
  "[ $status -eq 0 ]"

"$CHAR_LM" --bogus 1 >"$dir/bad.txt" 2>&1
status=$?
check "an unknown flag exits 2 naming it" "[ $status -eq 2 ] && grep -q \"unknown flag '--bogus'\" '$dir/bad.txt'"
mkdir "$dir/empty"
"$CHAR_LM" --corpus "$dir/empty" >"$dir/empty.txt" 2>&1
status=$?
check "a folder without text exits 1 naming it" "[ $status -eq 1 ] && grep -q \"$dir/empty holds only 0 bytes\" '$dir/empty.txt'"
[ $fail -eq 0 ] || { tail -n 20 "$dir"/*.txt; }
exit $fail
