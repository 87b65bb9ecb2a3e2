// The standard layers. Constructors take PyTorch's arguments in PyTorch's
// order and initialise as PyTorch does by default (nn/init.h).
#pragma once

#include <array>
#include <concepts>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include <ddl/autograd/functions.h>
#include <ddl/nn/module.h>
#include <ddl/nn/module_holder.h>
#include <ddl/nn/pool_nd_layers.h>
#include <ddl/nn/size2.h>
#include <ddl/tensor/core/options_arg.h>

namespace ddl::nn {

// LibTorch's options: Linear(LinearOptions(4, 2).bias(false)).
struct LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features) : in_features_(in_features), out_features_(out_features) {}
  DDL_ARG(int64_t, in_features);
  DDL_ARG(int64_t, out_features);
  DDL_ARG(bool, bias) = true;
};

class Linear : public Cloneable<Linear> {
 public:
  explicit Linear(const LinearOptions& opts) : Linear(opts.in_features(), opts.out_features(), opts.bias()) {}
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  void reset() override;
  Variable forward(const Variable& x) override;
  std::string extra_repr() const override;
  Variable weight, bias;  // weight: [out, in]; bias: [out] or undefined

 private:
  int64_t in_, out_;
  bool has_bias_;
};

// LibTorch's options; each size is one number or an {h, w} pair:
// Conv2d(Conv2dOptions(3, 8, {3, 5}).stride({1, 2}).padding({1, 2})).
struct Conv2dOptions {
  Conv2dOptions(int64_t in_channels, int64_t out_channels, Size2 kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  DDL_ARG(int64_t, in_channels);
  DDL_ARG(int64_t, out_channels);
  DDL_ARG(Size2, kernel_size);
  DDL_ARG(Size2, stride) = 1;
  DDL_ARG(Size2, padding) = 0;
  DDL_ARG(Size2, dilation) = 1;
  DDL_ARG(int64_t, groups) = 1;
  DDL_ARG(bool, bias) = true;
};

class Conv2d : public Module {
 public:
  explicit Conv2d(const Conv2dOptions& opts);
  Conv2d(int64_t in_channels, int64_t out_channels, Size2 kernel_size)
      : Conv2d(Conv2dOptions(in_channels, out_channels, kernel_size)) {}
  Variable forward(const Variable& x) override;
  std::shared_ptr<Module> clone() const override;  // the same configuration, this one's values
  std::string extra_repr() const override;
  Variable weight, bias;  // weight: [out, in / groups, kh, kw]

 private:
  Conv2dOptions opts_;
};

// BatchNorm over [N, C] (1d) or [N, C, H, W] (2d). momentum as in PyTorch:
// running = (1 - momentum) * running + momentum * batch statistic.
// LibTorch's BatchNormOptions: BatchNorm2d(BatchNorm2dOptions(64).momentum(0.01)).
// momentum is optional there (None: a cumulative average), which ddl refuses.
struct BatchNormOptions {
  BatchNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT: LibTorch's form
  DDL_ARG(int64_t, num_features);
  DDL_ARG(double, eps) = 1e-5;
  DDL_ARG(std::optional<double>, momentum) = 0.1;
  DDL_ARG(bool, affine) = true;
  DDL_ARG(bool, track_running_stats) = true;
};
using BatchNorm1dOptions = BatchNormOptions;
using BatchNorm2dOptions = BatchNormOptions;
using BatchNorm3dOptions = BatchNormOptions;

class BatchNorm : public Module {
 public:
  BatchNorm(const char* type_name, int64_t expected_dims, const BatchNormOptions& o);
  BatchNorm(const char* type_name, int64_t expected_dims, int64_t num_features, double eps, double momentum,
            bool affine, bool track_running_stats);
  Variable forward(const Variable& x) override;
  // relu(forward(x)) in one fused op where it can (detail::batch_norm_relu, autograd/ops/norm_relu.h):
  // what Sequential runs for a BatchNorm followed by a ReLU. Same values, gradients and state.
  Variable forward_relu(const Variable& x);
  std::string extra_repr() const override;
  // A BatchNorm1d/2d of the same configuration holding copies of this one's state.
  std::shared_ptr<Module> clone() const override;
  Variable weight, bias;               // [C] when affine
  Variable running_mean, running_var;  // [C] when tracking
  Variable num_batches_tracked;        // int64 scalar

