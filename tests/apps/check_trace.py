#!/usr/bin/env python3
"""Checks a merged --trace file of train_cifar (tests/apps/test_trace_job.sh).

check_trace.py FILE WORLD [--ddp] [--ring] [--skew-rank R --skew-us US] [--host NAME] [--module TOP]
Prints one line per failed check and exits 1 if any failed.
"""
import argparse
import collections
import json
import sys

failures = []
# Times are exact nanoseconds written as microseconds with three decimals; sums of parsed
# floats may differ by an ulp, far below the 1 ns a real crossing takes.
EPS_US = 1e-4


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def spans(events, pid, tid=None, name=None, cat=None):
    return [e for e in events if e["ph"] == "X" and e["pid"] == pid and (tid is None or e["tid"] == tid)
            and (name is None or e["name"] == name) and (cat is None or e.get("cat") == cat)]


def inside(t, span):
    return span["ts"] <= t <= span["ts"] + span["dur"]


def check_nesting(events):
    """Per track, in file order (as viewers read it): starts never go back, and each complete
    event either starts after the enclosing one ends or ends inside it. A child written
    before its parent of the same start fails here (viewers draw it beside the parent)."""
    by_track = collections.defaultdict(list)
    for e in events:
        if e["ph"] == "X":
            check(e["dur"] >= 0, f"'{e['name']}' at {e['ts']} has a negative duration {e['dur']}")
            by_track[(e["pid"], e["tid"])].append(e)
    for track, xs in by_track.items():
        stack = []
        for prev, e in zip([None] + xs, xs):
            if prev is not None and e["ts"] < prev["ts"]:
                check(False, f"track {track}: '{e['name']}' at {e['ts']} is written after '{prev['name']}' at {prev['ts']}")
                return
            while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"] + EPS_US:
                stack.pop()
            if stack:
                parent = stack[-1]
                ok = e["ts"] + e["dur"] <= parent["ts"] + parent["dur"] + EPS_US
                check(ok, f"track {track}: '{e['name']}' at {e['ts']} (dur {e['dur']}) crosses the end of "
                          f"'{parent['name']}' at {parent['ts']} (dur {parent['dur']})")
                if not ok:
                    return
            stack.append(e)


def check_buckets(events, r):
    """DDP's bucket async spans: each end pairs with a begin of the same name and id, never
    before it; returns the begins."""
    open_by_key = collections.defaultdict(list)
    begins = []
    for e in events:
        if e["pid"] != r or e.get("cat") != "ddp" or e["ph"] not in ("b", "e"):
            continue
        key = (e["name"], json.dumps(e["id2"], sort_keys=True))
        if e["ph"] == "b":
            open_by_key[key].append(e)
            begins.append(e)
        elif not open_by_key[key]:
            check(False, f"rank {r}: '{e['name']}' ends at {e['ts']} without a begin of id {key[1]}")
        else:
            b = open_by_key[key].pop()
            check(e["ts"] >= b["ts"], f"rank {r}: '{e['name']}' ends at {e['ts']}, before its begin at {b['ts']}")
            check("unfinished" not in e.get("args", {}), f"rank {r}: '{e['name']}' closed at the trace end")
    unended = [k for k, v in open_by_key.items() if v]
    check(not unended, f"rank {r}: bucket spans without an end: {unended}")
    return begins


