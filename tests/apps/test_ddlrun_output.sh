#!/usr/bin/env bash
# What ddlrun shows of its workers' output (suite "dist"; docs/dist.md "Output"): rank 0's
# lines as they are, other ranks' only on stderr or when they warn, --all-ranks prefixes all,
# --log-dir keeps everything, a failing rank's hidden tail, live lines from a program that
# never flushes, and DDL_PROGRESS with the progress bar's relay under a terminal (script(1)).
set -uo pipefail
: "${DDLRUN:?}" "${UNFLUSHED_PRINT:?}"
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

# Each rank: an ordinary line, a warning and an error on stdout, a line on stderr.
chatty='echo "plain line of rank $RANK"; echo "Warning: rank $RANK is slow"; echo "some ERROR in rank $RANK";
echo "stderr line of rank $RANK" >&2'
"$DDLRUN" --nproc 2 sh -c "$chatty" >"$dir/out" 2>"$dir/err"
code=$?
sed 's/^/  | /' "$dir/out" "$dir/err"
check "default mode exits 0" '[ $code = 0 ]'
check "rank 0's lines, unprefixed, on stdout" \
  'grep -qx "plain line of rank 0" "$dir/out" && grep -qx "Warning: rank 0 is slow" "$dir/out"'
check "rank 0's stderr, unprefixed, on stderr" 'grep -qx "stderr line of rank 0" "$dir/err"'
check "rank 1's warning and error lines, prefixed" \
  'grep -qx "\[rank 1/2\] Warning: rank 1 is slow" "$dir/out" && grep -qx "\[rank 1/2\] some ERROR in rank 1" "$dir/out"'
check "rank 1's stderr, prefixed" 'grep -qx "\[rank 1/2\] stderr line of rank 1" "$dir/err"'
check "not rank 1's ordinary line" '! grep -q "plain line of rank 1" "$dir/out" "$dir/err"'
check "no DDL_PROGRESS=1 without a terminal" \
  '[ "$("$DDLRUN" --nproc 2 sh -c "echo p=\$DDL_PROGRESS" | tr "\n" " ")" = "p=0 " ]'

"$DDLRUN" --nproc 2 --all-ranks sh -c "$chatty" >"$dir/all" 2>&1
check "--all-ranks: every line of both ranks, prefixed" \
  '[ "$(grep -c "^\[rank [01]/2\] " "$dir/all")" = 8 ] && grep -qx "\[rank 1/2\] plain line of rank 1" "$dir/all" &&
   grep -qx "\[rank 0/2\] plain line of rank 0" "$dir/all"'
"$DDLRUN" --nproc 2 -v sh -c "$chatty" >"$dir/v" 2>&1
check "-v is --all-ranks" '[ "$(grep -c "^\[rank [01]/2\] " "$dir/v")" = 8 ]'

# --log-dir: everything, both streams, a bar's redraws collapsed, whatever the console shows.
"$DDLRUN" --nproc 2 --log-dir "$dir/logs/job" sh -c "$chatty"'; printf "bar 10%%\r\033[Kbar 100%%\n"' >/dev/null 2>&1
for r in 0 1; do
  check "--log-dir: rank$r.log names rank, host and command" \
    "head -1 '$dir/logs/job/rank$r.log' | grep -q '^ddlrun: rank $r/2 on host .*: sh -c '"
  check "--log-dir: rank$r.log has all of rank $r's lines, the bar as its last state" \
    "[ \"\$(tail -n +2 '$dir/logs/job/rank$r.log' | LC_ALL=C sort | tr '\n' ,)\" = \
'Warning: rank $r is slow,bar 100%,plain line of rank $r,some ERROR in rank $r,stderr line of rank $r,' ]"
done
"$DDLRUN" --nproc 1 --log-dir /proc/no/such/dir true >"$dir/badlog" 2>&1
code=$?
check "--log-dir that cannot be made: status 2, saying why" \
  '[ $code = 2 ] && grep -q "^ddlrun: --log-dir /proc/no/such/dir: cannot create it" "$dir/badlog"'

