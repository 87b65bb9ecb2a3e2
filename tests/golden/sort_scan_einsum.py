# Golden values for tests/tensor/test_sort_scan.cpp and test_einsum.cpp, from PyTorch.
# Inputs come from closed-form sequences (seq, golden_seq.py), rebuilt identically in C++,
# so no data files are needed. Run: /usr/bin/python3 tests/golden/sort_scan_einsum.py
import math
import torch
from golden_seq import seq

torch.set_default_dtype(torch.float64)


def emit(name, t):
    vals = ", ".join("kNaN" if math.isnan(v) else f"{v:.12g}" for v in t.flatten().tolist())
    print(f"const std::vector<double> {name} = {{{vals}}};")


def checksum(name, t):
    # sum(t * seq(t.shape, 0.1, 0.5)): one number that sees every element.
    print(f"const double {name} = {float((t * seq(t.shape, 0.1, 0.5)).sum()):.15g};")


def values_and_grad(tag, fn, x):
    x = x.clone().requires_grad_()
    out = fn(x)
    values, indices = (out[0], out[1]) if isinstance(out, tuple) else (out, None)
    values.backward(seq(list(values.shape), 0.9, 0.1))
    print(f"// {tag}: shape {list(values.shape)}")
    emit(f"{tag}_v", values.detach())
    if indices is not None:
        emit(f"{tag}_i", indices)
    checksum(f"{tag}_gx", x.grad)


print("// ---- sort_scan ----")
x = seq([4, 5], 0.7, 0.3)
values_and_grad("sort_d1", lambda t: torch.sort(t, dim=1), x)
values_and_grad("sort_d0_desc", lambda t: torch.sort(t, dim=0, descending=True), x)
values_and_grad("topk_k3_d1", lambda t: torch.topk(t, 3, dim=1), x)
values_and_grad("topk_k2_d0_small", lambda t: torch.topk(t, 2, dim=0, largest=False), x)
values_and_grad("kthvalue_k2_d1", lambda t: torch.kthvalue(t, 2, dim=1), x)
values_and_grad("max_d1", lambda t: torch.max(t, dim=1), x)
values_and_grad("min_d0_keep", lambda t: torch.min(t, dim=0, keepdim=True), x)
values_and_grad("cumsum_d1", lambda t: torch.cumsum(t, dim=1), x)
values_and_grad("cumsum_d0", lambda t: torch.cumsum(t, dim=0), seq([3, 2, 4], 0.4, 0.2))
values_and_grad("clamp_min", lambda t: torch.clamp(t, min=-0.25), x)
values_and_grad("clamp_max", lambda t: torch.clamp(t, max=0.5), x)
print("// cumprod of seq([2, 5], 0.7, 0.3) along dim 1")
emit("cumprod_d1", torch.cumprod(seq([2, 5], 0.7, 0.3), dim=1))
nan = float("nan")
v, i = torch.sort(torch.tensor([3.0, nan, 1.0, 2.0, nan, 0.0]))
print("// sort of {3, nan, 1, 2, nan, 0}: NaN is largest")
emit("nan_sort_v", v)
emit("nan_sort_i", i)
v, i = torch.sort(torch.tensor([3.0, nan, 1.0, 2.0, nan, 0.0]), descending=True, stable=True)
emit("nan_sort_desc_v", v)
emit("nan_sort_desc_i", i)
v, i = torch.sort(torch.tensor([2, 1, 2, 1, 2, 0]), stable=True)
print("// stable sort of {2, 1, 2, 1, 2, 0}, ascending and descending")
emit("ties_i", i)
v, i = torch.sort(torch.tensor([2, 1, 2, 1, 2, 0]), descending=True, stable=True)
emit("ties_desc_i", i)

print("// ---- einsum: seq(shape_k, 0.3 + 0.2 k, 0.1 k) per operand ----")
cases = [
    ("mm", "ij,jk->ik", [[3, 4], [4, 5]]),
    ("bmm", "bij,bjk->bik", [[2, 3, 4], [2, 4, 2]]),
    ("transpose", "ij->ji", [[3, 4]]),
    ("permute", "abc->cab", [[2, 3, 4]]),
    ("rowsum", "ij->i", [[3, 4]]),
    ("total", "ij->", [[3, 4]]),
    ("outer", "i,j->ij", [[3], [4]]),
    ("dot", "i,i->", [[5], [5]]),
    ("bilinear", "bi,bj->bij", [[2, 3], [2, 4]]),
    ("attention", "bhqd,bhkd->bhqk", [[2, 2, 3, 4], [2, 2, 5, 4]]),
    ("trace", "ii->", [[4, 4]]),
    ("diag", "ii->i", [[4, 4]]),
    ("implicit", "ij,jk", [[3, 4], [4, 2]]),
    ("chain", "ij,jk,kl->il", [[2, 3], [3, 4], [4, 2]]),
    ("batch_diag", "bii->bi", [[2, 3, 3]]),
    ("contract2", "abc,cbd->ad", [[2, 3, 4], [4, 3, 5]]),
]
for tag, eq, shapes in cases:
    ops = [seq(s, 0.3 + 0.2 * k, 0.1 * k).requires_grad_() for k, s in enumerate(shapes)]
    y = torch.einsum(eq, *ops)
    y.backward(seq(list(y.shape), 0.9, 0.1))
    print(f"// einsum '{eq}' {shapes} -> {list(y.shape)}")
    emit(f"es_{tag}_y", y.detach())
    for k, o in enumerate(ops):
        checksum(f"es_{tag}_g{k}", o.grad)
