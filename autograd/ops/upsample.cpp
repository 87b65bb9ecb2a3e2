// interpolate: resolves size / scale_factor into upsample2d's parameters as
// PyTorch does (a given scale is passed on to the kernel, see tensor/upsample.h),
// then records the kernel's adjoint as the backward.
#include "autograd/ops/upsample.h"

#include "autograd/node.h"

namespace ddl {

Variable interpolate(const Variable& x, const InterpolateOptions& opts) {
  DDL_CHECK(x.defined(), "interpolate: input must be defined");
  DDL_CHECK(x.dim() == 4, "interpolate: expected a 4-D [N, C, H, W] input, got ", x.shape());
  DDL_CHECK(opts.size.has_value() != opts.scale_factor.has_value(),
            "interpolate: give exactly one of size and scale_factor");
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
  const Shape xs = x.shape();
  return autograd::make_result(
      upsample2d(x.data(), p),
      p.mode == InterpolateMode::Nearest ? "UpsampleNearest2dBackward" : "UpsampleBilinear2dBackward", {&x},
      [xs, p](const Tensor& g, const std::vector<bool>& needs) -> std::vector<Tensor> {
        return {needs[0] ? upsample2d_backward(g, xs, p) : Tensor()};
      });
}

}  // namespace ddl
