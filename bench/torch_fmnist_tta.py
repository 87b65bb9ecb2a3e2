#!/usr/bin/env python3
"""PyTorch side of scripts/time_to_accuracy.sh: the fmnist-fast recipe of docs/train_cifar.md
("Time to accuracy") on Fashion-MNIST, 2 processes x 1 thread on gloo (torch.multiprocessing), the
same model (resnet9_small), optimizer, schedule, augmentation and batch size as ddl's train_cifar.
Trains until the first epoch whose test accuracy reaches --target, then prints the wall time to it
(from the start of training, as train_cifar's convergence time) and one JSON line.
  /usr/bin/python3 bench/torch_fmnist_tta.py [--epochs 10] [--target 93.5] [--max-epochs-run N]
Not a test: the data loading here is whole-tensor (no loader threads)."""
import argparse
import gzip
import json
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

DATA = "/usr/share/datasets/fashion-mnist"
MEAN, STD = 0.2860, 0.3530  # train_cifar's Fashion-MNIST normalisation


def read_idx(name):
    with gzip.open(os.path.join(DATA, name)) as f:
        raw = f.read()
    dims = raw[3]
    shape = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def load(train):
    prefix = "train" if train else "t10k"
    x = torch.from_numpy(read_idx(prefix + "-images-idx3-ubyte.gz").astype(np.float32) / 255.0)
    y = torch.from_numpy(read_idx(prefix + "-labels-idx1-ubyte.gz").astype(np.int64))
    x = F.pad(x.unsqueeze(1), (2, 2, 2, 2))  # 28x28 -> 32x32 with zeros, as train_cifar
    return (x - MEAN) / STD, y


def augment(x, g):
    """Per image: a random 32x32 crop of the image padded by 2 more pixels, then a horizontal flip
    with probability 1/2. train_cifar pads before it normalises: the padding is a raw 0."""
    n = x.shape[0]
    padded = F.pad(x, (2, 2, 2, 2), value=-MEAN / STD)
    dx = torch.randint(0, 5, (n,), generator=g)
    dy = torch.randint(0, 5, (n,), generator=g)
    flip = torch.rand(n, generator=g) < 0.5
    out = torch.empty_like(x)
    for i in range(n):
        img = padded[i, :, dy[i]:dy[i] + 32, dx[i]:dx[i] + 32]
        out[i] = img.flip(-1) if flip[i] else img
    return out


def conv_bn(cin, cout):
    return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]


class ResNet9Small(nn.Module):
    """ddl's nn::ResNet9Small (nn/models/resnet9_small.h), same layer order and names."""

    def __init__(self, width=16, classes=10, in_channels=1):
        super().__init__()
        w = width
        self.prep = nn.Sequential(*conv_bn(in_channels, w))
        self.layer1 = nn.Sequential(*conv_bn(w, 2 * w), nn.MaxPool2d(2))
        self.res1 = nn.Sequential(*conv_bn(2 * w, 2 * w), *conv_bn(2 * w, 2 * w))  # added to its input
        self.layer2 = nn.Sequential(*conv_bn(2 * w, 4 * w), nn.MaxPool2d(2))
        self.layer3 = nn.Sequential(*conv_bn(4 * w, 8 * w), nn.MaxPool2d(2))
        self.res3 = nn.Sequential(*conv_bn(8 * w, 8 * w), *conv_bn(8 * w, 8 * w))
        self.linear = nn.Linear(8 * w, classes)

    def forward(self, x):
        x = self.layer1(self.prep(x))
        x = x + self.res1(x)
        x = self.layer3(self.layer2(x))
        x = x + self.res3(x)
        return self.linear(torch.amax(x, (2, 3)))


def worker(rank, a, port, result):
    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    xtr, ytr = load(True)
    xte, yte = load(False)
    if a.train_samples:  # the first N, as train_cifar's --train-samples
        xtr, ytr = xtr[:a.train_samples], ytr[:a.train_samples]
    if a.test_samples:
        xte, yte = xte[:a.test_samples], yte[:a.test_samples]
    torch.manual_seed(a.seed)
    model = nn.parallel.DistributedDataParallel(ResNet9Small(a.width))
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9, nesterov=True, weight_decay=a.weight_decay)
    steps_per_epoch = (len(xtr) // 2 + a.batch - 1) // a.batch
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=a.lr, total_steps=a.epochs * steps_per_epoch)
    g = torch.Generator().manual_seed(a.seed * 1000 + rank)
    # This rank's half of the test set: the correct counts are summed over the ranks.
    lo, hi = rank * len(xte) // 2, (rank + 1) * len(xte) // 2
    dist.barrier()
    start = time.perf_counter()
    history, reached = [], None
    for epoch in range(a.epochs):
        e0 = time.perf_counter()
        perm = torch.randperm(len(xtr), generator=torch.Generator().manual_seed(a.seed + epoch))[rank::2]
        model.train()
        for s in range(steps_per_epoch):
            idx = perm[s * a.batch:(s + 1) * a.batch]
            x, y = augment(xtr[idx], g), ytr[idx]
            loss = F.cross_entropy(model(x), y, label_smoothing=a.label_smoothing)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
        train_s = time.perf_counter() - e0
        model.eval()
        correct = torch.zeros(1)
        with torch.no_grad():
            for i in range(lo, hi, 500):
                correct += (model(xte[i:min(i + 500, hi)]).argmax(1) == yte[i:min(i + 500, hi)]).sum()
        dist.all_reduce(correct)
        acc = 100 * correct.item() / len(xte)
        now = time.perf_counter() - start
        history.append({"epoch": epoch + 1, "test_accuracy": round(acc, 2), "time_s": round(now, 1),
                        "train_epoch_s": round(train_s, 1)})
        if rank == 0:
            print(f"epoch {epoch + 1}: test accuracy {acc:.2f} %, {now:.1f} s since start "
                  f"(epoch's training {train_s:.1f} s)", flush=True)
        if reached is None and acc >= a.target:
            reached = now
            if not a.keep_going:
                break
        if a.max_epochs_run and epoch + 1 >= a.max_epochs_run:
            break
    if rank == 0:
        result.put({"framework": "pytorch", "torch": torch.__version__, "recipe": "fmnist-fast", "seed": a.seed,
                    "target": a.target, "time_to_target_s": None if reached is None else round(reached, 1),
                    "epochs": history, "load_average": os.getloadavg()[0]})
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=10, help="schedule length (OneCycle over these epochs)")
    p.add_argument("--target", type=float, default=93.5, help="test accuracy to reach, percent")
    p.add_argument("--batch", type=int, default=128, help="per process")
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--weight-decay", type=float, default=5e-4)
    p.add_argument("--label-smoothing", type=float, default=0.1)
    p.add_argument("--width", type=int, default=16)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--train-samples", type=int, default=0, help="use only the first N (quick checks)")
    p.add_argument("--test-samples", type=int, default=0)
    p.add_argument("--keep-going", action="store_true", help="run every epoch, not only to the target")
    p.add_argument("--max-epochs-run", type=int, default=0, help="stop after N epochs (timing runs)")
    p.add_argument("--port", type=int, default=29500 + os.getpid() % 1000)
    a = p.parse_args()
    ctx = mp.get_context("spawn")
    result = ctx.SimpleQueue()
    mp.spawn(worker, args=(a, a.port, result), nprocs=2)
    r = result.get()
    t = r["time_to_target_s"]
    print(f"pytorch: {'%.1f s' % t if t is not None else 'not reached'} to {a.target} % test accuracy "
          f"(load average {r['load_average']:.2f})")
    print(json.dumps(r))


if __name__ == "__main__":
    main()
