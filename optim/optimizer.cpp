// Optimizer groups, state save/restore, gradient clipping.
#include "optim/optimizer.h"

#include <charconv>
#include <cmath>

#include "tensor/elementwise.h"
#include "tensor/factory.h"
#include "tensor/reduce.h"

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

void Optimizer::add_param_group(std::vector<Variable> params, std::map<std::string, double> options) {
  for (const auto& [k, v] : options) DDL_CHECK(defaults_.count(k), "add_param_group: unknown option '", k, "'");
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

double clip_grad_norm_(const std::vector<Variable>& params, double max_norm) {
  double total = 0;
  for (const auto& p : params)
    if (p.grad().defined()) {
      const Tensor g = p.grad().to(DType::Float64);
      total += sum(mul(g, g)).item();
    }
  const double norm = std::sqrt(total);
  const double scale = max_norm / (norm + 1e-6);
  if (scale < 1.0)
    for (const auto& p : params)
      if (p.grad().defined()) p.grad().mul_(scale);
  return norm;
}

}  // namespace ddl::optim
