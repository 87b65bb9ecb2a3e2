#!/usr/bin/python3
# The reference sweep's comparator (docs/reference_sweep.md): runs reference_runner, rebuilds each case's
# inputs in PyTorch 1.13, evaluates the row's expression, and compares outputs, gradients and double-backward
# gradients with ddl's, and refusals with refusals. Fails on any disagreement or crash that KNOWN does not
# name, and on any public op without a row (coverage.py). Exits 77 when /usr/bin/python3 has no torch.
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time

try:
    import torch
except ImportError:
    print("reference_sweep: no torch in this python; skipped")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import coverage  # noqa: E402
from known import KNOWN  # noqa: E402
from reference_torch import GLOBALS, NAMES, SHORT, as_list, decode, with_layout  # noqa: E402

# PyTorch 1.13's CPU build has no kernel for some dtypes ('"mse_cpu" not implemented for 'Long''). Where ddl
# computes such a case, the reference is PyTorch's float64 computation cast back to the refused dtype (or to
# float32 where ddl promotes an integer input, as torch.sigmoid does); a case that agrees with it is counted
# (and printed) as GAP, neither an agreement nor a disagreement.
GAP = "computes where 1.13 has no CPU kernel"
NO_KERNEL = re.compile(r"not implemented for '(\w+)'")
TORCH_TYPES = {"Half": torch.float16, "BFloat16": torch.bfloat16, "Long": torch.int64, "Int": torch.int32,
               "Byte": torch.uint8, "Bool": torch.bool, "Char": torch.int8, "Short": torch.int16}

# (rtol, atol relative to the reference's largest finite magnitude, at least 1) per dtype, as in
# torch.testing.assert_close but with atol scaled, so a sum that cancels is judged at its inputs' scale.
TOL = {torch.float64: (1e-9, 1e-12), torch.float32: (1e-5, 1e-5), torch.float16: (1e-3, 1e-3),
       torch.bfloat16: (1.6e-2, 1e-2)}
GRAD_SLACK = 10.0  # gradients chain several roundings


def half_dtype(inputs):
    """The one 16-bit float dtype among the inputs, or None."""
    halves = {x.dtype for x in inputs if x is not None and x.dtype in (torch.float16, torch.bfloat16)}
    return halves.pop() if len(halves) == 1 else None


class Ref:
    """PyTorch's forward, gradients and double-backward gradients for one case."""

    def __init__(self, rec, inputs, force_upcast=False):
        self.rec, self.upcast, self.half = rec, False, half_dtype(inputs)
        self.mixed = any(x is not None and x.dtype == torch.float32 for x in inputs)
        self.fn = eval(rec["torch"], dict(GLOBALS))
        try:
            if force_upcast:
                raise RuntimeError("upcast")
            self._forward(inputs)
        except Exception:  # noqa: BLE001
            if self.half is None:
                raise
            # PyTorch 1.13's CPU kernels lack (or mishandle) many 16-bit cases: the reference is then the
            # float32 computation rounded once to the 16-bit type.
            self.upcast = True
            self._forward([x.float() if x is not None and x.dtype == self.half else x for x in inputs])

    def _forward(self, inputs):
        diff = self.rec.get("diff", [])
        self.xs = []
        for i, x in enumerate(inputs):
            if x is not None and i < len(diff) and diff[i] and x.is_floating_point():
                x = x.detach().clone().requires_grad_(True) if x.is_contiguous() else self._leaf_view(x)
            self.xs.append(x)
        self.outs = as_list(self.fn(*self.xs, **plain_args(self.rec["args"])))

    @staticmethod
    def _leaf_view(x):
        # a leaf with x's strides, so layout-dependent kernels see the same layout
        if 0 in x.stride():
            return x.detach().clone().requires_grad_(True)
        leaf = torch.empty_strided(x.shape, x.stride(), dtype=x.dtype)
        leaf.copy_(x)
        return leaf.requires_grad_(True)

    def down(self, t, like):
        """An upcast reference rounded to the 16-bit type. With float32 inputs besides the 16-bit ones, which
        float32 results PyTorch would have kept (e.g. batch_norm's statistics of float32 parameters) cannot be
        known here: then only where ddl's result is 16-bit."""
        if t is None or not self.upcast or t.dtype != torch.float32:
            return t
        if self.mixed and (like is None or like.dtype != self.half):
            return t
        return t.to(self.half)

    def outputs(self, likes):
        return [self.down(o.detach(), d) if isinstance(o, torch.Tensor) else o
                for o, d in zip(self.outs, likes + [None] * len(self.outs))]

    def grads(self, cots, diff_idx, create_graph):
        pairs = [(self.outs[i], c) for i, c in enumerate(cots) if c is not None]
        xs = [self.xs[i] for i in diff_idx]
        ys = [o for o, _ in pairs]
        cs = [c.to(o.dtype) for o, c in pairs]
        g = torch.autograd.grad(ys, xs, cs, allow_unused=True, create_graph=create_graph, retain_graph=True)
        return list(g)

    def double(self, grads, vs, diff_idx):
        xs = [self.xs[i] for i in diff_idx]
        terms = [(g * v.to(g.dtype)).sum() for g, v in zip(grads, vs)
                 if g is not None and v is not None and g.requires_grad]
        if not terms:
            return [None] * len(xs)
        return list(torch.autograd.grad(sum(terms), xs, allow_unused=True))


