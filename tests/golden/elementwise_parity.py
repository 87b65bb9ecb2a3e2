# Reference values for tests/tensor/test_elementwise_parity.cpp and test_grad_parity.cpp,
# from PyTorch 1.13 (run: /usr/bin/python3 tests/golden/elementwise_parity.py). Each line
# prints one probe the C++ tests quote next to their checks.
import torch
import torch.nn.functional as F

nan, inf = float("nan"), float("inf")
T = torch.tensor


def show(name, f):
    try:
        r = f()
        print(f"{name}: {r.dtype if isinstance(r, torch.Tensor) else ''} {r.tolist() if isinstance(r, torch.Tensor) else r}")
    except Exception as e:  # noqa: BLE001 - the refusal is the reference
        print(f"{name}: raises {str(e).splitlines()[0]}")


def grads(name, f, *xs, dtype=torch.float64, cot=None):
    xs = [T(x, dtype=dtype, requires_grad=True) for x in xs]
    y = f(*xs)
    y.backward(torch.ones_like(y) if cot is None else T(cot, dtype=dtype))
    print(f"{name}: value {y.detach().tolist()} grads {[x.grad.tolist() for x in xs]}")


print("# special values (test_elementwise_parity)")
show("relu", lambda: torch.relu(T([nan, -0.0, 0.0, -1.0, 2.0])))
show("abs(-0.)", lambda: torch.abs(T([-0.0])).copysign(T([1.0])))
show("clamp", lambda: torch.clamp(T([nan, -0.0, 3.0, -3.0]), -1, 1))
show("clamp lo>hi", lambda: torch.clamp(T([0.0, 1.5, 3.0]), 2, 1))
show("clamp nan lo", lambda: torch.clamp(T([0.0, 1.5]), nan, 1))
show("clamp min=nan", lambda: torch.clamp(T([0.0, 1.5]), min=nan))
show("maximum nan", lambda: torch.maximum(T([nan, 1.0]), T([1.0, nan])))
print("# scalar promotion")
show("int64 + 0.5", lambda: T([1, 2]) + 0.5)
show("int64 + 2", lambda: T([1, 2]) + 2)
show("int64 pow 2", lambda: torch.pow(T([1, 2]), 2))
show("int64 pow -1", lambda: torch.pow(T([1, 2]), -1))
show("clamp int 1.5..3.5", lambda: torch.clamp(T([1, 5, 2]), 1.5, 3.5))
show("clamp int inf", lambda: torch.clamp(T([1, 5, 2]), -inf, inf))
show("int add_ 0.5", lambda: T([1, 2]).add_(0.5))
show("uint8 + 300", lambda: T([1, 2], dtype=torch.uint8) + 300)
show("uint8 clamp -1..300", lambda: torch.clamp(T([1], dtype=torch.uint8), -1, 300))
show("bool + 0.5", lambda: T([True, False]) + 0.5)
show("bool * 2", lambda: T([True, False]) * 2)
show("bool + bool", lambda: T([True, False, False]) + T([True, True, False]))
show("bool * bool", lambda: T([True, False, False]) * T([True, True, False]))
show("bool - bool", lambda: T([True]) - T([True]))
show("-bool", lambda: -T([True]))
show("abs(bool)", lambda: torch.abs(T([True])))
print("# allclose and where")
show("allclose(inf, inf)", lambda: torch.allclose(T([inf]), T([inf])))
show("allclose(inf, -inf)", lambda: torch.allclose(T([inf]), T([-inf])))
show("allclose broadcast", lambda: torch.allclose(T([1.0, 1.0]), T([1.0])))
show("allclose [2] vs [3]", lambda: torch.allclose(T([1.0, 1.0]), T([1.0, 1.0, 1.0])))
show("where float cond", lambda: torch.where(T([1.0, 0.0]), T([1.0, 2.0]), T([3.0, 4.0])))
show("masked_fill int 0.5", lambda: T([1, 2]).masked_fill(T([True, False]), 0.5))

