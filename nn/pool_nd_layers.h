// 1-D and 3-D pooling layers, LP pooling and max unpooling (the 2-D pools are in
// nn/layers.h and nn/pool_layers.h), with LibTorch's option structs
// (MaxPool3dOptions(2).stride(1)) and a positional form (nn::MaxPool1d(2)). They
// hold no parameters, so a copy is a deep copy. Semantics: autograd/ops/pool_nd.h.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <ddl/autograd/functions.h>
#include <ddl/nn/module.h>
#include <ddl/tensor/core/options_arg.h>

namespace ddl::nn {

// stride defaults to the kernel size, as in LibTorch.
template <size_t D>
struct MaxPoolOptions {
  MaxPoolOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  DDL_ARG(ExpandingArray<D>, kernel_size);
  DDL_ARG(ExpandingArray<D>, stride);
  DDL_ARG(ExpandingArray<D>, padding) = 0;
  DDL_ARG(ExpandingArray<D>, dilation) = 1;
  DDL_ARG(bool, ceil_mode) = false;
};
using MaxPool1dOptions = MaxPoolOptions<1>;
using MaxPool3dOptions = MaxPoolOptions<3>;

template <size_t D>
struct AvgPoolOptions {
  AvgPoolOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  DDL_ARG(ExpandingArray<D>, kernel_size);
  DDL_ARG(ExpandingArray<D>, stride);
  DDL_ARG(ExpandingArray<D>, padding) = 0;
  DDL_ARG(bool, ceil_mode) = false;
  DDL_ARG(bool, count_include_pad) = true;
};
using AvgPool1dOptions = AvgPoolOptions<1>;
using AvgPool3dOptions = AvgPoolOptions<3>;

template <size_t D>
struct AdaptivePoolOptions {
  AdaptivePoolOptions(ExpandingArray<D> output_size) : output_size_(output_size) {}  // NOLINT
  DDL_ARG(ExpandingArray<D>, output_size);
};
using AdaptiveAvgPool1dOptions = AdaptivePoolOptions<1>;
using AdaptiveAvgPool3dOptions = AdaptivePoolOptions<3>;
using AdaptiveMaxPool1dOptions = AdaptivePoolOptions<1>;
using AdaptiveMaxPool3dOptions = AdaptivePoolOptions<3>;

template <size_t D>
struct LPPoolOptions {
  LPPoolOptions(double norm_type, ExpandingArray<D> kernel_size)
      : norm_type_(norm_type), kernel_size_(kernel_size), stride_(kernel_size) {}
  DDL_ARG(double, norm_type);
  DDL_ARG(ExpandingArray<D>, kernel_size);
  DDL_ARG(ExpandingArray<D>, stride);
  DDL_ARG(bool, ceil_mode) = false;
};
using LPPool1dOptions = LPPoolOptions<1>;
using LPPool2dOptions = LPPoolOptions<2>;

template <size_t D>
struct MaxUnpoolOptions {
  MaxUnpoolOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  DDL_ARG(ExpandingArray<D>, kernel_size);
  DDL_ARG(ExpandingArray<D>, stride);
  DDL_ARG(ExpandingArray<D>, padding) = 0;
};
using MaxUnpool1dOptions = MaxUnpoolOptions<1>;
using MaxUnpool2dOptions = MaxUnpoolOptions<2>;
using MaxUnpool3dOptions = MaxUnpoolOptions<3>;

namespace detail {
std::string pool_repr(const char* first, const std::string& v);
}  // namespace detail

// x: [N, C, *spatial] or [C, *spatial] (D spatial dims).
template <size_t D>
class MaxPoolNd : public Module {
 public:
  Variable forward(const Variable& x) override { return forward_with_indices(x).first; }
  std::pair<Variable, Tensor> forward_with_indices(const Variable& x) const {
    const auto& o = opts_;
    if constexpr (D == 1)
      return max_pool1d_with_indices(x, o.kernel_size()[0], o.stride()[0], o.padding()[0], o.dilation()[0],
                                     o.ceil_mode());
    else
      return max_pool3d_with_indices(x, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
  }
  std::string extra_repr() const override {
    const auto& o = opts_;
    return "kernel_size=" + o.kernel_size().repr() + ", stride=" + o.stride().repr() +
           ", padding=" + o.padding().repr() + ", dilation=" + o.dilation().repr() +
           ", ceil_mode=" + (o.ceil_mode() ? "True" : "False");
  }
  const MaxPoolOptions<D>& options() const { return opts_; }

 protected:
  MaxPoolNd(const char* name, MaxPoolOptions<D> o) : Module(name), opts_(std::move(o)) {}
  MaxPoolOptions<D> opts_;
};

class MaxPool1d : public MaxPoolNd<1> {
 public:
  explicit MaxPool1d(MaxPool1dOptions o) : MaxPoolNd("MaxPool1d", std::move(o)) {}
  explicit MaxPool1d(int64_t kernel_size) : MaxPool1d(MaxPool1dOptions(kernel_size)) {}
  std::shared_ptr<Module> clone() const override { return std::make_shared<MaxPool1d>(*this); }
};
class MaxPool3d : public MaxPoolNd<3> {
 public:
  explicit MaxPool3d(MaxPool3dOptions o) : MaxPoolNd("MaxPool3d", std::move(o)) {}
  explicit MaxPool3d(ExpandingArray<3> kernel_size) : MaxPool3d(MaxPool3dOptions(kernel_size)) {}
  explicit MaxPool3d(int64_t kernel_size) : MaxPool3d(MaxPool3dOptions(kernel_size)) {}
  std::shared_ptr<Module> clone() const override { return std::make_shared<MaxPool3d>(*this); }
};

template <size_t D>
class AvgPoolNd : public Module {
 public:
  Variable forward(const Variable& x) override {
    const auto& o = opts_;
    if constexpr (D == 1)
      return avg_pool1d(x, o.kernel_size()[0], o.stride()[0], o.padding()[0], o.ceil_mode(), o.count_include_pad());
    else
      return avg_pool3d(x, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(), o.count_include_pad());
  }
  // As PyTorch's, which prints neither ceil_mode nor count_include_pad.
  std::string extra_repr() const override {
    return "kernel_size=" + opts_.kernel_size().repr() + ", stride=" + opts_.stride().repr() +
           ", padding=" + opts_.padding().repr();
  }
  const AvgPoolOptions<D>& options() const { return opts_; }