def compare_tensor(d, t, signed_zero, slack=1.0, like=None):
    """'' when ddl's tensor d matches the reference t, else what differs. None stands for zeros (gradients)."""
    if d is None and t is None:
        return ""
    if d is None:
        d = torch.zeros_like(t)
    if t is None:
        t = torch.zeros_like(d)
    t = t.detach()
    if d.dtype != t.dtype:
        return f"dtype {NAMES.get(d.dtype)} vs torch {NAMES.get(t.dtype)}"
    if list(d.shape) != list(t.shape):
        return f"shape {list(d.shape)} vs torch {list(t.shape)}"
    if not d.is_floating_point():
        if torch.equal(d, t):
            return ""
        bad = (d != t).nonzero()[0].tolist()
        return f"values differ at {bad}: {d[tuple(bad)].item()} vs torch {t[tuple(bad)].item()}"
    a, b = d.double(), t.double()
    nan_a, nan_b = a.isnan(), b.isnan()
    if not torch.equal(nan_a, nan_b):
        i = (nan_a != nan_b).nonzero()[0].tolist()
        return f"NaN pattern differs at {i}: {a[tuple(i)].item()} vs torch {b[tuple(i)].item()}"
    inf_a, inf_b = a.isinf(), b.isinf()
    if not torch.equal(inf_a, inf_b) or not torch.equal(a[inf_a], b[inf_b]):
        i = ((inf_a != inf_b) | (inf_a & (a != b))).nonzero()[0].tolist()
        return f"inf differs at {i}: {a[tuple(i)].item()} vs torch {b[tuple(i)].item()}"
    fin = ~(nan_b | inf_b)
    if fin.any():
        rtol, atol = TOL[t.dtype]
        rtol, atol = rtol * slack, atol * slack
        scale = max(1.0, b[fin].abs().max().item())
        err = (a - b).abs()
        bad = fin & (err > atol * scale + rtol * b.abs())
        if bad.any():
            i = bad.nonzero()[0].tolist()
            worst = (err[fin] / (b[fin].abs() + 1e-300)).max().item()
            return (f"values differ at {i}: {a[tuple(i)].item()!r} vs torch {b[tuple(i)].item()!r} "
                    f"({int(bad.sum())} of {b.numel()} elements, worst relative error {worst:.2g})")
    if signed_zero:
        z = (b == 0) & fin
        if not torch.equal(torch.signbit(a[z]), torch.signbit(b[z])):
            i = (z & (torch.signbit(a) != torch.signbit(b))).nonzero()[0].tolist()
            return f"sign of zero differs at {i}: {a[tuple(i)].item()} vs torch {b[tuple(i)].item()}"
    return ""


