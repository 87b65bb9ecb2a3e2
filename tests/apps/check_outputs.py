# Checks of train_cifar's and sync_study's outputs for the end-to-end tests: the
# classification report against the confusion matrix, the per-rank tables, the
# --metrics JSON lines, the logged lr against the schedule's formula, and study.csv /
# study.md. Each check prints "ok   ..." or "FAIL ..."; the exit status is 1 on any failure.
# It reads outputs only; the runs themselves are made by the test_*.sh scripts.
#   python3 check_outputs.py report OUT.txt --images N [--classes a,b,..] [--support n0,n1,..]
#   python3 check_outputs.py ranks OUT.txt --world W [--bytes]
#   python3 check_outputs.py metrics FILE --batches B --epochs E --world W [--evals 0,2]
#   python3 check_outputs.py resumed FILE --batches B --epochs E --from-step G --marker resume|restart [--restarts R]
#   python3 check_outputs.py steplog OUT.txt FILE
#   python3 check_outputs.py lr FILE --lr X --batches B --epochs E --schedule S --warmup-epochs W
#   python3 check_outputs.py study DIR --nproc N --params P --steps S
import argparse
import json
import math
import re
import sys

failed = False


def check(name, ok, detail=""):
    global failed
    print(("ok   " if ok else "FAIL ") + name + ("" if ok or not detail else ": " + detail))
    failed = failed or not ok


def lines_of(path):
    # Without the "[rank r/N] " prefix that every line carries.
    with open(path, errors="replace") as f:
        return [re.sub(r"^\[rank \d+/\d+\] ?", "", l.rstrip("\n")) for l in f]


# ---- classification report and confusion matrix ------------------------------------

def cmd_report(a):
    lines = lines_of(a.out)
    final = [(i, m) for i, m in enumerate(re.match(r"test loss ([0-9.]+), test accuracy ([0-9.]+)% on (\d+) images", l)
                                          for l in lines) if m]
    check("the final 'test loss .., test accuracy ..% on N images' line is printed once", len(final) == 1,
          "%d times" % len(final))
    if not final:
        return
    i, m = final[0]
    printed_acc, images = float(m.group(2)) / 100, int(m.group(3))  # printed in %
    check("it counts --test-samples images", images == a.images, "%d, expected %d" % (images, a.images))

    # The report: a header, one row per class, then accuracy / macro avg / weighted avg.
    head = next((k for k in range(i, len(lines)) if lines[k].split() == ["precision", "recall", "f1-score", "support"]),
                None)
    check("a classification report follows", head is not None)
    if head is None:
        return
    rows, k = [], head + 1
    while k < len(lines) and not lines[k].strip():
        k += 1
    while k < len(lines) and lines[k].strip():
        parts = lines[k].split()
        rows.append((" ".join(parts[:-4]), *map(float, parts[-4:-1]), int(parts[-1])))
        k += 1
    names = [r[0] for r in rows]
    if a.classes:
        check("the report names the dataset's classes", names == a.classes.split(","), "got %s" % names)
    acc_line = next((l for l in lines[k:k + 3] if l.split()[:1] == ["accuracy"]), None)
    check("the report has an accuracy line", acc_line is not None)

    cm_head = next((j for j in range(k, len(lines)) if lines[j].startswith("true \\ pred")), None)
    check("a confusion matrix follows the report", cm_head is not None)
    if cm_head is None:
        return
    n = len(rows)
    matrix = []
    for j in range(cm_head + 1, cm_head + 1 + n):
        cells = lines[j].split()
        matrix.append([int(c) for c in cells[-(n + 1):]])  # n counts, then the row total
    col_line = lines[cm_head + 1 + n].split()
    check("the matrix has one row per class of the report, then a total row",
          len(matrix) == n and col_line[0] == "total" and len(col_line) == n + 2, lines[cm_head + 1 + n])
    counts = [r[:n] for r in matrix]
    total = sum(map(sum, counts))
    trace = sum(counts[c][c] for c in range(n))
    check("each row's total is the sum of its counts", all(r[n] == sum(r[:n]) for r in matrix))
    check("the column totals are the sums of the columns",
          [int(x) for x in col_line[1:n + 1]] == [sum(r[c] for r in counts) for c in range(n)])
    check("the counts add up to --test-samples", total == a.images and int(col_line[-1]) == total,
          "%d (corner %s), expected %d" % (total, col_line[-1], a.images))
    check("each class's support in the report equals its matrix row total", [r[4] for r in rows] == [m[n] for m in matrix],
          "%s vs %s" % ([r[4] for r in rows], [m[n] for m in matrix]))
    if a.support:
        want = [int(x) for x in a.support.split(",")]
        check("the per-class supports are those of the first N test labels", [r[4] for r in rows] == want,
              "%s, expected %s" % ([r[4] for r in rows], want))
    bad = []
    for c, (name, p, r, f1, sup) in enumerate(rows):
        predicted = sum(counts[t][c] for t in range(n))
        ep = counts[c][c] / predicted if predicted else 0.0
        er = counts[c][c] / sup if sup else 0.0
        ef = 2 * ep * er / (ep + er) if ep + er else 0.0
        if abs(p - ep) > 6e-4 or abs(r - er) > 6e-4 or abs(f1 - ef) > 6e-4:
            bad.append("%s: %.3f %.3f %.3f, expected %.3f %.3f %.3f" % (name, p, r, f1, ep, er, ef))
    check("precision, recall and F1 of each class follow from the matrix", not bad, "; ".join(bad))
    if acc_line:
        parts = acc_line.split()
        check("the report's accuracy is trace / total",
              abs(float(parts[1]) - trace / total) <= 6e-4 and int(parts[2]) == total, acc_line)
    check("the printed test accuracy is trace / total", abs(printed_acc - trace / total) <= 6e-5,
          "%.4f vs %d/%d" % (printed_acc, trace, total))


