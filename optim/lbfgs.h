// L-BFGS (Nocedal, "Updating quasi-Newton matrices with limited storage", Math. Comp. 1980) as
// torch.optim.LBFGS (1.13): each step(closure) runs up to max_iter iterations of the two-loop
// recursion over the last history_size (s, y) pairs, then either a fixed step lr (the first
// iteration min(1, 1/|g|_1) lr) or, with strong_wolfe, PyTorch's strong-Wolfe line search (cubic
// interpolation, c1 = 1e-4, c2 = 0.9, at most 25 evaluations; Nocedal & Wright, Numerical
// Optimization, algorithms 3.5 and 3.6), and PyTorch's stopping tests. One parameter group; the flat
// direction and history are kept in float64 and are not part of state_tensors() (no checkpointing).
#pragma once

#include <deque>
#include <functional>
#include <optional>
#include <string>

#include <ddl/optim/optimizer.h>
#include <ddl/tensor/core/options_arg.h>

namespace ddl::optim {

// LibTorch's options: LBFGS(params, LBFGSOptions(1).line_search_fn("strong_wolfe")).
struct LBFGSOptions {
  LBFGSOptions(double lr = 1) : lr_(lr) {}  // NOLINT: implicit, as LibTorch's
  DDL_ARG(double, lr) = 1;
  DDL_ARG(int64_t, max_iter) = 20;
  DDL_ARG(std::optional<int64_t>, max_eval) = std::nullopt;  // none: max_iter * 5 / 4, as PyTorch
  DDL_ARG(double, tolerance_grad) = 1e-7;
  DDL_ARG(double, tolerance_change) = 1e-9;
  DDL_ARG(int64_t, history_size) = 100;
  DDL_ARG(std::optional<std::string>, line_search_fn) = std::nullopt;  // none or "strong_wolfe"
};

class LBFGS : public Optimizer {
 public:
  LBFGS(std::vector<Variable> params, LBFGSOptions opts = {});
  // closure: zero the gradients, compute the loss, call backward, return the loss. Returns the first loss.
  double step(const std::function<double()>& closure);
  void step() override;  // throws: L-BFGS re-evaluates the loss and needs a closure

 private:
  std::vector<double> flat_grad() const;
  void add_grad(double t, const std::vector<double>& d);
  // Returns (loss, flat gradient, step t, evaluations) of the accepted point; parameters end unchanged.
  struct Search {
    double f;
    std::vector<double> g;
    double t;
    int64_t evals;
  };
  Search strong_wolfe(const std::function<double()>& closure, double t, const std::vector<double>& d, double f,
                      const std::vector<double>& g, double gtd);

  LBFGSOptions opts_;
  int64_t n_iter_ = 0, func_evals_ = 0;
  std::vector<double> d_, prev_flat_grad_;
  double t_ = 0, h_diag_ = 1, prev_loss_ = 0;
  std::deque<std::vector<double>> old_dirs_, old_stps_;
  std::deque<double> ro_;
};

}  // namespace ddl::optim
