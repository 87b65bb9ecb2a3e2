// ATen's _dropout_impl (aten/src/ATen/native/Dropout.cpp) as a composition: a noise tensor
// drawn once, y = x * noise (+ b for alpha dropout), so the gradient is noise * grad. The
// noise has x's dtype, as ATen's unfused path (feature and alpha dropout) has.
#include <cmath>

#include <ddl/autograd/ops/dropout_more.h>
#include <ddl/autograd/ops/elementwise.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/elementwise.h>

namespace ddl {

namespace {

Variable dropout_impl(const char* op, const Variable& x, double p, bool training, Generator& gen, bool feature,
                      bool alpha) {
  DDL_CHECK(x.defined(), op, ": input is undefined");
  DDL_CHECK(p >= 0.0 && p <= 1.0, op, ": dropout probability has to be between 0 and 1, but got ", p);
  if (p == 0.0 || !training || x.numel() == 0) return x;
  if (p == 1.0) return x * Variable(zeros({}, {x.dtype(), x.device()}));
  DDL_CHECK(is_floating(x.dtype()), op, ": expected a floating input, got ", x.dtype());
  Shape noise_shape = x.shape();
  if (feature) {
    DDL_CHECK(x.dim() >= 2, op, ": channel-wise dropout needs at least 2 dims [N, C, *], got ", x.shape());
    for (int64_t d = 2; d < noise_shape.size(); ++d) noise_shape[d] = 1;
  }
  Tensor noise = bernoulli(noise_shape, 1.0 - p, gen, {x.dtype(), x.device()});
  if (!alpha) {
    noise.div_(1.0 - p);
    return x * Variable(noise);
  }
  // SELU's alpha * scale: a dropped unit takes -kAlpha, then the affine map a * y + b.
  constexpr double kAlpha = 1.7580993408473766;
  const double a = 1.0 / std::sqrt((kAlpha * kAlpha * p + 1) * (1 - p));
  const Tensor b = add(mul(sub(noise, 1.0), kAlpha * a), kAlpha * a * p);
  noise.mul_(a);
  return x * Variable(noise) + Variable(b);
}

}  // namespace

Variable dropout1d(const Variable& x, double p, bool training, Generator& gen) {
  DDL_CHECK(p >= 0.0 && p <= 1.0, "dropout1d: dropout probability has to be between 0 and 1, but got ", p);
  DDL_CHECK(x.dim() == 2 || x.dim() == 3, "dropout1d: expected a 2-D [C, L] or 3-D [N, C, L] input, got ", x.shape());
  if (x.dim() == 2) return dropout_impl("dropout1d", x.unsqueeze(0), p, training, gen, true, false).squeeze(0);
  return dropout_impl("dropout1d", x, p, training, gen, true, false);
}

Variable dropout2d(const Variable& x, double p, bool training, Generator& gen) {
  // PyTorch 1.13 only warns about inputs other than 3-D and 4-D, and drops channels of
  // dim 1 in every case; the same happens here.
  return dropout_impl("dropout2d", x, p, training, gen, true, false);
}

Variable dropout3d(const Variable& x, double p, bool training, Generator& gen) {
  DDL_CHECK(p >= 0.0 && p <= 1.0, "dropout3d: dropout probability has to be between 0 and 1, but got ", p);
  // As PyTorch 1.13: anything but 5-D is taken as unbatched (it warns unless 4-D).
  if (x.dim() != 5) return dropout_impl("dropout3d", x.unsqueeze(0), p, training, gen, true, false).squeeze(0);
  return dropout_impl("dropout3d", x, p, training, gen, true, false);
}

Variable alpha_dropout(const Variable& x, double p, bool training, Generator& gen) {
  return dropout_impl("alpha_dropout", x, p, training, gen, false, true);
}

Variable feature_alpha_dropout(const Variable& x, double p, bool training, Generator& gen) {
  return dropout_impl("feature_alpha_dropout", x, p, training, gen, true, true);
}

}  // namespace ddl