# ---- the per-rank tables --------------------------------------------------------------

def cmd_ranks(a):
    lines = lines_of(a.out)
    for title, first_col in (("Per-rank resources", "cpu %"), ("Per-rank step times", "data ms")):
        at = [i for i, l in enumerate(lines) if l.startswith(title)]
        check("'%s' is printed once (by rank 0)" % title, len(at) == 1, "%d times" % len(at))
        if len(at) != 1:
            continue
        head = lines[at[0] + 1]
        check("its header starts with rank, %s" % first_col, head.startswith("rank  ") and first_col in head, head)
        body = lines[at[0] + 3:at[0] + 3 + a.world + (1 if a.world > 1 else 0)]
        labels = [l.split()[0] if l.split() else "" for l in body]
        want = [str(r) for r in range(a.world)] + (["mean"] if a.world > 1 else [])
        check("it has a row for each of the %d ranks%s" % (a.world, " and their mean" if a.world > 1 else ""),
              labels == want, "rows %s" % labels)
        if title.startswith("Per-rank resources") and labels == want and a.bytes:
            # pg sent/recv MB: numbers with a process group, n/a without one.
            cols = [c.strip() for c in head.split("  ") if c.strip()]
            sent = [l.split()[cols.index("pg sent MB")] for l in body[:a.world]]
            if a.world > 1:
                check("every rank sent bytes through the process group", all(s != "n/a" and float(s) > 0 for s in sent),
                      "%s" % sent)
            else:
                check("one process has no process group bytes", all(s == "n/a" for s in sent), "%s" % sent)


# ---- --metrics JSON lines -------------------------------------------------------------

COMMON = {"event", "rank", "world", "time_s", "unix_time_s"}
PHASES = {"data_s", "forward_s", "backward_s", "comm_wait_s", "optimizer_s", "other_s", "total_s"}
STEP = COMMON | PHASES | {"epoch", "step", "loss", "accuracy_pct", "lr", "images"}
EPOCH = COMMON | {"epoch", "steps", "mean_steps", "wall_s", "total", "mean", "train_loss", "train_accuracy_pct"}
EVAL = COMMON | {"epoch", "test_loss", "test_accuracy_pct", "test_images"}
OP_KEYS = ("calls", "bytes_sent", "bytes_received")
SUMMARY = COMMON | {"test_accuracy_pct", "test_loss", "test_images", "train_loss", "train_accuracy_pct", "convergence_s", "wall_s", "pg_bytes_sent",
                    "pg_bytes_received", "steps", "duration_s", "samples", "mean_cpu_percent", "max_cpu_percent",
                    "rss_bytes", "peak_rss_bytes", "net_rx_bytes", "net_tx_bytes", "lo_rx_bytes", "lo_tx_bytes",
                    "disk_read_bytes", "disk_write_bytes", "disk_source"}


