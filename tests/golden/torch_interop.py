#!/usr/bin/env python3
"""Cross-check ddl's VGG-11-BN against PyTorch 1.13 through safetensors files.

Usage: torch_interop.py IN OUT
IN holds a ddl VGG-11-BN state (in_channels 1) and an input "input.x" [2,1,32,32]
with labels "input.y". This script builds the same network in PyTorch, loads the
state, and writes OUT with: eval-mode logits, train-mode logits, the loss and
the gradients of a few parameters after one backward in train mode, and the
running statistics after that forward. No safetensors package is needed: the
format is read and written by hand.
"""
import json
import struct
import sys

import torch
import torch.nn as nn

DT = {"F32": torch.float32, "F64": torch.float64, "I64": torch.int64}
RDT = {v: k for k, v in DT.items()}


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        buf = bytearray(data[8 + n + b:8 + n + end])
        t = torch.frombuffer(buf, dtype=DT[e["dtype"]]) if end > b else torch.empty(0, dtype=DT[e["dtype"]])
        out[name] = t.reshape(e["shape"]).clone()
    return out


def save(path, tensors):
    header, blobs, off = {}, [], 0
    for name, t in tensors.items():
        t = t.detach().contiguous()
        raw = t.numpy().tobytes()
        header[name] = {"dtype": RDT[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(raw)]}
        off += len(raw)
        blobs.append(raw)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


class VGG(nn.Module):
    def __init__(self):
        super().__init__()
        layers, c = [], 1
        for v in [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"]:
            if v == "M":
                layers.append(nn.MaxPool2d(2, 2))
            else:
                layers += [nn.Conv2d(c, v, 3, padding=1), nn.BatchNorm2d(v), nn.ReLU(inplace=True)]
                c = v
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(512, 10)

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


def main():
    torch.set_num_threads(1)
    src = load(sys.argv[1])
    x, y = src.pop("input.x"), src.pop("input.y")
    m = VGG()
    m.load_state_dict(src, strict=True)
    m.eval()
    out = {"eval_logits": m(x)}
    m.train()
    logits = m(x)
    loss = nn.functional.cross_entropy(logits, y)
    loss.backward()
    out["train_logits"] = logits
    out["loss"] = loss.reshape(1)
    out["grad.features.0.weight"] = m.features[0].weight.grad
    out["grad.features.1.weight"] = m.features[1].weight.grad
    out["grad.classifier.weight"] = m.classifier.weight.grad
    out["features.1.running_mean"] = m.features[1].running_mean
    out["features.1.running_var"] = m.features[1].running_var
    save(sys.argv[2], out)


if __name__ == "__main__":
    main()
