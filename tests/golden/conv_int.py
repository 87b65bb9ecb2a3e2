# Golden values for tests/tensor/test_conv_int.cpp: PyTorch 1.13 computes conv2d, conv1d and
# conv_transpose2d on int64 CPU tensors (exact integer sums); bool is refused.
# Run: /usr/bin/python3 tests/golden/conv_int.py
import torch
import torch.nn.functional as F


def ints(shape, mod, shift):
    # (7 i mod mod) - shift for the flat index i, rebuilt in the C++ test.
    n = 1
    for s in shape:
        n *= s
    return ((torch.arange(n) * 7) % mod - shift).reshape(shape)


def emit(name, t):
    print(f"// {name} {list(t.shape)}")
    print(f"const std::vector<int64_t> {name} = {{{', '.join(str(v) for v in t.flatten().tolist())}}};")


x = ints([2, 4, 5, 6], 11, 5)
w = ints([6, 2, 3, 2], 5, 2)
b = ints([6], 9, 4)
emit("conv2d_y", F.conv2d(x, w, b, stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2))
x1 = ints([2, 3, 9], 13, 6)
w1 = ints([4, 3, 3], 5, 2)
emit("conv1d_y", F.conv1d(x1, w1, ints([4], 9, 4), stride=2, padding=1))
xt = ints([1, 4, 3, 4], 11, 5)
wt = ints([4, 3, 2, 3], 5, 2)
emit("convt_y", F.conv_transpose2d(xt, wt, ints([3], 9, 4), stride=(2, 1), padding=(0, 1), output_padding=(1, 0)))
try:
    F.conv2d(x.bool(), w.bool(), groups=2)
except RuntimeError as e:
    print(f"// bool: {e}")
