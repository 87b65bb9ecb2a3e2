// The shared state behind a Variable handle. Internal to autograd/.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <ddl/autograd/node.h>
#include <ddl/autograd/variable.h>

namespace ddl {

struct VariableImpl {
  Tensor data;
  Tensor grad;
  bool requires_grad = false;
  std::shared_ptr<autograd::Node> grad_fn;  // null for leaves
  std::map<int, Variable::Hook> post_accumulate_hooks;
  int next_hook_id = 0;
  std::string name;
};

}  // namespace ddl
