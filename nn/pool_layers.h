// AdaptiveMaxPool2d and Upsample modules (the fixed-window pools and
// AdaptiveAvgPool2d are in nn/layers.h), on CPU and CUDA tensors.
#pragma once

#include <array>
#include <optional>

#include <ddl/autograd/functions.h>
#include <ddl/nn/module.h>
#include <ddl/nn/size2.h>

namespace ddl::nn {

// x: [N, C, H, W] or [C, H, W] -> [..., output_size]; PyTorch's windows.
class AdaptiveMaxPool2d : public Module {
 public:
  explicit AdaptiveMaxPool2d(Size2 output_size) : Module("AdaptiveMaxPool2d"), out_(output_size) {}
  Variable forward(const Variable& x) override { return adaptive_max_pool2d(x, out_); }
  std::string extra_repr() const override { return "output_size=" + out_.repr(); }
  // No parameters or buffers: a copy is a deep copy.
  std::shared_ptr<Module> clone() const override { return std::make_shared<AdaptiveMaxPool2d>(*this); }

 private:
  Size2 out_;
};

// nn.Upsample: a fixed output size or scale factor, nearest or bilinear.
class Upsample : public Module {
 public:
  // Exactly one of size and scale_factor.
  static Upsample to_size(Size2 size, InterpolateMode mode = InterpolateMode::Nearest, bool align_corners = false);
  static Upsample by_scale(double scale_factor, InterpolateMode mode = InterpolateMode::Nearest,
                           bool align_corners = false);
  static Upsample by_scale(std::array<double, 2> scale_factor, InterpolateMode mode = InterpolateMode::Nearest,
                           bool align_corners = false);
  explicit Upsample(InterpolateOptions opts);
  Variable forward(const Variable& x) override { return interpolate(x, opts_); }
  std::string extra_repr() const override;
  std::shared_ptr<Module> clone() const override { return std::make_shared<Upsample>(*this); }

 private:
  InterpolateOptions opts_;
};

}  // namespace ddl::nn
