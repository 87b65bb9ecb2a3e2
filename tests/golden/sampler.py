# Golden index lists for ddl's DistributedSampler (tests/data/test_sampler.cpp):
# torch.utils.data.DistributedSampler with shuffle=False, for data sizes that
# world sizes 1-5 do not divide, with and without drop_last. Also the
# shuffle=True structure PyTorch guarantees (ddl's permutation differs).
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
