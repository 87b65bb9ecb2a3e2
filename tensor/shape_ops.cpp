// repeat is an expand of an interleaved view followed by one copy; flip and the
// reflect/replicate pads are index_select with computed positions; constant pad
// fills and copies the overlapping region.
#include "tensor/shape_ops.h"

#include <algorithm>

#include "tensor/factory.h"
#include "tensor/indexing.h"

namespace ddl {

Tensor repeat(const Tensor& t, const std::vector<int64_t>& sizes) {
  DDL_CHECK(t.defined(), "repeat: undefined tensor");
  const int64_t k = static_cast<int64_t>(sizes.size());
  DDL_CHECK(k >= t.dim(), "repeat: number of repeats (", k, ") can not be smaller than the number of dims of ",
            describe(t));
  // [s0, s1] repeated [r0, r1]: view as [1, s0, 1, s1], expand to [r0, s0, r1, s1], copy, view [r0*s0, r1*s1].
  Shape interleaved, expanded, out;
  for (int64_t i = 0; i < k; ++i) {
    DDL_CHECK(sizes[i] >= 0, "repeat: negative repeat count ", sizes[i], " for dim ", i);
    const int64_t s = i < k - t.dim() ? 1 : t.size(i - (k - t.dim()));
    interleaved.push_back(1);
    interleaved.push_back(s);
    expanded.push_back(sizes[i]);
    expanded.push_back(s);
    out.push_back(sizes[i] * s);
  }
  return t.reshape(interleaved).expand(expanded).contiguous().view(out);
}

Tensor flip(const Tensor& t, const std::vector<int64_t>& dims) {
  DDL_CHECK(t.defined(), "flip: undefined tensor");
  std::vector<bool> seen(static_cast<size_t>(t.dim()), false);
  Tensor out = t;
  for (int64_t dim : dims) {
    const int64_t d = wrap_dim(dim, t.dim(), "flip");
    DDL_CHECK(!seen[d], "flip: dim ", d, " appears multiple times in the list of dims");
    seen[d] = true;
    const int64_t n = t.size(d);
    const Tensor reversed = arange(static_cast<double>(n - 1), -1.0, -1.0, TensorOptions(DType::Int64, t.device()));
    out = detail::index_select_in_range(out, d, reversed);
  }
  return dims.empty() ? t.clone() : out;
}

namespace detail {

Shape padded_shape(const Tensor& t, const std::vector<int64_t>& pads, PadMode mode) {
  DDL_CHECK(t.defined(), "pad: undefined tensor");
  const int64_t k = static_cast<int64_t>(pads.size()) / 2;
  DDL_CHECK(pads.size() % 2 == 0, "pad: padding length must be even, got ", pads.size());
  DDL_CHECK(k <= t.dim(), "pad: padding of length ", pads.size(), " pads ", k, " dims, but the input ", describe(t),
            " has only ", t.dim());
  Shape out = t.shape();
  for (int64_t j = 0; j < k; ++j) {
    const int64_t d = t.dim() - 1 - j, before = pads[2 * j], after = pads[2 * j + 1], n = t.size(d);
    if (mode == PadMode::Reflect)
      DDL_CHECK(before >= 0 && after >= 0 && before < n && after < n, "pad: reflect padding (", before, ", ", after,
                ") of dimension ", d, " must be non-negative and less than its size ", n, " in ", describe(t));
    if (mode == PadMode::Replicate)
      DDL_CHECK(before >= 0 && after >= 0 && (n > 0 || before + after == 0), "pad: replicate padding (", before, ", ",
                after, ") of dimension ", d, " must be non-negative, on a non-empty dim, in ", describe(t));
    out[d] = n + before + after;
    DDL_CHECK(out[d] >= 0, "pad: padding (", before, ", ", after, ") makes dimension ", d, " of ", describe(t),
              " negative");
  }
  return out;
}

Tensor pad_source_positions(int64_t n, int64_t before, int64_t after, PadMode mode) {
  std::vector<int64_t> pos;
  for (int64_t o = 0; o < before + n + after; ++o) {
    int64_t i = o - before;
    if (mode == PadMode::Replicate) {
      i = std::clamp<int64_t>(i, 0, n - 1);
    } else {
      if (i < 0) i = -i;
      if (i >= n) i = 2 * (n - 1) - i;
    }
    pos.push_back(i);
  }
  return from_vector(pos);
}

}  // namespace detail

Tensor pad(const Tensor& t, const std::vector<int64_t>& pads, PadMode mode, double value) {
  const Shape out_shape = detail::padded_shape(t, pads, mode);
  const int64_t k = static_cast<int64_t>(pads.size()) / 2;
  if (mode != PadMode::Constant) {
    Tensor out = t;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t d = t.dim() - 1 - j;
      // The positions are built on the CPU; index_select wants them on t's device.
      const Tensor positions = detail::pad_source_positions(t.size(d), pads[2 * j], pads[2 * j + 1], mode);
      out = detail::index_select_in_range(out, d, positions.to(t.device()));
    }
    return k ? out : t.clone();
  }
  Tensor out = full(out_shape, value, TensorOptions(t.dtype(), t.device()));
  // The region of out that holds t, and the part of t that lands there (negative pads crop).
  Tensor dst = out, src = t;
  for (int64_t j = 0; j < k; ++j) {
    const int64_t d = t.dim() - 1 - j, before = pads[2 * j], after = pads[2 * j + 1], n = t.size(d);
    const int64_t crop_before = std::max<int64_t>(0, -before), crop_after = std::max<int64_t>(0, -after);
    const int64_t len = std::max<int64_t>(0, n - crop_before - crop_after);
    src = src.narrow(d, std::min(crop_before, n), len);
    dst = dst.narrow(d, std::max<int64_t>(0, before), len);
  }
  if (dst.numel() > 0) dst.copy_(src);
  return out;
}

}  // namespace ddl
