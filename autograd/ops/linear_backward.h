// record_linear: make_result for ops whose backward is linear in the output
// gradient (indexing, joining, padding...). The backward is written once, as a
// generic lambda bw(g, needs) -> std::vector<G>, and instantiated for G = Tensor
// (the plain backward) and G = Variable (the differentiable one, so the op
// double-backwards; Note [Double backward] in autograd/node.cpp). It works because
// every op such a backward calls has a Tensor and a Variable overload of one name.
#pragma once

#include <initializer_list>
#include <vector>

#include <ddl/autograd/node.h>

namespace ddl::autograd {

template <typename Bw>
Variable record_linear(Tensor out, const char* name, const std::vector<const Variable*>& inputs, Bw bw) {
  return make_result(
      std::move(out), name, inputs,
      [bw](const Tensor& g, const std::vector<bool>& needs) -> std::vector<Tensor> { return bw(g, needs); },
      [bw](const Variable& g, const std::vector<bool>& needs) -> std::vector<Variable> { return bw(g, needs); });
}

template <typename Bw>
Variable record_linear(Tensor out, const char* name, std::initializer_list<const Variable*> inputs, Bw bw) {
  return record_linear(std::move(out), name, std::vector<const Variable*>(inputs), std::move(bw));
}

}  // namespace ddl::autograd