def ties_ok(x, args, values, idx, ref_idx):
    """Indices that PyTorch leaves unspecified among ties (topk, kthvalue): any index holding the value will do."""
    if idx is None or ref_idx is None or idx.dtype != ref_idx.dtype or idx.shape != ref_idx.shape or x.dim() == 0:
        return False
    dim = args["dim"] % x.dim()
    if idx.dim() < x.dim():
        idx, values = idx.unsqueeze(dim), values.unsqueeze(dim)
    if ((idx < 0) | (idx >= x.shape[dim])).any():
        return False
    return compare_tensor(torch.gather(x, dim, idx), values, False) == ""


def plain_args(args):
    """args with the non-finite numbers ("inf", "-inf", "nan": JSON has none) as floats."""
    return {k: float(v) if isinstance(v, str) and v in ("inf", "-inf", "nan") else v for k, v in args.items()}


def names_op(msg, rec):
    for n in [rec["op"]] + rec["meta"].get("aliases", []):
        if re.search(r"(^|[^\w])" + re.escape(n) + r"([^\w]|$)", msg):
            return True
    return False


def no_kernel_reference(rec, inputs, ref_err):
    """(Ref, dtype) of the float64 computation of a case PyTorch refused for want of a kernel for dtype: the
    inputs of that dtype and a "dtype" argument naming it become float64. None when that is not the refusal."""
    m = NO_KERNEL.search(ref_err or "")
    if not m or m.group(1) not in TORCH_TYPES:
        return None
    dt = TORCH_TYPES[m.group(1)]
    ins = [x.double() if x is not None and x.dtype == dt else x for x in inputs]
    args = dict(rec["args"])
    if isinstance(args.get("dtype"), str) and SHORT.get(args["dtype"]) == dt:
        args["dtype"] = "f64"
    if all(a is b for a, b in zip(ins, inputs)) and args == rec["args"]:
        return None  # the refused dtype is not one the case chose
    try:
        return Ref(dict(rec, args=args), ins), dt
    except Exception:  # noqa: BLE001
        return None


def gap_agrees(rec, st, outs, gap, inputs):
    """'' when ddl's outputs have the refused dtype (or, for an integer or bool one, float32: the promotion
    torch.sigmoid makes) and equal the float64 reference cast to that dtype, else why not."""
    ref, dt = gap
    refs = ref.outputs(outs)
    ok = (dt,) if dt.is_floating_point else (dt, torch.float32)
    if len(outs) != len(refs):
        return f"{len(outs)} outputs vs torch {len(refs)}"
    for i, (d, t) in enumerate(zip(outs, refs)):
        if not isinstance(t, torch.Tensor) or d is None or d.dtype not in ok:
            return f"output {i}: dtype {NAMES.get(getattr(d, 'dtype', None))}, not the refused {NAMES.get(dt)}"
        t = t.detach().to(d.dtype)
        if rec["meta"].get("values") is False:
            why = "" if list(d.shape) == list(t.shape) else f"shape {list(d.shape)} vs {list(t.shape)}"
        else:
            why = compare_tensor(d, t, rec["meta"].get("signed_zero", False))
        if why:
            return f"output {i}: {why}"
    check = rec["meta"].get("check")
    if check and st == "var_forward" or (check and "var_forward" not in rec):
        if not eval(check, dict(GLOBALS))(outs, *inputs, **plain_args(rec["args"])):
            return "property check failed: " + check
    return ""


# Where ddl computes a float32 case more accurately than PyTorch 1.13 (a variance in float64, a mean subtracted
# before summing), the value disagrees with 1.13's float32 result but equals the case computed by PyTorch in
# float64 and rounded to ddl's dtype. Such a case is counted (and printed) as ACCURATE: checked, not hidden.
ACCURATE = "equals the float64 computation where 1.13's float32 does not"
VALUE_KINDS = ("output values", "grad values", "double-backward values")


