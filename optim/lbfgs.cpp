// L-BFGS steps, line for line torch.optim.LBFGS.step (1.13, line_search_fn=None), on flat float64 vectors.
#include "optim/lbfgs.h"

#include <algorithm>
#include <cmath>

#include "autograd/grad_mode.h"
#include "tensor/factory.h"

namespace ddl::optim {

namespace {

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

double abs_max(const std::vector<double>& a) {
  double m = 0;
  for (double v : a) m = std::max(m, std::fabs(v));
  return m;
}

}  // namespace

LBFGS::LBFGS(std::vector<Variable> params, LBFGSOptions o)
    : Optimizer({{"lr", o.lr},
                 {"max_iter", static_cast<double>(o.max_iter)},
                 {"max_eval", static_cast<double>(o.max_eval > 0 ? o.max_eval : o.max_iter * 5 / 4)},
                 {"tolerance_grad", o.tolerance_grad},
                 {"tolerance_change", o.tolerance_change},
                 {"history_size", static_cast<double>(o.history_size)}}),
      opts_(o) {
  DDL_CHECK(o.lr > 0 && o.max_iter > 0 && o.history_size > 0, "LBFGS: need lr > 0, max_iter > 0, history_size > 0");
  add_param_group(std::move(params));
}

void LBFGS::step() { DDL_CHECK(false, "LBFGS: step needs a closure that re-evaluates the loss: step(closure)"); }

std::vector<double> LBFGS::flat_grad() const {
  std::vector<double> out;
  for (const Variable& p : groups_.at(0).params) {
    if (p.grad().defined()) {
      const std::vector<double> g = to_vector<double>(p.grad().to(DType::Float64).contiguous());
      out.insert(out.end(), g.begin(), g.end());
    } else {
      out.insert(out.end(), static_cast<size_t>(p.numel()), 0.0);
    }
  }
  return out;
}

void LBFGS::add_grad(double t, const std::vector<double>& d) {
  NoGradGuard no_grad;
  size_t offset = 0;
  for (const Variable& p : groups_.at(0).params) {
    const size_t n = static_cast<size_t>(p.numel());
    std::vector<double> part(d.begin() + offset, d.begin() + offset + n);
    p.data().add_(from_vector(part, p.shape()).to(p.dtype()).to(p.device()), t);
    offset += n;
  }
}

double LBFGS::step(const std::function<double()>& closure) {
  DDL_CHECK(groups_.size() == 1, "LBFGS: supports one parameter group, got ", groups_.size());
  check_options();
  const auto& o = groups_[0].options;
  const double lr = o.at("lr"), tol_grad = o.at("tolerance_grad"), tol_change = o.at("tolerance_change");
  const auto max_iter = static_cast<int64_t>(o.at("max_iter")), max_eval = static_cast<int64_t>(o.at("max_eval"));
  const auto history = static_cast<size_t>(o.at("history_size"));

  const double orig_loss = closure();
  double loss = orig_loss;
  int64_t current_evals = 1;
  ++func_evals_;
  std::vector<double> g = flat_grad();
  if (abs_max(g) <= tol_grad) return orig_loss;

  for (int64_t n_iter = 1; n_iter <= max_iter; ++n_iter) {
    ++n_iter_;
    if (n_iter_ == 1) {
      d_.resize(g.size());
      for (size_t i = 0; i < g.size(); ++i) d_[i] = -g[i];
      old_dirs_.clear();
      old_stps_.clear();
      ro_.clear();
      h_diag_ = 1;
    } else {
      std::vector<double> y(g.size()), s(g.size());
      for (size_t i = 0; i < g.size(); ++i) {
        y[i] = g[i] - prev_flat_grad_[i];
        s[i] = d_[i] * t_;
      }
      const double ys = dot(y, s);
      if (ys > 1e-10) {  // keep the pair only where curvature is positive
        if (old_dirs_.size() == history) {
          old_dirs_.pop_front();
          old_stps_.pop_front();
          ro_.pop_front();
        }
        old_dirs_.push_back(y);
        old_stps_.push_back(s);
        ro_.push_back(1.0 / ys);
        h_diag_ = ys / dot(y, y);
      }
      // The two-loop recursion: d = -H g with H from the stored pairs and the scaling h_diag.
      const size_t k = old_dirs_.size();
      std::vector<double> al(k), q(g.size());
      for (size_t i = 0; i < g.size(); ++i) q[i] = -g[i];
      for (size_t i = k; i-- > 0;) {
        al[i] = dot(old_stps_[i], q) * ro_[i];
        for (size_t j = 0; j < q.size(); ++j) q[j] += -al[i] * old_dirs_[i][j];
      }
      for (size_t j = 0; j < q.size(); ++j) d_[j] = q[j] * h_diag_;
      for (size_t i = 0; i < k; ++i) {
        const double be = dot(old_dirs_[i], d_) * ro_[i];
        for (size_t j = 0; j < d_.size(); ++j) d_[j] += (al[i] - be) * old_stps_[i][j];
      }
    }
    prev_flat_grad_ = g;
    prev_loss_ = loss;
    if (n_iter_ == 1) {
      double l1 = 0;
      for (double v : g) l1 += std::fabs(v);
      t_ = std::min(1.0, 1.0 / l1) * lr;
    } else {
      t_ = lr;
    }
    const double gtd = dot(g, d_);
    if (gtd > -tol_change) break;  // not a descent direction

    int64_t ls_evals = 0;
    add_grad(t_, d_);
    bool opt_cond = false;
    if (n_iter != max_iter) {
      loss = closure();
      g = flat_grad();
      opt_cond = abs_max(g) <= tol_grad;
      ls_evals = 1;
    }
    current_evals += ls_evals;
    func_evals_ += ls_evals;
    if (n_iter == max_iter || current_evals >= max_eval || opt_cond) break;
    if (abs_max(d_) * std::fabs(t_) <= tol_change) break;
    if (std::fabs(loss - prev_loss_) < tol_change) break;
  }
  return orig_loss;
}

}  // namespace ddl::optim
