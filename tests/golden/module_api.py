# Golden values for tests/nn/test_module_api.cpp, from PyTorch 1.13: the names and
# order of named_modules / named_buffers / named_parameters / state_dict for a nested
# model with a shared submodule, NLLLoss with class weights and ignore_index for every
# reduction (values and input gradients), and 2x4 max / average pooling. Inputs are
# closed-form sequences (seq, golden_seq.py), rebuilt identically in C++.
# Run: /usr/bin/python3 tests/golden/module_api.py

import torch
import torch.nn as nn
from golden_seq import seq

torch.set_default_dtype(torch.float64)


def emit(name, t):
    vals = ", ".join(f"{v:.12g}" for v in t.detach().flatten().tolist())
    print(f"const std::vector<double> {name} = {{{vals}}};")


def emit_names(name, names):
    vals = ", ".join(f'"{n}"' for n in names)
    print(f"const std::vector<std::string> {name} = {{{vals}}};")


class Block(nn.Module):
    def __init__(self, shared):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.bn = nn.BatchNorm2d(4)
        self.shared = shared


class Net(nn.Module):
    # features: Sequential(Conv2d, BatchNorm2d, ReLU, Block); head: Sequential(Flatten,
    # Linear); tied: the Linear also registered as head's "1" (listed once, first name).
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(2))
        self.register_buffer("steps", torch.zeros((), dtype=torch.int64))
        act = nn.ReLU()
        self.features = nn.Sequential(nn.Conv2d(1, 3, 3), nn.BatchNorm2d(3), act, Block(act))
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(16, 2))
        self.tied = self.head[1]


def main():
    net = Net()
    print("// named_modules() of Net (names, then class names)")
    emit_names("modules_names", [n for n, _ in net.named_modules()])
    emit_names("modules_types", [type(m).__name__ for _, m in net.named_modules()])
    emit_names("modules_prefixed", [n for n, _ in net.named_modules(prefix="net")])
    emit_names("buffers_names", [n for n, _ in net.named_buffers()])
    emit_names("parameters_names", [n for n, _ in net.named_parameters()])
    emit_names("state_names", list(net.state_dict().keys()))

    # NLLLoss on log_softmax(seq) with weights and an ignored target.
    x = seq([5, 4], 0.7, 0.3, 2.0)
    target = torch.tensor([2, 0, 3, 1, 2])
    weight = torch.tensor([0.5, 1.0, 2.0, 0.25])
    print("// NLLLoss: log_probs = log_softmax(seq([5, 4], 0.7, 0.3, 2), 1), target {2, 0, 3, 1, 2},")
    print("// weight {0.5, 1, 2, 0.25}; ignore_index 3 where named; grads for the cotangent seq(y, 0.9, 0.1)")
    for reduction in ["none", "mean", "sum"]:
        for ignore in [-100, 3]:
            for weighted in [False, True]:
                lp = torch.log_softmax(x, 1).detach().requires_grad_()
                loss = nn.NLLLoss(weight=weight if weighted else None, ignore_index=ignore, reduction=reduction)
                y = loss(lp, target)
                y.backward(seq(list(y.shape), 0.9, 0.1))
                tag = f"nll_{reduction}{'_w' if weighted else ''}{'_ign' if ignore == 3 else ''}"
                emit(tag, y)
                emit(tag + "_g", lp.grad)
    # [N, C, d] targets with weights, mean.
    x3 = seq([2, 3, 4], 0.45, 0.2, 1.5)
    t3 = torch.tensor([[0, 2, 1, 2], [1, 1, 0, 2]])
    w3 = torch.tensor([1.5, 0.5, 2.0])
    lp3 = torch.log_softmax(x3, 1).detach().requires_grad_()
    y3 = nn.NLLLoss(weight=w3)(lp3, t3)
    y3.backward()
    print("// NLLLoss(weight {1.5, 0.5, 2}) on log_softmax(seq([2, 3, 4], 0.45, 0.2, 1.5), 1), target")
    print("// {{0, 2, 1, 2}, {1, 1, 0, 2}}, mean; gradient for a cotangent of 1")
    emit("nll3_w_mean", y3)
    emit("nll3_w_mean_g", lp3.grad)

    img = seq([1, 2, 4, 8], 0.37, 0.1)
    print("// pooling seq([1, 2, 4, 8], 0.37, 0.1) with kernel (2, 4)")
    emit("maxpool_2x4", nn.MaxPool2d((2, 4))(img))
    emit("avgpool_2x4", nn.AvgPool2d((2, 4))(img))


main()
