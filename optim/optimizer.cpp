// Optimizer groups, state save/restore, gradient clipping.
#include <charconv>
#include <cmath>

#include <ddl/optim/optimizer.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/reduce.h>

namespace ddl::optim {

void Optimizer::zero_grad(bool set_to_none) {
  for (auto& g : groups_)
    for (auto& p : g.params) p.zero_grad(set_to_none);
}

double Optimizer::advance_step(State& state) {
  auto it = state.find("step");
  if (it == state.end()) it = state.emplace("step", zeros({}, DType::Float64)).first;
  const double t = it->second.item() + 1;
  it->second.fill_(t);
  return t;
}

namespace {
std::string known_options(const std::map<std::string, double>& defaults) {
  std::string out;
  for (const auto& [k, v] : defaults) out += (out.empty() ? "" : ", ") + k;
  return out;
}
}  // namespace

void Optimizer::check_options() const {
  for (size_t g = 0; g < groups_.size(); ++g) {
    const auto& o = groups_[g].options;
    for (const auto& [k, v] : o)
      DDL_CHECK(defaults_.count(k), "optimizer step: param group ", g, " has an unknown option '", k,
                "' (known: ", known_options(defaults_), ")");
    for (const auto& [k, v] : defaults_)
      DDL_CHECK(o.count(k), "optimizer step: param group ", g, " lacks the option '", k, "'");
  }
}

void Optimizer::add_param_group(std::vector<Variable> params, std::map<std::string, double> options) {
  for (const auto& [k, v] : options)
    DDL_CHECK(defaults_.count(k), "add_param_group: unknown option '", k, "' (known: ", known_options(defaults_), ")");
  for (const auto& [k, v] : defaults_) options.emplace(k, v);
  for (const auto& p : params) {
    DDL_CHECK(p.defined() && p.is_leaf(), "add_param_group: parameters must be defined leaves");
    for (const auto& g : groups_)
      for (const auto& q : g.params)
        DDL_CHECK(q.impl() != p.impl(), "add_param_group: a parameter appears in two groups");
  }
  groups_.push_back({std::move(params), std::move(options)});
}

std::vector<std::pair<std::string, Tensor>> Optimizer::state_tensors() const {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const auto& [index, entries] : state_)
    for (const auto& [name, t] : entries) out.emplace_back("state." + std::to_string(index) + "." + name, t);
  return out;
}

std::map<std::string, std::string> Optimizer::state_metadata() const {
  std::map<std::string, std::string> out;
  for (size_t g = 0; g < groups_.size(); ++g) {
    out["group." + std::to_string(g) + ".num_params"] = std::to_string(groups_[g].params.size());
    for (const auto& [k, v] : groups_[g].options) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.17g", v);
      out["group." + std::to_string(g) + "." + k] = buf;
    }
  }
  return out;
}

namespace {

// A checkpoint's text fields, parsed whole: a malformed one is a ddl::Error naming it, never
// std::stoul's invalid_argument (nor "-1" read as 2^64 - 1, nor "3x" read as 3).
size_t parse_count(const std::string& text, const std::string& what) {
  size_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  DDL_CHECK(ec == std::errc() && end == text.data() + text.size() && !text.empty(), "optimizer load_state: ", what,
            " is \"", text, "\", not a non-negative integer");
  return v;
}

double parse_finite(const std::string& text, const std::string& what) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  DDL_CHECK(ec == std::errc() && end == text.data() + text.size() && !text.empty() && std::isfinite(v),
            "optimizer load_state: ", what, " is \"", text, "\", not a finite number");
  return v;
}

}  // namespace