  // What forward calls in training instead of batch_norm, with this layer's parameters and
  // running statistics (undefined when not tracked): dist::convert_sync_batchnorm installs
  // one whose batch statistics span a process group (nn does not know dist). It is set in
  // place, so a model holding the layer in a typed member sees it too. Null: batch_norm.
  using TrainingForward =
      std::function<Variable(const Variable& x, const Variable& weight, const Variable& bias,
                             const Tensor& running_mean, const Tensor& running_var, double momentum, double eps)>;
  void set_training_forward(TrainingForward fn) { training_forward_ = std::move(fn); }
  bool has_training_forward() const { return static_cast<bool>(training_forward_); }

 private:
  Variable forward_impl(const Variable& x, bool relu);
  int64_t expected_dims_, num_features_;
  double eps_, momentum_;
  bool affine_, track_;
  TrainingForward training_forward_;
};

class BatchNorm1d : public BatchNorm {
 public:
  explicit BatchNorm1d(const BatchNorm1dOptions& o) : BatchNorm("BatchNorm1d", 2, o) {}
  explicit BatchNorm1d(int64_t num_features, double eps = 1e-5, double momentum = 0.1, bool affine = true,
                       bool track_running_stats = true)
      : BatchNorm("BatchNorm1d", 2, num_features, eps, momentum, affine, track_running_stats) {}
};

class BatchNorm2d : public BatchNorm {
 public:
  explicit BatchNorm2d(const BatchNorm2dOptions& o) : BatchNorm("BatchNorm2d", 4, o) {}
  explicit BatchNorm2d(int64_t num_features, double eps = 1e-5, double momentum = 0.1, bool affine = true,
                       bool track_running_stats = true)
      : BatchNorm("BatchNorm2d", 4, num_features, eps, momentum, affine, track_running_stats) {}
};

class ReLU : public Cloneable<ReLU> {
 public:
  ReLU() : Cloneable("ReLU") {}
  void reset() override {}
  Variable forward(const Variable& x) override { return relu(x); }
};

namespace detail {
// {k} or {h, w} as a Size2; LibTorch's ExpandingArray<2> accepts the same two lengths.
inline Size2 size2_from_list(std::initializer_list<int64_t> v, const char* layer) {
  DDL_CHECK(v.size() == 1 || v.size() == 2, layer, ": kernel_size must be {k} or {h, w}, got ", v.size(), " numbers");
  return v.size() == 1 ? Size2(*v.begin()) : Size2(*v.begin(), *(v.begin() + 1));
}
// An option's ExpandingArray<2> as a Size2 that prints as it was given ("2" or "(2, 3)").
inline Size2 size2_of(const ExpandingArray<2>& a) { return a.repr()[0] == '(' ? Size2(a[0], a[1]) : Size2(a[0]); }
}  // namespace detail

// LibTorch's names for the 2-D pools' options (nn/pool_nd_layers.h has the templates).
using MaxPool2dOptions = MaxPoolOptions<2>;
using AvgPool2dOptions = AvgPoolOptions<2>;
using AdaptiveAvgPool2dOptions = AdaptivePoolOptions<2>;
using AdaptiveMaxPool2dOptions = AdaptivePoolOptions<2>;

// stride 0 (per dim) means the kernel size, as PyTorch's stride=None. A braced pair
// alone is the kernel, as in LibTorch: MaxPool2d({2, 4}) is a 2x4 window (without the
// initializer_list overload it would be ambiguous with MaxPool2d(kernel 2, stride 4)).
class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(Size2 kernel_size, Size2 stride = 0, Size2 padding = 0, Size2 dilation = 1,
                     bool ceil_mode = false);
  explicit MaxPool2d(std::initializer_list<int64_t> kernel_size)
      : MaxPool2d(detail::size2_from_list(kernel_size, "MaxPool2d")) {}
  explicit MaxPool2d(const MaxPool2dOptions& o)
      : MaxPool2d(detail::size2_of(o.kernel_size()), detail::size2_of(o.stride()), detail::size2_of(o.padding()),
                  detail::size2_of(o.dilation()), o.ceil_mode()) {}
  Variable forward(const Variable& x) override { return max_pool2d(x, params_); }
  // The values and the int64 positions of the maxima, as MaxUnpool2d takes them.
  std::pair<Variable, Tensor> forward_with_indices(const Variable& x) const {
    return max_pool2d_with_indices(x, params_);
  }
  std::string extra_repr() const override;
  // Pools hold no parameters or buffers: a copy is a deep copy.
  std::shared_ptr<Module> clone() const override { return std::make_shared<MaxPool2d>(*this); }

