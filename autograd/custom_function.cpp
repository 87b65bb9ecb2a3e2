// CustomFunction::apply: runs the user's forward and records one node per output.
//
// Note [Custom functions with several outputs]: ddl's nodes have one output each, so an
// op with outputs y_0..y_m-1 gets m nodes over the same inputs and the same ctx. Node k
// calls the user's backward with (0, .., g_k, .., 0); backward is linear in the output
// gradients, so the input gradients the engine sums over the m nodes equal one call with
// (g_0, .., g_m-1). It costs one backward call per output that received a gradient.
#include <algorithm>

#include <ddl/autograd/custom_function.h>
#include <ddl/autograd/grad_mode.h>
#include <ddl/autograd/node.h>
#include <ddl/tensor/core/factory.h>

namespace ddl::autograd {

bool FunctionCtx::is_non_differentiable(size_t output) const {
  return std::find(non_differentiable_.begin(), non_differentiable_.end(), output) != non_differentiable_.end();
}

std::vector<Variable> CustomFunction::apply(const std::vector<Variable>& inputs) const {
  DDL_CHECK(forward && backward, "custom op '", name, "': both forward and backward must be set");
  auto ctx = std::make_shared<FunctionCtx>();
  std::vector<Tensor> in;
  std::vector<const Variable*> in_ptrs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    DDL_CHECK(inputs[i].defined(), "custom op '", name, "': input ", i, " is undefined");
    in.push_back(inputs[i].data());
    in_ptrs.push_back(&inputs[i]);
    ctx->needs_.push_back(is_grad_enabled() && inputs[i].requires_grad());
  }
  std::vector<Tensor> out;
  {
    NoGradGuard no_grad;
    out = forward(*ctx, in);
  }
  // See Note [Saved tensor versions] in node.cpp: what forward saved must be unchanged at backward.
  for (const Tensor& t : ctx->saved_) ctx->saved_versions_.push_back(t.version());
  DDL_CHECK(!out.empty(), "custom op '", name, "': forward returned no outputs");
  std::vector<Shape> out_shapes;
  std::vector<TensorOptions> out_options;
  for (size_t k = 0; k < out.size(); ++k) {
    DDL_CHECK(out[k].defined(), "custom op '", name, "': forward returned an undefined output ", k);
    out_shapes.push_back(out[k].shape());
    out_options.push_back(TensorOptions(out[k].dtype(), out[k].device()));
  }

  std::vector<Variable> results;
  for (size_t k = 0; k < out.size(); ++k) {
    if (ctx->is_non_differentiable(k)) {
      results.emplace_back(out[k]);
      continue;
    }
    const std::string op = name;
    const Backward user_backward = backward;
    // See Note [Custom functions with several outputs].
    auto node_backward = [ctx, k, op, user_backward, out_shapes, out_options](
                             const Tensor& g, const std::vector<bool>& needs) -> std::vector<Tensor> {
      std::vector<Tensor> grad_outputs(out_shapes.size());
      for (size_t j = 0; j < out_shapes.size(); ++j)
        grad_outputs[j] = j == k ? g : zeros(out_shapes[j], out_options[j]);
      for (size_t i = 0; i < ctx->saved_.size(); ++i)
        if (ctx->saved_[i].version() != ctx->saved_versions_[i])
          throw_modified_in_place(op + ", saved tensor " + std::to_string(i), ctx->saved_[i].version(),
                                  ctx->saved_versions_[i]);
      ctx->needs_ = needs;
      return user_backward(*ctx, grad_outputs);
    };
    Variable y = make_result(out[k], name.c_str(), in_ptrs, node_backward);
    if (y.grad_fn()) y.grad_fn()->set_user_defined();
    results.push_back(std::move(y));
  }
  return results;
}

}  // namespace ddl::autograd
