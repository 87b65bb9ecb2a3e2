// The umbrella header: tensors, autograd, nn, optim and data (dist: dist/dist.h).
#pragma once

#include <ddl/autograd/functions.h>
#include <ddl/data/data.h>
#include <ddl/nn/nn.h>
#include <ddl/optim/optim.h>
#include <ddl/tensor/ops.h>
