#!/usr/bin/env python3
"""Golden values for mixed precision (PyTorch 1.13, CPU), pasted into
tests/tensor/test_half.cpp and tests/autograd/test_autocast.cpp.

1. float32 -> float16 / bfloat16 bit patterns for edge cases and a sweep
   x_i = (-1)^i * 2^((7 i) % 61 - 30) * (1 + i / 997), i < 64 (built in double,
   rounded to float32), via torch.Tensor.half() / .bfloat16().
2. bf16 autocast (torch.autocast('cpu', dtype=torch.bfloat16)) of linear,
   conv2d and matmul on seq() inputs with float32 master weights: output dtype,
   output checksum and the float32 weight-gradient checksum for the cotangent
   seq(y.shape, 0.9, 0.1) (golden_case.h's seq and checksum).
"""
import math
import torch

F32_EDGES = [0.0, -0.0, 1.0, -1.0, 0.1, 1.0 / 3.0, 65504.0, 65519.0, 65520.0, 65536.0, 1e5, -1e5,
             2.0 ** -14, 2.0 ** -24, 2.0 ** -25, 1.5 * 2.0 ** -25, 2.0 ** -26, 3 * 2.0 ** -25,
             2.0 ** -15 + 2.0 ** -25, 1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, 1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8,
             3.0e38, 3.4028234663852886e38, 1e-40, -1e-45, float('inf'), float('-inf'), float('nan')]


def sweep():
    return [(-1.0) ** i * 2.0 ** ((7 * i) % 61 - 30) * (1 + i / 997) for i in range(64)]


def bits(t):
    return [v & 0xFFFF for v in t.view(torch.int16).tolist()]


def conversions():
    for name, vals in (("edges", F32_EDGES), ("sweep", sweep())):
        x = torch.tensor(vals, dtype=torch.float32)
        print(f"{name} half", ", ".join(f"0x{b:04x}" for b in bits(x.half())))
        print(f"{name} bf16", ", ".join(f"0x{b:04x}" for b in bits(x.bfloat16())))


def seq(shape, a, b, scale=1.0):
    n = math.prod(shape)
    return torch.tensor([scale * math.sin(a * i + b) for i in range(n)], dtype=torch.float64).reshape(shape)


def checksum(t):
    flat = t.detach().double().reshape(-1)
    return sum(flat[i].item() * math.sin(0.1 * i + 0.5) for i in range(flat.numel()))


def autocast_case(name, f, shapes):
    xs = [seq(s, 0.3 + 0.2 * k, 0.1 * k).float().requires_grad_() for k, s in enumerate(shapes)]
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = f(*xs)
    y.backward(seq(y.shape, 0.9, 0.1).to(y.dtype))
    print(name, y.dtype, list(y.shape), f"{checksum(y):.10g}", *[f"{checksum(x.grad):.10g}" for x in xs],
          *[str(x.grad.dtype) for x in xs])


conversions()
autocast_case("linear", lambda x, w, b: torch.nn.functional.linear(x, w, b), [(5, 12), (7, 12), (7,)])
autocast_case("conv2d", lambda x, w, b: torch.nn.functional.conv2d(x, w, b, padding=1), [(2, 3, 6, 6), (4, 3, 3, 3), (4,)])
autocast_case("matmul", lambda a, b: torch.matmul(a, b), [(3, 4, 9), (9, 6)])
# log_softmax after linear: ddl follows CUDA autocast's float32 list (softmax and losses run in
# float32), which PyTorch 1.13's CPU autocast does not list, so the widening is written out here.
autocast_case("linear_log_softmax",
              lambda x, w, b: torch.log_softmax(torch.nn.functional.linear(x, w, b).float(), 1),
              [(5, 12), (7, 12), (7,)])
