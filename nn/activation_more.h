// More activation modules (torch.nn.ELU, SELU, CELU, GLU, Hardtanh, ReLU6, Hardshrink,
// Softshrink, Tanhshrink, Threshold, PReLU, RReLU, LogSigmoid, Softmin, Softsign, Mish,
// Hardswish, Hardsigmoid) and the reshaping modules Unflatten, PixelShuffle and
// PixelUnshuffle (Upsample is in pool_layers.h). Each wraps a function of
// autograd/ops/activation_more.h; only PReLU has a parameter ("weight", as PyTorch's state_dict).
#pragma once

#include <string>
#include <vector>

#include <ddl/autograd/functions.h>
#include <ddl/nn/module.h>
#include <ddl/tensor/core/options_arg.h>

namespace ddl::nn {

// A module with no state whose forward is `fn(x)`.
#define DDL_NN_STATELESS(Name, fn)                                 \
  class Name : public Cloneable<Name> {                            \
   public:                                                         \
    Name() : Cloneable(#Name) {}                                   \
    void reset() override {}                                       \
    Variable forward(const Variable& x) override { return fn(x); } \
  }

DDL_NN_STATELESS(SELU, selu);
DDL_NN_STATELESS(ReLU6, relu6);
DDL_NN_STATELESS(Tanhshrink, tanhshrink);
DDL_NN_STATELESS(LogSigmoid, logsigmoid);
DDL_NN_STATELESS(Softsign, softsign);
DDL_NN_STATELESS(Mish, mish);
DDL_NN_STATELESS(Hardswish, hardswish);
DDL_NN_STATELESS(Hardsigmoid, hardsigmoid);
#undef DDL_NN_STATELESS

// LibTorch's options for these layers (torch/nn/options/activation.h); ddl has no
// in-place forms, so there is no inplace field.
struct ELUOptions {
  DDL_ARG(double, alpha) = 1.0;
};
using CELUOptions = ELUOptions;
struct GLUOptions {
  GLUOptions(int64_t dim = -1) : dim_(dim) {}  // NOLINT: LibTorch's form
  DDL_ARG(int64_t, dim);
};
struct HardtanhOptions {
  DDL_ARG(double, min_val) = -1.0;
  DDL_ARG(double, max_val) = 1.0;
};
struct HardshrinkOptions {
  HardshrinkOptions(double lambda = 0.5) : lambda_(lambda) {}  // NOLINT: LibTorch's form
  DDL_ARG(double, lambda);
};
using SoftshrinkOptions = HardshrinkOptions;
struct ThresholdOptions {
  ThresholdOptions(double threshold, double value) : threshold_(threshold), value_(value) {}
  DDL_ARG(double, threshold);
  DDL_ARG(double, value);
};
struct PReLUOptions {
  DDL_ARG(int64_t, num_parameters) = 1;
  DDL_ARG(double, init) = 0.25;
};
struct RReLUOptions {
  DDL_ARG(double, lower) = 1.0 / 8.0;
  DDL_ARG(double, upper) = 1.0 / 3.0;
};
struct SoftminOptions {
  SoftminOptions(int64_t dim) : dim_(dim) {}  // NOLINT: LibTorch's form
  DDL_ARG(int64_t, dim);
};
struct UnflattenOptions {  // the int dim form; ddl has no named dims
  UnflattenOptions(int64_t dim, std::vector<int64_t> sizes) : dim_(dim), sizes_(std::move(sizes)) {}
  DDL_ARG(int64_t, dim);
  DDL_ARG(std::vector<int64_t>, sizes);
};
struct PixelShuffleOptions {
  PixelShuffleOptions(int64_t upscale_factor) : upscale_factor_(upscale_factor) {}  // NOLINT: LibTorch's form
  DDL_ARG(int64_t, upscale_factor);
};
struct PixelUnshuffleOptions {
  PixelUnshuffleOptions(int64_t downscale_factor) : downscale_factor_(downscale_factor) {}  // NOLINT: LibTorch's form
  DDL_ARG(int64_t, downscale_factor);
};

class ELU : public Cloneable<ELU> {
 public:
  explicit ELU(const ELUOptions& o) : ELU(o.alpha()) {}
  explicit ELU(double alpha = 1.0) : Cloneable("ELU"), alpha_(alpha) {}
  void reset() override {}
  Variable forward(const Variable& x) override { return elu(x, alpha_); }
  std::string extra_repr() const override;

 private:
  double alpha_;
};

class CELU : public Cloneable<CELU> {
 public:
  explicit CELU(const CELUOptions& o) : CELU(o.alpha()) {}
  explicit CELU(double alpha = 1.0);
  void reset() override {}
  Variable forward(const Variable& x) override { return celu(x, alpha_); }
  std::string extra_repr() const override;

 private:
  double alpha_;
};

class GLU : public Cloneable<GLU> {
 public:
  explicit GLU(const GLUOptions& o) : GLU(o.dim()) {}
  explicit GLU(int64_t dim = -1) : Cloneable("GLU"), dim_(dim) {}
  void reset() override {}
  Variable forward(const Variable& x) override { return glu(x, dim_); }
  std::string extra_repr() const override { return "dim=" + std::to_string(dim_); }

