# Checks an HTML report's DOM as Chromium rendered it (--dump-dom) against the run's own
# files: which charts exist, how many series and points each draws (counted from the SVG:
# a polyline's points, one rect per bar or cell), values against the metrics and CSV, no
# script errors (report/html_report.cpp marks them on <html data-errors>), no console
# message in the browser's log, no NaN or infinite SVG coordinate and nothing loaded from
# elsewhere. Standard library only. Prints "ok"/"FAIL" lines; exit 1 on a FAIL.
#   python3 check_report_dom.py errors DOM [--log STDERR]
#   python3 check_report_dom.py train DOM --metrics M.jsonl [--world W] --classes C
#   python3 check_report_dom.py study DOM --csv study.csv
import argparse
import json
import math
import re
import sys
from html.parser import HTMLParser

failed = False


def check(name, ok, detail=""):
    global failed
    print(("ok   " if ok else "FAIL ") + name + ("" if ok or not detail else ": " + str(detail)))
    failed = failed or not ok


class Dom(HTMLParser):
    """Charts as {id: {"kind", "series": [{"name", "points", "bars": [(category, value)]}]}}, plus
    the root's attributes, external references and the cells of each data table."""

    def __init__(self):
        super().__init__()
        self.charts, self.root, self.external, self.tables, self.bad_numbers = {}, {}, [], {}, []
        self.chart = self.series = self.table = None
        self.cell = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "html":
            self.root = a
        for key in ("src", "href"):
            if a.get(key) and not a[key].startswith("#"):
                self.external.append(a[key])
        for key in NUMERIC_ATTRS & set(a):
            if re.search(r"nan|inf", a[key] or "", re.I):
                self.bad_numbers.append('<%s %s="%s">' % (tag, key, a[key]))
        if tag == "figure" and "chart" in a.get("class", "").split():
            self.chart = self.charts.setdefault(a.get("data-chart"), {"kind": a.get("data-kind"), "series": []})
        elif tag == "g" and self.chart is not None and a.get("class") == "series":
            self.series = {"name": a.get("data-series"), "points": 0, "bars": []}
            self.chart["series"].append(self.series)
        elif tag == "polyline" and self.series is not None:
            self.series["points"] += len(a.get("points", "").split())
        elif tag == "rect" and self.series is not None and a.get("class") in ("bar", "cell"):
            self.series["bars"].append((a.get("data-category") or (a.get("data-row"), a.get("data-col")),
                                        a.get("data-value")))
        elif tag == "table" and a.get("data-table"):
            self.table = self.tables.setdefault(a["data-table"], [])
        elif tag == "tr" and self.table is not None:
            self.table.append([])
        elif tag == "td" and self.table is not None:
            self.cell = ""

    def handle_endtag(self, tag):
        if tag == "figure":
            self.chart = self.series = None
        elif tag == "g":
            self.series = None
        elif tag == "table":
            self.table = None
        elif tag == "td" and self.table is not None and self.cell is not None:
            self.table[-1].append(self.cell)
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


# SVG attributes that hold numbers: a NaN or infinity there draws nothing, silently.
NUMERIC_ATTRS = {"x", "y", "x1", "x2", "y1", "y2", "cx", "cy", "r", "width", "height", "points", "viewBox",
                 "transform", "data-value"}


def parse(path):
    d = Dom()
    with open(path, errors="replace") as f:
        d.feed(f.read())
    return d


def g4(v):  # report/svg_chart.cpp's format_number
    return "%.4g" % (0.0 if abs(v) < 1e-12 else v)


def same(shown, written):
    """A chart's value and a CSV cell agree: both n/a, or equal to 1e-3 relative."""
    if "n/a" in (shown, written):
        return shown == written
    return math.isclose(float(shown), float(written), rel_tol=1e-3, abs_tol=1e-9)


def series(d, chart, name):
    return next((s for s in d.charts.get(chart, {}).get("series", []) if s["name"] == name), None)


