# Golden values for tests/autograd/test_higher_order.cpp, from PyTorch 1.13
# (run: /usr/bin/python3 tests/golden/higher_order.py). Inputs are formulas of the
# flat index i, rebuilt identically in the C++ test.
import math
import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)


def formula(shape, f):
    n = math.prod(shape)
    return torch.tensor([f(i) for i in range(n)]).reshape(shape)


def show(name, t):
    vals = ", ".join(f"{v:.12g}" for v in t.detach().flatten().tolist())
    print(f"// {name} {list(t.shape)}\n{{{vals}}},")


def hvp(f, x, v):
    (g,) = torch.autograd.grad(f(x), x, create_graph=True)
    (h,) = torch.autograd.grad((g * v).sum(), x)
    return h


# ---- Hessian-vector product through elementwise ops ----
x = formula((2, 3), lambda i: 0.4 * math.sin(0.9 * i + 0.2) + 0.8).requires_grad_()
v = formula((2, 3), lambda i: math.cos(0.5 * i))
f = lambda x: (x.pow(3) * (x + 2).sqrt() / (1 + torch.exp(-x)) + x.abs() * torch.relu(x) + torch.tanh(x) * x.log()).sum()
show("elementwise hvp", hvp(f, x, v))

# ---- softmax / log_softmax ----
c = formula((2, 3), lambda i: 0.3 * i - 0.5)
f = lambda x: (F.log_softmax(x, 1) * c).sum() + (F.softmax(x, 1) ** 2).sum()
show("softmax hvp", hvp(f, x, v))

# ---- matmul and reductions ----
a = formula((3, 4), lambda i: 0.2 * math.cos(0.3 * i) + 0.1).requires_grad_()
b = formula((4, 2), lambda i: 0.25 * math.sin(0.8 * i + 0.4))
va = formula((3, 4), lambda i: math.sin(0.21 * i + 1.0))
f = lambda a: (torch.tanh(a @ b).mean(0) ** 2).sum() + (a.sum(1, keepdim=True) * a).mean()
show("matmul hvp", hvp(f, a, va))

# ---- conv2d: the mixed second derivative d/dw <grad_x f, v> ----
xc = formula((1, 2, 4, 4), lambda i: math.sin(0.37 * i)).requires_grad_()
wc = formula((3, 2, 3, 3), lambda i: 0.2 * math.cos(0.13 * i + 0.3)).requires_grad_()
bc = formula((3,), lambda i: 0.1 * i - 0.1).requires_grad_()
cc = formula((1, 3, 2, 2), lambda i: math.cos(0.7 * i))
vc = formula((1, 2, 4, 4), lambda i: math.cos(0.29 * i + 0.5))
y = F.conv2d(xc, wc, bc, stride=2, padding=1)
loss = (torch.tanh(y) * cc).sum()
(gx,) = torch.autograd.grad(loss, xc, create_graph=True)
gw, gb = torch.autograd.grad((gx * vc).sum(), [wc, bc])
show("conv2d d/dw <grad_x, v>", gw)
show("conv2d d/db <grad_x, v>", gb)

# ---- cross_entropy with label smoothing ----
z = formula((3, 4), lambda i: math.sin(1.3 * i + 0.2)).requires_grad_()
t = torch.tensor([0, 2, 3])
vz = formula((3, 4), lambda i: 0.5 - 0.1 * i)
f = lambda z: F.cross_entropy(z, t, label_smoothing=0.1)
show("cross_entropy hvp", hvp(f, z, vz))

# ---- WGAN-GP style gradient penalty backpropagated to the critic's weights ----
xg = formula((4, 3), lambda i: math.sin(0.3 * i + 0.1)).requires_grad_()
w1 = formula((5, 3), lambda i: 0.5 * math.cos(0.7 * i)).requires_grad_()
b1 = formula((5,), lambda i: 0.1 * i - 0.2).requires_grad_()
w2 = formula((1, 5), lambda i: 0.3 * math.sin(1.1 * i + 0.5)).requires_grad_()
b2 = torch.tensor([0.05]).requires_grad_()
d = F.linear(torch.tanh(F.linear(xg, w1, b1)), w2, b2)
(gx,) = torch.autograd.grad(d.sum(), xg, create_graph=True)
gp = ((gx.pow(2).sum(1) + 1e-12).sqrt() - 1).pow(2).mean()
gp.backward()
show("gp value", gp.reshape(1))
show("gp grad w1", w1.grad)
show("gp grad b1", b1.grad)
show("gp grad w2", w2.grad)
