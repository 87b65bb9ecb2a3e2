// The umbrella header: tensors, autograd, nn, optim and data (dist: dist/dist.h).
#pragma once

#include "autograd/factory.h"
#include "autograd/functions.h"
#include "data/data.h"
#include "nn/nn.h"
#include "optim/optim.h"
#include "tensor/ops.h"
