// More torch.nn.functional activations on Variables: the ELU family, the shrinks, the
// "hard" piecewise-linear ones, PReLU/RReLU, GLU, logsigmoid, mish, softmin, softsign,
// and pixel (un)shuffle. Each is composed of differentiable ops (so double backward
// comes with it) arranged so that kinks, NaN and infinities get PyTorch 1.13's values
// and gradients. Float inputs only unless noted; 16-bit ones compute in float32.
#pragma once

#include <ddl/autograd/variable.h>
#include <ddl/tensor/core/random.h>

namespace ddl {

// x > 0 ? x : alpha * (exp(x) - 1) (Clevert et al. 2015).
Variable elu(const Variable& x, double alpha = 1.0);
// scale * elu(x, alpha) with PyTorch's constants (Klambauer et al. 2017).
Variable selu(const Variable& x);
// max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) (Barron 2017); alpha != 0.
Variable celu(const Variable& x, double alpha = 1.0);
// a * sigmoid(b), a and b the halves of x along dim (whose size must be even).
Variable glu(const Variable& x, int64_t dim = -1);
// clamp(x, min_val, max_val) with gradient 0 at and beyond the bounds; also integers.
Variable hardtanh(const Variable& x, double min_val = -1.0, double max_val = 1.0);
// hardtanh(x, 0, 6).
Variable relu6(const Variable& x);
// 0 where -lambd <= x <= lambd, x elsewhere.
Variable hardshrink(const Variable& x, double lambd = 0.5);
// x - lambd above lambd, x + lambd below -lambd, 0 between; lambd >= 0.
Variable softshrink(const Variable& x, double lambd = 0.5);
// x - tanh(x); integers give float32, as torch.
Variable tanhshrink(const Variable& x);
// x where x > threshold, value elsewhere; also integers.
Variable threshold(const Variable& x, double threshold, double value);
// x > 0 ? x : weight * x, weight with 1 element or one per channel (dim 1 of x).
Variable prelu(const Variable& x, const Variable& weight);
// Randomized leaky ReLU (Xu et al. 2015): in training each x <= 0 is scaled by a slope
// drawn from U(lower, upper) with `gen` (the default generator when null); otherwise
// leaky_relu with slope (lower + upper) / 2. lower <= upper.
Variable rrelu(const Variable& x, double lower = 1.0 / 8, double upper = 1.0 / 3, bool training = false,
               Generator* gen = nullptr);
// log(sigmoid(x)), without overflow.
Variable logsigmoid(const Variable& x);
// softmax(-x, dim).
Variable softmin(const Variable& x, int64_t dim);
// x / (1 + |x|); integers give float32, as torch.
Variable softsign(const Variable& x);
// x * tanh(softplus(x)) (Misra 2019).
Variable mish(const Variable& x);
// x * relu6(x + 3) / 6 (Howard et al. 2019, MobileNetV3).
Variable hardswish(const Variable& x);
// relu6(x + 3) / 6.
Variable hardsigmoid(const Variable& x);
// [*, C r^2, H, W] -> [*, C, H r, W r] (Shi et al. 2016); any dtype.
Variable pixel_shuffle(const Variable& x, int64_t upscale_factor);
// [*, C, H, W] -> [*, C r^2, H / r, W / r], the inverse of pixel_shuffle; any dtype.
Variable pixel_unshuffle(const Variable& x, int64_t downscale_factor);

}  // namespace ddl
