// Activation modules (torch.nn.Sigmoid, Tanh, GELU, SiLU, LeakyReLU, Softmax,
// LogSoftmax) and Identity. ReLU is in layers.h. Each is a thin wrapper over a
// function of autograd/functions.h, with no parameters.
#pragma once

#include <string>

#include <ddl/autograd/functions.h>
#include <ddl/nn/module.h>
#include <ddl/tensor/core/options_arg.h>

namespace ddl::nn {

class Identity : public Cloneable<Identity> {
 public:
  Identity() : Cloneable("Identity") {}
  void reset() override {}
  Variable forward(const Variable& x) override { return x; }
};

class Sigmoid : public Cloneable<Sigmoid> {
 public:
  Sigmoid() : Cloneable("Sigmoid") {}
  void reset() override {}
  Variable forward(const Variable& x) override { return sigmoid(x); }
};

class Tanh : public Cloneable<Tanh> {
 public:
  Tanh() : Cloneable("Tanh") {}
  void reset() override {}
  Variable forward(const Variable& x) override { return tanh(x); }
};

// approximate: "none" (exact, with erf) or "tanh".
class GELU : public Cloneable<GELU> {
 public:
  explicit GELU(std::string approximate = "none");
  void reset() override {}
  Variable forward(const Variable& x) override { return gelu(x, approximate_); }
  std::string extra_repr() const override { return "approximate='" + approximate_ + "'"; }

 private:
  std::string approximate_;
};

class SiLU : public Cloneable<SiLU> {
 public:
  SiLU() : Cloneable("SiLU") {}
  void reset() override {}
  Variable forward(const Variable& x) override { return silu(x); }
};

// LibTorch's activation options; ddl has no in-place forms, so there is no inplace field.
struct LeakyReLUOptions {
  DDL_ARG(double, negative_slope) = 1e-2;
};
struct SoftmaxOptions {
  SoftmaxOptions(int64_t dim) : dim_(dim) {}  // NOLINT: LibTorch's form
  DDL_ARG(int64_t, dim);
};
using LogSoftmaxOptions = SoftmaxOptions;

class LeakyReLU : public Cloneable<LeakyReLU> {
 public:
  explicit LeakyReLU(const LeakyReLUOptions& o) : LeakyReLU(o.negative_slope()) {}
  explicit LeakyReLU(double negative_slope = 0.01) : Cloneable("LeakyReLU"), slope_(negative_slope) {}
  void reset() override {}
  Variable forward(const Variable& x) override { return leaky_relu(x, slope_); }
  std::string extra_repr() const override;

 private:
  double slope_;
};

class Softmax : public Cloneable<Softmax> {
 public:
  explicit Softmax(int64_t dim) : Cloneable("Softmax"), dim_(dim) {}
  explicit Softmax(const SoftmaxOptions& o) : Softmax(o.dim()) {}
  void reset() override {}
  Variable forward(const Variable& x) override { return softmax(x, dim_); }
  std::string extra_repr() const override { return "dim=" + std::to_string(dim_); }

 private:
  int64_t dim_;
};

class LogSoftmax : public Cloneable<LogSoftmax> {
 public:
  explicit LogSoftmax(int64_t dim) : Cloneable("LogSoftmax"), dim_(dim) {}
  explicit LogSoftmax(const LogSoftmaxOptions& o) : LogSoftmax(o.dim()) {}
  void reset() override {}
  Variable forward(const Variable& x) override { return log_softmax(x, dim_); }
  std::string extra_repr() const override { return "dim=" + std::to_string(dim_); }

 private:
  int64_t dim_;
};

}  // namespace ddl::nn
