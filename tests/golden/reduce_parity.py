# Reference behaviour for tests/tensor/test_scalar_dims.cpp, test_reduce_parity.cpp and
# test_shape_overflow.cpp, from PyTorch 1.13: what each op returns (value, dtype,
# gradient) or raises on 0-d, integer, bool, 16-bit, NaN and huge-shape inputs.
# Run: /usr/bin/python3 tests/golden/reduce_parity.py
import torch
import torch.nn.functional as F

nan = float("nan")


def show(name, f):
    try:
        r = f()
        if isinstance(r, tuple):
            r = [(t.tolist(), str(t.dtype)) for t in r]
        elif isinstance(r, torch.Tensor):
            r = (r.tolist(), str(r.dtype))
        print(f"{name}: {r}")
    except Exception as e:  # the ops that raise
        print(f"{name}: raises {type(e).__name__}: {str(e).splitlines()[0][:100]}")


def grad_of(f, data, dtype=torch.float64):
    x = torch.tensor(data, dtype=dtype, requires_grad=True)
    f(x).sum().backward()
    return x.grad


x = torch.tensor(2.0)
for d in [0, -1, 1]:
    for op in ["sum", "mean", "var", "amax", "argmax", "max", "cumsum", "sort", "flip"]:
        show(f"{op}(0-d, {d})", lambda: getattr(torch, op)(x, [d] if op == "flip" else d))
    show(f"transpose(0-d, 0, {d})", lambda: x.transpose(0, d))
    for op in ["select", "narrow"]:
        show(f"{op}(0-d, {d})", lambda: getattr(x, op)(d, 0) if op == "select" else x.narrow(d, 0, 1))
show("sum(0-d, [0, -1])", lambda: torch.sum(x, [0, -1]))

for dt in [torch.bool, torch.uint8, torch.int32, torch.int64]:
    t = torch.tensor([1, 1, 0] if dt == torch.bool else [200, 100, 7], dtype=dt)
    for op in ["sum", "cumsum", "mean", "var", "max", "argmax", "topk", "sort"]:
        args = {"cumsum": (0,), "topk": (1,)}.get(op, ())
        show(f"{op}({dt})", lambda: getattr(torch, op)(t, *args))
    show(f"matmul({dt})", lambda: t @ t)

v = torch.tensor([1e8, 1e8 + 8, 1e8 + 8, 1e8 + 8])
show("var float32 large mean (float64: 16)", lambda: v.var())
show("var float64", lambda: v.double().var())

n = [1.0, nan, 3.0, nan]
print("max() grad with NaN:", grad_of(lambda t: t.max(), n).tolist())
print("amax grad with NaN (1.13: all NaN):", grad_of(lambda t: t.amax(), n).tolist())
print("max(0) with NaN:", torch.tensor(n).max(0), grad_of(lambda t: t.max(0).values, n).tolist())
print("sort with NaN:", torch.tensor(n).sort(), torch.tensor(n).sort(descending=True).indices)
print("topk with NaN:", torch.tensor(n).topk(2).indices, torch.tensor(n).topk(2, largest=False).indices)
print("kthvalue(4) with NaN:", torch.tensor(n).kthvalue(4).indices)
print("max() grad with ties:", grad_of(lambda t: t.max(), [3.0, 1.0, 3.0]).tolist())
for dt in [torch.bfloat16, torch.float16]:
    m = [[1.0, 5, 3], [4, 2, 6]]
    print(dt, "max(1) grad:", grad_of(lambda t: t.max(1).values, m, dt).tolist())
    print(dt, "min(0) grad:", grad_of(lambda t: t.min(0).values, m, dt).tolist())
    show(f"cumsum({dt})", lambda: torch.tensor([200.0, 100, 7], dtype=dt).cumsum(0))

a = torch.tensor([1.0, 2, 3], requires_grad=True)
b = torch.tensor([4.0, 5, 6], requires_grad=True)
(a @ b).backward()
print("dot grads:", a.grad.tolist(), b.grad.tolist())
xs, ws, bs = (torch.zeros(s, requires_grad=True) for s in [(5, 0), (3, 0), (3,)])
F.linear(xs, ws, bs).sum().backward()
print("linear with 0 in-features grads:", xs.grad.shape, ws.grad.shape, bs.grad.tolist())
show("int64 matmul", lambda: torch.tensor([[1, 2], [3, 4]]) @ torch.tensor([[5], [6]]))

x3 = torch.arange(3.0).reshape(1, 1, 3)
for mode, p in [("reflect", (-1, 2)), ("reflect", (2, -3)), ("replicate", (1, -1)), ("replicate", (-5, 4)),
                ("reflect", (3, 0)), ("reflect", (-5, 4)), ("reflect", (-3, 0)), ("replicate", (-2, -1))]:
    show(f"pad {mode} {p}", lambda: F.pad(x3, p, mode=mode))
show("pad replicate empty dim", lambda: F.pad(torch.zeros(1, 1, 0), (0, 0), mode="replicate"))

B = 1 << 31
show("zeros(2^31, 2^31)", lambda: torch.zeros(B, B))
show("expand to 2^31 x 2^31", lambda: torch.zeros(1, 1).expand(B, B).shape)
show("expand to 2^32 x 2^32", lambda: torch.zeros(1, 1).expand(2 * B, 2 * B))
show("reshape to [2^32, 2^32, 0]", lambda: torch.zeros(0).reshape(2 * B, 2 * B, 0))
show("repeat [2, 2] by [2^31, 2^31]", lambda: torch.zeros(2, 2).repeat(B, B))
