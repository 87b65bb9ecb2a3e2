#!/usr/bin/env python3
"""One strategy's run over emulated hosts (tests/hosts/hosts.sh), measured against its bound.

Reads, in DIR, what the calling script left for each host i: h<i>.log (ddlrun's output),
m<i>.rank<i>.jsonl (train_cifar --metrics) and bytes<i> ("RX TX" of the host's interface
before and after the run, two lines). Prints one JSON object; with --check also ok/FAIL
lines (exit 1 on a FAIL); with --markdown one table row.

Per step, S = B = the model's bytes (4P: the MLP has no buffers), n hosts, one rank each,
R the link rate in bytes/s each way (tbf counts frames, so TCP/IP headers cost ~3-5%).
T* = 2(n-1)/n · S / R is the all-reduce bus bound. Each strategy's least time comes from the
table "On a real link" in docs/sync.md (--doc): least = T* / its fraction for n hosts, and
for stepwise (measured against B / R) least = S / R. Without that table (or for an n it
does not list), these built-in values, the same as the table's, are used:
  strategy                          least time (units of S/R)       bytes sent by rank r
  ddp, allreduce, ring, local-sgd:1 2(n-1)/n                        2(n-1)/n
  gather-scatter                    n-1 (the hub's link, both ways) r=0: n-1, others 1
  param-server                      (n-1) + ceil(log2 n)            push 1 (r>0) + tree sends
  stepwise                          1 (a pipelined chain)           1, the last rank 0
gather-scatter works in pieces: the hub sends a piece's average back only once all of it
has arrived, so with pieces of L bytes (--piece) it needs at least (n-1)·(S + L)/R; the
larger of that and the table's bound is its least time.
The achieved fraction is least / the measured comm wait per step (train_cifar's mean, first
step excluded, slowest rank); "bus" is T* / comm wait for every strategy. The veth check
compares each host's transmitted bytes with the algorithm's (plus the initial broadcast of
rank 0's model, a binomial tree); TCP/IP and Ethernet headers add a few percent.
"""
import argparse
import json
import math
import re
import sys


def rate_bits(text):
    m = re.fullmatch(r"(\d+)(bit|kbit|mbit|gbit)?", text.lower())
    if not m:
        raise SystemExit(f"link_stats: rate '{text}' is not NUMBER[bit|kbit|mbit|gbit]")
    return int(m.group(1)) * {None: 1, "bit": 1, "kbit": 10**3, "mbit": 10**6, "gbit": 10**9}[m.group(2)]


def tree_sent(rank, n, root=0):
    """Copies a rank sends in Gloo's binomial broadcast (as dist/traffic.cpp counts them)."""
    vrank, dim, sent = (rank + n - root) % n, 0, 0
    while (1 << dim) < n:
        dim += 1
    mask = (1 << dim) - 1
    for i in range(dim):
        mask ^= 1 << i
        if vrank & mask:
            continue
        vpeer = vrank ^ (1 << i)
        if vpeer < n and not vrank & (1 << i):
            sent += 1
    return sent


def local_sgd_k(strategy):
    return int(strategy.split(":")[1]) if strategy.startswith("local-sgd:") else 0


def sent_per_step(strategy, rank, n):
    """Bytes rank `rank` sends per step, in units of S (averaged over K for local-sgd:K)."""
    bus = 2 * (n - 1) / n
    if strategy in ("ddp", "allreduce", "ring"):
        return bus
    if local_sgd_k(strategy):
        return bus / local_sgd_k(strategy)
    if strategy == "gather-scatter":
        return n - 1 if rank == 0 else 1
    if strategy == "param-server":
        return (0 if rank == 0 else 1) + tree_sent(rank, n)
    if strategy == "stepwise":
        return 0 if rank == n - 1 else 1
    raise SystemExit(f"link_stats: unknown strategy {strategy}")


def least_time_per_step(strategy, n):
    """The strategy's own bound on comm time per step, in units of S/R (built in)."""
    bus = 2 * (n - 1) / n
    if strategy in ("ddp", "allreduce", "ring"):
        return bus
    if local_sgd_k(strategy):
        return bus / local_sgd_k(strategy)
    if strategy == "gather-scatter":
        return n - 1
    if strategy == "param-server":
        return (n - 1) + math.ceil(math.log2(n))
    if strategy == "stepwise":
        return 1
    raise SystemExit(f"link_stats: unknown strategy {strategy}")


