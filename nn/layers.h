// The standard layers. Constructors take PyTorch's arguments in PyTorch's
// order and initialise as PyTorch does by default (nn/init.h).
#pragma once

#include <array>
#include <concepts>
#include <initializer_list>
#include <memory>
#include <type_traits>

#include <ddl/autograd/functions.h>
#include <ddl/nn/module.h>
#include <ddl/nn/size2.h>

namespace ddl::nn {

class Linear : public Cloneable<Linear> {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  void reset() override;
  Variable forward(const Variable& x) override;
  std::string extra_repr() const override;
  Variable weight, bias;  // weight: [out, in]; bias: [out] or undefined

 private:
  int64_t in_, out_;
  bool has_bias_;
};

// Each size is one number or an {h, w} pair: Conv2d(3, 8, {3, 5}, {.stride = {1, 2}, .padding = {1, 2}}).
struct Conv2dOptions {
  Size2 stride = 1, padding = 0, dilation = 1;
  int64_t groups = 1;
  bool bias = true;
};

class Conv2d : public Module {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, Size2 kernel_size, Conv2dOptions opts = {});
  Variable forward(const Variable& x) override;
  std::shared_ptr<Module> clone() const override;  // the same configuration, this one's values
  std::string extra_repr() const override;
  Variable weight, bias;  // weight: [out, in / groups, kh, kw]

 private:
  int64_t in_, out_;
  Size2 k_;
  Conv2dOptions opts_;
};

// BatchNorm over [N, C] (1d) or [N, C, H, W] (2d). momentum as in PyTorch:
// running = (1 - momentum) * running + momentum * batch statistic.
class BatchNorm : public Module {
 public:
  BatchNorm(const char* type_name, int64_t expected_dims, int64_t num_features, double eps, double momentum,
            bool affine, bool track_running_stats);
  Variable forward(const Variable& x) override;
  std::string extra_repr() const override;
  // A BatchNorm1d/2d of the same configuration holding copies of this one's state.
  std::shared_ptr<Module> clone() const override;
  Variable weight, bias;               // [C] when affine
  Variable running_mean, running_var;  // [C] when tracking
  Variable num_batches_tracked;        // int64 scalar

 private:
  int64_t expected_dims_, num_features_;
  double eps_, momentum_;
  bool affine_, track_;
};

class BatchNorm1d : public BatchNorm {
 public:
  explicit BatchNorm1d(int64_t num_features, double eps = 1e-5, double momentum = 0.1, bool affine = true,
                       bool track_running_stats = true)
      : BatchNorm("BatchNorm1d", 2, num_features, eps, momentum, affine, track_running_stats) {}
};

class BatchNorm2d : public BatchNorm {
 public:
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
}  // namespace detail

// stride 0 (per dim) means the kernel size, as PyTorch's stride=None. A braced pair
// alone is the kernel, as in LibTorch: MaxPool2d({2, 4}) is a 2x4 window (without the
// initializer_list overload it would be ambiguous with MaxPool2d(kernel 2, stride 4)).
class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(Size2 kernel_size, Size2 stride = 0, Size2 padding = 0, Size2 dilation = 1,
                     bool ceil_mode = false);
  explicit MaxPool2d(std::initializer_list<int64_t> kernel_size)
      : MaxPool2d(detail::size2_from_list(kernel_size, "MaxPool2d")) {}
  Variable forward(const Variable& x) override { return max_pool2d(x, params_); }
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
  Variable forward(const Variable& x) override { return avg_pool2d(x, params_); }
  std::string extra_repr() const override;
  std::shared_ptr<Module> clone() const override { return std::make_shared<AvgPool2d>(*this); }

 private:
  Pool2dParams params_;
  Size2 kernel_, stride_, padding_;
};

// Any input size to output_size (windows as tensor/adaptive_pool.h). 1x1 and
// dividing sizes run as mean / avg_pool2d, which every device has.
class AdaptiveAvgPool2d : public Module {
 public:
  explicit AdaptiveAvgPool2d(Size2 output_size) : Module("AdaptiveAvgPool2d"), out_(output_size) {}
  Variable forward(const Variable& x) override;
  std::string extra_repr() const override;
  std::shared_ptr<Module> clone() const override { return std::make_shared<AdaptiveAvgPool2d>(*this); }

 private:
  Size2 out_;
};

class Dropout : public Cloneable<Dropout> {
 public:
  explicit Dropout(double p = 0.5, Generator* gen = nullptr);
  void reset() override {}
  Variable forward(const Variable& x) override;
  std::string extra_repr() const override;

 private:
  double p_;
  Generator* gen_;
};

class Flatten : public Cloneable<Flatten> {
 public:
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
concept SequentialArg = IsModulePtr<std::remove_cvref_t<T>>::value || std::derived_from<std::remove_cvref_t<T>, Module>;

template <typename T>
std::shared_ptr<Module> to_module_ptr(T&& m) {
  using M = std::remove_cvref_t<T>;
  if constexpr (IsModulePtr<M>::value) {
    return std::forward<T>(m);
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
  Variable forward(const Variable& x) override;
  size_t size() const { return named_children().size(); }
  std::shared_ptr<Module> operator[](size_t i) const;
  // Clones each child (each must be clonable).
  std::shared_ptr<Module> clone() const override;
};

// Losses as modules.
class CrossEntropyLoss : public Module {
 public:
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
