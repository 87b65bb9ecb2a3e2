// L-BFGS steps, line for line torch.optim.LBFGS.step and its _strong_wolfe (1.13), on flat float64 vectors.
#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include <ddl/autograd/grad_mode.h>
#include <ddl/optim/lbfgs.h>
#include <ddl/tensor/core/factory.h>

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

// The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to the bounds (default: the
// interval); the bounds' middle when the cubic has none (PyTorch's _cubic_interpolate).
double cubic_interpolate(double x1, double f1, double g1, double x2, double f2, double g2, const double* bounds) {
  double lo = std::min(x1, x2), hi = std::max(x1, x2);
  if (bounds) lo = bounds[0], hi = bounds[1];
  const double d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2);
  const double d2_square = d1 * d1 - g1 * g2;
  if (d2_square >= 0) {
    const double d2 = std::sqrt(d2_square);
    const double min_pos = x1 <= x2 ? x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
                                    : x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2));
    return std::min(std::max(min_pos, lo), hi);
  }
  return (lo + hi) / 2.0;
}

}  // namespace

LBFGS::Search LBFGS::strong_wolfe(const std::function<double()>& closure, double t, const std::vector<double>& d,
                                  double f, const std::vector<double>& g, double gtd) {
  constexpr double c1 = 1e-4, c2 = 0.9, tolerance_change = 1e-9;  // PyTorch's defaults, not the options
  constexpr int64_t max_ls = 25;
  const double d_norm = abs_max(d);
  // x + t d evaluated, then x restored (PyTorch's _directional_evaluate).
  std::vector<Tensor> x;
  for (const Variable& p : groups_.at(0).params) x.push_back(p.data().clone());
  auto evaluate = [&](double step) {
    add_grad(step, d);
    const double loss = closure();
    std::vector<double> grad = flat_grad();
    NoGradGuard no_grad;
    for (size_t i = 0; i < x.size(); ++i) groups_[0].params[i].data().copy_(x[i]);
    return std::pair{loss, grad};
  };
  auto [f_new, g_new] = evaluate(t);
  int64_t evals = 1;
  double gtd_new = dot(g_new, d);
  double t_prev = 0, f_prev = f, gtd_prev = gtd;
  std::vector<double> g_prev = g;
  bool done = false;
  int64_t ls_iter = 0;
  std::vector<double> bracket, bracket_f, bracket_gtd;
  std::vector<std::vector<double>> bracket_g;
  // Bracketing: find an interval holding a point that satisfies the strong Wolfe conditions.
  while (ls_iter < max_ls) {
    if (f_new > f + c1 * t * gtd || (ls_iter > 1 && f_new >= f_prev)) {
      bracket = {t_prev, t}, bracket_f = {f_prev, f_new}, bracket_g = {g_prev, g_new};
      bracket_gtd = {gtd_prev, gtd_new};
      break;
    }
    if (std::fabs(gtd_new) <= -c2 * gtd) {
      bracket = {t}, bracket_f = {f_new}, bracket_g = {g_new};
      done = true;
      break;
    }
    if (gtd_new >= 0) {
      bracket = {t_prev, t}, bracket_f = {f_prev, f_new}, bracket_g = {g_prev, g_new};
      bracket_gtd = {gtd_prev, gtd_new};
      break;
    }
    const double bounds[2] = {t + 0.01 * (t - t_prev), t * 10};
    const double tmp = t;
    t = cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds);
    t_prev = tmp, f_prev = f_new, g_prev = g_new, gtd_prev = gtd_new;
    std::tie(f_new, g_new) = evaluate(t);
    ++evals;
    gtd_new = dot(g_new, d);
    ++ls_iter;
  }
  if (ls_iter == max_ls) bracket = {0, t}, bracket_f = {f, f_new}, bracket_g = {g, g_new};
  // Zoom: shrink the bracket by cubic interpolation, forcing progress away from its ends.
  bool insuf_progress = false;
  size_t low = bracket_f.front() <= bracket_f.back() ? 0 : 1, high = 1 - low;
  while (!done && ls_iter < max_ls) {
    if (std::fabs(bracket[1] - bracket[0]) * d_norm < tolerance_change) break;
    t = cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1], nullptr);
    const double bmax = std::max(bracket[0], bracket[1]), bmin = std::min(bracket[0], bracket[1]);
    const double eps = 0.1 * (bmax - bmin);
    if (std::min(bmax - t, t - bmin) < eps) {
      if (insuf_progress || t >= bmax || t <= bmin) {
        t = std::fabs(t - bmax) < std::fabs(t - bmin) ? bmax - eps : bmin + eps;
        insuf_progress = false;
      } else {
        insuf_progress = true;
      }
    } else {
      insuf_progress = false;
    }
    std::tie(f_new, g_new) = evaluate(t);
    ++evals;
    gtd_new = dot(g_new, d);
    ++ls_iter;
    if (f_new > f + c1 * t * gtd || f_new >= bracket_f[low]) {
      bracket[high] = t, bracket_f[high] = f_new, bracket_g[high] = g_new, bracket_gtd[high] = gtd_new;
      low = bracket_f[0] <= bracket_f[1] ? 0 : 1, high = 1 - low;
    } else {
      if (std::fabs(gtd_new) <= -c2 * gtd) {
        done = true;
      } else if (gtd_new * (bracket[high] - bracket[low]) >= 0) {
        bracket[high] = bracket[low], bracket_f[high] = bracket_f[low], bracket_g[high] = bracket_g[low];
        bracket_gtd[high] = bracket_gtd[low];
      }
      bracket[low] = t, bracket_f[low] = f_new, bracket_g[low] = g_new, bracket_gtd[low] = gtd_new;
    }
  }
  if (bracket.size() == 1) low = 0;
  return {bracket_f[low], bracket_g[low], bracket[low], evals};
}

LBFGS::LBFGS(std::vector<Variable> params, LBFGSOptions o)
    : Optimizer({{"lr", o.lr()},
                 {"max_iter", static_cast<double>(o.max_iter())},
                 {"max_eval", static_cast<double>(o.max_eval().value_or(o.max_iter() * 5 / 4))},
                 {"tolerance_grad", o.tolerance_grad()},
                 {"tolerance_change", o.tolerance_change()},
                 {"history_size", static_cast<double>(o.history_size())},
                 {"strong_wolfe", o.line_search_fn() ? 1.0 : 0.0}}),
      opts_(o) {
  DDL_CHECK(o.lr() > 0 && o.max_iter() > 0 && o.history_size() > 0,
            "LBFGS: need lr > 0, max_iter > 0, history_size > 0");
  DDL_CHECK(!o.line_search_fn() || *o.line_search_fn() == "strong_wolfe",
            "LBFGS: line_search_fn must be \"strong_wolfe\" or none, got \"", o.line_search_fn().value_or(""), "\"");
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
    bool opt_cond = false;
    if (o.at("strong_wolfe") != 0) {
      Search s = strong_wolfe(closure, t_, d_, loss, g, gtd);
      loss = s.f, g = std::move(s.g), t_ = s.t, ls_evals = s.evals;
      add_grad(t_, d_);
      opt_cond = abs_max(g) <= tol_grad;
    } else {
      add_grad(t_, d_);
      if (n_iter != max_iter) {  // the last iteration's loss is left for the next step() to evaluate
        loss = closure();
        g = flat_grad();
        opt_cond = abs_max(g) <= tol_grad;
        ls_evals = 1;
      }
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
