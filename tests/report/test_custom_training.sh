#!/usr/bin/env bash
# apps/examples/custom_training: a user's loop with the library's reporting. It runs and
# writes its three files, and each parses: metrics.jsonl as JSON lines (a step line per
# step, an epoch line per epoch, accuracy in percent, the evaluation on the 512 held-out
# samples), trace.json as a Chrome trace with events, report.html with its charts (loss
# curve points = step lines, a 4 x 4 heat map of 512 counts, one step-time bar).
set -uo pipefail
: "${CUSTOM_TRAINING:?}"
command -v python3 >/dev/null || { echo "python3 is needed to read the outputs"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../apps/lib.sh"
"$CUSTOM_TRAINING" "$dir" >"$dir/out.txt" 2>&1
check "custom_training exits 0" "[ $? -eq 0 ]"
[ -s "$dir/report.html" ] || cat "$dir/out.txt"
check "it prints the classification report of the 512 held-out samples" \
  "grep -Eq '^ *accuracy +[0-9.]+ +512$' '$dir/out.txt'"
check "it prints the per-rank table" "grep -q 'Per-rank step times' '$dir/out.txt'"
check "metrics.jsonl: 32 step lines and 3 epoch lines, accuracy in percent" "python3 -c '
import json
ev = [json.loads(l) for l in open(\"$dir/metrics.jsonl\")]
steps = [e for e in ev if e[\"event\"] == \"step\"]
epochs = [e for e in ev if e[\"event\"] == \"epoch\"]
assert len(steps) == 3 * 32 and len(epochs) == 3, (len(steps), len(epochs))
assert all(0 <= e[\"accuracy_pct\"] <= 100 and e[\"total_s\"] > 0 for e in steps)
assert epochs[-1][\"train_accuracy_pct\"] > 80, epochs[-1]
ev = [e for e in ev if e[\"event\"] == \"eval\"][0]
assert ev[\"test_images\"] == 512 and ev[\"test_loss\"] > 0 and ev[\"test_accuracy_pct\"] > 70, ev'"
check "trace.json: a Chrome trace with spans" "python3 -c '
import json
d = json.load(open(\"$dir/trace.json\"))
assert any(e.get(\"ph\") == \"X\" for e in d[\"traceEvents\"]), len(d[\"traceEvents\"])'"
check "report.html: loss points = step lines; a 4 x 4 confusion heat map" \
  "python3 - '$dir' <<'PY'
import re, sys
html = open(sys.argv[1] + '/report.html').read()
loss = re.search(r'data-chart=\"loss\".*?data-series=\"train loss per step\">\s*<polyline[^>]*points=\"([^\"]*)\"', html, re.S)
assert loss and len(loss.group(1).split()) == 96, loss and len(loss.group(1).split())
assert html.count('class=\"cell\"') == 16
assert sum(int(v) for v in re.findall(r'class=\"cell\"[^>]*data-value=\"(\d+)\"', html)) == 512
assert html.count('class=\"bar\" data-category=\"0\"') == 5  # rank 0's five phases
PY"
exit $fail
