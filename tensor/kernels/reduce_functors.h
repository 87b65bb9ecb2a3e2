// The math of the reductions, shared by tensor/cpu/reduce.cpp and
// tensor/cuda/reduce.cu: the accumulator type of sums and the rule that picks
// the extreme of a row for max/min/argmax/argmin. How partial results are
// grouped (blocks on the CPU, thread trees on the GPU) is each backend's own.
#pragma once

#include <cstdint>
#include <type_traits>

#include <ddl/tensor/kernels/functors.h>  // DDL_HOST_DEVICE

namespace ddl {

// Sums accumulate floats in double and integers in int64, then cast back.
template <typename T>
using SumAcc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

// Max (kMax) or min of a row as PyTorch defines it: a NaN wins and the first
// NaN stays; otherwise the first index holding the extreme value.
template <typename T, bool kMax>
struct ExtremeFn {
  // Whether v, found later in the row than the current pick cur, replaces it.
  DDL_HOST_DEVICE bool replaces(T v, T cur) const { return cur == cur && (v != v || (kMax ? v > cur : v < cur)); }
  // Whether (v, i) beats (cur, ci) when the two come from any parts of the row
  // (i != ci): the pick a left-to-right scan would make. Lets a tree of partial
  // picks in any order give the scan's result (same index, same bits).
  DDL_HOST_DEVICE bool beats(T v, int64_t i, T cur, int64_t ci) const {
    return i < ci ? !replaces(cur, v) : replaces(v, cur);
  }
};

}  // namespace ddl
