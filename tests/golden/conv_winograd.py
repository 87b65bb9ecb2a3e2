# Golden values for tests/tensor/test_conv_winograd.cpp, from PyTorch 1.13: 3x3 stride-1
# convolutions with >= 64 channels (ddl's float32 Winograd path) with a bias, and the
# NaN/inf pattern of a convolution whose input holds an inf.
# Run: /usr/bin/python3 tests/golden/conv_winograd.py
import torch
import torch.nn.functional as F
from golden_seq import seq

torch.set_default_dtype(torch.float64)


def emit(name, t):
    vals = ", ".join(f"{v:.12g}" for v in t.flatten().tolist())
    print(f"const std::vector<double> {name} = {{{vals}}};")


def checksum(name, t):
    # sum(t * seq(t.shape, 0.1, 0.5)): one number that sees every element.
    print(f"const double {name} = {float((t * seq(t.shape, 0.1, 0.5)).sum()):.15g};")


def bias_case(tag, xs, ws, padding):
    x = seq(xs, 0.7, 0.3).requires_grad_()
    w = seq(ws, 0.5, 0.2, 0.05).requires_grad_()
    b = seq([ws[0]], 1.3, 0.4, 2.0).requires_grad_()
    y = F.conv2d(x, w, b, padding=padding)
    gy = seq(list(y.shape), 0.9, 0.1)
    y.backward(gy)
    print(f"// {tag}: x {xs}, w {ws}, padding {padding}; y {list(y.shape)}; {tag}_y0 is y[-1, :2] (the clipped tiles)")
    emit(f"{tag}_y0", y.detach()[-1, :2])
    checksum(f"{tag}_y", y.detach())
    checksum(f"{tag}_gx", x.grad)
    checksum(f"{tag}_gw", w.grad)
    checksum(f"{tag}_gb", b.grad)


bias_case("wb1", [2, 64, 5, 7], [64, 64, 3, 3], 1)
bias_case("wb2", [1, 64, 6, 5], [80, 64, 3, 3], 0)

# An inf in the input: the outputs it reaches are inf (never NaN), the rest finite; with a
# one-hot output gradient, the weight gradient is NaN exactly where 0 * inf is summed.
x = seq([1, 64, 6, 6], 0.7, 0.3)
x[0, 3, 2, 2] = float("inf")
w = seq([64, 64, 3, 3], 0.5, 0.2, 0.05)
x.requires_grad_()
w.requires_grad_()
y = F.conv2d(x, w, padding=1)
gy = torch.zeros_like(y)
gy[0, 0, 0, 0] = 1.0
gx, gw = torch.autograd.grad(y, (x, w), gy)
print(f"// inf at x[0, 3, 2, 2]: y nan {int(y.isnan().sum())} inf {int(y.isinf().sum())} of {y.numel()}; "
      f"one-hot gy: gx nan {int(gx.isnan().sum())}, gw nan {int(gw.isnan().sum())} inf {int(gw.isinf().sum())}")
