# Golden values for tests/tensor/test_batch_norm.cpp and test_softmax_loss.cpp,
# from PyTorch (run: /usr/bin/python3 tests/golden/norm_softmax_loss.py).
# Inputs are formulas of the flat index i, rebuilt identically in the C++ tests.
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


# ---- batch_norm: two training steps, then eval ----
shape = (2, 3, 2, 2)
x1 = formula(shape, lambda i: 2.0 * math.sin(0.37 * i + 0.1) + 0.5)
x2 = formula(shape, lambda i: 1.5 * math.cos(0.23 * i) - 0.2)
w = formula((3,), lambda i: 1.0 + 0.1 * i).requires_grad_()
b = formula((3,), lambda i: 0.2 * i - 0.1).requires_grad_()
rm, rv = torch.zeros(3), torch.ones(3)
F.batch_norm(x1, rm, rv, w, b, training=True, momentum=0.1, eps=1e-5)
x2.requires_grad_()
y2 = F.batch_norm(x2, rm, rv, w, b, training=True, momentum=0.1, eps=1e-5)
cot = formula(shape, lambda i: math.cos(0.5 * i))
(y2 * cot).sum().backward()
show("bn y (step 2)", y2)
show("bn running_mean", rm)
show("bn running_var", rv)
show("bn grad_x", x2.grad)
show("bn grad_w", w.grad)
show("bn grad_b", b.grad)
show("bn eval y (x1)", F.batch_norm(x1, rm, rv, w, b, training=False, eps=1e-5))

# ---- cross_entropy with ignore_index and label smoothing ----
logits = formula((5, 4), lambda i: 3.0 * math.sin(0.7 * i)).requires_grad_()
target = torch.tensor([2, -1, 3, 0, 1])
for red in ["mean", "sum", "none"]:
    show(f"ce {red}", F.cross_entropy(logits, target, ignore_index=-1, label_smoothing=0.1, reduction=red))
F.cross_entropy(logits, target, ignore_index=-1, label_smoothing=0.1).backward()
show("ce mean grad", logits.grad)
show("ce plain mean", F.cross_entropy(logits, torch.tensor([2, 1, 3, 0, 1])))
logits3 = formula((2, 3, 4), lambda i: math.sin(1.3 * i) + 0.1 * i)
target3 = torch.tensor([[0, 2, 1, -100], [2, 2, 0, 1]])
show("ce 3d mean", F.cross_entropy(logits3, target3, label_smoothing=0.2))
show("ce 3d none", F.cross_entropy(logits3, target3, reduction="none"))