 protected:
  AvgPoolNd(const char* name, AvgPoolOptions<D> o) : Module(name), opts_(std::move(o)) {}
  AvgPoolOptions<D> opts_;
};

class AvgPool1d : public AvgPoolNd<1> {
 public:
  explicit AvgPool1d(AvgPool1dOptions o) : AvgPoolNd("AvgPool1d", std::move(o)) {}
  explicit AvgPool1d(int64_t kernel_size) : AvgPool1d(AvgPool1dOptions(kernel_size)) {}
  std::shared_ptr<Module> clone() const override { return std::make_shared<AvgPool1d>(*this); }
};
class AvgPool3d : public AvgPoolNd<3> {
 public:
  explicit AvgPool3d(AvgPool3dOptions o) : AvgPoolNd("AvgPool3d", std::move(o)) {}
  explicit AvgPool3d(ExpandingArray<3> kernel_size) : AvgPool3d(AvgPool3dOptions(kernel_size)) {}
  explicit AvgPool3d(int64_t kernel_size) : AvgPool3d(AvgPool3dOptions(kernel_size)) {}
  std::shared_ptr<Module> clone() const override { return std::make_shared<AvgPool3d>(*this); }
};

template <size_t D, bool Max>
class AdaptivePoolNd : public Module {
 public:
  Variable forward(const Variable& x) override {
    const auto out = opts_.output_size();
    if constexpr (Max) return forward_with_indices(x).first;
    if constexpr (D == 1)
      return adaptive_avg_pool1d(x, out[0]);
    else
      return adaptive_avg_pool3d(x, out);
  }
  // Max pooling only: the values and the int64 positions of the maxima.
  std::pair<Variable, Tensor> forward_with_indices(const Variable& x) const requires Max {
    if constexpr (D == 1)
      return adaptive_max_pool1d_with_indices(x, opts_.output_size()[0]);
    else
      return adaptive_max_pool3d_with_indices(x, opts_.output_size());
  }
  std::string extra_repr() const override { return "output_size=" + opts_.output_size().repr(); }
  const AdaptivePoolOptions<D>& options() const { return opts_; }

