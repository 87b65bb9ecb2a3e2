# Golden values for tests/tensor/test_conv_transpose.cpp, test_adaptive_upsample.cpp
# and tests/nn/test_losses.cpp, from PyTorch 1.13. Inputs are closed-form
# sequences (seq, golden_seq.py), rebuilt identically in C++.
# Run: /usr/bin/python3 tests/golden/conv_losses.py
import warnings

import torch
import torch.nn.functional as F
from golden_seq import seq

torch.set_default_dtype(torch.float64)
warnings.filterwarnings("ignore")  # kl_div's note on reduction="mean"


def emit(name, t):
    vals = ", ".join(f"{v:.12g}" for v in t.detach().flatten().tolist())
    print(f"const std::vector<double> {name} = {{{vals}}};")


def checksum(name, t):
    # sum(t * seq(t.shape, 0.1, 0.5)): one number that sees every element.
    print(f"const double {name} = {float((t * seq(t.shape, 0.1, 0.5)).sum()):.15g};")


def conv_t_case(tag, xs, ws, stride, padding, output_padding, dilation, groups):
    x = seq(xs, 0.7, 0.3).requires_grad_()
    w = seq(ws, 0.5, 0.2, 0.5).requires_grad_()
    b = seq([ws[1] * groups], 1.3, 0.4, 0.25).requires_grad_()
    y = F.conv_transpose2d(x, w, b, stride, padding, output_padding, groups, dilation)
    y.backward(seq(list(y.shape), 0.9, 0.1))
    print(f"// conv_transpose2d {tag}: x {xs}, w {ws}, stride {stride}, padding {padding}, "
          f"output_padding {output_padding}, dilation {dilation}, groups {groups}; y shape {list(y.shape)}")
    emit(f"{tag}_y", y)
    checksum(f"{tag}_gx", x.grad)
    checksum(f"{tag}_gw", w.grad)
    checksum(f"{tag}_gb", b.grad)


def conv1d_case(tag, xs, ws, stride, padding, dilation, groups):
    x = seq(xs, 0.7, 0.3).requires_grad_()
    w = seq(ws, 0.5, 0.2, 0.5).requires_grad_()
    b = seq([ws[0]], 1.3, 0.4, 0.25).requires_grad_()
    y = F.conv1d(x, w, b, stride, padding, dilation, groups)
    y.backward(seq(list(y.shape), 0.9, 0.1))
    print(f"// conv1d {tag}: x {xs}, w {ws}, stride {stride}, padding {padding}, dilation {dilation}, "
          f"groups {groups}; y shape {list(y.shape)}")
    emit(f"{tag}_y", y)
    checksum(f"{tag}_gx", x.grad)
    checksum(f"{tag}_gw", w.grad)
    checksum(f"{tag}_gb", b.grad)


def adaptive_case(tag, xs, out):
    x = seq(xs, 0.7, 0.3).requires_grad_()
    y = F.adaptive_avg_pool2d(x, out)
    y.backward(seq(list(y.shape), 0.9, 0.1))
    print(f"// adaptive pools {tag}: x {xs} -> {out}")
    emit(f"{tag}_avg", y)
    checksum(f"{tag}_avg_gx", x.grad)
    x.grad = None
    y, idx = F.adaptive_max_pool2d(x, out, return_indices=True)
    y.backward(seq(list(y.shape), 0.9, 0.1))
    emit(f"{tag}_max", y)
    emit(f"{tag}_idx", idx)
    checksum(f"{tag}_max_gx", x.grad)


def upsample_case(tag, xs, mode, size=None, scale=None, align_corners=None):
    x = seq(xs, 0.7, 0.3).requires_grad_()
    y = F.interpolate(x, size=size, scale_factor=scale, mode=mode, align_corners=align_corners)
    y.backward(seq(list(y.shape), 0.9, 0.1))
    print(f"// interpolate {tag}: x {xs}, mode {mode}, size {size}, scale {scale}, align_corners {align_corners}"
          f"; y shape {list(y.shape)}")
    emit(f"{tag}_y", y)
    checksum(f"{tag}_gx", x.grad)


print("// ---- test_conv_transpose.cpp ----")
conv_t_case("t1", [2, 4, 3, 4], [4, 3, 3, 2], (2, 1), (1, 0), (1, 0), (1, 2), 1)
conv_t_case("t2", [1, 4, 5, 3], [4, 2, 3, 3], (2, 3), (1, 1), (0, 2), (2, 1), 2)
# output_padding >= stride, allowed since it is below the dilation.
conv_t_case("t3", [1, 2, 3, 4], [2, 3, 2, 3], (2, 1), (1, 0), (2, 1), (3, 2), 1)
conv1d_case("d1", [2, 4, 9], [6, 2, 3], 2, 2, 2, 2)
conv1d_case("d2", [1, 3, 7], [2, 3, 4], 1, 0, 1, 1)

