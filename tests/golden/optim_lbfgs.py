#!/usr/bin/env python3
"""Reference values for tests/optim/test_lbfgs.cpp (PyTorch 1.13, float64, with and without the strong-Wolfe line search):
Rosenbrock's function (1 - x)^2 + 100 (y - x^2)^2 from (-1.5, 2), five step(closure) calls each,
and the number of closure evaluations. Run with /usr/bin/python3; pasted into the test."""
import torch

for name, kw in {
    "default_lr0.1": dict(lr=0.1),
    "history3_iter7": dict(lr=0.2, history_size=3, max_iter=7),
    "max_eval5": dict(lr=0.1, max_iter=20, max_eval=5),
    "strong_wolfe": dict(lr=1, line_search_fn="strong_wolfe"),
    "strong_wolfe_history2": dict(lr=0.5, history_size=2, max_iter=10, line_search_fn="strong_wolfe"),
}.items():
    x = torch.tensor([-1.5], dtype=torch.float64, requires_grad=True)
    y = torch.tensor([2.0], dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([x, y], **kw)
    evals = [0]

    def closure():
        evals[0] += 1
        opt.zero_grad()
        loss = ((1 - x) ** 2 + 100 * (y - x * x) ** 2).sum()
        loss.backward()
        return loss

    first = [opt.step(closure).item() for _ in range(5)]
    print(name, f"{x.item():.17g}", f"{y.item():.17g}", evals[0], *[f"{v:.17g}" for v in first])