def cmd_errors(a):
    d = parse(a.dom)
    check("the page ran its scripts without errors", "data-errors" not in d.root,
          "%s error(s), last: %s" % (d.root.get("data-errors"), d.root.get("data-last-error")))
    if a.log:
        # Chromium's --enable-logging=stderr writes every console message at INFO
        # ("INFO:CONSOLE:LINE] "Error: <rect> attribute height: ..."", "Uncaught ..."),
        # whatever its level, so the level cannot be told; the report never logs, so any
        # console line is a defect.
        with open(a.log, errors="replace") as f:
            console = [l.strip() for l in f if re.search(r":CONSOLE[:(]", l)]
        check("the browser's log has no console messages (errors, warnings, exceptions)", not console, console[:2])
    check("no SVG coordinate or value is NaN or infinite", not d.bad_numbers, d.bad_numbers[:3])
    check("nothing is loaded from elsewhere (no src or href)", not d.external, d.external[:3])
    return d


def cmd_train(a):
    d = cmd_errors(a)
    with open(a.metrics) as f:
        ev = [json.loads(l) for l in f if l.strip()]
    steps, epochs, evals = ([e for e in ev if e["event"] == k] for k in ("step", "epoch", "eval"))
    summary = [e for e in ev if e["event"] == "summary"][-1]
    for chart in ("loss", "accuracy", "lr", "step-time", "bytes", "confusion"):
        check("chart '%s' is drawn" % chart, chart in d.charts, sorted(d.charts))
    want = {("loss", "train loss per step"): len(steps), ("loss", "train loss per epoch"): len(epochs),
            ("loss", "test loss per epoch"): len(evals), ("accuracy", "train batch accuracy per step"): len(steps),
            ("accuracy", "train accuracy per epoch"): len(epochs), ("accuracy", "test accuracy per epoch"): len(evals),
            ("lr", "learning rate"): len(steps)}
    for (chart, name), n in want.items():
        s = series(d, chart, name)
        check("%s: '%s' has %d points (the metrics file's lines)" % (chart, name, n), s and s["points"] == n,
              s and s["points"])
    phases = ["data", "forward", "backward", "comm wait", "optimizer"]
    st = d.charts.get("step-time", {"series": []})["series"]
    check("step-time: the five phases stacked", [s["name"] for s in st] == phases, [s["name"] for s in st])
    per_rank = {}
    for s in st:
        for cat, v in s["bars"]:
            per_rank.setdefault(cat, []).append(v)
    check("step-time: one bar per rank (%d), each of 5 segments" % a.world,
          sorted(per_rank) == [str(r) for r in range(a.world)] and all(len(v) == 5 for v in per_rank.values()),
          {k: len(v) for k, v in per_rank.items()})
    fwd = dict(series(d, "step-time", "forward")["bars"]) if series(d, "step-time", "forward") else {}
    for r in range(a.world):
        path = a.metrics if r == 0 else a.metrics.replace(".rank0.", ".rank%d." % r)
        with open(path) as f:
            mean = [json.loads(l) for l in f if '"summary"' in l][-1]["steps"]["mean"]
        check("rank %d's forward bar is its summary's mean forward time (%s ms)" % (r, g4(mean["forward_s"] * 1e3)),
              fwd.get(str(r)) == g4(mean["forward_s"] * 1e3), fwd.get(str(r)))
    sent = dict(series(d, "bytes", "sent")["bars"]) if series(d, "bytes", "sent") else {}
    ops = summary.get("pg_ops", {})
    check("bytes: one bar per operation kind of pg_ops", sorted(sent) == sorted(ops), "%s vs %s" % (sorted(sent),
                                                                                                    sorted(ops)))
    check("bytes: each 'sent' bar is pg_ops' bytes_sent in MB",
          all(sent.get(k) == g4(v["bytes_sent"] / 1e6) for k, v in ops.items()), sent)
    cells = (series(d, "confusion", "counts") or {"bars": []})["bars"]
    check("confusion: %d x %d cells" % (a.classes, a.classes), len(cells) == a.classes ** 2, len(cells))
    check("confusion: the counts add up to the test images (%d)" % summary["test_images"],
          sum(int(v) for _, v in cells) == summary["test_images"])
    results = dict(r for r in d.tables.get("results", []) if len(r) == 2)
    check("the results table's test accuracy is the summary's (%.2f%%)" % summary["test_accuracy_pct"],
          results.get("test accuracy (%)") == "%.2f" % summary["test_accuracy_pct"], results)
    check("the results table's wall time is the summary's (%.1f s)" % summary["wall_s"],
          results.get("wall time (s)") == "%.1f" % summary["wall_s"], results)
    if a.world > 1:
        check_exchange(a, len(steps))


