// Padding layers (torch.nn's ReflectionPad1d/2d/3d, ReplicationPad1d/2d/3d, ZeroPad2d,
// ConstantPad1d/2d/3d): ddl::pad (autograd/ops/shape_ops.h) with a fixed padding. A padding
// of one number pads every side by it; a list is {left, right, top, bottom, front, back},
// 2 * D numbers for a D-d layer. Reflect and replicate layers take PyTorch 1.13's ranks
// ([C, *] or [N, C, *] with D padded dims); constant layers take any input of >= D dims.
#pragma once

#include <vector>

#include <ddl/autograd/ops/shape_ops.h>
#include <ddl/nn/module.h>
#include <ddl/tensor/core/options_arg.h>

namespace ddl::nn {

// LibTorch's ReflectionPad{1,2,3}dOptions and ReplicationPad{1,2,3}dOptions.
template <int D>
struct PadOptions {
  PadOptions(int64_t padding) : padding_(2 * D, padding) {}                   // NOLINT: LibTorch's form
  PadOptions(std::initializer_list<int64_t> padding) : padding_(padding) {}   // NOLINT
  PadOptions(std::vector<int64_t> padding) : padding_(std::move(padding)) {}  // NOLINT
  DDL_ARG(std::vector<int64_t>, padding);
};
using ReflectionPad1dOptions = PadOptions<1>;
using ReflectionPad2dOptions = PadOptions<2>;
using ReflectionPad3dOptions = PadOptions<3>;
using ReplicationPad1dOptions = PadOptions<1>;
using ReplicationPad2dOptions = PadOptions<2>;
using ReplicationPad3dOptions = PadOptions<3>;
using ZeroPad2dOptions = PadOptions<2>;

// LibTorch's ConstantPad{1,2,3}dOptions: a padding and the value to fill with.
template <int D>
struct ConstantPadOptions {
  ConstantPadOptions(int64_t padding, double value) : padding_(2 * D, padding), value_(value) {}
  ConstantPadOptions(std::vector<int64_t> padding, double value) : padding_(std::move(padding)), value_(value) {}
  DDL_ARG(std::vector<int64_t>, padding);
  DDL_ARG(double, value) = 0.0;
};
using ConstantPad1dOptions = ConstantPadOptions<1>;
using ConstantPad2dOptions = ConstantPadOptions<2>;
using ConstantPad3dOptions = ConstantPadOptions<3>;

// The shared form; holds no parameters or buffers, so a copy is a deep copy.
class PadLayer : public Module {
 public:
  PadLayer(const char* type_name, int dims, PadMode mode, std::vector<int64_t> padding, double value);
  Variable forward(const Variable& x) override;
  std::string extra_repr() const override;
  const std::vector<int64_t>& padding() const { return padding_; }

 private:
  int dims_;
  PadMode mode_;
  std::vector<int64_t> padding_;
  double value_;
};

#define DDL_PAD_LAYER(Name, D, mode)                                                                      \
  class Name : public PadLayer {                                                                          \
   public:                                                                                                \
    Name(const PadOptions<D>& options) : PadLayer(#Name, D, mode, options.padding(), 0.0) {} /* NOLINT */ \
    explicit Name(int64_t padding) : Name(PadOptions<D>(padding)) {}                                      \
    explicit Name(std::initializer_list<int64_t> padding) : Name(PadOptions<D>(padding)) {}               \
    std::shared_ptr<Module> clone() const override { return std::make_shared<Name>(*this); }              \
  }

#define DDL_CONSTANT_PAD_LAYER(Name, D)                                                                         \
  class Name : public PadLayer {                                                                                \
   public:                                                                                                      \
    Name(const ConstantPadOptions<D>& options) /* NOLINT */                                                     \
        : PadLayer(#Name, D, PadMode::Constant, options.padding(), options.value()) {}                          \
    Name(int64_t padding, double value) : Name(ConstantPadOptions<D>(padding, value)) {}                        \
    Name(std::initializer_list<int64_t> padding, double value) : Name(ConstantPadOptions<D>(padding, value)) {} \
    std::shared_ptr<Module> clone() const override { return std::make_shared<Name>(*this); }                    \
  }

DDL_PAD_LAYER(ReflectionPad1d, 1, PadMode::Reflect);
DDL_PAD_LAYER(ReflectionPad2d, 2, PadMode::Reflect);
DDL_PAD_LAYER(ReflectionPad3d, 3, PadMode::Reflect);
DDL_PAD_LAYER(ReplicationPad1d, 1, PadMode::Replicate);
DDL_PAD_LAYER(ReplicationPad2d, 2, PadMode::Replicate);
DDL_PAD_LAYER(ReplicationPad3d, 3, PadMode::Replicate);
DDL_PAD_LAYER(ZeroPad2d, 2, PadMode::Constant);
DDL_CONSTANT_PAD_LAYER(ConstantPad1d, 1);
DDL_CONSTANT_PAD_LAYER(ConstantPad2d, 2);
DDL_CONSTANT_PAD_LAYER(ConstantPad3d, 3);

#undef DDL_PAD_LAYER
#undef DDL_CONSTANT_PAD_LAYER

}  // namespace ddl::nn