def float64_agrees(rec, found):
    """'' when every value disagreement of a case with float32 inputs vanishes against PyTorch's computation of
    the case with those inputs in float64, rounded to ddl's dtype; else why not."""
    inputs = [with_layout(decode(e), e) for e in rec["inputs"]["inputs"]]  # fresh: forwards may mutate them
    if not any(x is not None and x.dtype == torch.float32 for x in inputs):
        return "no float32 input"
    ref = Ref(rec, [x.double() if x is not None and x.dtype == torch.float32 else x for x in inputs])
    stages = {st for st, kind, _ in found if kind in VALUE_KINDS}
    g = rec.get("var_grad", {})
    tg = None
    if stages & {"var_grad", "var_double"}:
        tg = ref.grads([decode(c) for c in g["cotangents"]], g["diff"], rec["double_backward"])
    pairs = []
    for st in stages:
        if st in ("var_forward", "ten_forward"):
            outs = [decode(e) for e in rec[st]["outputs"]]
            pairs += [(d, t, 1.0) for d, t in zip(outs, ref.outputs(outs)) if isinstance(t, torch.Tensor)]
        elif st == "var_grad":
            pairs += [(decode(d), t, GRAD_SLACK) for d, t in zip(g["grads"], tg)]
        elif st == "var_double":
            dd = rec["var_double"]
            tgg = ref.double(tg, [decode(v) for v in dd["v"]], g["diff"])
            pairs += [(decode(d), t, GRAD_SLACK * 10) for d, t in zip(dd.get("grads2", []), tgg)]
    for d, t, slack in pairs:
        if d is None or t is None or not d.is_floating_point():
            continue
        t = t.detach().to(d.dtype)
        if d.dtype == torch.float64:  # a float64 input's gradient through a float32 result: float32's precision
            d, t = d.float(), t.float()
        why = compare_tensor(d, t, False, slack)
        if why:
            return why
    return ""


def check_case(rec):
    """The disagreements of one case, as (stage, kind, detail); see ACCURATE."""
    found = check_case_against_torch(rec)
    if not any(kind in VALUE_KINDS for _, kind, _ in found):
        return found
    try:
        why = float64_agrees(rec, found)
    except Exception as e:  # noqa: BLE001
        why = f"{type(e).__name__}: {e}"
    if why:
        return found
    return [(st, ACCURATE, detail + "; ddl equals the float64 computation") if kind in VALUE_KINDS
            else (st, kind, detail) for st, kind, detail in found]