void Optimizer::load_state(const std::vector<std::pair<std::string, Tensor>>& tensors,
                           const std::map<std::string, std::string>& metadata) {
  size_t total = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    const std::string key = "group." + std::to_string(g) + ".num_params";
    auto it = metadata.find(key);
    DDL_CHECK(it != metadata.end() && parse_count(it->second, key) == groups_[g].params.size(),
              "optimizer load_state: group ", g, " has ", groups_[g].params.size(), " parameters but the checkpoint ",
              it == metadata.end() ? std::string("has no such group") : "has " + it->second);
    total += groups_[g].params.size();
  }
  std::vector<Variable> flat;
  for (const auto& g : groups_) flat.insert(flat.end(), g.params.begin(), g.params.end());
  std::map<size_t, std::map<std::string, Tensor>> state;
  for (const auto& [name, t] : tensors) {
    DDL_CHECK(name.rfind("state.", 0) == 0, "optimizer load_state: unexpected tensor '", name, "'");
    const size_t dot = name.find('.', 6);
    DDL_CHECK(dot != std::string::npos, "optimizer load_state: malformed name '", name, "'");
    const size_t index = parse_count(name.substr(6, dot - 6), "the parameter index of '" + name + "'");
    DDL_CHECK(index < total, "optimizer load_state: '", name, "' refers to parameter ", index, " of ", total);
    const std::string field = name.substr(dot + 1);
    DDL_CHECK(t.numel() == 1 || t.shape() == flat[index].shape(), "optimizer load_state: '", name, "' has shape ",
              t.shape(), " but parameter ", index, " is ", flat[index].shape());
    // Per-element state follows its parameter's device and dtype (a checkpoint saved from
    // the CPU loads into a model on a GPU); scalar counters stay on the host.
    state[index][field] =
        t.numel() == 1 && t.dim() == 0 ? t.clone() : t.to(flat[index].device()).to(flat[index].dtype()).clone();
  }
  for (size_t g = 0; g < groups_.size(); ++g)
    for (auto& [k, v] : groups_[g].options) {
      const std::string key = "group." + std::to_string(g) + "." + k;
      auto it = metadata.find(key);
      if (it != metadata.end()) v = parse_finite(it->second, key);
    }
  state_ = std::move(state);
}

namespace {

// The norm of order p of `values` (torch.norm on a vector): p = 0 counts the non-zeros, +-inf is the max / min.
double vector_norm(const std::vector<double>& values, double p) {
  if (values.empty()) return 0;
  double acc = p == INFINITY ? 0 : p == -INFINITY ? INFINITY : 0;
  for (double v : values) {
    const double a = std::fabs(v);
    if (std::isnan(a)) return NAN;
    if (p == INFINITY)
      acc = std::max(acc, a);
    else if (p == -INFINITY)
      acc = std::min(acc, a);
    else if (p == 0)
      acc += a != 0;
    else
      acc += std::pow(a, p);
  }
  return std::isinf(p) || p == 0 ? acc : std::pow(acc, 1 / p);
}

// One gradient's norm of order p, in float64.
double grad_norm(const Tensor& grad, double p) {
  const Tensor a = abs(grad.to(DType::Float64));
  if (a.numel() == 0) return p == -INFINITY ? INFINITY : 0;
  if (p == INFINITY) return amax(a).item();
  if (p == -INFINITY) return amin(a).item();
  if (p == 0) return sum(ne(a, 0.0).to(DType::Float64)).item();
  if (p == 1) return sum(a).item();
  return std::pow(sum(pow(a, p)).item(), 1 / p);
}

}  // namespace

// PyTorch takes each gradient's norm, then the norm of those norms: equal to the norm of all
// elements for p > 0 and +-inf (for p = 0 it counts the gradients that have a non-zero).
double clip_grad_norm_(const std::vector<Variable>& params, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  DDL_CHECK(!std::isnan(norm_type), "clip_grad_norm_: norm_type is NaN");
  std::vector<double> norms;
  double squares = 0;  // p = 2: the sum of all squares, one square root (as ddl always computed it)
  for (const auto& p : params)
    if (p.grad().defined()) {
      if (norm_type == 2) {
        const Tensor g = p.grad().to(DType::Float64);
        squares += sum(mul(g, g)).item();
      }
      norms.push_back(norm_type == 2 ? 0.0 : grad_norm(p.grad(), norm_type));
    }
  if (norms.empty()) return 0;
  const double norm = norm_type == 2      ? std::sqrt(squares)
                      : norms.size() == 1 ? norms[0]
                                          : vector_norm(norms, norm_type);
  DDL_CHECK(!error_if_nonfinite || std::isfinite(norm), "clip_grad_norm_: the total norm of order ", norm_type,
            " of the gradients is non-finite (", norm,
            "), so it cannot be clipped; pass error_if_nonfinite = false to scale by it anyway");
  // torch.clamp(max=1) keeps a NaN coefficient, and PyTorch always multiplies; x * 1 is x, so 1 is skipped.
  const double coef = max_norm / (norm + 1e-6);
  const double scale = std::isnan(coef) ? coef : std::min(coef, 1.0);
  if (scale != 1.0)
    for (const auto& p : params)
      if (p.grad().defined()) p.grad().mul_(scale);
  return norm;
}

void clip_grad_value_(const std::vector<Variable>& params, double clip_value) {
  for (const auto& p : params)
    if (p.grad().defined()) p.grad().copy_(clamp(p.grad(), -clip_value, clip_value));
}

}  // namespace ddl::optim
