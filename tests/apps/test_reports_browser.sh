#!/usr/bin/env bash
# The HTML reports in a real browser: train_cifar --report (2 ranks under ddlrun, 2 epochs,
# synthetic data) and sync_study's study.html, rendered by headless Chromium. From the
# DOM after load (check_report_dom.py): no script errors or console messages, no NaN
# coordinate, nothing loaded from elsewhere, every chart with the series and points the
# run's metrics file and study.csv imply; the slowest-rank exchange's counts and values.
# Pages with a deliberate script error and a NaN attribute must be flagged, or the checks
# prove nothing. An unwritable --report path fails before training.
# Screenshots are kept under $ARTIFACTS (build/meson-logs/artifacts). Skipped (77) without
# chromium or python3.
set -uo pipefail
: "${TRAIN_CIFAR:?}" "${DDLRUN:?}" "${SYNC_STUDY:?}"
command -v chromium >/dev/null || { echo "chromium is not installed (scripts/setup.sh installs it)"; exit 77; }
command -v python3 >/dev/null || { echo "python3 is needed to read the DOM"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../apps/lib.sh"
artifacts=${ARTIFACTS:-$dir/artifacts}
mkdir -p "$artifacts"
dom() { python3 "$here/check_report_dom.py" "$@" | sed 's/^/  /'; }

# Chromium without network, sandbox or profile state (docs: FACTS "Browser tests").
browse() {  # browse FILE.html OUT_PREFIX: OUT_PREFIX.dom, .log and .png
  local flags=(--headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking
    --disable-component-update --disable-sync --enable-logging=stderr --v=0)
  timeout 120 chromium "${flags[@]}" --user-data-dir="$(mktemp -d -p "$dir")" --dump-dom "file://$1" \
    >"$2.dom" 2>"$2.log"
  timeout 120 chromium "${flags[@]}" --user-data-dir="$(mktemp -d -p "$dir")" --window-size=1280,4000 \
    --screenshot="$2.png" "file://$1" >/dev/null 2>>"$2.log"
}

# 1. train_cifar, two ranks: 256 samples / 2 ranks / batch 16 = 8 steps per epoch.
"$DDLRUN" --nproc 2 "$TRAIN_CIFAR" --dataset synthetic --model mlp --epochs 2 --batch-size 16 --train-samples 256 \
  --test-samples 64 --threads 1 --no-progress --metrics "$dir/m.jsonl" --report "$dir/train.html" >"$dir/train.txt" 2>&1
check "train_cifar --report under ddlrun exits 0 and writes the report" "[ $? -eq 0 ] && [ -s '$dir/train.html' ]"
[ -s "$dir/train.html" ] || tail -5 "$dir/train.txt"
browse "$dir/train.html" "$dir/train"
check "chromium renders the training report" "grep -q 'data-chart=\"loss\"' '$dir/train.dom'"
check "the training report's DOM: charts, series, points and values match the metrics" \
  "dom train '$dir/train.dom' --log '$dir/train.log' --metrics '$dir/m.rank0.jsonl' --world 2 --classes 10"

# The exchange's all_reduce is not the strategy's: the same job without it (no --metrics,
# no bar) prints the same all_reduce count, and the summary's pg_ops holds that count.
"$DDLRUN" --nproc 2 "$TRAIN_CIFAR" --dataset synthetic --model mlp --epochs 2 --batch-size 16 --train-samples 256 \
  --test-samples 64 --threads 1 --no-progress >"$dir/plain.txt" 2>&1
calls() { sed -n 's/^.*all_reduce: \([0-9]*\) calls.*$/\1/p' "$1" | head -1; }
with=$(calls "$dir/train.txt") without=$(calls "$dir/plain.txt")
logged=$(python3 -c "import json,sys; print([json.loads(l) for l in open(sys.argv[1])][-1]['pg_ops']['all_reduce']['calls'])" \
  "$dir/m.rank0.jsonl" 2>/dev/null)
check "all_reduce calls: $with with the exchange = $without without it = $logged in pg_ops" \
  "[ -n '$with' ] && [ '$with' = '$without' ] && [ '$with' = '$logged' ]"
cp "$dir/train.png" "$artifacts/train_report.png" 2>/dev/null
check "a screenshot of the training report ($artifacts/train_report.png)" "[ -s '$artifacts/train_report.png' ]"

# 2. The error check must catch an error: the same report with a broken script.
sed 's|</body>|<script>no_such_function_in_the_report();</script></body>|' "$dir/train.html" >"$dir/broken.html"
browse "$dir/broken.html" "$dir/broken"
check "a page with a script error is flagged" "! python3 '$here/check_report_dom.py' errors '$dir/broken.dom' \
  --log '$dir/broken.log' >'$dir/broken.check'"
check "  ... by the page's own error mark" "grep -q 'FAIL the page ran its scripts without errors' '$dir/broken.check'"
# An SVG attribute that is NaN: Chromium logs it as a console error, and the DOM shows it.
sed 's|</body>|<svg width="10" height="10"><rect x="0" y="0" width="5" height="NaN"/></svg></body>|' \
  "$dir/train.html" >"$dir/nan.html"
browse "$dir/nan.html" "$dir/nan"
check "a page with a NaN attribute is flagged" "! python3 '$here/check_report_dom.py' errors '$dir/nan.dom' \
  --log '$dir/nan.log' >'$dir/nan.check'"
check "  ... by the browser's log" "grep -q 'FAIL the browser.s log has no console messages' '$dir/nan.check'"
check "  ... and by the DOM scan" "grep -q 'FAIL no SVG coordinate or value is NaN' '$dir/nan.check'"
[ $fail = 0 ] || cat "$dir/nan.check"

# An unwritable --report path fails at start-up, before any training step.
"$TRAIN_CIFAR" --dataset synthetic --model mlp --train-samples 256 --test-samples 64 --batch-size 16 --threads 1 \
  --no-progress --report "$dir/no/such/dir/r.html" >"$dir/bad.txt" 2>&1
check "train_cifar --report into a missing directory exits 1, naming the path" \
  "[ $? -eq 1 ] && grep -q 'no/such/dir/r.html' '$dir/bad.txt'"
check "  ... before training (no step line)" "! grep -q 'epoch 1 batch' '$dir/bad.txt'"

# 3. sync_study's study.html: two strategies, 2 workers, 4 steps each.
"$SYNC_STUDY" --nproc 2 --strategies ddp ring --train-samples 128 --test-samples 64 --batch-size 16 \
  --out "$dir/study" >"$dir/study.txt" 2>&1
check "sync_study exits 0 and writes study.html" "[ $? -eq 0 ] && [ -s '$dir/study/study.html' ]"
[ -s "$dir/study/study.html" ] || cat "$dir/study.txt"
browse "$dir/study/study.html" "$dir/study"
check "the study report's DOM: a bar per strategy, values from study.csv" \
  "dom study '$dir/study.dom' --log '$dir/study.log' --csv '$dir/study/study.csv'"
cp "$dir/study.png" "$artifacts/study_report.png" 2>/dev/null
check "a screenshot of the study report ($artifacts/study_report.png)" "[ -s '$artifacts/study_report.png' ]"
exit $fail