def check_case_against_torch(rec):
    """The disagreements of one case with PyTorch's own computation of it, as (stage, kind, detail)."""
    found = []
    meta = rec["meta"]
    for st, s in rec.items():
        if isinstance(s, dict) and "crash" in s:
            found.append((st, "crash " + s["crash"], f"ddl crashed in {st}: {s['crash']}"))
    if "inputs" not in rec:
        return found or [("setup", "no inputs", "the runner recorded no inputs")]
    inputs = [with_layout(decode(e), e) for e in rec["inputs"]["inputs"]]
    try:
        ref = Ref(rec, inputs)
        ref_err = None
    except Exception as e:  # noqa: BLE001
        ref, ref_err = None, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    tied = False
    for st in ("var_forward", "ten_forward"):
        s = rec.get(st)
        if s is None or "crash" in s or s.get("skipped"):
            continue
        if "error" in s:
            if ref_err is None:
                found.append((st, "ddl raised, torch did not", s["error"]))
            elif not names_op(s["error"], rec):
                found.append((st, "message does not name the op", s["error"]))
            continue
        outs = [decode(e) for e in s["outputs"]]
        if ref_err is not None:
            gap = no_kernel_reference(rec, inputs, ref_err)
            why = gap_agrees(rec, st, outs, gap, inputs) if gap else "no float64 reference"
            if not why:
                found.append((st, GAP, f"{ref_err}; ddl equals the float64 computation cast back"))
            else:
                found.append((st, "torch raised, ddl did not", ref_err + ("" if gap is None else f" ({why})")))
            continue
        refs = ref.outputs(outs)
        if len(outs) != len(refs):
            found.append((st, "number of outputs", f"{len(outs)} vs torch {len(refs)}"))
            continue
        for i, (d, t) in enumerate(zip(outs, refs)):
            if meta.get("values") is False:
                d_meta = (d.dtype, list(d.shape)) if d is not None else None
                t_meta = (t.dtype, list(t.shape)) if t is not None else None
                if d_meta != t_meta:
                    found.append((st, "output dtype/shape", f"output {i}: {d_meta} vs torch {t_meta}"))
                continue
            why = compare_tensor(d, t, meta.get("signed_zero", False), 1.0 if not ref.upcast else 2.0)
            if why and meta.get("tie_indices") == i and ties_ok(inputs[0], rec["args"], outs[0], d, t):
                why, tied = "", True  # another index among ties: the gradients go elsewhere too
            if why:
                kind = "output " + why.split(" ")[0] if why.split(" ")[0] in ("dtype", "shape") else "output values"
                found.append((st, kind, f"output {i}: {why}"))
        if "check" in meta and st == "var_forward" or ("check" in meta and "var_forward" not in rec):
            ok = eval(meta["check"], dict(GLOBALS))(outs, *inputs, **plain_args(rec["args"]))
            if not ok:
                found.append((st, "property check failed", meta["check"]))
    g = rec.get("var_grad")
    if g is None or "crash" in g or ref is None or meta.get("values") is False or tied:
        return found
    if found and any(f[0] == "var_forward" for f in found):
        return found
    if "error" in g:
        found.append(("var_grad", "ddl backward raised", g["error"]))
        return found
    cots = [decode(c) for c in g["cotangents"]]
    diff_idx = g["diff"]
    for i, o in enumerate(ref.outs):
        ddl_diff = i < len(cots) and cots[i] is not None
        torch_diff = isinstance(o, torch.Tensor) and o.requires_grad
        if ddl_diff != torch_diff:
            found.append(("var_grad", "differentiability", f"output {i}: ddl {ddl_diff}, torch {torch_diff}"))
            return found
    if "grads" not in g:
        return found
    try:
        tg = ref.grads(cots, diff_idx, rec["double_backward"])
    except Exception as e:  # noqa: BLE001
        try:
            if ref.half is None or ref.upcast:
                raise
            ref = Ref(rec, inputs, force_upcast=True)  # a 16-bit backward PyTorch's CPU build lacks
            tg = ref.grads(cots, diff_idx, rec["double_backward"])
        except Exception:  # noqa: BLE001
            found.append(("var_grad", "torch backward raised, ddl did not", str(e).splitlines()[0]))
            return found
    dg = [decode(x) for x in g["grads"]]
    for k, (d, t) in enumerate(zip(dg, tg)):
        why = compare_tensor(d, ref.down(t, d) if t is not None else None, False, GRAD_SLACK)
        if why:
            found.append(("var_grad", "grad " + ("values" if "values" in why or "NaN" in why or "inf" in why
                                                 else why.split(" ")[0]), f"grad of input {diff_idx[k]}: {why}"))
    dd = rec.get("var_double")
    if dd is None or "crash" in dd:
        return found
    if "error" in dd:
        found.append(("var_double", "ddl double backward raised", dd["error"]))
        return found
    vs = [decode(x) for x in dd["v"]]
    try:
        tgg = ref.double(tg, vs, diff_idx)
    except Exception as e:  # noqa: BLE001
        try:
            if ref.half is None or ref.upcast:
                raise
            ref = Ref(rec, inputs, force_upcast=True)
            tg = ref.grads(cots, diff_idx, True)
            tgg = ref.double(tg, vs, diff_idx)
        except Exception:  # noqa: BLE001
            found.append(("var_double", "torch double backward raised", str(e).splitlines()[0]))
            return found
    dgg = [decode(x) for x in dd.get("grads2", [None] * len(tgg))]
    for k, (d, t) in enumerate(zip(dgg, tgg)):
        why = compare_tensor(d, ref.down(t, d) if t is not None else None, False, GRAD_SLACK * 10)
        if why:
            found.append(("var_double", "double-backward values", f"grad2 of input {diff_idx[k]}: {why}"))
    return found


