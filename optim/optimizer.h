// Optimizer: parameter groups, each with its own hyper-parameters, and per-
// parameter state (momentum buffers, step counts) that can be saved and
// restored. Updates write param.data() directly, outside the graph.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <ddl/autograd/variable.h>

namespace ddl::optim {

struct ParamGroup {
  std::vector<Variable> params;
  std::map<std::string, double> options;  // "lr", "momentum", "weight_decay", ...
  double lr() const { return options.at("lr"); }
  void set_lr(double lr) { options["lr"] = lr; }
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // Applies one update to every parameter that has a gradient.
  virtual void step() = 0;
  void zero_grad(bool set_to_none = true);

  // Adds a group; options it lacks take the optimizer's defaults.
  void add_param_group(std::vector<Variable> params, std::map<std::string, double> options = {});
  std::vector<ParamGroup>& param_groups() { return groups_; }
  const std::vector<ParamGroup>& param_groups() const { return groups_; }

  // State as named tensors ("state.<index>.<name>", index counting parameters
  // across groups in order) plus group options ("group.<g>.<option>"), for checkpoints.
  std::vector<std::pair<std::string, Tensor>> state_tensors() const;
  std::map<std::string, std::string> state_metadata() const;
  void load_state(const std::vector<std::pair<std::string, Tensor>>& tensors,
                  const std::map<std::string, std::string>& metadata);

 protected:
  explicit Optimizer(std::map<std::string, double> defaults) : defaults_(std::move(defaults)) {}
  using State = std::map<std::string, Tensor>;
  // Per-parameter state, by the parameter's position across groups.
  State& state_of(size_t index) { return state_[index]; }
  // update(group, weight, grad, state) for every parameter with a gradient, in group order;
  // a parameter without one keeps its state (and its position, which keys the state).
  template <typename Update>
  void for_each_param(Update&& update) {
    check_options();
    size_t index = 0;
    for (ParamGroup& group : groups_)
      for (Variable& p : group.params) {
        State& state = state_of(index++);
        if (p.grad().defined()) update(group, p.data(), p.grad(), state);
      }
  }
  // Adds one to the float64 scalar state["step"] (PyTorch's step count), made on first use.
  static double advance_step(State& state);
  // Every group must hold exactly the optimizer's option names: a misspelt key written into
  // group.options (or one erased) is an error naming it and the known ones, never a silent 0.
  void check_options() const;

  std::vector<ParamGroup> groups_;

 private:
  std::map<std::string, double> defaults_;
  std::map<size_t, std::map<std::string, Tensor>> state_;
};

// As torch.nn.utils.clip_grad_norm_ (1.13): the norm of order norm_type (any p > 0, 0, or +-inf) of all
// gradients taken together; every gradient is multiplied by min(1, max_norm / (norm + 1e-6)) (a NaN norm
// makes them NaN, as PyTorch). Returns the norm before clipping; error_if_nonfinite throws on a NaN or
// infinite norm instead and leaves the gradients alone. Parameters without a gradient are skipped.
double clip_grad_norm_(const std::vector<Variable>& params, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);
// As torch.nn.utils.clip_grad_value_: clamps every gradient element into [-clip_value, clip_value].
void clip_grad_value_(const std::vector<Variable>& params, double clip_value);

}  // namespace ddl::optim
