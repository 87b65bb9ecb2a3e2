// unfold and fold as compositions of differentiable views and copies. unfold slices the
// padded input once per kernel offset (i, j); fold spreads each offset's [N, C, oh, ow]
// to stride positions (zeros between), pads it to where the offset's block elements land
// in the padded output, sums the offsets, and crops the padding.
#include <ddl/autograd/ops/elementwise.h>
#include <ddl/autograd/ops/fold.h>
#include <ddl/autograd/ops/join.h>
#include <ddl/autograd/ops/shape_ops.h>
#include <ddl/tensor/core/factory.h>

namespace ddl {

namespace {

void check_params(const char* op, std::array<int64_t, 2> k, std::array<int64_t, 2> d, std::array<int64_t, 2> p,
                  std::array<int64_t, 2> s) {
  DDL_CHECK(k[0] > 0 && k[1] > 0, op, ": kernel size should be greater than zero, got (", k[0], ", ", k[1], ")");
  DDL_CHECK(d[0] > 0 && d[1] > 0, op, ": dilation should be greater than zero, got (", d[0], ", ", d[1], ")");
  DDL_CHECK(p[0] >= 0 && p[1] >= 0, op, ": padding should be non-negative, got (", p[0], ", ", p[1], ")");
  DDL_CHECK(s[0] > 0 && s[1] > 0, op, ": stride should be greater than zero, got (", s[0], ", ", s[1], ")");
}

// The number of blocks along one dim of size n (as ATen's im2col/col2im shape checks).
int64_t blocks(int64_t n, int64_t k, int64_t d, int64_t p, int64_t s) { return (n + 2 * p - d * (k - 1) - 1) / s + 1; }

// Along `dim`, puts s - 1 zeros after every element but the last: length (o - 1) * s + 1.
Variable spread(const Variable& t, int64_t dim, int64_t s) {
  const int64_t o = t.size(dim);
  if (s == 1 || o == 0) return t;
  Shape gap = t.shape();
  gap.insert(dim + 1, s - 1);
  gap[dim] = o;
  Variable z(zeros(gap, {t.dtype(), t.device()}));
  Shape merged = t.shape();
  merged[dim] = o * s;
  return cat({t.unsqueeze(dim + 1), z}, dim + 1).reshape(merged).narrow(dim, 0, (o - 1) * s + 1);
}

}  // namespace

Variable unfold(const Variable& x, std::array<int64_t, 2> k, std::array<int64_t, 2> d, std::array<int64_t, 2> p,
                std::array<int64_t, 2> s) {
  check_params("unfold", k, d, p, s);
  DDL_CHECK(x.dim() == 3 || x.dim() == 4, "unfold: expected a 3-D [C, H, W] or 4-D [N, C, H, W] input, got ",
            x.shape());
  if (x.dim() == 3) return unfold(x.unsqueeze(0), k, d, p, s).squeeze(0);
  DDL_CHECK(x.size(1) > 0 && x.size(2) > 0 && x.size(3) > 0,
            "unfold: expected non-zero channel and spatial sizes (only the batch may be empty), got ", x.shape());
  DDL_CHECK(is_floating(x.dtype()), "unfold: expected a floating input, got ", x.dtype());
  const int64_t oh = blocks(x.size(2), k[0], d[0], p[0], s[0]), ow = blocks(x.size(3), k[1], d[1], p[1], s[1]);
  DDL_CHECK(oh >= 1 && ow >= 1, "unfold: input ", x.shape(), " with kernel (", k[0], ", ", k[1], "), dilation (", d[0],
            ", ", d[1], "), padding (", p[0], ", ", p[1], ") gives (", oh, ", ", ow,
            ") blocks; the kernel must fit in the padded input");
  const Variable xp = (p[0] || p[1]) ? pad(x, {p[1], p[1], p[0], p[0]}) : x;
  std::vector<Variable> parts;
  for (int64_t i = 0; i < k[0]; ++i)
    for (int64_t j = 0; j < k[1]; ++j)
      parts.push_back(xp.slice(2, i * d[0], i * d[0] + (oh - 1) * s[0] + 1, s[0])
                          .slice(3, j * d[1], j * d[1] + (ow - 1) * s[1] + 1, s[1]));
  // [N, C, kh * kw, oh, ow]: row c * kh * kw + i * kw + j, as im2col.
  return stack(parts, 2).reshape({x.size(0), x.size(1) * k[0] * k[1], oh * ow});
}

Variable fold(const Variable& x, std::array<int64_t, 2> out, std::array<int64_t, 2> k, std::array<int64_t, 2> d,
              std::array<int64_t, 2> p, std::array<int64_t, 2> s) {
  check_params("fold", k, d, p, s);
  DDL_CHECK(out[0] > 0 && out[1] > 0, "fold: output_size should be positive, got (", out[0], ", ", out[1], ")");
  DDL_CHECK(x.dim() == 2 || x.dim() == 3,
            "fold: expected a 2-D [C * kh * kw, L] or 3-D [N, C * kh * kw, L] input, got ", x.shape());
  if (x.dim() == 2) return fold(x.unsqueeze(0), out, k, d, p, s).squeeze(0);
  DDL_CHECK(x.size(1) > 0 && x.size(2) > 0, "fold: expected non-zero sizes but the batch's, got ", x.shape());
  DDL_CHECK(is_floating(x.dtype()), "fold: expected a floating input, got ", x.dtype());
  DDL_CHECK(x.size(1) % (k[0] * k[1]) == 0, "fold: expected input's dim 1 to be divisible by the kernel's ", k[0],
            " x ", k[1], " elements, got ", x.shape());
  const int64_t oh = blocks(out[0], k[0], d[0], p[0], s[0]), ow = blocks(out[1], k[1], d[1], p[1], s[1]);
  DDL_CHECK(oh >= 1 && ow >= 1 && x.size(2) == oh * ow, "fold: output_size (", out[0], ", ", out[1], ") with kernel (",
            k[0], ", ", k[1], ") makes ", oh, " x ", ow, " blocks, but the input ", x.shape(), " has ", x.size(2));
  const int64_t n = x.size(0), c = x.size(1) / (k[0] * k[1]);
  const int64_t hp = out[0] + 2 * p[0], wp = out[1] + 2 * p[1];
  const Variable cols = x.reshape({n, c, k[0] * k[1], oh, ow});
  Variable sum;
  for (int64_t i = 0; i < k[0]; ++i)
    for (int64_t j = 0; j < k[1]; ++j) {
      const Variable part = spread(spread(cols.select(2, i * k[1] + j), 2, s[0]), 3, s[1]);
      const int64_t top = i * d[0], left = j * d[1];
      const Variable placed =
          pad(part, {left, wp - left - part.size(3), top, hp - top - part.size(2)});  // zeros around the block
      sum = sum.defined() ? sum + placed : placed;
    }
  return sum.narrow(2, p[0], out[0]).narrow(3, p[1], out[1]);
}

}  // namespace ddl
