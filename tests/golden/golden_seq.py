# The closed-form inputs of the golden scripts, shared by them and rebuilt identically in
# C++ by tests/common/golden_seq.h: element i of a tensor is scale * sin(a * i + b).
import math

import torch


def seq(shape, a, b, scale=1.0):
    n = math.prod(shape)
    return torch.tensor([scale * math.sin(a * i + b) for i in range(n)]).reshape(shape)