def doc_fractions(path):
    """{strategy: {n: fraction of T*}} from docs/sync.md's table "On a real link"; stepwise,
    which the table measures against B / R, maps to None. Empty when there is no table."""
    try:
        text = open(path).read()
    except OSError:
        return {}
    at = text.find("## On a real link")
    if at < 0:
        return {}
    lines = text[at:].splitlines()
    header = next((l for l in lines if l.startswith("| strategy") and "fraction" in l), None)
    if header is None:
        return {}
    cols = [c.strip() for c in header.strip("|").split("|")]
    ns = {j: int(m.group(1)) for j, c in enumerate(cols) if (m := re.search(r"N = (\d+)", c))}
    table = {}
    for line in lines[lines.index(header) + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        for name in re.findall(r"`([^`]+)`", cells[0]):
            name = name.replace(":K", ":")
            for j, n in ns.items():
                m = re.match(r"(\d+(?:\.\d+)?)\s*%", cells[j]) if j < len(cells) else None
                table.setdefault(name, {})[n] = float(m.group(1)) / 100 if m else None
    return table


def least_time(strategy, n, doc):
    """(least time in units of S/R, where it came from)."""
    bus = 2 * (n - 1) / n
    key = "local-sgd:" if local_sgd_k(strategy) else strategy
    fraction = doc.get(key, {}).get(n, "absent")
    if fraction == "absent":
        return least_time_per_step(strategy, n), "built in"
    if fraction is None:  # stepwise: against B / R itself
        return 1.0, "docs/sync.md (B / R)"
    return bus / fraction / (local_sgd_k(strategy) or 1), f"docs/sync.md ({100 * fraction:.0f}% of T*)"


def read_host(d, i):
    log = open(f"{d}/h{i}.log", errors="replace").read()
    events = [json.loads(line) for line in open(f"{d}/m{i}.rank{i}.jsonl") if line.strip()]
    epochs = [e for e in events if e.get("event") == "epoch"]
    summary = [e for e in events if e.get("event") == "summary"]
    before, after = (list(map(int, line.split())) for line in open(f"{d}/bytes{i}").read().splitlines()[:2])
    return {
        "log": log,
        "steps": sum(e["steps"] for e in epochs),
        "comm_s": epochs[-1]["mean"]["comm_wait_s"] if epochs else float("nan"),
        "step_s": epochs[-1]["mean"]["total_s"] if epochs else float("nan"),
        "pg_sent": summary[-1]["pg_bytes_sent"] if summary else 0,
        "rx": after[0] - before[0],
        "tx": after[1] - before[1],
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--strategy", required=True)
    ap.add_argument("--hosts", type=int, required=True)
    ap.add_argument("--rate", required=True)
    ap.add_argument("--doc", default=__file__.rsplit("/", 3)[0] + "/docs/sync.md", help="docs/sync.md")
    ap.add_argument("--piece", type=int, default=0, help="bytes of gather-scatter's unit of transfer")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--min-fraction", type=float, default=0.7, help="of the strategy's own bound")
    ap.add_argument("--bytes-tolerance", type=float, default=0.10)
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    n, strategy = a.hosts, a.strategy
    hosts = [read_host(a.dir, i) for i in range(n)]
    m = re.search(r"model \S+ \((\d+) parameters\)", hosts[0]["log"])
    params = int(m.group(1)) if m else 0
    S, R = 4 * params, rate_bits(a.rate) / 8
    comm = max(h["comm_s"] for h in hosts)
    least_units, source = least_time(strategy, n, doc_fractions(a.doc))
    if strategy == "gather-scatter" and S and (n - 1) * (1 + a.piece / S) > least_units:
        least_units = (n - 1) * (1 + a.piece / S)
        source = f"in pieces of {a.piece} bytes: (n-1)(S+L)/R"
    least = least_units * S / R
    bus = 2 * (n - 1) / n * S / R
    steps = hosts[0]["steps"]
    k = local_sgd_k(strategy) or 1  # local-sgd:K communicates after every K-th step only
    expected_tx = [(tree_sent(i, n) + steps // k * k * sent_per_step(strategy, i, n)) * S for i in range(n)]
    out = {
        "strategy": strategy, "hosts": n, "rate": a.rate, "params": params, "steps": steps,
        "comm_ms": [round(h["comm_s"] * 1e3, 1) for h in hosts],
        "step_ms": [round(h["step_s"] * 1e3, 1) for h in hosts],
        "least_ms": round(least * 1e3, 1), "least_from": source, "bus_ms": round(bus * 1e3, 1),
        "fraction": round(least / comm, 3) if comm > 0 else 0.0,
        "bus_fraction": round(bus / comm, 3) if comm > 0 else 0.0,
        "tx_mb": [round(h["tx"] / 1e6, 2) for h in hosts], "rx_mb": [round(h["rx"] / 1e6, 2) for h in hosts],
        "expected_tx_mb": [round(e / 1e6, 2) for e in expected_tx],
        "pg_sent_mb": [round(h["pg_sent"] / 1e6, 2) for h in hosts],
        "transport_tcp": all(re.search(r"process group gloo \(transport: tcp; shared memory not used", h["log"])
                             for h in hosts),
    }
    print(json.dumps(out))
    if a.markdown:
        print("| {} | {} | {} | {:.0f} | {:.0f} | {} | {} | {:.0f}% | {:.0f}% |".format(
            strategy, n, a.rate, max(out["step_ms"]), comm * 1e3,
            " / ".join(f"{t:.1f}" for t in out["tx_mb"]), " / ".join(f"{t:.1f}" for t in out["expected_tx_mb"]),
            100 * out["fraction"], 100 * out["bus_fraction"]))
    if not a.check:
        return 0
    fail = 0

    def check(name, ok):
        nonlocal fail
        print(("ok   " if ok else "FAIL ") + name)
        fail |= not ok

    check(f"{strategy}: every host's header says gloo over tcp without shared memory", out["transport_tcp"])
    check(f"{strategy}: {steps} steps on every host, model of {params} parameters",
          params > 0 and steps > 1 and all(h["steps"] == steps for h in hosts))
    for i, h in enumerate(hosts):
        what = f"{strategy}: host {i}'s eth0 sent {h['tx'] / 1e6:.2f} MB, the algorithm {expected_tx[i] / 1e6:.2f} MB"
        if expected_tx[i]:
            ratio = h["tx"] / expected_tx[i]
            check(f"{what} (x{ratio:.3f})", 1 - 0.02 <= ratio <= 1 + a.bytes_tolerance)
        else:  # TCP acknowledgements only
            check(f"{what} (acknowledgements: < 2% of the {h['rx'] / 1e6:.2f} MB it received)", h["tx"] < 0.02 * h["rx"])
    check(f"{strategy}: comm wait {comm * 1e3:.0f} ms/step vs least {least * 1e3:.0f} ms: {100 * out['fraction']:.0f}%"
          f" of its bound ({source}) >= {100 * a.min_fraction:.0f}% (bus bound {100 * out['bus_fraction']:.0f}%)",
          comm > 0 and out["fraction"] >= a.min_fraction)
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
