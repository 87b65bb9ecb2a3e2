#!/usr/bin/env python3
"""Reference parameter values after 60 steps of Adamax, NAdam, RAdam, Rprop and ASGD on
loss = sum(c * w * w + 0.25 * w^4 - s * w), c = [1, 3, 0.5, 2], s = [0.5, -1, 2, 0], w0 = [1, -2, 0.5, 3]
(PyTorch 1.13, float64, the single-tensor update). Pasted into tests/optim/test_more_optimizers.cpp;
ASGD's cases also print the running average state['ax']."""
import torch

STEPS = 60


def run(make, maximize=False):
    w = torch.tensor([1.0, -2.0, 0.5, 3.0], dtype=torch.float64, requires_grad=True)
    c = torch.tensor([1.0, 3.0, 0.5, 2.0], dtype=torch.float64)
    s = torch.tensor([0.5, -1.0, 2.0, 0.0], dtype=torch.float64)
    opt = make([w])
    for _ in range(STEPS):
        opt.zero_grad()
        loss = (c * w * w).sum() + (w * w * w * w).sum() * 0.25 - (s * w).sum()
        (-loss if maximize else loss).backward()
        opt.step()
    out = [f"{v:.17g}" for v in w.tolist()]
    if isinstance(opt, torch.optim.ASGD):
        out += ["ax"] + [f"{v:.17g}" for v in opt.state[w]["ax"].tolist()]
    return out


O = torch.optim
cases = {
    "adamax_default": (lambda p: O.Adamax(p), False),
    "adamax_options": (lambda p: O.Adamax(p, lr=0.05, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1,
                                          maximize=True), True),
    "nadam_default": (lambda p: O.NAdam(p), False),
    "nadam_options": (lambda p: O.NAdam(p, lr=0.05, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1,
                                        momentum_decay=1e-2), False),
    "radam_default": (lambda p: O.RAdam(p), False),
    "radam_options": (lambda p: O.RAdam(p, lr=0.05, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1), False),
    "rprop_default": (lambda p: O.Rprop(p), False),
    "rprop_options": (lambda p: O.Rprop(p, lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2), maximize=True),
                      True),
    "asgd_default": (lambda p: O.ASGD(p), False),
    "asgd_options": (lambda p: O.ASGD(p, lr=0.05, lambd=1e-3, alpha=0.5, t0=20, weight_decay=0.1,
                                      maximize=True), True),
}
for name, (make, maximize) in cases.items():
    print(name, *run(make, maximize))
