# What PyTorch 1.13's DDP does with find_unused_parameters=True, which dist/ddp/ddp.cpp
# follows (Note [Unused parameters]); 2 gloo processes on 127.0.0.1:29533:
#  1. a parameter no rank used keeps grad None, so SGD's momentum and weight decay skip it;
#  2. a parameter used only in a no_sync backward: 1.13 leaves each rank's local gradient
#     (prints "equal across ranks: False" on rank 1), where ddl averages it.
# Run: /usr/bin/python3 tests/golden/ddp_unused.py  (PyTorch 1.13, CPU)
import os, sys, torch, torch.distributed as dist, torch.nn as nn
import torch.multiprocessing as mp

class M(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.body = nn.Linear(4, 3); self.head = nn.Linear(3, 3); self.use_head = False
    def forward(self, x):
        y = self.body(x)
        return self.head(y) if self.use_head else y

def run(rank, world):
    os.environ["MASTER_ADDR"] = "127.0.0.1"; os.environ["MASTER_PORT"] = "29533"
    dist.init_process_group("gloo", rank=rank, world_size=world)
    g = torch.Generator().manual_seed(1); x = torch.randn(8, 4, generator=g); y = torch.randint(0, 3, (8,), generator=g)
    # 1. globally unused + momentum + wd
    m = M(); d = nn.parallel.DistributedDataParallel(m, find_unused_parameters=True)
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, weight_decay=0.05)
    h0 = m.head.weight.detach().clone()
    for s in range(3):
        m.use_head = (s == 0)
        opt.zero_grad(set_to_none=True)
        nn.functional.cross_entropy(d(x[rank*4:(rank+1)*4]), y[rank*4:(rank+1)*4]).backward()
        if s > 0: assert m.head.weight.grad is None, "head grad defined at step %d" % s
        opt.step()
    print(rank, "case1 head grad None at steps 1-2: ok")
    # 2. head used only in the no_sync step
    m = M(); d = nn.parallel.DistributedDataParallel(m, find_unused_parameters=True)
    m.use_head = True
    with d.no_sync():
        nn.functional.cross_entropy(d(x[rank*4:(rank+1)*4]), y[rank*4:(rank+1)*4]).backward()
    local = m.head.weight.grad.clone()
    m.use_head = False
    nn.functional.cross_entropy(d(x[rank*4:(rank+1)*4]), y[rank*4:(rank+1)*4]).backward()
    g = m.head.weight.grad.clone(); other = g.clone(); dist.broadcast(other, 0)
    print(rank, "case2 head grad == local (unaveraged):", torch.equal(g, local), " equal across ranks:", torch.equal(g, other))
    dist.destroy_process_group()

if __name__ == "__main__":
    mp.spawn(run, args=(2,), nprocs=2)
