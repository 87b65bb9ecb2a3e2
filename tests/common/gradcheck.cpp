// Central-difference gradient checker (see gradcheck.h).
#include "tests/common/gradcheck.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace ddl::test {

Tensor random_double(const Shape& shape, uint64_t seed, double lo, double hi) {
  Generator gen(seed);
  Tensor t = empty(shape, DType::Float64);
  return uniform_(t, lo, hi, gen);
}

Tensor non_contiguous(const Tensor& t) {
  if (t.dim() < 2) {
    // Every other element of a twice-as-long buffer.
    Tensor big = zeros({t.numel() * 2}, t.dtype());
    Tensor v = big.slice(0, 0, t.numel() * 2, 2).view(t.shape());
    v.copy_(t);
    return v;
  }
  Tensor tr = t.transpose(0, t.dim() - 1).contiguous();
  Tensor v = tr.transpose(0, t.dim() - 1);
  DDL_ASSERT(!v.is_contiguous() || t.size(0) == 1 || t.size(-1) == 1, "non_contiguous failed");
  return v;
}

namespace {

double weighted_sum(const VariableFn& f, const std::vector<Tensor>& inputs, const Tensor& c) {
  NoGradGuard guard;
  std::vector<Variable> vs(inputs.begin(), inputs.end());
  const Tensor y = f(vs).data().to(DType::Float64);
  return sum(mul(y, c)).item();
}

}  // namespace

std::string gradcheck(const VariableFn& f, const std::vector<Tensor>& inputs, const GradcheckOptions& opts) {
  auto skipped = [&](size_t i) {
    return std::find(opts.skip_inputs.begin(), opts.skip_inputs.end(), i) != opts.skip_inputs.end();
  };
  std::vector<Variable> vars;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const bool diff = !skipped(i) && is_floating(inputs[i].dtype());
    vars.emplace_back(inputs[i], diff);
  }
  const Variable y = f(vars);
  Generator gen(opts.seed);
  const Tensor c = rand(y.shape(), gen, DType::Float64) - 0.5;
  const Variable loss = sum(mul(y, Variable(c.to(y.dtype()))));
  loss.backward();

  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!vars[i].requires_grad()) continue;
    const Tensor analytic = vars[i].grad().defined() ? vars[i].grad().to(DType::Float64).contiguous()
                                                     : zeros(inputs[i].shape(), DType::Float64);
    const double* ga = analytic.data<double>();
    // Perturb a contiguous copy, viewed through the caller's layout only via its values.
    Tensor x = inputs[i].contiguous().clone();
    double* xp = x.data<double>();
    std::vector<Tensor> perturbed = inputs;
    perturbed[i] = x;
    for (int64_t k = 0; k < x.numel(); ++k) {
      const double orig = xp[k];
      xp[k] = orig + opts.eps;
      const double up = weighted_sum(f, perturbed, c);
      xp[k] = orig - opts.eps;
      const double down = weighted_sum(f, perturbed, c);
      xp[k] = orig;
      const double numeric = (up - down) / (2 * opts.eps);
      if (std::abs(numeric - ga[k]) > opts.atol + opts.rtol * std::abs(numeric)) {
        std::ostringstream os;
        os << "gradcheck: input " << i << " " << inputs[i].shape() << " element " << k << ": analytic " << ga[k]
           << " vs numeric " << numeric;
        return os.str();
      }
    }
  }
  return "";
}

}  // namespace ddl::test
