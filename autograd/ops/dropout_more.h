// Channel-wise and self-normalising dropouts on Variables, as torch.nn.functional's
// dropout1d/2d/3d, alpha_dropout and feature_alpha_dropout (autograd/ops/dropout_more.cpp).
// Each returns x itself when !training, p == 0 or x is empty, and x * 0 when p == 1.
#pragma once

#include <ddl/autograd/variable.h>
#include <ddl/tensor/core/random.h>

namespace ddl {

// Zeroes whole channels x[n, c] with probability p and scales the rest by 1 / (1 - p).
// dropout1d: x [N, C, L] or unbatched [C, L]; dropout2d: x [N, C, *] (a 3-D x is taken
// as [N, C, L], as PyTorch 1.13 does); dropout3d: [N, C, D, H, W] or unbatched [C, D, H, W].
// p in [0, 1]; a floating x unless p == 1.
Variable dropout1d(const Variable& x, double p = 0.5, bool training = true, Generator& gen = default_generator());
Variable dropout2d(const Variable& x, double p = 0.5, bool training = true, Generator& gen = default_generator());
Variable dropout3d(const Variable& x, double p = 0.5, bool training = true, Generator& gen = default_generator());

// Alpha dropout (Klambauer et al., "Self-Normalizing Neural Networks", 2017): a dropped
// element becomes SELU's negative saturation -alpha', then a * y + b restores zero mean
// and unit variance for inputs that had them. feature_alpha_dropout drops whole channels
// of x [N, C, *].
Variable alpha_dropout(const Variable& x, double p = 0.5, bool training = true, Generator& gen = default_generator());
Variable feature_alpha_dropout(const Variable& x, double p = 0.5, bool training = true,
                               Generator& gen = default_generator());

}  // namespace ddl