# A rank that fails on its own: its last 20 hidden lines are shown; a rank ddlrun stopped: not.
"$DDLRUN" --nproc 3 --grace 2 sh -c 'for i in $(seq 30); do echo "line $i of rank $RANK"; done
  [ "$RANK" = 1 ] && exit 3; exec sleep 30' >"$dir/fail" 2>&1
code=$?
sed 's/^/  | /' "$dir/fail" | tail -24
check "a failing rank's status is ddlrun's" '[ $code = 3 ]'
check "its last 20 lines, prefixed, under a heading" \
  'grep -q "^ddlrun: rank 1'"'"'s last 20 lines of output" "$dir/fail" &&
   [ "$(grep -c "^\[rank 1/3\] line [0-9]* of rank 1$" "$dir/fail")" = 20 ] &&
   grep -qx "\[rank 1/3\] line 30 of rank 1" "$dir/fail" && ! grep -q "line 10 of rank 1$" "$dir/fail"'
check "not the tail of rank 2, which ddlrun stopped" '! grep -q "of rank 2" "$dir/fail"'

# A program that prints with printf and never flushes: the line arrives while it sleeps.
"$DDLRUN" --nproc 1 "$UNFLUSHED_PRINT" 3 | while IFS= read -r line; do echo "$(date +%s%3N) $line"; done >"$dir/live"
end=$(date +%s%3N)
sed 's/^/  | /' "$dir/live"
first=$(awk 'NR == 1 { print $1 }' "$dir/live")
check "an unflushed printf line arrives >= 2 s before the program exits (${first:-?} vs $end ms)" \
  '[ -n "$first" ] && [ $((end - first)) -ge 2000 ] && grep -q " printed before sleeping$" "$dir/live"'
check "its unfinished last line is relayed at exit" 'grep -q " and an unfinished line$" "$dir/live"'

# Under a terminal: rank 0 gets DDL_PROGRESS=1 (the others 0, and all 0 with --all-ranks);
# rank 0's bytes pass live, "\r" redraws included, and rank 1's warning clears the bar's line
# first, then the bar is drawn again.
script -qec "'$DDLRUN' --nproc 2 sh -c 'echo p\$RANK=\$DDL_PROGRESS >&2'" /dev/null >"$dir/tty" 2>&1
script -qec "'$DDLRUN' --nproc 2 --all-ranks sh -c 'echo p\$RANK=\$DDL_PROGRESS'" /dev/null >"$dir/tty_all" 2>&1
check "under a terminal: DDL_PROGRESS=1 for rank 0, 0 for rank 1" \
  'grep -q "^p0=1" "$dir/tty" && grep -q "^\[rank 1/2\] p1=0" "$dir/tty"'
check "under a terminal with --all-ranks: DDL_PROGRESS=0 for both" \
  'grep -q "^\[rank 0/2\] p0=0" "$dir/tty_all" && grep -q "^\[rank 1/2\] p1=0" "$dir/tty_all"'
bar='if [ "$RANK" = 0 ]; then printf "\rstep 1/3"; sleep 1; printf "\rstep 2/3"; sleep 2; printf "\rstep 3/3\n";
else sleep 2; echo "warning: rank 1 lags"; fi'
script -qec "'$DDLRUN' --nproc 2 sh -c '$bar'" /dev/null >"$dir/bar" 2>&1
od -c "$dir/bar" | sed 's/^/  | /' | head -12
check "the bar's redraws reach the terminal as they are" 'grep -q $'"'"'\rstep 1/3\rstep 2/3'"'"' "$dir/bar"'
check "rank 1's line clears the bar's line, then the bar is redrawn" \
  'grep -q $'"'"'step 2/3\r\e\[K\[rank 1/2\] warning: rank 1 lags\r\nstep 2/3\rstep 3/3'"'"' "$dir/bar"'
exit $fail
