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

class ELU : public Cloneable<ELU> {
 public:
  explicit ELU(double alpha = 1.0) : Cloneable("ELU"), alpha_(alpha) {}
  void reset() override {}
  Variable forward(const Variable& x) override { return elu(x, alpha_); }
  std::string extra_repr() const override;

 private:
  double alpha_;
};

class CELU : public Cloneable<CELU> {
 public:
  explicit CELU(double alpha = 1.0);
  void reset() override {}
  Variable forward(const Variable& x) override { return celu(x, alpha_); }
  std::string extra_repr() const override;

 private:
  double alpha_;
};

class GLU : public Cloneable<GLU> {
 public:
  explicit GLU(int64_t dim = -1) : Cloneable("GLU"), dim_(dim) {}
  void reset() override {}
  Variable forward(const Variable& x) override { return glu(x, dim_); }
  std::string extra_repr() const override { return "dim=" + std::to_string(dim_); }

 private:
  int64_t dim_;
};

class Hardtanh : public Cloneable<Hardtanh> {
 public:
  explicit Hardtanh(double min_val = -1.0, double max_val = 1.0);
  void reset() override {}
  Variable forward(const Variable& x) override { return hardtanh(x, min_, max_); }
  std::string extra_repr() const override;

 private:
  double min_, max_;
};

class Hardshrink : public Cloneable<Hardshrink> {
 public:
  explicit Hardshrink(double lambd = 0.5) : Cloneable("Hardshrink"), lambd_(lambd) {}
  void reset() override {}
  Variable forward(const Variable& x) override { return hardshrink(x, lambd_); }
  std::string extra_repr() const override;

 private:
  double lambd_;
};

class Softshrink : public Cloneable<Softshrink> {
 public:
  explicit Softshrink(double lambd = 0.5);
  void reset() override {}
  Variable forward(const Variable& x) override { return softshrink(x, lambd_); }
  std::string extra_repr() const override;

 private:
  double lambd_;
};

class Threshold : public Cloneable<Threshold> {
 public:
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
  explicit PixelShuffle(int64_t upscale_factor) : Cloneable("PixelShuffle"), r_(upscale_factor) {}
  void reset() override {}
  Variable forward(const Variable& x) override { return pixel_shuffle(x, r_); }
  std::string extra_repr() const override { return "upscale_factor=" + std::to_string(r_); }

 private:
  int64_t r_;
};

class PixelUnshuffle : public Cloneable<PixelUnshuffle> {
 public:
  explicit PixelUnshuffle(int64_t downscale_factor) : Cloneable("PixelUnshuffle"), r_(downscale_factor) {}
  void reset() override {}
  Variable forward(const Variable& x) override { return pixel_unshuffle(x, r_); }
  std::string extra_repr() const override { return "downscale_factor=" + std::to_string(r_); }

 private:
  int64_t r_;
};

}  // namespace ddl::nn
