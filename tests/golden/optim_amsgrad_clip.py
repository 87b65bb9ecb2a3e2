#!/usr/bin/env python3
"""Reference values for tests/optim/test_adam_amsgrad_clip.cpp (PyTorch 1.13, float64).

Parameters after 1,001 steps of Adam / AdamW with amsgrad on Rosenbrock's function
(1 - x)^2 + 100 (y - x^2)^2 from (x, y) = (-1.5, 2), whose gradient grows and shrinks by orders of
magnitude along the valley (so the running maximum of v matters), AdamW with its default weight decay, and
clip_grad_norm_ / clip_grad_value_ on fixed gradients. Run with /usr/bin/python3; pasted into the test."""
import math

import torch


def run(make, steps):
    x = torch.tensor([-1.5], dtype=torch.float64, requires_grad=True)
    y = torch.tensor([2.0], dtype=torch.float64, requires_grad=True)
    opt = make([x, y])
    for _ in range(steps):
        opt.zero_grad()
        ((1 - x) ** 2 + 100 * (y - x * x) ** 2).sum().backward()
        opt.step()
    return [f"{v:.17g}" for v in x.tolist() + y.tolist()]


cases = {
    "adam_amsgrad": lambda p: torch.optim.Adam(p, lr=0.02, amsgrad=True),
    "adam_amsgrad_wd": lambda p: torch.optim.Adam(p, lr=0.01, betas=(0.8, 0.9), weight_decay=0.1, amsgrad=True),
    "adamw_amsgrad": lambda p: torch.optim.AdamW(p, lr=0.02, weight_decay=0.1, amsgrad=True),
    "adam_plain": lambda p: torch.optim.Adam(p, lr=0.02),
    "adamw_default_wd": lambda p: torch.optim.AdamW(p, lr=0.02),
}
for name, make in cases.items():
    print(name, *run(make, 1001))

# clip_grad_norm_: gradients [3, -4] and [12] (float64), max_norm 5, each norm type.
for p in [2.0, 1.0, math.inf, 3.0, 0.5, 0.0, -math.inf]:
    a = torch.zeros(2, dtype=torch.float64, requires_grad=True)
    b = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    a.grad = torch.tensor([3.0, -4.0], dtype=torch.float64)
    b.grad = torch.tensor([12.0], dtype=torch.float64)
    n = torch.nn.utils.clip_grad_norm_([a, b], 5.0, norm_type=p)
    print("clip", p, f"{n.item():.17g}", *[f"{v:.17g}" for v in a.grad.tolist() + b.grad.tolist()])
