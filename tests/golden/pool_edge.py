# Golden values for tests/tensor/test_pool_edge.cpp, from PyTorch 1.13: adaptive average and
# max pooling and interpolate (nearest, bilinear) on bfloat16 CPU tensors, avg_pool2d on int64.
# Run: /usr/bin/python3 tests/golden/pool_edge.py
import torch
import torch.nn.functional as F
from golden_seq import seq


def emit(name, t):
    vals = ", ".join(f"{v:.12g}" for v in t.float().flatten().tolist())
    print(f"// {name} {list(t.shape)} {t.dtype}")
    print(f"const std::vector<double> {name} = {{{vals}}};")


x = seq([1, 2, 5, 7], 0.7, 0.3, 3.0).bfloat16()
emit("bf_adaptive_avg", F.adaptive_avg_pool2d(x, (3, 4)))
y, idx = F.adaptive_max_pool2d(x, (3, 4), return_indices=True)
emit("bf_adaptive_max", y)
emit("bf_adaptive_max_idx", idx)
emit("bf_nearest", F.interpolate(x, size=(4, 9), mode="nearest"))
emit("bf_bilinear", F.interpolate(x, scale_factor=(1.5, 0.7), mode="bilinear"))
emit("bf_bilinear_ac", F.interpolate(x, size=(3, 8), mode="bilinear", align_corners=True))

# avg_pool2d on int64 (CPU only in PyTorch): sums divided with C's truncation toward zero.
xi = torch.arange(25).reshape(1, 1, 5, 5) - 12
print(f"// int64 avg_pool2d of arange(25) - 12 as [1, 1, 5, 5]")
print(f"// kernel 3, stride 2, padding 1: {F.avg_pool2d(xi, 3, 2, 1).flatten().tolist()}")
print(f"// the same, count_include_pad=False: {F.avg_pool2d(xi, 3, 2, 1, count_include_pad=False).flatten().tolist()}")
print(f"// kernel 2, stride 2, ceil_mode: {F.avg_pool2d(xi, 2, 2, 0, ceil_mode=True).flatten().tolist()}")

# Two NaNs in one window: PyTorch's max pooling takes the last NaN in window order.
nan = float("nan")
xn = torch.tensor([[[[nan, 1.0, nan, 5.0], [2.0, nan, 3.0, 4.0]]]])
print("// max pooling indices of [[nan, 1, nan, 5], [2, nan, 3, 4]]")
print(f"// kernel 2, stride 2: {F.max_pool2d(xn, 2, 2, return_indices=True)[1].flatten().tolist()}")
print(f"// kernel 2, stride 1: {F.max_pool2d(xn, 2, 1, return_indices=True)[1].flatten().tolist()}")
print(f"// kernel (2, 3), stride 1, padding (0, 1): "
      f"{F.max_pool2d(xn, (2, 3), 1, (0, 1), return_indices=True)[1].flatten().tolist()}")
print(f"// adaptive to (1, 2): {F.adaptive_max_pool2d(xn, (1, 2), return_indices=True)[1].flatten().tolist()}")