def read_events(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def missing(event, keys):
    return sorted(keys - set(event))


def cmd_metrics(a):
    ev = read_events(a.file)
    check("every line has event, rank, world, time_s and unix_time_s", all(not missing(e, COMMON) for e in ev))
    check("every line carries this rank and world size",
          all(e.get("rank") == a.rank and e.get("world") == a.world for e in ev))
    steps, epochs, evals, summaries = ([e for e in ev if e["event"] == k] for k in ("step", "epoch", "eval", "summary"))
    for kind, lines, keys in (("step", steps, STEP), ("epoch", epochs, EPOCH), ("eval", evals, EVAL)):
        bad = [missing(e, keys) for e in lines if missing(e, keys)]
        check("%s lines have the documented keys" % kind, lines and not bad, "missing %s" % (bad[:1],))
    check("one summary line, the last", len(summaries) == 1 and ev[-1]["event"] == "summary",
          "%d summary lines" % len(summaries))
    if summaries:
        s = summaries[0]
        check("the summary has the documented keys", not missing(s, SUMMARY), "missing %s" % missing(s, SUMMARY))
        check("the summary's steps hold mean and total phase times",
              isinstance(s.get("steps"), dict) and not (PHASES - set(s["steps"].get("mean", {}))))
        if a.world > 1:
            check("the summary counts process-group bytes", s.get("pg_bytes_sent", 0) > 0 and
                  s.get("pg_bytes_received", 0) > 0)
        if a.per_op:
            # apps/common/metrics_log.cpp: "pg_ops": {kind: {"calls", "bytes_sent", "bytes_received"}}.
            ops = s.get("pg_ops")
            ok = (isinstance(ops, dict) and "all_reduce" in ops and
                  all(isinstance(v, dict) and all(isinstance(v.get(k), int) for k in OP_KEYS) for v in ops.values()))
            check("the summary's pg_ops counts calls and bytes per op kind, all_reduce among them", ok, "%s" % ops)
            for d in ("sent", "received") if ok else ():
                total = sum(v["bytes_" + d] for v in ops.values())
                check("pg_ops' bytes_%s add up to pg_bytes_%s" % (d, d), total == s.get("pg_bytes_" + d),
                      "%d vs %s" % (total, s.get("pg_bytes_" + d)))
    per_epoch = {}
    for e in steps:
        per_epoch.setdefault(e["epoch"], []).append(e["step"])
    check("step lines for each of the %d epochs" % a.epochs, sorted(per_epoch) == list(range(a.epochs)),
          "epochs %s" % sorted(per_epoch))
    bad = {k: len(v) for k, v in per_epoch.items() if v != list(range(a.batches))}
    check("each epoch has one step line per batch (the header's %d), numbered 0..%d" % (a.batches, a.batches - 1),
          not bad, "step lines per epoch: %s" % bad)
    check("one epoch line per epoch", [e["epoch"] for e in epochs] == list(range(a.epochs)),
          "%s" % [e["epoch"] for e in epochs])
    bad = [(e["epoch"], e["steps"]) for e in epochs if e.get("steps") != a.batches]
    check("each epoch line counts the header's %d steps" % a.batches, not bad, "(epoch, steps) %s" % bad)
    bad = [e["step"] for e in steps if abs(sum(e[p] for p in PHASES - {"total_s"}) - e["total_s"]) > 1e-6]
    check("each step's phases add up to its total time", not bad, "steps %s" % bad[:5])
    if a.evals is not None:
        want = [int(x) for x in a.evals.split(",")] if a.evals else []
        check("eval lines after epochs %s" % want, [e["epoch"] for e in evals] == want,
              "%s" % [e["epoch"] for e in evals])
    order = [e["event"] for e in ev if e["event"] in ("step", "epoch")]
    check("each epoch line follows its steps",
          all(order[i] == "step" for i in range(len(order)) if (i + 1) % (a.batches + 1) != 0), "")


def cmd_resumed(a):
    # A run killed after some steps and restarted: the restart appends to the file after
    # one marker line, "resume" (from the snapshot taken after global step G, written by
    # run_report.cpp with the snapshot's position) or "restart" (from scratch, G = 0).
    ev = read_events(a.file)
    marks = [i for i, e in enumerate(ev) if e["event"] in ("resume", "restart")]
    kinds = [ev[i]["event"] for i in marks]
    check("the restarted run appended after one '%s' marker line" % a.marker, kinds == [a.marker],
          "marker lines %s" % kinds)
    if kinds != [a.marker]:
        return
    want = {} if a.restarts is None else {"restart_count": a.restarts}
    if a.marker == "resume":
        want.update(global_step=a.from_step, epoch=a.from_step // a.batches, step_in_epoch=a.from_step % a.batches)
    got = {k: ev[marks[0]].get(k) for k in want}
    if want:
        check("the marker line says %s" % want, got == want, "it says %s" % got)
    glob = lambda e: e["epoch"] * a.batches + e["step"]
    before = [glob(e) for e in ev[:marks[0]] if e["event"] == "step"]
    after = [glob(e) for e in ev[marks[0]:] if e["event"] == "step"]
    check("the first run's step lines are kept, from the first step on",
          bool(before) and before == list(range(len(before))), "global steps %s" % before)
    check("the restart logs steps %d..%d" % (a.from_step, a.epochs * a.batches - 1),
          after == list(range(a.from_step, a.epochs * a.batches)), "global steps %s" % after)
    check("one summary line, at the end", [e["event"] for e in ev].count("summary") == 1 and ev[-1]["event"] == "summary")


def cmd_steplog(a):
    # "epoch E batch S: loss L, batch accuracy A%, batch time T s (comm C ms), lr R" against
    # the metrics line of (E-1, S), as printed with %.4f / %.2f / %.4g.
    steps = {(e["epoch"], e["step"]): e for e in read_events(a.file) if e["event"] == "step"}
    printed = [re.match(r"epoch (\d+) batch +(\d+): loss ([0-9.]+), batch accuracy ([0-9.]+)%, .*, lr (\S+)$", l)
               for l in lines_of(a.out)]
    printed = [m for m in printed if m]
    check("step lines are printed", bool(printed))
    bad = []
    for m in printed:
        e = steps.get((int(m.group(1)) - 1, int(m.group(2))))
        if (e is None or m.group(3) != "%.4f" % e["loss"] or m.group(4) != "%.2f" % e["accuracy_pct"] or
                m.group(5) != "%.4g" % e["lr"]):
            bad.append(m.group(0))
    check("each printed step line shows its metrics line's loss, accuracy and lr", not bad, "; ".join(bad[:3]))


# ---- the lr schedule --------------------------------------------------------------------

def lr_at(a, k, total):
    # apps/train_cifar/training.cpp's make_schedule, in closed form.
    warm = int(math.floor(a.warmup_epochs * a.batches + 0.5))
    if k < warm:
        return a.lr * (0.1 + 0.9 * k / warm)
    rest, j = max(total - warm, 1), k - warm
    if a.schedule == "cosine":
        return a.lr * (1 + math.cos(math.pi * min(j, rest) / rest)) / 2
    if a.schedule == "step":
        return a.lr * 0.1 ** sum(1 for m in (rest // 2, rest * 3 // 4) if m <= j)
    return a.lr


def cmd_lr(a):
    steps = [e for e in read_events(a.file) if e["event"] == "step"]
    total = a.epochs * a.batches
    check("a step line per step", len(steps) == total, "%d of %d" % (len(steps), total))
    logged = [e["lr"] for e in steps]
    used = [lr_at(a, k, total) for k in range(len(steps))]
    close = lambda xs, ys: len(xs) == len(ys) and all(abs(x - y) <= 1e-9 + 1e-6 * abs(y) for x, y in zip(xs, ys))
    if a.warmup_epochs > 0:
        warm = int(math.floor(a.warmup_epochs * a.batches + 0.5))
        check("warm-up starts at lr/10 and climbs linearly for %d steps" % warm, close(logged[:warm], used[:warm]),
              "logged %s, expected %s" % (logged[:warm], used[:warm]))
    check("every logged lr is the %s schedule's rate for that step" % a.schedule, close(logged, used),
          ("the log is one step ahead (step k shows the rate of step k+1)"
           if close(logged, [lr_at(a, k + 1, total) for k in range(len(steps))]) else "") +
          " logged %s, expected %s" % (["%.4g" % x for x in logged], ["%.4g" % x for x in used]))
    if a.schedule == "cosine":
        check("cosine: the lr never rises after the warm-up and ends near 0",
              all(x >= y - 1e-12 for x, y in zip(logged[-total // 2:], logged[-total // 2 + 1:])) and
              logged[-1] < 0.05 * a.lr, "%s" % logged[-3:])
    if a.schedule == "step":
        check("step: three levels, lr, lr/10 and lr/100, after the warm-up",
              sorted({round(x / a.lr, 6) for x in logged[int(a.warmup_epochs * a.batches + 0.5):]}) == [0.01, 0.1, 1.0],
              "%s" % sorted(set(logged)))


# ---- sync_study -------------------------------------------------------------------------

EXACT = ["gather-scatter", "allreduce", "ddp", "ring", "param-server"]


def cmd_study(a):
    with open(a.dir + "/study.csv") as f:
        head = f.readline().strip().split(",")
        rows = {l.split(",")[0]: dict(zip(head, l.strip().split(","))) for l in f if l.strip()}
    num = lambda s, k: float(rows[s][k])
    for k in ("step_ms", "comm_wait_ms", "sent_mb_per_worker", "received_mb_per_worker", "cpu_percent", "peak_rss_mb",
              "wall_s"):
        bad = [s for s in rows if not num(s, k) > 0]
        check("%s is positive for every strategy" % k, not bad, "not for %s" % bad)
    bad = [s for s in rows if abs(num(s, "sent_mb_per_worker") - num(s, "received_mb_per_worker")) >
           1e-5 * num(s, "sent_mb_per_worker")]
    check("every byte sent is received (sent = received, averaged over the workers)", not bad, "not for %s" % bad)
    exact = [s for s in EXACT if s in rows]
    sent = [num(s, "sent_mb_per_worker") for s in exact]
    # docs/sync.md: each moves 2(N-1)/N of the gradient per step; RESULTS saw 0.03% apart on VGG-11.
    check("the exact strategies move the same bytes (within 0.5%)", max(sent) <= 1.005 * min(sent),
          ", ".join("%s %.4f MB" % (s, x) for s, x in zip(exact, sent)))
    if a.params and a.steps:
        # Per worker and step: 2(N-1)/N * 4P (ring all-reduce); stepwise (N-1)/N * 4P;
        # local-sgd:K 2(N-1)/N * 4P / K; plus rank 0's initial broadcast of the model,
        # 4P / N per worker on average (two ranks: a one-hop tree).
        model_mb, n = 4 * a.params / 1e6, a.nproc
        share = {s: 2 * (n - 1) / n for s in EXACT}
        share["stepwise"] = (n - 1) / n
        # zero1, zero2: reduce-scatter and all-gather, (N-1)/N * 4P each (buckets padded to N).
        share.update({s: 2 * (n - 1) / n for s in ("zero1", "zero2")})
        for s in rows:
            if s.startswith("local-sgd:"):
                share[s] = 2 * (n - 1) / n / int(s.split(":")[1])
            if s.startswith("async-ps:"):  # every worker pushes 4P and pulls 4P from rank 0 each step
                share[s] = 2 * (n - 1) / n
        # fsdp (docs/fsdp.md): two all-gathers and a reduce-scatter of (N-1)/N * 4P per step,
        # and one whole-model all-gather per evaluation (one epoch: after it and at the end).
        share["fsdp"] = 3 * (n - 1) / n
        once = {"fsdp": 2 * (n - 1) / n}
        for s in rows:
            want = (a.steps * share[s] + once.get(s, 0) + 1 / n) * model_mb
            got = num(s, "sent_mb_per_worker")
            check("%s sends the bytes its algorithm implies (%.3f MB per worker, within 1%%)" % (s, want),
                  abs(got - want) <= 0.01 * want, "%.4f MB" % got)
    with open(a.dir + "/study.md") as f:
        md = f.read()
    by_speed = sorted(rows, key=lambda s: num(s, "step_ms"))
    # A single run's times within 15% of the fastest tie (apps/sync_study/study_stats.h):
    # then study.md names them all and no winner.
    tied = [s for s in by_speed if num(s, "step_ms") <= 1.15 * num(by_speed[0], "step_ms")]
    m = re.search(r"(\S+) was fastest at ([0-9.]+) ms per iteration, ([0-9.]+)% ahead of (\S+) and ([0-9.]+)x faster "
                  r"than the slowest, (\S+) \(([0-9.]+) ms\)", md)
    if len(tied) > 1:
        t = re.search(r"No single fastest: (.+?) tie at", md)
        named = sorted(re.split(r", | and ", t.group(1))) if t else None
        check("study.md names no winner among the %d strategies within 15%% of the fastest" % len(tied),
              m is None and named == sorted(tied), "%s vs %s" % (named, sorted(tied)))
    else:
        check("study.md says which was fastest, by how much, against the next and the slowest", m is not None)
    if m and len(tied) == 1:
        best, nxt, worst = by_speed[0], by_speed[1], by_speed[-1]
        check("the fastest named is the CSV's fastest", m.group(1) == best, "%s vs %s" % (m.group(1), best))
        check("the runner-up and the slowest are the CSV's", m.group(4) == nxt and m.group(6) == worst,
              "%s, %s vs %s, %s" % (m.group(4), m.group(6), nxt, worst))
        ahead = 100 * (num(nxt, "step_ms") / num(best, "step_ms") - 1)
        check("the margin over the runner-up matches the CSV (%.1f%%)" % ahead, abs(float(m.group(3)) - ahead) <= 0.06,
              m.group(3))
        ratio = num(worst, "step_ms") / num(best, "step_ms")
        check("the factor over the slowest matches the CSV (%.2fx)" % ratio, abs(float(m.group(5)) - ratio) <= 0.006,
              m.group(5))
    least = min(num(s, "sent_mb_per_worker") for s in rows)
    fewest = sorted(s for s in rows if num(s, "sent_mb_per_worker") <= 1.01 * least)
    if len(fewest) == 1:
        check("study.md names the strategy that moved the fewest bytes (%s)" % fewest[0],
              re.search(re.escape(fewest[0]) + r" moved the fewest bytes", md) is not None)
    else:
        t = re.search(r"(\S.+?) tie for the fewest bytes", md)
        named = sorted(re.split(r", | and ", t.group(1).split(". ")[-1])) if t else None
        check("study.md names every strategy within 1%% of the fewest bytes (%s)" % fewest, named == fewest,
              str(named))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)

    def command(name, *positional, run_shape=False):
        r = sub.add_parser(name)
        for arg in positional:
            r.add_argument(arg)
        if run_shape:  # the run's size: batches per epoch and epochs
            r.add_argument("--batches", type=int, required=True)
            r.add_argument("--epochs", type=int, required=True)
        return r

    r = command("report", "out")
    r.add_argument("--images", type=int, required=True)
    r.add_argument("--classes")
    r.add_argument("--support")
    r = command("ranks", "out")
    r.add_argument("--world", type=int, required=True)
    r.add_argument("--bytes", action="store_true", help="also check the pg sent column (training moved MBs)")
    r = command("metrics", "file", run_shape=True)
    r.add_argument("--world", type=int, default=1)
    r.add_argument("--rank", type=int, default=0)
    r.add_argument("--evals")
    r.add_argument("--per-op", action="store_true")
    r = command("resumed", "file", run_shape=True)
    r.add_argument("--from-step", type=int, required=True)
    r.add_argument("--marker", choices=("resume", "restart"), required=True)
    r.add_argument("--restarts", type=int, help="the marker's restart_count")
    command("steplog", "out", "file")
    r = command("lr", "file", run_shape=True)
    r.add_argument("--lr", type=float, required=True)
    r.add_argument("--schedule", default="constant")
    r.add_argument("--warmup-epochs", type=float, default=0)
    r = command("study", "dir")
    r.add_argument("--nproc", type=int, default=2)
    r.add_argument("--params", type=int)
    r.add_argument("--steps", type=int)
    a = p.parse_args()
    globals()["cmd_" + a.cmd](a)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
