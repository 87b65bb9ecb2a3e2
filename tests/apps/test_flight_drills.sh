#!/usr/bin/env bash
# Flight-recorder drills (docs/dist.md, "When a job hangs"): ddlrun runs three ranks of
# tests/dist/helpers/flight_drill.cpp and rank 1 breaks the job in one known way (DRILL:
# freeze = SIGSTOP, die = SIGKILL as on a host that lost power, segv = a crash, desync = a broadcast where
# the others all-reduce, nostart = never joins, cut = its host's link goes down). ddlrun's
# verdict, on its console and in --log-dir's verdict.txt, must name rank 1, its host and the
# collective (or the rendezvous), within the timeout plus a margin. As root the ranks run on
# emulated hosts (--hosts 3, host1); otherwise on this machine (--nproc 3), where the cut
# link cannot be made and exits 77 (skipped). FLIGHT_DRILL_LOCAL=1 runs on this machine as root too.
set -uo pipefail
: "${DDLRUN:?}" "${FLIGHT_DRILL:?}"
drill=${1:?usage: test_flight_drills.sh freeze|die|segv|desync|nostart|cut}
TIMEOUT=3   # DDL_TIMEOUT, seconds
MARGIN=15   # the position exchange, SIGUSR2's window, --grace, building the hosts

out=$(mktemp -d /tmp/ddl_flight_drill.XXXXXX)
trap 'rm -rf "$out"' EXIT
if [ "${FLIGHT_DRILL_LOCAL:-0}" != 1 ] && [ "$(id -u)" = 0 ] && command -v ip >/dev/null && command -v tc >/dev/null && command -v unshare >/dev/null; then
  where=(--hosts 3 --link 1gbit)
  host=host1
else
  [ "$drill" = cut ] && { echo "skipped: cutting a link needs root (ddlrun --hosts)"; exit 77; }
  where=(--nproc 3)
  host=$(hostname)
fi
case $drill in
  freeze | die | segv | desync | nostart) flags=(--fault "$drill" --fault-rank 1 --fault-step 4 --trace "$out/trace.json") ;;
  cut)
    flags=(--fault none)
    where+=(--link-flap host1=2,60)
    ;;
  *) echo "unknown drill $drill"; exit 2 ;;
esac
# Steps 0-3 all-reduce (#1-#4); rank 1's fault comes at step 4, where the others call #5.
case $drill in
  freeze | die | segv) expect="stall: rank 1 on host $host stopped first, at all_reduce #5" ;;
  desync) expect="desync: rank 1 on host $host stopped first, at broadcast #5" ;;
  nostart) expect="stall: rank 1 on host $host stopped first, at the rendezvous" ;;
  cut) expect="stall: rank 1 on host $host stopped first, at all_reduce #" ;;
esac

start=$(date +%s.%N)
timeout 90 "$DDLRUN" "${where[@]}" --timeout "$TIMEOUT" --grace 2 --log-dir "$out" "$FLIGHT_DRILL" "${flags[@]}" \
  >"$out/console" 2>&1
code=$?
took=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { printf "%.1f", a - b }')

fail=0
check() { if eval "$2"; then echo "ok   $drill: $1"; else echo "FAIL $drill: $1"; fail=1; fi; }
# The cut link's clock starts once the hosts are up, two seconds in.
limit=$((TIMEOUT + MARGIN))
[ "$drill" = cut ] && limit=$((limit + 2))
check "ddlrun exits non-zero ($code)" "[ $code != 0 ] && [ $code != 124 ]"
check "within the timeout plus $MARGIN s (${took} s)" "awk 'BEGIN { exit !($took <= $limit) }'"
check "the console shows the verdict: $expect" "grep -qF 'ddlrun: verdict: $expect' '$out/console'"
check "verdict.txt says so too" "grep -qF 'ddlrun: verdict: $expect' '$out/verdict.txt'"
check "the surviving ranks dumped their flight recorders" \
  "[ -s '$out/flight/attempt0/rank0.json' ] && [ -s '$out/flight/attempt0/rank2.json' ]"
case $drill in
  freeze) check "it was frozen" "grep -q 'why: it was frozen' '$out/verdict.txt'" ;;
  die) check "the survivors wrote their part of --trace" \
    "grep -q '\"traceEvents\"' '$out/trace.rank0.partial.json' && grep -q '\"traceEvents\"' '$out/trace.rank2.partial.json'"
    check "it left no dump" "[ ! -e '$out/flight/attempt0/rank1.json' ] && grep -q 'left no dump' '$out/verdict.txt'" ;;
  segv) check "its dump came from the signal handler" \
    "grep -q 'fatal signal SIGSEGV' '$out/flight/attempt0/rank1.json' && grep -q 'it crashed' '$out/verdict.txt'" ;;
  desync) check "the others called all_reduce #5" "grep -q 'ranks 0,2 called all_reduce' '$out/verdict.txt'" ;;
  nostart) check "it never joined" "grep -q 'never joined the rendezvous' '$out/verdict.txt'" ;;
  # Which survivor fails first, and how, is a race (a timeout that names the silent rank, or a
  # connection another survivor closed): a survivor that names a rank must name rank 1.
  cut) check "a survivor that timed out named rank 1, no other" \
    "! grep -q 'never arrived' '$out/console' || (grep -q 'rank 1 on host host1 never arrived' '$out/console' &&
       ! grep 'never arrived' '$out/console' | grep -qv 'rank 1 on host host1 never arrived')" ;;
esac
[ "$fail" = 0 ] || { echo "--- console:"; tail -n 25 "$out/console"; }
exit $fail