def check_clock(p, r):
    """Two estimates, before and after the trace; on one machine the true drift is 0, so the
    drift found is no larger than what the two error bounds allow over their distance."""
    check(p.get("clock_estimates") == 2, f"rank {r}: {p.get('clock_estimates')} clock estimates, expected 2")
    if p.get("clock_estimates") != 2:
        return
    check(p["clock_offset_error_us"] == max(p["clock_offset_start_error_us"], p["clock_offset_end_error_us"]),
          f"rank {r}: the bound is not the larger estimate's error")
    allowed_ppm = 1e6 * (p["clock_offset_start_error_us"] + p["clock_offset_end_error_us"] + 0.002) / p["clock_estimates_apart_us"]
    check(abs(p["clock_drift_ppm"]) <= allowed_ppm + 0.001,
          f"rank {r}: drift {p['clock_drift_ppm']} ppm on one machine, more than the bounds allow ({allowed_ppm:.3f})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("world", type=int)
    ap.add_argument("--ddp", action="store_true")
    ap.add_argument("--ring", action="store_true")
    ap.add_argument("--skew-rank", type=int, default=-1)
    ap.add_argument("--skew-us", type=float, default=0)
    ap.add_argument("--host", default="")
    ap.add_argument("--module", default="features", help="a top-level block of the model")
    a = ap.parse_args()

    with open(a.file) as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    meta = doc["otherData"]["ddl_trace"]
    procs = {p["pid"]: p for p in meta["processes"]}
    check(sorted(procs) == list(range(a.world)), f"one process entry per rank in otherData, got {sorted(procs)}")
    names = {}
    threads = collections.defaultdict(dict)
    for e in events:
        check("pid" in e and "ph" in e and "name" in e, f"event without pid/ph/name: {e}")
        if e["ph"] == "M" and e["name"] == "process_name":
            names[e["pid"]] = e["args"]["name"]
        if e["ph"] == "M" and e["name"] == "thread_name":
            threads[e["pid"]][e["args"]["name"]] = e["tid"]
        if e["ph"] != "M":
            check(e["ts"] >= 0, f"negative timestamp {e['ts']} ({e['name']})")
    for r in range(a.world):
        want = f"rank {r}" + (f" ({a.host})" if a.host else "")
        check(names.get(r) == want, f"process {r} is named '{names.get(r)}', expected '{want}'")
        for t in ("compute", "data loader 0") + (("comm",) if a.world > 1 else ()):
            check(t in threads[r], f"rank {r} has no '{t}' thread track (has {sorted(threads[r])})")
        compute = threads[r].get("compute")
        for phase in ("data", "forward", "backward", "optimizer", "step"):
            check(len(spans(events, r, compute, phase, "phase")) > 0, f"rank {r}: no '{phase}' phase span on compute")
        check(len(spans(events, r, compute, "sgd step", "optimizer")) > 0, f"rank {r}: no optimizer span")
        check(len(spans(events, r, compute, a.module, "forward")) > 0, f"rank {r}: no forward span of '{a.module}'")
        check(len(spans(events, r, compute, a.module + " (backward)", "backward")) > 0,
              f"rank {r}: no backward span of '{a.module}'")
        check(len(spans(events, r, threads[r].get("data loader 0"), "load batch", "data")) > 0,
              f"rank {r}: no batch span on the data loader thread")
        if a.world > 1:
            comm = spans(events, r, threads[r].get("comm"), cat="comm")
            check(any(s["args"].get("bytes_sent", 0) > 0 for s in comm), f"rank {r}: no comm span with bytes sent")
            check(any(e["ph"] == "C" and e["pid"] == r and e["args"].get("sent", 0) > 0 for e in events),
                  f"rank {r}: no traffic counter")
        check(procs[r]["dropped_events"] == 0, f"rank {r} dropped events")
        if a.world > 1:
            check_clock(procs[r], r)

        backward = spans(events, r, compute, "backward", "phase")
        if a.ddp:
            begins = check_buckets(events, r)
            check(len(begins) > 0, f"rank {r}: no bucket spans")
            check(all(b["args"]["bytes"] > 0 for b in begins), f"rank {r}: a bucket span without bytes")
            in_bwd = [b for b in begins if any(inside(b["ts"], s) for s in backward)]
            check(len(in_bwd) > 0, f"rank {r}: no bucket launched during a backward span (overlap not visible)")
            ready = [e for e in events if e["ph"] == "i" and e["pid"] == r and e["name"] == "grad ready"]
            check(len(ready) > 0 and all(any(inside(e["ts"], s) for s in backward) for e in ready),
                  f"rank {r}: gradient-ready instants outside backward spans")
            launches = [e for e in events if e["ph"] == "i" and e["pid"] == r and e["name"] == "bucket launch"]
            check(len(launches) == len(begins), f"rank {r}: {len(launches)} launch instants, {len(begins)} buckets")
        if a.ring:
            steps = [s for s in spans(events, r, compute, cat="sync") if s["name"].startswith("ring ")]
            check(any(s["name"] == "ring reduce-scatter step" for s in steps), f"rank {r}: no ring reduce-scatter step")
            check(any(s["name"] == "ring all-gather step" for s in steps), f"rank {r}: no ring all-gather step")
            p2p = [s for s in events if s["ph"] == "X" and s["pid"] == r and s["name"] in ("send", "recv")]
            check(any(s["args"].get("bytes", 0) > 0 and "peer" in s["args"] for s in p2p),
                  f"rank {r}: no send/recv span with bytes and peer")
    if a.skew_rank >= 0:
        p = procs[a.skew_rank]
        err = abs(p["clock_offset_us"] - a.skew_us)
        check(err <= p["clock_offset_error_us"] + 1,
              f"rank {a.skew_rank}: offset {p['clock_offset_us']} us, injected {a.skew_us} us, bound "
              f"{p['clock_offset_error_us']} us")
        # Aligned: each step's last all-reduce ends at nearly the same time on every rank.
        ends = {r: sorted(s["ts"] + s["dur"] for s in spans(events, r, name="wait for buckets")) for r in range(a.world)}
        if all(ends.values()) and len(set(len(v) for v in ends.values())) == 1:
            gap = max(abs(x - y) for x, y in zip(ends[0], ends[a.skew_rank]))
            check(gap < 50_000, f"after alignment the ranks' bucket waits end {gap:.0f} us apart")
        else:
            check(False, f"'wait for buckets' spans missing or unequal: { {r: len(v) for r, v in ends.items()} }")
    check_nesting(events)
    print(f"{a.file}: {len(events)} events, {len(failures)} failed checks")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