def self_test(runner, out):
    """The comparator catches what it must: each check below is a mutation a broken comparator would miss."""
    t = torch.tensor
    assert compare_tensor(t([1.0]), t([1.0 + 1e-3]), False)
    assert not compare_tensor(t([1.0]), t([1.0 + 1e-7]), False)
    assert compare_tensor(t([float("nan")]), t([0.0]), False)
    assert compare_tensor(t([float("inf")]), t([-float("inf")]), False)
    assert compare_tensor(t([-0.0]), t([0.0]), True) and not compare_tensor(t([-0.0]), t([0.0]), False)
    assert compare_tensor(t([1], dtype=torch.int64), t([2], dtype=torch.int64), False)
    assert compare_tensor(t([1.0]), t([1.0], dtype=torch.float64), False)
    assert compare_tensor(t([1.0, 2.0]), t([1.0]), False)
    assert compare_tensor(t([1.0], dtype=torch.float64), t([1.0 + 1e-8], dtype=torch.float64), False)
    subprocess.run([runner, out, "--op", "neg", "--op", "sum"], check=True, stdout=subprocess.DEVNULL)
    recs = [json.loads(line) for line in open(out)]
    clean = [r for r in recs if r["op"] == "neg" and r["tag"] == "3x4 f64"][0]
    assert not check_case(clean), check_case(clean)
    wrong = dict(clean, torch="lambda x: torch.abs(x)")  # a wrong reference must show
    assert any(k == "output values" for _, k, _ in check_case(wrong))
    wrong = dict(clean, torch="lambda x: -x.detach() - x + x")  # same values, different gradient
    assert any(k.startswith("grad") for _, k, _ in check_case(wrong)), check_case(wrong)
    wrong = dict(clean, torch="lambda x: torch.sum(x, 5)")  # torch refuses, ddl does not
    assert any(k == "torch raised, ddl did not" for _, k, _ in check_case(wrong))
    ints = [r for r in recs if r["op"] == "neg" and r["tag"] == "3x4 i64"][0]
    # leaky_relu has no int64 kernel in 1.13: a torch refusal with a float64 reference that ddl matches ...
    gap = dict(ints, torch="lambda x: -torch.nn.functional.leaky_relu(x, 1.0)")
    assert [k for _, k, _ in check_case(gap)] == [GAP] * 2, check_case(gap)
    # ... and one that ddl does not match stays a disagreement
    gap = dict(ints, torch="lambda x: torch.nn.functional.leaky_relu(x, 1.0)")
    assert [k for _, k, _ in check_case(gap)] == ["torch raised, ddl did not"] * 2, check_case(gap)
    crash = [r for r in recs if r["op"] == "sum" and r["tag"].startswith("dim out of range")][0]
    assert check_case(crash) == [] or all(k == "message does not name the op" for _, k, _ in check_case(crash))
    bad_msg = json.loads(json.dumps(crash))
    for st in ("var_forward", "ten_forward"):
        bad_msg[st]["error"] = "internal_op: dimension out of range"
    assert any(k == "message does not name the op" for _, k, _ in check_case(bad_msg))
    print("reference_sweep self-test: passed")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runner", help="the reference_runner executable")
    ap.add_argument("--jsonl", help="compare an existing runner output instead of running the runner")
    ap.add_argument("--out", default="sweep.jsonl", help="where the runner writes its cases")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    ap.add_argument("--op", action="append", default=[], help="only this op (repeatable); skips coverage")
    ap.add_argument("--list", action="store_true", help="print every disagreement in full")
    ap.add_argument("--self-test", action="store_true", help="check that the comparator catches mutations")
    a = ap.parse_args()
    torch.set_num_threads(1)
    if a.self_test:
        return self_test(a.runner, a.out)
    t0 = time.time()
    path = a.jsonl
    if path is None:
        path = a.out
        cmd = [a.runner, path] + sum((["--op", o] for o in a.op), [])
        subprocess.run(cmd, check=True)
    t_run = time.time() - t0
    recs = [json.loads(line) for line in open(path)]
    if a.op:
        recs = [r for r in recs if r["op"] in a.op]
    problems, known_hits, gaps, comparisons = [], 0, [], 0
    for rec in recs:
        try:
            found = check_case(rec)
        except Exception as e:  # noqa: BLE001
            found = [("compare", "comparator error", f"{type(e).__name__}: {e}")]
        comparisons += sum(1 for k in ("var_forward", "var_grad", "var_double", "ten_forward") if k in rec)
        for st, kind, detail in found:
            if kind in (GAP, ACCURATE):
                gaps.append((rec["op"], rec["tag"], st, kind, detail))
                continue
            if kind in KNOWN.get((rec["op"], rec["tag"]), ((),))[0]:
                known_hits += 1
                continue
            problems.append((rec["op"], rec["tag"], st, kind, detail))
    ops = sorted({r["op"] for r in recs})
    missing, no_rows = [], []
    if not a.op:
        have = set(ops)
        for rec in recs:
            have.update(rec["meta"].get("covers", []))
        missing = sorted(n for n in coverage.public_ops(a.root) if n not in have and n not in coverage.NOT_OPS)
        methods = coverage.method_coverage(a.root, have)
        missing += [f"{c}::{n}()" for c, n, how in methods if how is None]
        no_rows = sorted({n for _, n, how in methods if how and how.startswith("no row")})
    print(f"reference_sweep: {len(ops)} ops, {len(recs)} cases, {comparisons} comparisons "
          f"(runner {t_run:.0f} s, total {time.time() - t0:.0f} s)")
    if missing:
        print(f"MISSING ROWS ({len(missing)}): public ops or methods with no row and not in coverage.NOT_OPS / "
              "NOT_OP_METHODS / METHODS_WITHOUT_ROWS: " + ", ".join(missing))
    if not a.op and no_rows:
        print(f"methods that are ops with no row yet ({len(no_rows)}, coverage.METHODS_WITHOUT_ROWS): "
              + ", ".join(no_rows))
    groups = collections.OrderedDict()
    for p in problems:
        groups.setdefault((p[0], p[3]), []).append(p)
    if a.list:
        for op, tag, st, kind, detail in problems:
            print(f"  {op} [{tag}] {st}: {kind}: {detail}")
    else:
        for (op, kind), ps in groups.items():
            tags = ", ".join(sorted({p[1] for p in ps})[:4]) + (", ..." if len({p[1] for p in ps}) > 4 else "")
            print(f"  {op}: {kind} x{len(ps)} [{tags}] e.g. {ps[0][4][:160]}")
    gap_groups = collections.OrderedDict()
    for p in gaps:
        gap_groups.setdefault((p[0], p[3]), []).append(p)
    for (op, kind), ps in gap_groups.items():
        tags = ", ".join(sorted({p[1] for p in ps}))
        print(f"  {op}: {kind} x{len(ps)} [{tags}] e.g. {ps[0][4][:160]}")
    bad_ops = sorted({p[0] for p in problems})
    print(f"reference_sweep: {len(problems)} disagreements in {len(bad_ops)} ops ({len(groups)} groups), "
          f"{known_hits} known differences, "
          f"{sum(p[3] == GAP for p in gaps)} where ddl computes and 1.13 has no CPU kernel, "
          f"{sum(p[3] == ACCURATE for p in gaps)} where ddl's float32 equals float64 and 1.13's does not"
          + ("" if a.list else "; --list prints them all"))
    return 1 if problems or missing else 0


if __name__ == "__main__":
    sys.exit(main())
