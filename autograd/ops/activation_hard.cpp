// The piecewise-linear activations of activation_more.h (hardtanh, relu6, hardshrink,
// softshrink, threshold, hardswish, hardsigmoid) and pixel (un)shuffle. Each selects
// between branches with `where` on PyTorch's own backward condition, so the gradient at a
// kink and at NaN is PyTorch's; a branch that only gives a value is a constant.
#include <cmath>
#include <numeric>

#include <ddl/autograd/node.h>
#include <ddl/autograd/ops/activation_detail.h>
#include <ddl/autograd/ops/activation_more.h>
#include <ddl/autograd/ops/elementwise.h>
#include <ddl/tensor/ops/elementwise.h>

namespace ddl {

using detail::check_float_input;
using detail::in_float32;
using detail::isnan_mask;
using detail::linear_piece;
using detail::mask_and;
using detail::mask_or;
using detail::only;
using detail::scalar_kernel;
using detail::scalar_like;

namespace {

// PyTorch casts a scalar bound to the input's dtype: toward zero for integers.
double bound_for(const Variable& x, double v) { return is_floating(x.dtype()) ? v : std::trunc(v); }

// PyTorch refuses an unsigned input with a bound or value it cannot cast (truncated).
void check_unsigned(const Variable& x, const char* op, double a, double b) {
  const double ta = std::trunc(a), tb = std::trunc(b);
  DDL_CHECK(x.dtype() != DType::UInt8 || (ta >= 0 && tb >= 0 && ta <= 255 && tb <= 255), op,
            ": cannot apply to an unsigned input a bound or value outside [0, 255], got ", a, " and ", b);
}

}  // namespace

Variable hardtanh(const Variable& x, double min_val, double max_val) {
  DDL_CHECK(x.defined(), "hardtanh: input is undefined");
  DDL_CHECK(x.dtype() != DType::Bool, "hardtanh: bool inputs are not supported");
  check_unsigned(x, "hardtanh", min_val, max_val);
  const double lo = bound_for(x, min_val), hi = bound_for(x, max_val);
  // hardtanh_backward passes the gradient only where min_val < x < max_val (0 at NaN).
  const Tensor inside = mask_and(gt(x.data(), lo), lt(x.data(), hi));
  return where(inside, x, Variable(clamp(x.data(), lo, hi).to(x.dtype())));
}

Variable relu6(const Variable& x) {
  DDL_CHECK(x.defined() && x.dtype() != DType::Bool, "relu6: bool inputs are not supported");
  return hardtanh(x, 0.0, 6.0);
}

Variable hardshrink(const Variable& x, double lambd) {
  check_float_input(x, "hardshrink");
  // Value x outside [-lambd, lambd], 0 inside and NaN at NaN; gradient only outside (0 at NaN).
  const Tensor xd = x.data();
  Tensor keep = mask_or(lt(xd, -lambd), gt(xd, lambd));
  if (scalar_kernel(x)) keep = mask_or(keep, isnan_mask(xd));  // See Note [NaN in bfloat16 backward]
  return where(keep, x, Variable(mul(xd, 0.0)));
}

Variable softshrink(const Variable& x, double lambd) {
  check_float_input(x, "softshrink");
  DDL_CHECK(lambd >= 0, "softshrink: lambda must be greater or equal to 0, but found to be ", lambd);
  const bool nan_grad = scalar_kernel(x);  // See Note [NaN in bfloat16 backward]
  return in_float32(x, [&](const Variable& v) {
    // PyTorch: x > lambd ? x - lambd : x < -lambd ? x + lambd : 0, so NaN gives 0.
    const Tensor xd = v.data();
    // bfloat16's NaN: value 0, gradient g (the identity's backward on a zero value).
    const auto pass = [](const auto& g, const std::vector<bool>&) { return std::vector{g}; };
    Variable zero = scalar_like(v, 0.0);
    if (nan_grad)
      zero = where(isnan_mask(xd), autograd::make_result(zeros_like(xd), "SoftshrinkBackward", {&v}, pass, pass), zero);
    return where(gt(xd, lambd), sub(v, lambd), where(lt(xd, -lambd), add(v, lambd), zero));
  });
}

Variable threshold(const Variable& x, double threshold, double value) {
  DDL_CHECK(x.defined(), "threshold: input is undefined");
  DDL_CHECK(x.dtype() != DType::Bool, "threshold: bool inputs are not supported");
  check_unsigned(x, "threshold", threshold, value);
  return where(le(x.data(), bound_for(x, threshold)), Variable(full_like(x.data(), value)), x);
}

Variable hardswish(const Variable& x) {
  check_float_input(x, "hardswish");
  const bool nan_grad_one = scalar_kernel(x);  // See Note [NaN in bfloat16 backward]
  return in_float32(x, [&](const Variable& v) {
    const Tensor xd = v.data();
    // The kernel's value x * min(max(x + 3, 0), 6) / 6 (NaN at -inf, inf above max / 6); its
    // backward: x < -3 ? 0 : x > 3 ? g : g (x / 3 + 1/2), NaN in the last; its double backward
    // g / 3 only where -3 < x < 3.
    const Tensor y0 = div(mul(xd, clamp(add(xd, 3.0), 0.0, 6.0)), 6.0);
    const Tensor below = lt(xd, -3.0), above = gt(xd, 3.0);
    const Tensor inside = mask_and(gt(xd, -3.0), lt(xd, 3.0));
    const Tensor edge = eq(mask_or(mask_or(below, above), inside), 0.0);
    const Variable xi = only(inside, v);
    Tensor slope = add(div(xd, 3.0), 0.5);
    if (nan_grad_one) slope = where(isnan_mask(xd), full_like(xd, 1.0), slope);
    const Variable y_edge = linear_piece(edge, v, y0, slope);
    const Variable y_out = where(above, div(mul(only(above, v), 6.0), 6.0), where(below, Variable(y0), y_edge));
    return where(inside, div(mul(xi, add(xi, 3.0)), 6.0), y_out);
  });
}

Variable hardsigmoid(const Variable& x) {
  check_float_input(x, "hardsigmoid");
  return in_float32(x, [](const Variable& v) {
    const Tensor xd = v.data();
    // Value min(max(x + 3, 0), 6) / 6; hardsigmoid_backward: g * (1.0f / 6.0f), a float
    // constant even for double, where -3 < x < 3, and 0 elsewhere (NaN too).
    const Tensor y0 = div(clamp(add(xd, 3.0), 0.0, 6.0), 6.0);
    const Tensor inside = mask_and(gt(xd, -3.0), lt(xd, 3.0));
    const double sixth = static_cast<double>(1.0f / 6.0f);
    return where(inside, linear_piece(inside, v, y0, full({}, sixth, TensorOptions(xd.dtype(), xd.device()))),
                 Variable(y0));
  });
}

// x: [*, C r^2, H, W] -> [*, C, r, r, H, W] -> [*, C, H, r, W, r] -> [*, C, H r, W r].
Variable pixel_shuffle(const Variable& x, int64_t upscale_factor) {
  DDL_CHECK(x.defined(), "pixel_shuffle: input is undefined");
  const int64_t r = upscale_factor, nd = x.dim();
  DDL_CHECK(nd >= 3, "pixel_shuffle: expected input with at least 3 dims, got ", x.shape());
  DDL_CHECK(r > 0, "pixel_shuffle: expected a positive upscale_factor, got ", r);
  const int64_t c = x.size(nd - 3), h = x.size(nd - 2), w = x.size(nd - 1);
  DDL_CHECK(c % (r * r) == 0, "pixel_shuffle: channel dim of ", x.shape(), " (", c,
            ") is not divisible by upscale_factor^2 = ", r * r);
  std::vector<int64_t> s(x.shape().begin(), x.shape().end() - 3);
  const int64_t b = static_cast<int64_t>(s.size());
  std::vector<int64_t> perm(static_cast<size_t>(b));
  std::iota(perm.begin(), perm.end(), 0);
  for (int64_t p : {0, 3, 1, 4, 2}) perm.push_back(b + p);
  std::vector<int64_t> split = s, out = s;
  for (int64_t d : {c / (r * r), r, r, h, w}) split.push_back(d);
  for (int64_t d : {c / (r * r), h * r, w * r}) out.push_back(d);
  return x.reshape(Shape(split)).permute(perm).reshape(Shape(out));
}

// x: [*, C, H, W] -> [*, C, H/r, r, W/r, r] -> [*, C, r, r, H/r, W/r] -> [*, C r^2, H/r, W/r].
Variable pixel_unshuffle(const Variable& x, int64_t downscale_factor) {
  DDL_CHECK(x.defined(), "pixel_unshuffle: input is undefined");
  const int64_t r = downscale_factor, nd = x.dim();
  DDL_CHECK(nd >= 3, "pixel_unshuffle: expected input with at least 3 dims, got ", x.shape());
  DDL_CHECK(r > 0, "pixel_unshuffle: expected a positive downscale_factor, got ", r);
  const int64_t c = x.size(nd - 3), h = x.size(nd - 2), w = x.size(nd - 1);
  DDL_CHECK(h % r == 0 && w % r == 0, "pixel_unshuffle: height and width of ", x.shape(),
            " must be divisible by downscale_factor ", r);
  std::vector<int64_t> s(x.shape().begin(), x.shape().end() - 3);
  const int64_t b = static_cast<int64_t>(s.size());
  std::vector<int64_t> perm(static_cast<size_t>(b));
  std::iota(perm.begin(), perm.end(), 0);
  for (int64_t p : {0, 2, 4, 1, 3}) perm.push_back(b + p);
  std::vector<int64_t> split = s, out = s;
  for (int64_t d : {c, h / r, r, w / r, r}) split.push_back(d);
  for (int64_t d : {c * r * r, h / r, w / r}) out.push_back(d);
  return x.reshape(Shape(split)).permute(perm).reshape(Shape(out));
}

}  // namespace ddl
