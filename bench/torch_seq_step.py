#!/usr/bin/env python3
"""The PyTorch side of `ddl-bench seq-step`: apps/examples/char_lm's Transformer or
LSTM language model rebuilt in torch.nn (same layers, sizes and initial scaling), one
training step on random tokens of a 114-symbol vocabulary: cross-entropy, backward,
gradient clipping and AdamW. Prints one JSON line like ddl-bench. Run with Debian's
/usr/bin/python3 (torch 1.13)."""
import argparse
import json
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

p = argparse.ArgumentParser()
p.add_argument("--model", default="lstm", choices=["lstm", "transformer"])
p.add_argument("--batch", type=int, default=32)
p.add_argument("--seq", type=int, default=128)
p.add_argument("--steps", type=int, default=5)
p.add_argument("--threads", type=int, default=torch.get_num_threads())
p.add_argument("--clock", default="wall", choices=["wall", "cpu"])
a = p.parse_args()
torch.set_num_threads(a.threads)
torch.manual_seed(0)
V, B, T = 114, a.batch, a.seq


class CharTransformer(nn.Module):  # nn/models/char_lm.cpp, CharTransformer
    def __init__(self):
        super().__init__()
        self.tok, self.pos = nn.Embedding(V, 128), nn.Embedding(T, 128)
        with torch.no_grad():
            self.tok.weight.mul_(0.02)
            self.pos.weight.mul_(0.02)
        layer = nn.TransformerEncoderLayer(128, 4, 512, 0.0, "gelu", batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, 4, enable_nested_tensor=False)
        self.norm, self.head = nn.LayerNorm(128), nn.Linear(128, V)
        self.register_buffer("causal", torch.triu(torch.ones(T, T, dtype=torch.bool), 1))

    def forward(self, x):
        h = self.blocks(self.tok(x) + self.pos(torch.arange(x.shape[1])), mask=self.causal)
        return self.head(self.norm(h))


class CharLSTM(nn.Module):  # nn/models/char_lm.cpp, CharLSTM
    def __init__(self):
        super().__init__()
        self.tok, self.lstm, self.head = nn.Embedding(V, 64), nn.LSTM(64, 256, 2, batch_first=True), nn.Linear(256, V)

    def forward(self, x):
        return self.head(self.lstm(self.tok(x))[0])


model = CharTransformer() if a.model == "transformer" else CharLSTM()
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.99), weight_decay=0.01)
gen = torch.Generator().manual_seed(1)
tokens, targets = torch.randint(0, V, (B, T), generator=gen), torch.randint(0, V, (B * T,), generator=gen)
clock = time.process_time if a.clock == "cpu" else time.perf_counter


def step():
    loss = F.cross_entropy(model(tokens).reshape(B * T, V), targets)
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()


step()
times = []
for _ in range(a.steps):
    t = clock()
    step()
    times.append(clock() - t)
print(json.dumps({"bench": "seq-step", "framework": "pytorch", "model": a.model, "batch": B, "seq": T,
                  "threads": a.threads, "ms_per_step": round(statistics.median(times) * 1e3, 1)}))