 protected:
  AdaptivePoolNd(const char* name, AdaptivePoolOptions<D> o) : Module(name), opts_(std::move(o)) {}
  AdaptivePoolOptions<D> opts_;
};

#define DDL_ADAPTIVE_POOL(Name, D, Max)                                                      \
  class Name : public AdaptivePoolNd<D, Max> {                                               \
   public:                                                                                   \
    explicit Name(AdaptivePoolOptions<D> o) : AdaptivePoolNd(#Name, std::move(o)) {}         \
    explicit Name(int64_t output_size) : Name(AdaptivePoolOptions<D>(output_size)) {}        \
    std::shared_ptr<Module> clone() const override { return std::make_shared<Name>(*this); } \
  }
DDL_ADAPTIVE_POOL(AdaptiveAvgPool1d, 1, false);
DDL_ADAPTIVE_POOL(AdaptiveAvgPool3d, 3, false);
DDL_ADAPTIVE_POOL(AdaptiveMaxPool1d, 1, true);
DDL_ADAPTIVE_POOL(AdaptiveMaxPool3d, 3, true);
#undef DDL_ADAPTIVE_POOL

template <size_t D>
class LPPoolNd : public Module {
 public:
  Variable forward(const Variable& x) override {
    const auto& o = opts_;
    if constexpr (D == 1)
      return lp_pool1d(x, o.norm_type(), o.kernel_size()[0], o.stride()[0], o.ceil_mode());
    else
      return lp_pool2d(x, o.norm_type(), o.kernel_size(), o.stride(), o.ceil_mode());
  }
  std::string extra_repr() const override {
    return "norm_type=" + detail::pool_repr("", std::to_string(opts_.norm_type())) +
           ", kernel_size=" + opts_.kernel_size().repr() + ", stride=" + opts_.stride().repr() +
           ", ceil_mode=" + (opts_.ceil_mode() ? "True" : "False");
  }
  const LPPoolOptions<D>& options() const { return opts_; }

 protected:
  LPPoolNd(const char* name, LPPoolOptions<D> o) : Module(name), opts_(std::move(o)) {}
  LPPoolOptions<D> opts_;
};

class LPPool1d : public LPPoolNd<1> {
 public:
  explicit LPPool1d(LPPool1dOptions o) : LPPoolNd("LPPool1d", std::move(o)) {}
  LPPool1d(double norm_type, int64_t kernel_size) : LPPool1d(LPPool1dOptions(norm_type, kernel_size)) {}
  std::shared_ptr<Module> clone() const override { return std::make_shared<LPPool1d>(*this); }
};
class LPPool2d : public LPPoolNd<2> {
 public:
  explicit LPPool2d(LPPool2dOptions o) : LPPoolNd("LPPool2d", std::move(o)) {}
  LPPool2d(double norm_type, ExpandingArray<2> kernel_size) : LPPool2d(LPPool2dOptions(norm_type, kernel_size)) {}
  std::shared_ptr<Module> clone() const override { return std::make_shared<LPPool2d>(*this); }
};

// forward(x, indices[, output_size]) with the indices of MaxPool*d's forward_with_indices.
template <size_t D>
class MaxUnpoolNd : public Module {
 public:
  Variable forward(const Variable& x, const Tensor& indices,
                   std::optional<std::vector<int64_t>> output_size = std::nullopt) const {
    const auto& o = opts_;
    if constexpr (D == 1)
      return max_unpool1d(x, indices, o.kernel_size()[0], o.stride()[0], o.padding()[0], std::move(output_size));
    else if constexpr (D == 2)
      return max_unpool2d(x, indices, o.kernel_size(), o.stride(), o.padding(), std::move(output_size));
    else
      return max_unpool3d(x, indices, o.kernel_size(), o.stride(), o.padding(), std::move(output_size));
  }
  Variable operator()(const Variable& x, const Tensor& indices,
                      std::optional<std::vector<int64_t>> output_size = std::nullopt) const {
    return forward(x, indices, std::move(output_size));
  }
  std::string extra_repr() const override {
    return "kernel_size=" + opts_.kernel_size().tuple_repr() + ", stride=" + opts_.stride().tuple_repr() +
           ", padding=" + opts_.padding().tuple_repr();
  }
  const MaxUnpoolOptions<D>& options() const { return opts_; }

 protected:
  MaxUnpoolNd(const char* name, MaxUnpoolOptions<D> o) : Module(name), opts_(std::move(o)) {}
  MaxUnpoolOptions<D> opts_;

 private:
  using Module::forward;  // takes (input, indices); Sequential's one-input forward stays out of reach
};

#define DDL_MAX_UNPOOL(Name, D)                                                              \
  class Name : public MaxUnpoolNd<D> {                                                       \
   public:                                                                                   \
    explicit Name(MaxUnpoolOptions<D> o) : MaxUnpoolNd(#Name, std::move(o)) {}               \
    explicit Name(int64_t kernel_size) : Name(MaxUnpoolOptions<D>(kernel_size)) {}           \
    std::shared_ptr<Module> clone() const override { return std::make_shared<Name>(*this); } \
  }
DDL_MAX_UNPOOL(MaxUnpool1d, 1);
DDL_MAX_UNPOOL(MaxUnpool2d, 2);
DDL_MAX_UNPOOL(MaxUnpool3d, 3);
#undef DDL_MAX_UNPOOL

}  // namespace ddl::nn
