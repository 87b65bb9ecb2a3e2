// The umbrella header: tensors, autograd, nn and optim.
#pragma once

#include "autograd/functions.h"
#include "nn/nn.h"
#include "optim/optim.h"
#include "tensor/ops.h"
