#!/usr/bin/env python3
"""PyTorch side of bench/dist_vs_pytorch.sh, launched with `ddlrun --rank0-store`
(RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT as torchrun sets them):
  torch_dist.py allreduce --numel N --iters I
  torch_dist.py ddp-step --model vgg11_bn --batch 64 --threads 1 --steps S
Rank 0 prints one JSON line shaped like ddl-bench's."""
import argparse
import json
import statistics
import time

import torch
import torch.distributed as dist
import torch.nn as nn

from torch_step import VGG


def slowest_median(times):
    t = torch.tensor(times, dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return statistics.median(t.tolist())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("cmd", choices=["allreduce", "ddp-step"])
    p.add_argument("--numel", type=int, default=9231114)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--model", default="vgg11_bn")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--steps", type=int, default=10)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    if a.cmd == "allreduce":
        t = torch.ones(a.numel)
        dist.all_reduce(t)
        times = []
        for _ in range(a.iters):
            dist.barrier()
            s = time.perf_counter()
            dist.all_reduce(t)
            times.append((time.perf_counter() - s) * 1e3)
        ms = slowest_median(times)
        out = {"bench": "allreduce", "framework": "pytorch", "world": world, "numel": a.numel, "ms": round(ms, 2),
               "algbw_gbps": round(a.numel * 4 / (ms * 1e-3) / 1e9, 3)}
    else:
        torch.manual_seed(0)
        model = nn.parallel.DistributedDataParallel(VGG(a.model.endswith("_bn")))
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
        torch.manual_seed(1 + rank)
        x, y = torch.randn(a.batch, 3, 32, 32), torch.randint(0, 10, (a.batch,))

        def step():
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()

        step()
        times = []
        for _ in range(a.steps):
            s = time.perf_counter()
            step()
            times.append((time.perf_counter() - s) * 1e3)
        out = {"bench": "ddp-step", "framework": "pytorch", "model": a.model, "world": world, "batch": a.batch,
               "threads": a.threads, "ms_per_step": round(slowest_median(times), 1)}
    if rank == 0:
        print(json.dumps(out))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
