# Golden values for tests/tensor/test_conv.cpp and test_pool.cpp, from PyTorch.
# Inputs come from closed-form sequences (seq, golden_seq.py), rebuilt identically in C++,
# so no data files are needed. Run: python3 tests/golden/conv_pool.py
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


def conv_case(tag, xs, ws, stride, padding, dilation, groups):
    x = seq(xs, 0.7, 0.3).requires_grad_()
    w = seq(ws, 0.5, 0.2, 0.5).requires_grad_()
    b = seq([ws[0]], 1.3, 0.4, 0.25).requires_grad_()
    y = F.conv2d(x, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups)
    gy = seq(list(y.shape), 0.9, 0.1)
    y.backward(gy)
    print(f"// conv {tag}: x {xs}, w {ws}, stride {stride}, padding {padding}, dilation {dilation}, groups {groups}")
    print(f"// y shape {list(y.shape)}")
    emit(f"{tag}_y", y.detach())
    checksum(f"{tag}_gx", x.grad)
    checksum(f"{tag}_gw", w.grad)
    checksum(f"{tag}_gb", b.grad)


def pool_case(tag, xs, kernel, stride, padding, dilation, ceil_mode):
    x = seq(xs, 0.7, 0.3).requires_grad_()
    y, idx = F.max_pool2d(x, kernel, stride, padding, dilation, ceil_mode=ceil_mode, return_indices=True)
    gy = seq(list(y.shape), 0.9, 0.1)
    y.backward(gy)
    print(f"// max_pool {tag}: x {xs}, kernel {kernel}, stride {stride}, padding {padding}, "
          f"dilation {dilation}, ceil_mode {ceil_mode}; y shape {list(y.shape)}")
    emit(f"{tag}_y", y.detach())
    emit(f"{tag}_idx", idx)
    checksum(f"{tag}_gx", x.grad)


def avg_case(tag, xs, kernel, stride, padding, ceil_mode, count_include_pad):
    x = seq(xs, 0.7, 0.3).requires_grad_()
    y = F.avg_pool2d(x, kernel, stride, padding, ceil_mode=ceil_mode, count_include_pad=count_include_pad)
    gy = seq(list(y.shape), 0.9, 0.1)
    y.backward(gy)
    print(f"// avg_pool {tag}: x {xs}, kernel {kernel}, stride {stride}, padding {padding}, "
          f"ceil_mode {ceil_mode}, count_include_pad {count_include_pad}; y shape {list(y.shape)}")
    emit(f"{tag}_y", y.detach())
    checksum(f"{tag}_gx", x.grad)


print("// ---- test_conv.cpp ----")
conv_case("c1", [2, 3, 7, 6], [4, 3, 3, 2], (2, 1), (1, 2), (1, 2), 1)
conv_case("c2", [1, 4, 5, 5], [6, 2, 3, 3], (1, 1), (1, 1), (2, 2), 2)
print("// ---- test_pool.cpp ----")
pool_case("m1", [1, 2, 5, 7], (3, 2), (2, 2), (1, 1), (1, 2), True)
pool_case("m2", [2, 1, 6, 6], (2, 2), (2, 2), (0, 0), (1, 1), False)
# ceil_mode where the last window would start in the right padding: dropped (3, not 4).
pool_case("m3", [1, 1, 5, 5], (2, 2), (2, 2), (1, 1), (1, 1), True)
avg_case("a3", [1, 1, 5, 5], (2, 2), (2, 2), (1, 1), True, False)
avg_case("a1", [1, 2, 5, 7], (3, 3), (2, 2), (1, 1), True, True)
avg_case("a2", [1, 2, 5, 7], (3, 3), (2, 2), (1, 1), True, False)
