// upsample2d frontend: shape and parameter checks, unbatched input via a batch
// dim of 1, output allocation and kernel dispatch (tensor/cpu/upsample.cpp, tensor/cuda/upsample.cu).
#include <cmath>

#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/spatial_args.h>
#include <ddl/tensor/ops/upsample.h>

namespace ddl {

namespace kernels {
DDL_DEFINE_KERNEL(upsample2d_forward_kernel, Upsample2dForwardFn);
DDL_DEFINE_KERNEL(upsample2d_backward_kernel, Upsample2dBackwardFn);
}  // namespace kernels

int64_t upsample_out_size(int64_t in, double scale) {
  DDL_CHECK(scale > 0 && std::isfinite(scale), "interpolate: scale_factor must be positive and finite, got ", scale);
  const double out = std::floor(static_cast<double>(in) * scale);
  // 2^62: the size must fit int64_t (converting a larger double is undefined) with room to spare.
  DDL_CHECK(out < 0x1p62, "interpolate: scale_factor ", scale, " of input size ", in, " gives an output size ", out,
            " that is too large");
  return static_cast<int64_t>(out);
}

namespace {

using spatial::as_4d;
using spatial::check_float;
using spatial::like_input;
using spatial::widens;

Shape checked_batched(const Shape& s, const Upsample2dParams& p, const char* op) {
  DDL_CHECK(s.size() == 3 || s.size() == 4, op, ": input must be 4-D [N, C, H, W] or 3-D [C, H, W], got ", s);
  DDL_CHECK(p.output_size[0] > 0 && p.output_size[1] > 0, op, ": output size must be positive, got [", p.output_size[0],
            ", ", p.output_size[1], "] for input ", s);
  DDL_CHECK(s[s.size() - 1] > 0 && s[s.size() - 2] > 0, op, ": input ", s, " has an empty spatial dim");
  DDL_CHECK(!(p.align_corners && p.mode == InterpolateMode::Nearest), op,
            ": align_corners applies to bilinear mode only (as in PyTorch)");
  // A scale the output size did not come from would map output pixels past the input.
  for (int i = 0; i < 2; ++i) {
    const int64_t in = s[s.size() - 2 + static_cast<size_t>(i)];
    DDL_CHECK(p.scales[i] <= 0 || upsample_out_size(in, p.scales[i]) == p.output_size[i], op, ": scale factor ",
              p.scales[i], " of input ", s, " gives size ", upsample_out_size(in, p.scales[i]),
              ", not the output size ", p.output_size[i]);
  }
  return s.size() == 4 ? s : Shape{1, s[0], s[1], s[2]};
}

}  // namespace

Tensor upsample2d(const Tensor& x, const Upsample2dParams& p) {
  if (widens(x)) return upsample2d(x.to(DType::Float32), p).to(x.dtype());
  check_float(x, "upsample2d");
  const Shape xs = checked_batched(x.shape(), p, "upsample2d");
  Tensor y = empty({xs[0], xs[1], p.output_size[0], p.output_size[1]}, TensorOptions(x.dtype(), x.device()));
  if (y.numel() > 0) kernels::upsample2d_forward_kernel(x.device())(as_4d(x), y, p);
  return like_input(y, x.dim());
}

Tensor upsample2d_backward(const Tensor& grad_y, const Shape& x_shape, const Upsample2dParams& p) {
  if (widens(grad_y)) return upsample2d_backward(grad_y.to(DType::Float32), x_shape, p).to(grad_y.dtype());
  check_float(grad_y, "upsample2d_backward");
  const Shape xs = checked_batched(x_shape, p, "upsample2d_backward");
  const Shape expect = x_shape.size() == 4 ? Shape{xs[0], xs[1], p.output_size[0], p.output_size[1]}
                                           : Shape{xs[1], p.output_size[0], p.output_size[1]};
  DDL_CHECK(grad_y.shape() == expect, "upsample2d_backward: grad_y ", grad_y.shape(), " does not match the output ",
            expect, " of input ", x_shape);
  Tensor gx = empty(xs, TensorOptions(grad_y.dtype(), grad_y.device()));
  if (gx.numel() > 0) kernels::upsample2d_backward_kernel(gx.device())(as_4d(grad_y), gx, p);
  return like_input(gx, x_shape.size());
}

}  // namespace ddl
