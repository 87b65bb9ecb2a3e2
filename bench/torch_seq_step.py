#!/usr/bin/env python3
"""The PyTorch side of `ddl-bench seq-step`: the same character-level LSTM or
Transformer language-model training step (Adam, random tokens). Prints one JSON
line like ddl-bench. Run with Debian's /usr/bin/python3 (torch 1.13)."""
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
p.add_argument("--seq", type=int, default=64)
p.add_argument("--steps", type=int, default=5)
p.add_argument("--threads", type=int, default=torch.get_num_threads())
p.add_argument("--clock", default="wall", choices=["wall", "cpu"])
a = p.parse_args()
torch.set_num_threads(a.threads)
torch.manual_seed(0)
V, B, T = 65, a.batch, a.seq
tok, pos = nn.Embedding(V, 128), nn.Embedding(T, 128)
lstm = nn.LSTM(128, 256, num_layers=2, batch_first=True)
encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(128, 4, 512, 0.1, batch_first=True), 4)
head = nn.Linear(256 if a.model == "lstm" else 128, V)
mods = [tok, lstm, head] if a.model == "lstm" else [tok, pos, encoder, head]
opt = torch.optim.Adam([q for m in mods for q in m.parameters()], lr=1e-3)
tokens, targets = torch.randint(0, V, (B, T)), torch.randint(0, V, (B * T,))
positions = torch.arange(T).unsqueeze(0).expand(B, T)
causal = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
clock = time.process_time if a.clock == "cpu" else time.perf_counter


def step():
    h = lstm(tok(tokens))[0] if a.model == "lstm" else encoder(tok(tokens) + pos(positions), mask=causal)
    loss = F.cross_entropy(head(h).reshape(B * T, V), targets)
    opt.zero_grad()
    loss.backward()
    opt.step()


step()
times = []
for _ in range(a.steps):
    t = clock()
    step()
    times.append(clock() - t)
print(json.dumps({"bench": "seq-step", "framework": "pytorch", "model": a.model, "batch": B, "seq": T,
                  "threads": a.threads, "ms_per_step": round(statistics.median(times) * 1e3, 1)}))
