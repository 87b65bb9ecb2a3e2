// repeat is an expand of an interleaved view followed by one copy; flip and the
// reflect/replicate pads are index_select with computed positions; constant pad
// fills and copies the overlapping region.
#include <algorithm>

#include <ddl/tensor/core/checked_shape.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/indexing.h>
#include <ddl/tensor/ops/shape_ops.h>

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
    int64_t n = 0;
    DDL_CHECK(!__builtin_mul_overflow(sizes[i], s, &n), "repeat: ", describe(t), " repeated ", Shape(sizes),
              " overflows int64 in dim ", i);
    out.push_back(n);
  }
  checked_nbytes(out, t.element_size(), "repeat");  // before expand, so the error names repeat
  return t.reshape(interleaved).expand(expanded).contiguous().view(out);
}

Tensor flip(const Tensor& t, const std::vector<int64_t>& dims) {
  DDL_CHECK(t.defined(), "flip: undefined tensor");
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(t.dim(), 1)), false);
  Tensor out = t;
  for (int64_t dim : dims) {
    const int64_t d = wrap_dim(dim, t.dim(), "flip");
    if (t.dim() == 0) {  // a 0-d tensor takes dim 0 or -1, once (as torch.flip), and is its own flip
      DDL_CHECK(!seen[0], "flip: dim ", d, " appears multiple times in the list of dims");
      seen[0] = true;
      continue;
    }
    DDL_CHECK(!seen[d], "flip: dim ", d, " appears multiple times in the list of dims");
    seen[d] = true;
    const int64_t n = t.size(d);
    const Tensor reversed = arange(static_cast<double>(n - 1), -1.0, -1.0, TensorOptions(DType::Int64, t.device()));
    out = detail::index_select_in_range(out, d, reversed);
  }
  return dims.empty() || t.dim() == 0 ? t.clone() : out;
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
    // As torch.nn.functional.pad: reflect and replicate pads may be negative
    // (they crop), a padded dim must be non-empty and stay non-empty, and a
    // reflection cannot reach past the far edge (a pad must be less than the size).
    if (mode != PadMode::Constant)
      DDL_CHECK(n > 0, "pad: ", mode == PadMode::Reflect ? "reflect" : "replicate", " padding of dimension ", d,
                " needs a non-empty dimension, got ", describe(t));
    if (mode == PadMode::Reflect)
      DDL_CHECK(before < n && after < n, "pad: reflect padding (", before, ", ", after, ") of dimension ", d,
                " must be less than its size ", n, " in ", describe(t));
    DDL_CHECK(!__builtin_add_overflow(n, before, &out[d]) && !__builtin_add_overflow(out[d], after, &out[d]),
              "pad: padding (", before, ", ", after, ") overflows dimension ", d, " of ", describe(t));
    DDL_CHECK(out[d] >= (mode == PadMode::Constant ? 0 : 1), "pad: padding (", before, ", ", after,
              ") leaves dimension ", d, " of ", describe(t), mode == PadMode::Constant ? " negative" : " empty");
  }
  return out;
}

Tensor pad_source_positions(int64_t n, int64_t before, int64_t after, PadMode mode) {
  std::vector<int64_t> pos;
  for (int64_t o = 0; o < before + n + after; ++o) {
    // In 128 bits: a crop near INT64_MIN makes o - before overflow int64.
    __int128 i = static_cast<__int128>(o) - before;
    if (mode == PadMode::Replicate) {
      i = std::clamp<__int128>(i, 0, n - 1);
    } else {
      if (i < 0) i = -i;
      if (i >= n) i = 2 * static_cast<__int128>(n - 1) - i;
    }
    DDL_ASSERT(i >= 0 && i < n, "pad: source position out of range");  // padded_shape bounds the pads
    pos.push_back(static_cast<int64_t>(i));
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
  Tensor out = detail::full("pad", out_shape, value, TensorOptions(t.dtype(), t.device()));
  // The region of out that holds t, and the part of t that lands there (negative pads crop).
  Tensor dst = out, src = t;
  for (int64_t j = 0; j < k; ++j) {
    const int64_t d = t.dim() - 1 - j, before = pads[2 * j], after = pads[2 * j + 1], n = t.size(d);
    // Crops beyond n are n (and -INT64_MIN does not exist).
    const int64_t crop_before = before < 0 ? (before < -n ? n : -before) : 0;
    const int64_t crop_after = after < 0 ? (after < -n ? n : -after) : 0;
    const int64_t len = std::max<int64_t>(0, n - crop_before - crop_after);
    src = src.narrow(d, std::min(crop_before, n), len);
    dst = dst.narrow(d, std::max<int64_t>(0, before), len);
  }
  if (dst.numel() > 0) dst.copy_(src);
  return out;
}

}  // namespace ddl
