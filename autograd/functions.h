// Every differentiable op, for `#include "autograd/functions.h"`.
#pragma once

#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "autograd/node.h"
#include "autograd/ops/conv.h"
#include "autograd/ops/dropout.h"
#include "autograd/ops/elementwise.h"
#include "autograd/ops/indexing.h"
#include "autograd/ops/join.h"
#include "autograd/ops/loss.h"
#include "autograd/ops/norm.h"
#include "autograd/ops/pool.h"
#include "autograd/ops/reduce.h"
#include "autograd/ops/shape_ops.h"
#include "autograd/ops/softmax.h"
#include "autograd/variable.h"
