# Golden index lists for ddl's DistributedSampler (tests/data/test_sampler.cpp):
# torch.utils.data.DistributedSampler with shuffle=False, for data sizes that
# world sizes 1-5 do not divide, with and without drop_last; with shuffle=True
# for some seeds and epochs; torch.randperm with a seeded CPU generator.
# Run: /usr/bin/python3 tests/golden/sampler.py  (PyTorch 1.13, CPU)
import torch
from torch.utils.data import DistributedSampler

cases = [(10, 1), (10, 3), (10, 4), (7, 5), (11, 2), (3, 5), (13, 4), (5, 5), (2, 3), (2, 5), (1, 4)]
print("// {N, R, drop_last, {rank 0 list, rank 1 list, ...}}")
for n, r in cases:
    for drop_last in (False, True):
        lists = []
        for rank in range(r):
            s = DistributedSampler(range(n), num_replicas=r, rank=rank, shuffle=False, drop_last=drop_last)
            lists.append(list(s))
            assert len(s) == len(lists[-1])
        body = ", ".join("{" + ", ".join(map(str, l)) + "}" for l in lists)
        print("{%d, %d, %s, {%s}}," % (n, r, "true" if drop_last else "false", body))

# shuffle=True: the lists themselves (ddl's torch_randperm reproduces torch.randperm's stream), for some
# (N, R, seed, epoch); the last seed is 2^32 + 5, whose permutation is seed 5's (MT19937 takes 32 bits).
print("// {N, R, seed, epoch, drop_last, {rank 0 list, ...}}")
for n, r, seed, epoch in [(10, 3, 0, 0), (10, 4, 5, 2), (13, 4, 42, 1), (3, 5, 7, 0), (23, 2, 1, 3), (7, 3, 2**32 + 5, 0)]:
    for drop_last in (False, True):
        lists = []
        for rank in range(r):
            s = DistributedSampler(range(n), num_replicas=r, rank=rank, shuffle=True, seed=seed, drop_last=drop_last)
            s.set_epoch(epoch)
            lists.append(list(s))
        body = ", ".join("{" + ", ".join(map(str, l)) + "}" for l in lists)
        print("{%d, %d, %du, %d, %s, {%s}}," % (n, r, seed, epoch, "true" if drop_last else "false", body))
print("// torch.randperm(n, generator=torch.Generator().manual_seed(seed)) for (n, seed)")
for n, seed in [(0, 3), (1, 3), (2, 9), (17, 123)]:
    g = torch.Generator()
    g.manual_seed(seed)
    print("{%d, %du, {%s}}," % (n, seed, ", ".join(map(str, torch.randperm(n, generator=g).tolist()))))

# shuffle=True: every rank draws the same permutation (seed + epoch); the ranks'
# lists are disjoint apart from padding, and change with set_epoch.
for n, r in [(10, 3), (12, 4)]:
    parts = []
    for rank in range(r):
        s = DistributedSampler(range(n), num_replicas=r, rank=rank, shuffle=True, seed=5)
        s.set_epoch(2)
        parts.append(list(s))
    flat = sorted(sum(parts, []))
    assert set(flat) == set(range(n)) and len(flat) == r * ((n + r - 1) // r)
print("# shuffle=True structure checks passed")