print("# gradients (test_grad_parity)")
grads("relu", torch.relu, [nan, -1.0, 0.0, 1.0])
grads("leaky_relu 0.1", lambda x: F.leaky_relu(x, 0.1), [nan, -1.0, 0.0, 1.0])
grads("abs", torch.abs, [nan, -1.0, 0.0, 1.0])
grads("clamp -1..1", lambda x: torch.clamp(x, -1, 1), [nan, -2.0, -1.0, 0.0, 1.0, 2.0])
grads("clamp 2..1", lambda x: torch.clamp(x, 2, 1), [nan, -2.0, -1.0, 0.0, 1.0, 2.0])
grads("maximum", torch.maximum, [nan, 1.0, 2.0, nan, 1.0], [1.0, nan, 2.0, nan, 0.0])
grads("minimum", torch.minimum, [nan, 1.0, 2.0, nan, 1.0], [1.0, nan, 2.0, nan, 0.0])
grads("pow 0.5", lambda x: torch.pow(x, 0.5), [-inf, -0.0, 4.0])
grads("smooth_l1", lambda x: F.smooth_l1_loss(x, torch.zeros_like(x), reduction="none"), [nan, 0.5, 3.0])
grads("bce", lambda x: F.binary_cross_entropy(x, T([1.0, 0.0], dtype=torch.float64), reduction="none"), [0.0, 1.0])
for dt in (torch.float32, torch.float64):
    grads(f"div {dt}", torch.div, [1e-20, 3.0], [1e-20, 1e-20], dtype=dt, cot=[2.0, 1.0])
grads("div float32 tiny", torch.div, [1.0, 1e-30], [1e-30, 1e-30], dtype=torch.float32)
grads("silu float32", F.silu, [3.3e38, -3.3e38, 1.0], dtype=torch.float32, cot=[2.0, 2.0, 1.0])
grads("silu float64", F.silu, [1e308, -1e308, 1.0], cot=[2.0, 2.0, 1.0])
show("log_softmax 1e300", lambda: F.log_softmax(T([1e300, 1e300, 0.0], dtype=torch.float64), 0))
show("log_softmax 3e38 float32", lambda: F.log_softmax(T([3e38, 3e38, 0.0]), 0))
grads("cross_entropy 1e300", lambda z: F.cross_entropy(z, T([0])), [[1e300, 1e300, 0.0]])
x = [[1.0, 2.0, 3.0], [1.0, 0.0, -1.0]]
for w in (None, T([1.0, 2.0, 3.0], dtype=torch.float64)):
    for red in ("mean", "sum"):
        grads(f"cross_entropy all ignored w={w is not None} {red}",
              lambda z: F.cross_entropy(z, T([-100, -100]), weight=w, reduction=red), x)
grads("cross_entropy zero weight", lambda z: F.cross_entropy(z, T([0, 0]), weight=T([0.0, 1.0, 1.0], dtype=torch.float64)), x)
z = T(x, dtype=torch.float64, requires_grad=True)
(g,) = torch.autograd.grad(F.nll_loss(z, T([0, 2])), z, create_graph=True)
print(f"nll_loss gradient {g.tolist()} {g.grad_fn}")
for f in (F.softmax, F.log_softmax):
    z = T(2.0, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(f(z, 0), z, create_graph=True)
    (h,) = torch.autograd.grad(g, z)
    print(f"{f.__name__} 0-d: {f(z, 0).item()} gradient {g.item()} second {h.item()}")
xb = T([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], dtype=torch.bfloat16, requires_grad=True)
grads("bfloat16 cross_entropy", lambda z: F.cross_entropy(z, T([0, 2])), [[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]],
      dtype=torch.bfloat16)
show("bfloat16 softmax", lambda: F.softmax(xb.detach(), 1))
grads("unbatched cross_entropy", lambda z: F.cross_entropy(z, T(2)), [1.0, 2.0, 3.0])