 private:
  Pool2dParams params_;
  Size2 kernel_, stride_, padding_, dilation_;
};

class AvgPool2d : public Module {
 public:
  explicit AvgPool2d(Size2 kernel_size, Size2 stride = 0, Size2 padding = 0, bool ceil_mode = false,
                     bool count_include_pad = true);
  explicit AvgPool2d(std::initializer_list<int64_t> kernel_size)
      : AvgPool2d(detail::size2_from_list(kernel_size, "AvgPool2d")) {}
  explicit AvgPool2d(const AvgPool2dOptions& o)
      : AvgPool2d(detail::size2_of(o.kernel_size()), detail::size2_of(o.stride()), detail::size2_of(o.padding()),
                  o.ceil_mode(), o.count_include_pad()) {}
  Variable forward(const Variable& x) override { return avg_pool2d(x, params_); }
  std::string extra_repr() const override;
  std::shared_ptr<Module> clone() const override { return std::make_shared<AvgPool2d>(*this); }

 private:
  Pool2dParams params_;
  Size2 kernel_, stride_, padding_;
};

// Any input size to output_size (windows as tensor/ops/adaptive_pool.h). 1x1 and
// dividing sizes run as mean / avg_pool2d, which every device has.
class AdaptiveAvgPool2d : public Module {
 public:
  explicit AdaptiveAvgPool2d(Size2 output_size) : Module("AdaptiveAvgPool2d"), out_(output_size) {}
  explicit AdaptiveAvgPool2d(const AdaptiveAvgPool2dOptions& o)
      : AdaptiveAvgPool2d(detail::size2_of(o.output_size())) {}
  Variable forward(const Variable& x) override;
  std::string extra_repr() const override;
  std::shared_ptr<Module> clone() const override { return std::make_shared<AdaptiveAvgPool2d>(*this); }

 private:
  Size2 out_;
};

// LibTorch's DropoutOptions(0.2); ddl has no in-place form, so no inplace field.
struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}  // NOLINT: LibTorch's form
  DDL_ARG(double, p);
};
using Dropout2dOptions = DropoutOptions;
using Dropout3dOptions = DropoutOptions;
using AlphaDropoutOptions = DropoutOptions;
using FeatureAlphaDropoutOptions = DropoutOptions;

class Dropout : public Cloneable<Dropout> {
 public:
  explicit Dropout(const DropoutOptions& o) : Dropout(o.p()) {}
  explicit Dropout(double p = 0.5, Generator* gen = nullptr);
  void reset() override {}
  Variable forward(const Variable& x) override;
  std::string extra_repr() const override;

 private:
  double p_;
  Generator* gen_;
};

struct FlattenOptions {
  DDL_ARG(int64_t, start_dim) = 1;
  DDL_ARG(int64_t, end_dim) = -1;
};

class Flatten : public Cloneable<Flatten> {
 public:
  explicit Flatten(const FlattenOptions& o) : Flatten(o.start_dim(), o.end_dim()) {}
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1)
      : Cloneable("Flatten"), start_(start_dim), end_(end_dim) {}
  void reset() override {}
  Variable forward(const Variable& x) override { return x.flatten(start_, end_); }
  std::string extra_repr() const override;

 private:
  int64_t start_, end_;
};