 private:
  int64_t dim_;
};

class Hardtanh : public Cloneable<Hardtanh> {
 public:
  explicit Hardtanh(const HardtanhOptions& o) : Hardtanh(o.min_val(), o.max_val()) {}
  explicit Hardtanh(double min_val = -1.0, double max_val = 1.0);
  void reset() override {}
  Variable forward(const Variable& x) override { return hardtanh(x, min_, max_); }
  std::string extra_repr() const override;

 private:
  double min_, max_;
};

class Hardshrink : public Cloneable<Hardshrink> {
 public:
  explicit Hardshrink(const HardshrinkOptions& o) : Hardshrink(o.lambda()) {}
  explicit Hardshrink(double lambd = 0.5) : Cloneable("Hardshrink"), lambd_(lambd) {}
  void reset() override {}
  Variable forward(const Variable& x) override { return hardshrink(x, lambd_); }
  std::string extra_repr() const override;

 private:
  double lambd_;
};

class Softshrink : public Cloneable<Softshrink> {
 public:
  explicit Softshrink(const SoftshrinkOptions& o) : Softshrink(o.lambda()) {}
  explicit Softshrink(double lambd = 0.5);
  void reset() override {}
  Variable forward(const Variable& x) override { return softshrink(x, lambd_); }
  std::string extra_repr() const override;

 private:
  double lambd_;
};

class Threshold : public Cloneable<Threshold> {
 public:
  explicit Threshold(const ThresholdOptions& o) : Threshold(o.threshold(), o.value()) {}
  Threshold(double threshold, double value) : Cloneable("Threshold"), threshold_(threshold), value_(value) {}
  void reset() override {}
  Variable forward(const Variable& x) override { return threshold(x, threshold_, value_); }
  std::string extra_repr() const override;

 private:
  double threshold_, value_;
};

// weight: [num_parameters], each init (1 or the input's channels, dim 1).
class PReLU : public Cloneable<PReLU> {
 public:
  explicit PReLU(const PReLUOptions& o) : PReLU(o.num_parameters(), o.init()) {}
  explicit PReLU(int64_t num_parameters = 1, double init = 0.25);
  void reset() override;
  Variable forward(const Variable& x) override { return prelu(x, weight); }
  std::string extra_repr() const override { return "num_parameters=" + std::to_string(num_); }
  Variable weight;

 private:
  int64_t num_;
  double init_;
};

// Random slopes in training (from `gen`, or the default generator), their mean in eval.
class RReLU : public Cloneable<RReLU> {
 public:
  explicit RReLU(const RReLUOptions& o) : RReLU(o.lower(), o.upper()) {}
  explicit RReLU(double lower = 1.0 / 8, double upper = 1.0 / 3, Generator* gen = nullptr);
  void reset() override {}
  Variable forward(const Variable& x) override { return rrelu(x, lower_, upper_, is_training(), gen_); }
  std::string extra_repr() const override;

 private:
  double lower_, upper_;
  Generator* gen_;
};

class Softmin : public Cloneable<Softmin> {
 public:
  explicit Softmin(const SoftminOptions& o) : Softmin(o.dim()) {}
  explicit Softmin(int64_t dim) : Cloneable("Softmin"), dim_(dim) {}
  void reset() override {}
  Variable forward(const Variable& x) override { return softmin(x, dim_); }
  std::string extra_repr() const override { return "dim=" + std::to_string(dim_); }

 private:
  int64_t dim_;
};

// Splits dim into sizes (their product must be the dim's size; one may be -1).
class Unflatten : public Cloneable<Unflatten> {
 public:
  explicit Unflatten(const UnflattenOptions& o) : Unflatten(o.dim(), o.sizes()) {}
  Unflatten(int64_t dim, std::vector<int64_t> sizes);
  void reset() override {}
  Variable forward(const Variable& x) override;
  std::string extra_repr() const override;

 private:
  int64_t dim_;
  std::vector<int64_t> sizes_;
};

class PixelShuffle : public Cloneable<PixelShuffle> {
 public:
  explicit PixelShuffle(const PixelShuffleOptions& o) : PixelShuffle(o.upscale_factor()) {}
  explicit PixelShuffle(int64_t upscale_factor) : Cloneable("PixelShuffle"), r_(upscale_factor) {}
  void reset() override {}
  Variable forward(const Variable& x) override { return pixel_shuffle(x, r_); }
  std::string extra_repr() const override { return "upscale_factor=" + std::to_string(r_); }

 private:
  int64_t r_;
};

class PixelUnshuffle : public Cloneable<PixelUnshuffle> {
 public:
  explicit PixelUnshuffle(const PixelUnshuffleOptions& o) : PixelUnshuffle(o.downscale_factor()) {}
  explicit PixelUnshuffle(int64_t downscale_factor) : Cloneable("PixelUnshuffle"), r_(downscale_factor) {}
  void reset() override {}
  Variable forward(const Variable& x) override { return pixel_unshuffle(x, r_); }
  std::string extra_repr() const override { return "downscale_factor=" + std::to_string(r_); }

 private:
  int64_t r_;
};

}  // namespace ddl::nn
