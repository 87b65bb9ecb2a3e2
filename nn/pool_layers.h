// AdaptiveMaxPool2d and Upsample modules (the fixed-window pools and
// AdaptiveAvgPool2d are in nn/layers.h), on CPU and CUDA tensors.
#pragma once

#include <array>
#include <optional>
#include <utility>
#include <vector>

#include <ddl/autograd/functions.h>
#include <ddl/nn/layers.h>
#include <ddl/nn/module.h>
#include <ddl/nn/size2.h>
#include <ddl/tensor/core/options_arg.h>

namespace ddl::nn {

// x: [N, C, H, W] or [C, H, W] -> [..., output_size]; PyTorch's windows.
class AdaptiveMaxPool2d : public Module {
 public:
  explicit AdaptiveMaxPool2d(Size2 output_size) : Module("AdaptiveMaxPool2d"), out_(output_size) {}
  explicit AdaptiveMaxPool2d(const AdaptiveMaxPool2dOptions& o)
      : AdaptiveMaxPool2d(detail::size2_of(o.output_size())) {}
  Variable forward(const Variable& x) override { return adaptive_max_pool2d(x, out_); }
  // The values and the int64 positions of the maxima.
  std::pair<Variable, Tensor> forward_with_indices(const Variable& x) const {
    return adaptive_max_pool2d_with_indices(x, out_);
  }
  std::string extra_repr() const override { return "output_size=" + out_.repr(); }
  // No parameters or buffers: a copy is a deep copy.
  std::shared_ptr<Module> clone() const override { return std::make_shared<AdaptiveMaxPool2d>(*this); }

 private:
  Size2 out_;
};

// LibTorch's UpsampleOptions().scale_factor(std::vector<double>({2, 2})).mode(torch::kBilinear);
// the sizes are 2-D (ddl's Upsample takes [N, C, H, W]) and the modes nearest and bilinear.
struct UpsampleOptions {
  DDL_ARG(std::optional<std::vector<int64_t>>, size) = std::nullopt;
  DDL_ARG(std::optional<std::vector<double>>, scale_factor) = std::nullopt;
  DDL_ARG(InterpolateMode, mode) = InterpolateMode::Nearest;
  DDL_ARG(std::optional<bool>, align_corners) = std::nullopt;
};

// nn.Upsample: a fixed output size or scale factor, nearest or bilinear.
class Upsample : public Module {
 public:
  explicit Upsample(const UpsampleOptions& o);
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
