// The umbrella header: the tensor engine and autograd.
#pragma once

#include "autograd/functions.h"
#include "tensor/ops.h"
