// interpolate: resolves size / scale_factor into upsample2d's parameters as
// PyTorch does (a given scale is passed on to the kernel, see tensor/ops/upsample.h),
// then records the kernel's adjoint as the backward.
#include <ddl/autograd/node.h>
#include <ddl/autograd/ops/upsample.h>

namespace ddl {

Variable interpolate(const Variable& x, const InterpolateOptions& opts) {
  DDL_CHECK(x.defined(), "interpolate: input must be defined");
  DDL_CHECK(x.dim() == 4, "interpolate: expected a 4-D [N, C, H, W] input, got ", x.shape());
  DDL_CHECK(opts.size.has_value() != opts.scale_factor.has_value(),
            "interpolate: give exactly one of size and scale_factor");
  DDL_CHECK(!(opts.align_corners && opts.mode == InterpolateMode::Nearest),
            "interpolate: align_corners applies to bilinear mode only (as in PyTorch)");
  Upsample2dParams p;
  p.mode = opts.mode;
  p.align_corners = opts.align_corners;
  for (int i = 0; i < 2; ++i) {
    if (opts.size) {
      p.output_size[i] = (*opts.size)[i];
    } else {
      p.scales[i] = (*opts.scale_factor)[i];
      p.output_size[i] = upsample_out_size(x.size(2 + i), p.scales[i]);
    }
  }
  // PyTorch 1.13 resizes uint8 images with nearest (a copy of pixels, exact through
  // float32) and refuses other integer inputs.
  const bool u8_nearest = x.dtype() == DType::UInt8 && p.mode == InterpolateMode::Nearest;
  DDL_CHECK(is_floating(x.dtype()) || u8_nearest,
            "interpolate: expected a float input (or uint8 with mode nearest), got ", describe(x.data()));
  if (u8_nearest) return Variable(upsample2d(x.data().to(DType::Float32), p).to(DType::UInt8));
  const Shape xs = x.shape();
  return autograd::make_result(
      upsample2d(x.data(), p),
      p.mode == InterpolateMode::Nearest ? "UpsampleNearest2dBackward" : "UpsampleBilinear2dBackward", {&x},
      [xs, p](const Tensor& g, const std::vector<bool>& needs) -> std::vector<Tensor> {
        return {needs[0] ? upsample2d_backward(g, xs, p) : Tensor()};
      });
}

}  // namespace ddl
