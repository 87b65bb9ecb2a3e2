#!/usr/bin/env python3
"""Reference parameter values after 3 steps of each optimizer on loss = sum(c * w^2),
c = [1, 3], w0 = [1, -2] (PyTorch 1.13, float64). Pasted into tests/optim/test_optim.cpp."""
import torch

def run(make):
    w = torch.tensor([1.0, -2.0], dtype=torch.float64, requires_grad=True)
    c = torch.tensor([1.0, 3.0], dtype=torch.float64)
    opt = make([w])
    for _ in range(3):
        opt.zero_grad()
        (c * w * w).sum().backward()
        opt.step()
    return [f"{v:.17g}" for v in w.tolist()]

cases = {
    "sgd": lambda p: torch.optim.SGD(p, lr=0.1),
    "sgd_momentum_wd": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.1),
    "sgd_dampening": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.5),
    "sgd_nesterov": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
    "adam": lambda p: torch.optim.Adam(p, lr=0.1),
    "adam_wd": lambda p: torch.optim.Adam(p, lr=0.1, betas=(0.8, 0.9), weight_decay=0.1),
    "adamw": lambda p: torch.optim.AdamW(p, lr=0.1, weight_decay=0.1),
    "rmsprop": lambda p: torch.optim.RMSprop(p, lr=0.01),
    "rmsprop_centered_momentum_wd": lambda p: torch.optim.RMSprop(
        p, lr=0.01, alpha=0.9, momentum=0.5, centered=True, weight_decay=0.1),
    "adagrad": lambda p: torch.optim.Adagrad(p, lr=0.1),
    "adagrad_decay_wd_init": lambda p: torch.optim.Adagrad(
        p, lr=0.1, lr_decay=0.5, weight_decay=0.1, initial_accumulator_value=0.2),
}
for name, make in cases.items():
    print(name, *run(make))

w = torch.zeros(1, requires_grad=True)
for name, make in {
    "step": lambda o: torch.optim.lr_scheduler.StepLR(o, 3, 0.5),
    "multistep": lambda o: torch.optim.lr_scheduler.MultiStepLR(o, [2, 5], 0.1),
    "cosine": lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, 10, 0.01),
}.items():
    opt = torch.optim.SGD([w], lr=1.0)
    s = make(opt)
    lrs = []
    for _ in range(8):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        s.step()
    print(name, *[f"{v:.17g}" for v in lrs])

# OneCycleLR over 10 steps (rates and SGD momentum before each step), two- and three-phase.
for name, kw in {"onecycle": {}, "onecycle_linear_3phase": {"anneal_strategy": "linear", "three_phase": True}}.items():
    opt = torch.optim.SGD([w], lr=1.0, momentum=0.9)
    s = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.5, total_steps=10, **kw)
    lrs, moms = [], []
    for _ in range(10):
        lrs.append(opt.param_groups[0]["lr"])
        moms.append(opt.param_groups[0]["momentum"])
        opt.step()
        s.step()
    print(name, *[f"{v:.17g}" for v in lrs])
    print(name + "_momentum", *[f"{v:.17g}" for v in moms])

# ReduceLROnPlateau over a fixed metric sequence (rate after each step).
metrics = [1.0, 0.9, 0.95, 0.91, 0.92, 0.93, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
for name, kw in {"plateau": {"patience": 2, "factor": 0.5},
                 "plateau_cooldown_abs_max": {"mode": "max", "patience": 1, "cooldown": 2, "factor": 0.5, "threshold": 0.05,
                                              "threshold_mode": "abs", "min_lr": 0.2}}.items():
    opt = torch.optim.SGD([w], lr=1.0)
    s = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
    lrs = []
    for m in metrics:
        s.step(m)
        lrs.append(opt.param_groups[0]["lr"])
    print(name, *[f"{v:.17g}" for v in lrs])
