#!/usr/bin/env bash
# ddl-grade --json writes results.json whole, replacing whatever is at the path: a FIFO
# there (nobody reading) must not hang it, and a symlink there must not redirect the write
# into the file it points to. The grade itself fails here (no plugin): only the file matters.
set -uo pipefail
: "${DDL_GRADE:?}"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

mkfifo "$dir/fifo.json"
timeout 30 "$DDL_GRADE" --lab ring --ranks 2 --json "$dir/fifo.json" >"$dir/out1.txt" 2>&1
rc=$?
check "a FIFO at --json does not hang ddl-grade (rc $rc)" '[ "$rc" != 124 ]'
check "results.json replaced the FIFO" '[ -f "$dir/fifo.json" ] && [ ! -p "$dir/fifo.json" ] && grep -q "\"score\"" "$dir/fifo.json"'

echo precious >"$dir/victim"
ln -s "$dir/victim" "$dir/link.json"
timeout 30 "$DDL_GRADE" --lab ring --ranks 2 --json "$dir/link.json" >"$dir/out2.txt" 2>&1
check "a symlink at --json is replaced, its target untouched" \
  '[ "$(cat "$dir/victim")" = precious ] && [ ! -L "$dir/link.json" ] && grep -q "\"score\"" "$dir/link.json"'
exit $fail