namespace detail {
// A Sequential argument: a module given by value (moved into a new shared_ptr) or a
// std::shared_ptr to one (shared, as LibTorch's holders are).
template <typename T>
struct IsModulePtr : std::false_type {};
template <typename M>
struct IsModulePtr<std::shared_ptr<M>> : std::bool_constant<std::derived_from<M, Module>> {};
template <typename T>
concept SequentialArg = IsModulePtr<std::remove_cvref_t<T>>::value ||
    std::derived_from<std::remove_cvref_t<T>, Module> || ModuleHolderType<std::remove_cvref_t<T>>;

template <typename T>
std::shared_ptr<Module> to_module_ptr(T&& m) {
  using M = std::remove_cvref_t<T>;
  if constexpr (IsModulePtr<M>::value) {
    return std::forward<T>(m);
  } else if constexpr (ModuleHolderType<M>) {
    return m.ptr();  // shared, as a LibTorch holder is
  } else {
    static_assert(!std::is_lvalue_reference_v<T>,
                  "Sequential: pass a module as a temporary (nn::Linear(4, 8)), std::move it, or pass a "
                  "std::shared_ptr to share it (see Note [Copying modules] in nn/module.h)");
    // A module class that declares a destructor or copy constructor has no implicit move:
    // std::move would pick the copy, which throws at run time (Note [Copying modules]).
    static_assert(std::is_nothrow_move_constructible_v<M>,
                  "Sequential: this module class cannot be moved (it declares a destructor or a copy "
                  "constructor, so it has no implicit move constructor); pass a std::shared_ptr to it");
    return std::make_shared<M>(std::move(m));
  }
}
}  // namespace detail

// Runs its children in order; children are named "0", "1", ... by position.
class Sequential : public Module {
 public:
  Sequential() : Module("Sequential") {}
  explicit Sequential(std::vector<std::shared_ptr<Module>> modules);
  // Sequential({a, b}) with shared_ptrs; without it the braced list would be ambiguous
  // with copying a Sequential built by the variadic form below.
  Sequential(std::initializer_list<std::shared_ptr<Module>> modules)
      : Sequential(std::vector<std::shared_ptr<Module>>(modules)) {}
  // LibTorch's variadic form: Sequential(nn::Linear(4, 8), nn::ReLU(), fc2) with modules
  // by value (moved in) or as std::shared_ptr (shared).
  template <detail::SequentialArg... Ms>
  requires(sizeof...(Ms) > 0) explicit Sequential(Ms&&... modules) : Module("Sequential") {
    (push_back(detail::to_module_ptr(std::forward<Ms>(modules))), ...);
  }
  void push_back(std::shared_ptr<Module> m);
  template <detail::ModuleHolderType H>
  void push_back(const H& holder) {
    push_back(holder.ptr());
  }
  Variable forward(const Variable& x) override;
  size_t size() const { return named_children().size(); }
  std::shared_ptr<Module> operator[](size_t i) const;
  // Clones each child (each must be clonable).
  std::shared_ptr<Module> clone() const override;
};

// Losses as modules.
// LibTorch's options: CrossEntropyLoss(CrossEntropyLossOptions().label_smoothing(0.1)).
struct CrossEntropyLossOptions {
  DDL_ARG(Tensor, weight) = {};  // undefined, or [C]
  DDL_ARG(int64_t, ignore_index) = -100;
  DDL_ARG(Reduction, reduction) = Reduction::Mean;
  DDL_ARG(double, label_smoothing) = 0.0;
};

class CrossEntropyLoss : public Module {
 public:
  explicit CrossEntropyLoss(const CrossEntropyLossOptions& o)
      : CrossEntropyLoss(o.weight(), CrossEntropyOptions{o.reduction(), o.ignore_index(), o.label_smoothing()}) {}
  explicit CrossEntropyLoss(CrossEntropyOptions opts = {}) : Module("CrossEntropyLoss"), opts_(opts) {}
  // Class weights [C], kept as the buffer "weight" (so .to(device) moves them).
  explicit CrossEntropyLoss(Tensor weight, CrossEntropyOptions opts = {});
  Variable forward(const Variable& logits, const Tensor& target) const;
  Variable operator()(const Variable& logits, const Tensor& target) const { return forward(logits, target); }
  std::shared_ptr<Module> clone() const override;  // the same options, a copy of the weight

 private:
  using Module::forward;  // a loss takes (input, target); Sequential's one-input forward stays out of reach
  CrossEntropyOptions opts_;
  Variable weight_;
};

class MSELoss : public Cloneable<MSELoss> {
 public:
  explicit MSELoss(Reduction reduction = Reduction::Mean) : Cloneable("MSELoss"), reduction_(reduction) {}
  void reset() override {}
  Variable operator()(const Variable& a, const Variable& b) const { return mse_loss(a, b, reduction_); }

 private:
  Reduction reduction_;
};

}  // namespace ddl::nn
