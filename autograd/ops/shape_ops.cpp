// repeat's backward sums the tiles; flip's flips back; a constant pad's is the
// opposite pad (it crops what was added and zero-fills what was cropped);
// reflect and replicate pads are differentiable index_selects, one per dim.
// Each backward serves Tensors and Variables (double backward).
#include <ddl/autograd/ops/indexing.h>
#include <ddl/autograd/ops/linear_backward.h>
#include <ddl/autograd/ops/reduce.h>
#include <ddl/autograd/ops/shape_ops.h>
#include <ddl/tensor/ops/reduce.h>

namespace ddl {

using autograd::record_linear;
using Needs = std::vector<bool>;

Variable repeat(const Variable& x, const std::vector<int64_t>& sizes) {
  const Shape s = x.shape();
  // The output viewed as [r0, s0, r1, s1, ...]: the tiles are the even dims.
  Shape interleaved;
  std::vector<int64_t> tile_dims;
  const int64_t lead = static_cast<int64_t>(sizes.size()) - x.dim();
  for (int64_t i = 0; i < static_cast<int64_t>(sizes.size()); ++i) {
    tile_dims.push_back(2 * i);
    interleaved.push_back(sizes[i]);
    interleaved.push_back(i < lead ? 1 : s[i - lead]);
  }
  return record_linear(repeat(x.data(), sizes), "RepeatBackward", {&x},
                       [s, interleaved, tile_dims](const auto& g, const Needs&) {
                         return std::vector{sum(g.reshape(interleaved), tile_dims).reshape(s)};
                       });
}

Variable flip(const Variable& x, const std::vector<int64_t>& dims) {
  return record_linear(flip(x.data(), dims), "FlipBackward", {&x},
                       [dims](const auto& g, const Needs&) { return std::vector{flip(g, dims)}; });
}

Variable pad(const Variable& x, const std::vector<int64_t>& pads, PadMode mode, double value) {
  detail::padded_shape(x.data(), pads, mode);  // checks the pads
  if (mode != PadMode::Constant) {
    Variable out = x;
    for (size_t j = 0; j < pads.size() / 2; ++j) {
      const int64_t d = x.dim() - 1 - static_cast<int64_t>(j);
      out = index_select(out, d,
                         detail::pad_source_positions(x.size(d), pads[2 * j], pads[2 * j + 1], mode).to(x.device()));
    }
    return out;
  }
  std::vector<int64_t> inverse;
  for (int64_t p : pads) inverse.push_back(-p);
  return record_linear(pad(x.data(), pads, mode, value), "PadBackward", {&x},
                       [inverse](const auto& g, const Needs&) { return std::vector{pad(g, inverse)}; });
}

}  // namespace ddl
