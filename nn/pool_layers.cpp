// Upsample's constructors and printing (AdaptiveMaxPool2d is header-only).
#include <sstream>

#include <ddl/nn/pool_layers.h>

namespace ddl::nn {

Upsample::Upsample(InterpolateOptions opts) : Module("Upsample"), opts_(opts) {
  DDL_CHECK(opts.size.has_value() != opts.scale_factor.has_value(),
            "Upsample: give exactly one of size and scale_factor");
  DDL_CHECK(!(opts.align_corners && opts.mode == InterpolateMode::Nearest),
            "Upsample: align_corners applies to bilinear mode only");
}

Upsample Upsample::to_size(Size2 size, InterpolateMode mode, bool align_corners) {
  InterpolateOptions o;
  o.size = size.value();
  o.mode = mode, o.align_corners = align_corners;
  return Upsample(o);
}

Upsample Upsample::by_scale(std::array<double, 2> scale_factor, InterpolateMode mode, bool align_corners) {
  InterpolateOptions o;
  o.scale_factor = scale_factor;
  o.mode = mode, o.align_corners = align_corners;
  return Upsample(o);
}

Upsample Upsample::by_scale(double scale_factor, InterpolateMode mode, bool align_corners) {
  return by_scale({scale_factor, scale_factor}, mode, align_corners);
}

std::string Upsample::extra_repr() const {
  std::ostringstream os;
  if (opts_.size) os << "size=(" << (*opts_.size)[0] << ", " << (*opts_.size)[1] << ")";
  if (opts_.scale_factor) os << "scale_factor=(" << (*opts_.scale_factor)[0] << ", " << (*opts_.scale_factor)[1] << ")";
  os << ", mode=" << (opts_.mode == InterpolateMode::Nearest ? "nearest" : "bilinear");
  if (opts_.mode == InterpolateMode::Bilinear) os << ", align_corners=" << (opts_.align_corners ? "True" : "False");
  return os.str();
}

}  // namespace ddl::nn
