// Adamax, NAdam and RAdam: the Adam family's variants, each with PyTorch 1.13's options, defaults
// and single-tensor update (torch/optim/adamax.py, nadam.py, radam.py). weight_decay adds
// weight_decay * p to g first (L2, not decoupled), as there. State: "step", "exp_avg" and
// "exp_inf" (Adamax) or "exp_avg_sq" (NAdam, RAdam; NAdam also "mu_product"), saved with the rest.
#pragma once

#include <tuple>

#include <ddl/optim/optimizer.h>
#include <ddl/tensor/core/options_arg.h>

namespace ddl::optim {

// Adamax (Kingma & Ba, "Adam", section 7.1): Adam with the infinity norm,
//   m = b1 m + (1 - b1) g;  u = max(b2 u, |g| + eps);  p -= lr / (1 - b1^t) * m / u
struct AdamaxOptions {
  using betas_t = std::tuple<double, double>;
  AdamaxOptions(double lr = 2e-3) : lr_(lr) {}  // NOLINT: implicit, as LibTorch's
  DDL_ARG(double, lr);
  DDL_ARG(betas_t, betas) = {0.9, 0.999};
  DDL_ARG(double, eps) = 1e-8;
  DDL_ARG(double, weight_decay) = 0;
  DDL_ARG(bool, maximize) = false;
};

// NAdam (Dozat, "Incorporating Nesterov Momentum into Adam", 2016) with PyTorch's momentum schedule
//   mu_t = b1 (1 - 0.5 * 0.96^(t * momentum_decay)), mu_product = prod(mu_1..mu_t) (kept in float32,
//   as PyTorch's state tensor), and the update
//   p -= lr (1 - mu_t) / (1 - mu_product) g / d + lr mu_{t+1} / (1 - mu_product mu_{t+1}) m / d,
//   d = sqrt(v / (1 - b2^t)) + eps.
struct NAdamOptions {
  using betas_t = std::tuple<double, double>;
  NAdamOptions(double lr = 2e-3) : lr_(lr) {}  // NOLINT
  DDL_ARG(double, lr);
  DDL_ARG(betas_t, betas) = {0.9, 0.999};
  DDL_ARG(double, eps) = 1e-8;
  DDL_ARG(double, weight_decay) = 0;
  DDL_ARG(double, momentum_decay) = 4e-3;
};

// RAdam (Liu et al., "On the Variance of the Adaptive Learning Rate and Beyond", ICLR 2020): while the
// variance estimate is intractable (rho_t <= 5) an SGD-with-momentum step p -= lr m / (1 - b1^t); after,
// Adam's step scaled by the rectification term r_t.
struct RAdamOptions {
  using betas_t = std::tuple<double, double>;
  RAdamOptions(double lr = 1e-3) : lr_(lr) {}  // NOLINT
  DDL_ARG(double, lr);
  DDL_ARG(betas_t, betas) = {0.9, 0.999};
  DDL_ARG(double, eps) = 1e-8;
  DDL_ARG(double, weight_decay) = 0;
};

class Adamax : public Optimizer {
 public:
  explicit Adamax(std::vector<Variable> params, AdamaxOptions opts = {});
  void step() override;
};

class NAdam : public Optimizer {
 public:
  explicit NAdam(std::vector<Variable> params, NAdamOptions opts = {});
  void step() override;
};

class RAdam : public Optimizer {
 public:
  explicit RAdam(std::vector<Variable> params, RAdamOptions opts = {});
  void step() override;
};

}  // namespace ddl::optim
