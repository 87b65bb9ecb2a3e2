#!/usr/bin/env python3
"""The PyTorch side of bench/vs_pytorch.sh and scripts/gpu_check.sh: the same step as
`ddl-bench train-step` (VGG CIFAR variant, ResNet-18 CIFAR variant or the MLP, SGD
momentum 0.9, weight decay 5e-4, random data), optionally under torch.autocast(bf16).
Prints one JSON line like ddl-bench."""
import argparse
import json
import resource
import time

import torch
import torch.nn as nn

CFG = {11: [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"]}


class VGG(nn.Module):
    def __init__(self, bn, in_ch=3):
        super().__init__()
        layers, c = [], in_ch
        for v in CFG[11]:
            if v == "M":
                layers.append(nn.MaxPool2d(2, 2))
            else:
                layers += [nn.Conv2d(c, v, 3, padding=1)] + ([nn.BatchNorm2d(v)] if bn else []) + [nn.ReLU(inplace=True)]
                c = v
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(512, 10)

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


class BasicBlock(nn.Module):
    """ResNet-18's block as nn/models/resnet.cpp builds it (kuangliu/pytorch-cifar)."""

    def __init__(self, in_planes, planes, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != planes:
            self.shortcut = nn.Sequential(nn.Conv2d(in_planes, planes, 1, stride=stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        out = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(out)) + self.shortcut(x))


class ResNet18(nn.Module):
    def __init__(self, in_ch=3):
        super().__init__()
        self.conv1 = nn.Conv2d(in_ch, 64, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        blocks, c = [], 64
        for planes, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            blocks.append(nn.Sequential(BasicBlock(c, planes, stride), BasicBlock(planes, planes, 1)))
            c = planes
        self.layers = nn.Sequential(*blocks)
        self.linear = nn.Linear(512, 10)

    def forward(self, x):
        out = self.layers(torch.relu(self.bn1(self.conv1(x))))
        return self.linear(out.mean((2, 3)))


def set_tf32(on):
    # PyTorch 2.9 replaced allow_tf32 by fp32_precision and refuses a mix of the two APIs.
    if hasattr(torch.backends.cudnn, "conv") and hasattr(torch.backends.cudnn.conv, "fp32_precision"):
        torch.backends.cudnn.conv.fp32_precision = "tf32" if on else "ieee"
        torch.backends.cuda.matmul.fp32_precision = "tf32" if on else "ieee"
    else:
        torch.backends.cudnn.allow_tf32 = on
        torch.backends.cuda.matmul.allow_tf32 = on


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="vgg11_bn")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--eval", action="store_true")
    p.add_argument("--device", default="cpu")
    p.add_argument("--autocast", choices=["fp32", "bf16"], default="fp32")
    # PyTorch eager picks cuDNN algorithms from cuDNN's heuristics, as ddl does; benchmark mode
    # times every candidate once per shape instead (ddl has no such mode).
    p.add_argument("--cudnn-benchmark", action="store_true")
    # Deterministic cuDNN algorithms only, as ddl prefers them: the row that compares ddl's
    # choice of algorithm with PyTorch's on equal terms (the default row is PyTorch as users run it).
    p.add_argument("--deterministic", action="store_true")
    # float32 convolutions and GEMMs in TF32 on tensor cores; off by default, as in ddl
    # (PyTorch's own default runs float32 convolutions in TF32: the rows would not compare).
    p.add_argument("--tf32", action="store_true")
    a = p.parse_args()
    torch.backends.cudnn.benchmark = a.cudnn_benchmark
    torch.backends.cudnn.deterministic = a.deterministic
    set_tf32(a.tf32)
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    if a.model in ("vgg11", "vgg11_bn"):
        model = VGG(a.model.endswith("_bn"))
    elif a.model == "resnet18":
        model = ResNet18()
    elif a.model == "mlp":
        model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10))
    else:
        raise SystemExit(f"torch_step.py: unsupported model {a.model}")
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    model.to(a.device)
    x = torch.randn(a.batch, 3, 32, 32).to(a.device)
    y = torch.randint(0, 10, (a.batch,)).to(a.device)
    sync = torch.cuda.synchronize if a.device.startswith("cuda") else (lambda: None)
    if a.eval:
        model.eval()

    device_type = "cuda" if a.device.startswith("cuda") else "cpu"
    amp = torch.autocast(device_type, dtype=torch.bfloat16, enabled=a.autocast == "bf16")

    def step():
        if a.eval:
            with torch.no_grad(), amp:
                model(x)
            sync()
            return
        with amp:
            loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sync()

    step()
    times = []
    for _ in range(a.steps):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    ms = sorted(times)[len(times) // 2] * 1e3  # the upper middle for an even count, as ddl-bench
    device = torch.device(a.device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"bench": "forward" if a.eval else "train-step", "framework": "pytorch", "model": a.model,
                      "device": str(device), "precision": a.autocast, "tf32": a.tf32, "cudnn_deterministic": a.deterministic, "batch": a.batch, "threads": a.threads, "ms_per_step": round(ms, 1),
                      "images_per_s": round(a.batch / ms * 1e3, 1), "peak_rss_mb": round(rss)}))


if __name__ == "__main__":
    main()
