// Strided loops for CPU kernels over N operands of one shape.
// Dims are coalesced first (a contiguous tensor becomes one dim), so the common
// case is a single tight inner loop the compiler vectorises; the outer rows are
// split across threads. Each element is computed independently, so results do
// not depend on the thread count.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include <ddl/tensor/core/parallel.h>
#include <ddl/tensor/core/tensor.h>

namespace ddl::cpu {

template <int N>
class StridedLoop {
 public:
  // Byte pointers and element strides of N tensors sharing `shape`.
  explicit StridedLoop(const std::array<const Tensor*, N>& ts) {
    const Shape& shape = ts[0]->shape();
    for (int k = 0; k < N; ++k) base_[k] = static_cast<char*>(ts[k]->raw_data());
    // Collect dims, innermost first, dropping size-1 dims.
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      if (shape[d] == 1) continue;
      std::array<int64_t, N> st;
      for (int k = 0; k < N; ++k) st[k] = ts[k]->strides()[d] * static_cast<int64_t>(ts[k]->element_size());
      if (!sizes_.empty()) {
        // Merge with the previous (inner) dim when it is contiguous with this one for all operands.
        bool merge = true;
        for (int k = 0; k < N; ++k) merge = merge && st[k] == strides_.back()[k] * sizes_.back();
        if (merge) {
          sizes_.back() *= shape[d];
          continue;
        }
      }
      sizes_.push_back(shape[d]);
      strides_.push_back(st);
    }
    if (sizes_.empty()) {
      sizes_.push_back(1);
      strides_.push_back({});
    }
  }

  int64_t inner_size() const { return sizes_[0]; }
  const std::array<int64_t, N>& inner_strides() const { return strides_[0]; }
  int64_t rows() const {
    int64_t r = 1;
    for (size_t i = 1; i < sizes_.size(); ++i) r *= sizes_[i];
    return r;
  }

  // Calls fn(ptrs, inner_strides_bytes, count) for every row, rows split over threads.
  template <typename Fn>
  void run(const Fn& fn, int64_t grain_elements = 32768) const {
    const int64_t n = inner_size(), r = rows();
    const int64_t grain_rows = ddl::detail::grain_for(grain_elements, n);
    parallel_for(0, r, grain_rows, [&](int64_t begin, int64_t end) {
      std::array<char*, N> p;
      for (int64_t row = begin; row < end; ++row) {
        int64_t rem = row;
        p = base_;
        for (size_t d = 1; d < sizes_.size(); ++d) {
          const int64_t idx = rem % sizes_[d];
          rem /= sizes_[d];
          for (int k = 0; k < N; ++k) p[k] += idx * strides_[d][k];
        }
        fn(p, strides_[0], n);
      }
    });
  }

 private:
  std::array<char*, N> base_;
  std::vector<int64_t> sizes_;
  std::vector<std::array<int64_t, N>> strides_;
};

}  // namespace ddl::cpu