def check_exchange(a, steps):
    """The slowest-rank exchange (apps/train_cifar/run_report.cpp, Note [Slowest rank]): every
    10th step of the run, on every rank, the same value, never below the sum of that step's
    phases on any rank (it is the max of the ranks' step times up to the exchange)."""
    due = steps // 10
    per_rank = []
    for r in range(a.world):
        path = a.metrics.replace(".rank0.", ".rank%d." % r)
        with open(path) as f:
            ev = [json.loads(l) for l in f if l.strip()]
        summary = [e for e in ev if e["event"] == "summary"][-1]
        lines = [e for e in ev if e["event"] == "step" and "slowest_rank_step_s" in e]
        per_rank.append({(e["epoch"], e["step"]): e["slowest_rank_step_s"] for e in lines})
        calls = summary["slowest_rank_exchange"]["calls"]
        check("rank %d: %d exchange steps of %d (every 10th), %d step lines with slowest_rank_step_s, %d calls" %
              (r, due, steps, len(lines), calls), len(lines) == due == calls)
        phases = ("data_s", "forward_s", "backward_s", "comm_wait_s", "optimizer_s")
        low = [(e["step"], e["slowest_rank_step_s"]) for e in lines
               if e["slowest_rank_step_s"] < sum(e[p] for p in phases) - 1e-9]
        check("rank %d: slowest_rank_step_s >= the step's own phases" % r, not low, low[:3])
    check("every rank logged the same slowest_rank_step_s on the same steps",
          all(p == per_rank[0] for p in per_rank), per_rank)


def cmd_study(a):
    d = cmd_errors(a)
    with open(a.csv) as f:
        head = f.readline().strip().split(",")
        rows = [dict(zip(head, l.strip().split(","))) for l in f if l.strip()]
    names = [r["strategy"] for r in rows]
    for chart, name, col in (("step-time", "ms / iteration", "step_ms"), ("step-time", "comm wait", "comm_wait_ms"),
                             ("bytes", "sent", "sent_mb_per_worker"), ("accuracy", "test accuracy", "test_accuracy_pct"),
                             ("loss", "train loss", "train_loss")):
        s = series(d, chart, name)
        check("%s: '%s' has a bar per strategy of study.csv" % (chart, name),
              s and [c for c, _ in s["bars"]] == names, s and s["bars"])
        # The bars say %.4g, study.csv 6 significant digits: equal within rounding.
        check("%s: its values are study.csv's %s" % (chart, col),
              s and len(s["bars"]) == len(rows) and all(same(v, r[col]) for (_, v), r in zip(s["bars"], rows)),
              s and "%s vs %s" % ([v for _, v in s["bars"]], [r[col] for r in rows]))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("errors", "train", "study"):
        r = sub.add_parser(name)
        r.add_argument("dom")
        r.add_argument("--log")
        if name == "train":
            r.add_argument("--metrics", required=True)
            r.add_argument("--world", type=int, default=1)
            r.add_argument("--classes", type=int, default=10)
        if name == "study":
            r.add_argument("--csv", required=True)
    a = p.parse_args()
    globals()["cmd_" + a.cmd](a)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
