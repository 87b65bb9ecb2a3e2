// Every tensor op, for `#include "tensor/ops.h"`.
#pragma once

#include "tensor/conv.h"
#include "tensor/devices.h"
#include "tensor/elementwise.h"
#include "tensor/factory.h"
#include "tensor/indexing.h"
#include "tensor/join.h"
#include "tensor/linalg.h"
#include "tensor/norm.h"
#include "tensor/parallel.h"
#include "tensor/pool.h"
#include "tensor/random.h"
#include "tensor/reduce.h"
#include "tensor/shape_ops.h"
#include "tensor/softmax.h"
#include "tensor/tensor.h"
