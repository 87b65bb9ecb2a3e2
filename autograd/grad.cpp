// autograd::grad: argument checks, then the engine's run_grad (engine.cpp).
#include "autograd/grad.h"

#include "autograd/engine.h"
#include "tensor/factory.h"

namespace ddl::autograd {

std::vector<Variable> grad(const std::vector<Variable>& outputs, const std::vector<Variable>& inputs,
                           const std::vector<Variable>& grad_outputs, std::optional<bool> retain_graph,
                           bool create_graph, bool allow_unused) {
  DDL_CHECK(!outputs.empty(), "grad: no outputs given");
  DDL_CHECK(!inputs.empty(), "grad: no inputs given");
  DDL_CHECK(grad_outputs.empty() || grad_outputs.size() == outputs.size(), "grad: ", outputs.size(), " outputs but ",
            grad_outputs.size(), " grad_outputs");
  std::vector<Variable> seeds;
  for (size_t k = 0; k < outputs.size(); ++k) {
    const Variable& y = outputs[k];
    DDL_CHECK(y.defined(), "grad: output ", k, " is undefined");
    DDL_CHECK(y.requires_grad(), "grad: output ", k, " of shape ", y.shape(),
              " does not require grad and has no grad_fn; was it computed under NoGradGuard or from detached "
              "values only?");
    Variable s = grad_outputs.empty() ? Variable() : grad_outputs[k];
    if (!s.defined()) {
      DDL_CHECK(y.numel() == 1,
                "grad: grad_outputs can be implicitly created only for a one-element output; "
                "output ",
                k, " has shape ", y.shape());
      s = Variable(ones_like(y.data()));
    }
    DDL_CHECK(s.shape() == y.shape(), "grad: grad_outputs[", k, "] has shape ", s.shape(), " but output ", k,
              " has shape ", y.shape());
    seeds.push_back(std::move(s));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    DDL_CHECK(inputs[i].defined(), "grad: input ", i, " is undefined");
    DDL_CHECK(inputs[i].requires_grad(), "grad: input ", i,
              inputs[i].name().empty() ? "" : " '" + inputs[i].name() + "'", " of shape ", inputs[i].shape(),
              " does not require grad; call requires_grad_() on it before computing the outputs");
  }
  return detail::run_grad(outputs, seeds, inputs, retain_graph.value_or(create_graph), create_graph, allow_unused);
}

}  // namespace ddl::autograd