print("// ---- test_adaptive_upsample.cpp ----")
adaptive_case("ad1", [2, 3, 7, 5], (3, 4))
adaptive_case("ad2", [1, 2, 3, 4], (5, 7))
upsample_case("n1", [1, 2, 3, 4], "nearest", size=(5, 7))
upsample_case("n2", [1, 2, 5, 3], "nearest", scale=(1.5, 2.0))
upsample_case("n3", [1, 2, 5, 7], "nearest", size=(2, 3))
upsample_case("b1", [1, 2, 3, 4], "bilinear", size=(5, 7), align_corners=False)
upsample_case("b2", [1, 2, 3, 4], "bilinear", size=(5, 7), align_corners=True)
upsample_case("b3", [1, 2, 3, 4], "bilinear", scale=(1.7, 1.7), align_corners=False)
upsample_case("b4", [1, 2, 5, 7], "bilinear", size=(2, 3), align_corners=False)
upsample_case("b5", [1, 2, 5, 7], "bilinear", size=(1, 3), align_corners=True)


print("// ---- tests/nn/test_losses.cpp ----")
# Probabilities with exact 0 and 1 (the clamped logs), targets in [0, 1].
p = (0.5 + 0.45 * seq([3, 4], 0.9, 0.2)).requires_grad_()
with torch.no_grad():
    p[0, 0], p[1, 1] = 0.0, 1.0
t = (0.5 + 0.5 * seq([3, 4], 0.4, 1.0)).requires_grad_()
bw = torch.tensor([0.5, 1.0, 1.5, 2.0])
for red in ["none", "mean", "sum"]:
    emit(f"bce_{red}", F.binary_cross_entropy(p, t, bw, reduction=red))
# The gradient at interior points only (x = 0 or 1 has an infinite target slope).
pi = (0.5 + 0.45 * seq([3, 4], 0.9, 0.2)).requires_grad_()
F.binary_cross_entropy(pi, t, bw).backward()
emit("bce_mean_gx", pi.grad)
emit("bce_mean_gt", t.grad)

z = (4.0 * seq([3, 4], 1.1, 0.3)).requires_grad_()
with torch.no_grad():
    z[0, 0], z[2, 3] = 60.0, -60.0
t.grad = None
pw = torch.tensor([1.0, 2.0, 0.5, 3.0])
for red in ["none", "mean", "sum"]:
    emit(f"bcel_{red}", F.binary_cross_entropy_with_logits(z, t, bw, reduction=red, pos_weight=pw))
emit("bcel_plain_mean", F.binary_cross_entropy_with_logits(z, t))
F.binary_cross_entropy_with_logits(z, t, bw, reduction="sum", pos_weight=pw).backward()
emit("bcel_sum_gz", z.grad)
emit("bcel_sum_gt", t.grad)

a = seq([2, 5], 0.8, 0.1, 2.0).requires_grad_()
b = seq([2, 5], 0.3, 0.7, 1.5).requires_grad_()
for name, fn in [("l1", lambda r: F.l1_loss(a, b, reduction=r)),
                 ("sl1", lambda r: F.smooth_l1_loss(a, b, reduction=r, beta=0.5)),
                 ("huber", lambda r: F.huber_loss(a, b, reduction=r, delta=0.7))]:
    for red in ["none", "mean", "sum"]:
        emit(f"{name}_{red}", fn(red))
    a.grad, b.grad = None, None
    fn("mean").backward()
    emit(f"{name}_mean_ga", a.grad)
    emit(f"{name}_mean_gb", b.grad)

lp = F.log_softmax(seq([3, 4], 0.6, 0.2, 2.0), 1).requires_grad_()
q = F.softmax(seq([3, 4], 0.35, 0.9, 3.0), 1)
with torch.no_grad():
    q[1, 2] = 0.0
q.requires_grad_()
for red in ["none", "mean", "sum", "batchmean"]:
    emit(f"kl_{red}", F.kl_div(lp, q, reduction=red))
F.kl_div(lp, q, reduction="batchmean").backward()
emit("kl_batchmean_gx", lp.grad)
emit("kl_batchmean_gt", q.grad)
lq = seq([3, 4], 0.35, 0.9, 1.0).requires_grad_()
lp.grad = None
emit("kl_log_sum", F.kl_div(lp, lq, reduction="sum", log_target=True))
F.kl_div(lp, lq, reduction="sum", log_target=True).backward()
emit("kl_log_sum_gx", lp.grad)
emit("kl_log_sum_gt", lq.grad)

logits = seq([5, 4], 0.7, 0.0, 3.0).requires_grad_()
target = torch.tensor([2, -1, 3, 0, 1])
cw = torch.tensor([0.5, 1.2, 2.0, 0.8])
for red in ["none", "mean", "sum"]:
    emit(f"cew_{red}", F.cross_entropy(logits, target, cw, ignore_index=-1, reduction=red))
    emit(f"cews_{red}", F.cross_entropy(logits, target, cw, ignore_index=-1, reduction=red, label_smoothing=0.1))
F.cross_entropy(logits, target, cw, ignore_index=-1, label_smoothing=0.1).backward()
emit("cews_mean_grad", logits.grad)
logits3 = seq([2, 3, 4], 1.3, 0.2, 2.0)
target3 = torch.tensor([[0, 2, 1, 1], [2, 2, 0, 1]])
emit("cew3_mean", F.cross_entropy(logits3, target3, torch.tensor([1.5, 0.5, 1.0])))
probs = F.softmax(seq([5, 4], 0.45, 0.3, 2.0), 1)
logits.grad = None
for red in ["none", "mean", "sum"]:
    emit(f"cep_{red}", F.cross_entropy(logits, probs, cw, reduction=red, label_smoothing=0.2))
F.cross_entropy(logits, probs, cw, label_smoothing=0.2).backward()
emit("cep_mean_grad", logits.grad)
