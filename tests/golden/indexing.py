# Golden values for tests/tensor/test_join.cpp and test_indexing.cpp, from PyTorch 1.13.
# Inputs are closed-form sequences (seq, golden_seq.py) and literal index lists, rebuilt
# identically in C++. For each case: the forward values, and a checksum of the
# input gradient for the cotangent seq(y.shape, 0.9, 0.1).
# Run: /usr/bin/python3 tests/golden/indexing.py
import torch
import torch.nn.functional as F
from golden_seq import seq

torch.set_default_dtype(torch.float64)


def emit(name, t):
    vals = ", ".join(f"{v:.12g}" for v in t.flatten().tolist())
    print(f"const std::vector<double> {name} = {{{vals}}};")


def checksum(name, t):
    # sum(t * seq(t.shape, 0.1, 0.5)): one number that sees every element.
    print(f"const double {name} = {float((t * seq(t.shape, 0.1, 0.5)).sum()):.15g};")


def case(tag, f, *inputs):
    xs = [x.clone().requires_grad_() for x in inputs]
    y = f(*xs)
    y.backward(seq(list(y.shape), 0.9, 0.1))
    print(f"// {tag}")
    print(f"const Shape {tag}_shape = {{{', '.join(str(d) for d in y.shape)}}};")
    emit(f"{tag}_y", y.detach())
    for i, x in enumerate(xs):
        checksum(f"{tag}_g{i}", x.grad)


L = torch.tensor
x = seq([3, 4, 5], 0.7, 0.3)
a = seq([2, 3], 0.5, 0.2)
b = seq([2, 1], 1.3, 0.4)
c = seq([2, 2], 0.9, 0.6)

print("// ---- join (test_join.cpp) ----")
case("cat_last", lambda a, b, c: torch.cat([a, b, c], -1), a, b, c)
case("cat_first", lambda a, c: torch.cat([a.t(), c], 0), a, c)
case("stack_mid", lambda a, c: torch.stack([a, a * 2, c[:, :1].expand(2, 3)], 1), a, c)
case("split_sum", lambda x: sum((p * (i + 1)).sum(1, keepdim=True) for i, p in enumerate(torch.split(x, 2, 1)))
     .expand(3, 2, 5), x)
case("chunk_cat", lambda x: torch.cat(list(reversed(torch.chunk(x, 3, -1))), -1), x)

print("// ---- indexing (test_indexing.cpp) ----")
case("basic", lambda x: x[1:, None, ..., ::2] * 1, x)
case("basic_neg", lambda x: x[-1, 1:-1, -2], x)
case("adv_adjacent", lambda x: x[1:, None, L([[0], [2]]), L([1, -1])], x)
case("adv_split", lambda x: x[L([2, 0, 2]), 1:3, L([4, 0, -5])], x)
case("adv_mask", lambda x: x[x > 0.5], x)
mask2 = L([[True, False, True, False], [False, False, False, True], [True, True, False, False]])
case("adv_mask2d", lambda x: x[mask2], x)
case("adv_mask_mid", lambda x: x[:, L([False, True, True, False]), 3], x)
case("index_select", lambda x: torch.index_select(x, 1, L([3, 0, 3])), x)
gidx = L([[[0, 2], [1, 1], [4, 3], [2, 0]], [[3, 3], [0, 1], [2, 4], [1, 2]], [[4, 0], [0, 0], [1, 3], [2, 2]]])
case("gather", lambda x: torch.gather(x, 2, gidx), x)
sidx = L([[1, 0, 2], [0, 2, 1]])
case("scatter", lambda s, src: torch.scatter(s, 1, sidx, src), seq([2, 4], 0.3, 0.1), seq([2, 3], 1.1, 0.7))
aidx = L([[1, 1, 3, 0], [2, 2, 2, 0]])
case("scatter_add", lambda s, src: torch.scatter_add(s, 1, aidx, src), seq([2, 4], 0.3, 0.1), seq([2, 4], 1.1, 0.7))
case("masked_fill", lambda x: torch.masked_fill(x, L([[True], [False], [True], [False]]), -2.5), x)


def put_acc(z, v):
    return z.index_put((L([0, 2, 0]), L([1, 3, 1])), v, accumulate=True)


case("index_put_acc", put_acc, seq([3, 4, 5], 0.4, 0.9), seq([5], 0.8, 0.2))


def put_basic(z, v):
    z = z * 1
    z[1:, L([True, False, False, True])] = v
    return z


case("index_put_mask", put_basic, seq([3, 4, 5], 0.4, 0.9), seq([2, 1, 5], 0.8, 0.2))
print("// ---- shape ops (test_join.cpp) ----")
case("repeat", lambda a: a.repeat(2, 1, 3), a)
case("flip", lambda x: torch.flip(x, [0, -1]), x)
case("pad_const", lambda x: F.pad(x, (1, 2, 0, 1), value=0.5), x)
case("pad_crop", lambda x: F.pad(x, (-1, 2, 1, -2)), x)
x4 = seq([1, 2, 3, 4], 0.6, 0.1)
case("pad_reflect", lambda x: F.pad(x, (2, 3, 1, 2), mode="reflect"), x4)
case("pad_replicate", lambda x: F.pad(x, (2, 3, 1, 2), mode="replicate"), x4)
