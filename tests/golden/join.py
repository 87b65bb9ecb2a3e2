# Checks the reading of PyTorch 1.13's Join that dist/ddp/ddp_join.cpp follows (Note [Join
# divisor]): 3 gloo processes holding 3, 5 and 8 batches train a small MLP under
# Join([ddp], divide_by_initial_world_size=D); every rank ends with the weights of one
# process that, at step s, averages the gradients of the ranks with more than s batches,
# divided by 3 (D true) or by how many they are (D false). Prints the largest difference.
# Run: /usr/bin/python3 tests/golden/join.py  (PyTorch 1.13, CPU; port 29541)
import os, torch, torch.distributed as dist, torch.nn as nn, torch.multiprocessing as mp
from torch.distributed.algorithms.join import Join

BATCHES = [3, 5, 8]

def make():
    torch.manual_seed(3)
    return nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 3))

def batch(rank, step):
    g = torch.Generator().manual_seed(1000 * step + rank)
    return torch.randn(4, 12, generator=g), torch.randint(0, 3, (4,), generator=g)

def reference(by_initial):
    m = make(); opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    for s in range(max(BATCHES)):
        active = [r for r in range(3) if BATCHES[r] > s]
        grads = []
        for r in active:
            c = make(); c.load_state_dict(m.state_dict())
            x, y = batch(r, s); nn.functional.cross_entropy(c(x), y).backward()
            grads.append([p.grad for p in c.parameters()])
        opt.zero_grad()
        for i, p in enumerate(m.parameters()):
            p.grad = sum(g[i] for g in grads) / (3 if by_initial else len(active))
        opt.step()
    return m

def run(rank, by_initial, q):
    os.environ["MASTER_ADDR"] = "127.0.0.1"; os.environ["MASTER_PORT"] = "29541"
    dist.init_process_group("gloo", rank=rank, world_size=3)
    m = make(); d = nn.parallel.DistributedDataParallel(m)
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    with Join([d], divide_by_initial_world_size=by_initial):
        for s in range(BATCHES[rank]):
            x, y = batch(rank, s); opt.zero_grad()
            nn.functional.cross_entropy(d(x), y).backward(); opt.step()
    if rank == 0: q.put([p.detach().tolist() for p in m.parameters()])  # lists: tensors would need the sender alive
    dist.destroy_process_group()

if __name__ == "__main__":
    for by_initial in (True, False):
        q = mp.get_context("spawn").SimpleQueue()
        mp.spawn(run, args=(by_initial, q), nprocs=3)
        got, ref = q.get(), list(reference(by_initial).parameters())
        diff = max((torch.tensor(a) - b).abs().max().item() for a, b in zip(got, ref))
        print("divide_by_initial_world_size=%s: largest difference to the reference %.3g" % (by_initial, diff))
