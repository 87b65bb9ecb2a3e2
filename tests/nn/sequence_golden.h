// Helpers for the PyTorch golden cases of tests/golden/sequence_layers.py: the same
// closed-form inputs and parameters, and one check of outputs, input gradients and
// parameter gradients (by checksum) for the loss sum_i sum(out_i * seq(0.9, 0.1 + 0.3 i)).
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "tests/common/golden_seq.h"  // seq, checksum
#include <ddl/autograd/functions.h>
#include <ddl/nn/module.h>
#include <ddl/tensor/ops.h>

namespace ddl::test {

inline Variable leaf(const Shape& s, double a, double b, double scale = 1.0) {
  return Variable(seq(s, a, b, scale), true);
}

// Converts the module to float64 and sets its k-th parameter (named_parameters
// order) to seq(shape, 0.37 + 0.05 k, 0.3 + 0.1 k, 0.5), as set_params() in the script.
inline void set_golden_params(nn::Module& m) {
  m.to(DType::Float64);
  int k = 0;
  for (auto& [name, p] : m.named_parameters()) {
    Variable h = p;
    h.set_data(seq(p.shape(), 0.37 + 0.05 * k, 0.3 + 0.1 * k, 0.5));
    ++k;
  }
}

// Compares outputs, backpropagates the script's loss and compares gradient checksums.
// module may be null (functions without parameters); param_names then empty.
inline void check_golden_case(const nn::Module* module, const std::vector<Variable>& inputs,
                              const std::vector<Variable>& outputs,
                              const std::vector<std::vector<double>>& expected_outputs,
                              const std::vector<double>& input_grads, const std::vector<std::string>& param_names = {},
                              const std::vector<double>& param_grads = {}, double tol = 1e-10) {
  REQUIRE(outputs.size() == expected_outputs.size());
  Variable loss;
  for (size_t i = 0; i < outputs.size(); ++i) {
    INFO("output " << i << " " << outputs[i].shape());
    const std::vector<double> got = to_vector<double>(outputs[i].data());
    REQUIRE(got.size() == expected_outputs[i].size());
    for (size_t j = 0; j < got.size(); ++j) {
      INFO("element " << j);
      REQUIRE(got[j] == Approx(expected_outputs[i][j]).margin(tol));
    }
    const Variable term = sum(mul(outputs[i], Variable(seq(outputs[i].shape(), 0.9, 0.1 + 0.3 * double(i)))));
    loss = loss.defined() ? add(loss, term) : term;
  }
  loss.backward();
  REQUIRE(inputs.size() == input_grads.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    INFO("gradient of input " << i);
    REQUIRE(inputs[i].grad().defined());
    REQUIRE(checksum(inputs[i].grad()) == Approx(input_grads[i]).margin(tol * 10));
  }
  if (!module) return;
  const auto params = module->named_parameters();
  REQUIRE(params.size() == param_names.size());
  for (size_t i = 0; i < params.size(); ++i) {
    INFO("parameter " << params[i].first);
    REQUIRE(params[i].first == param_names[i]);
    REQUIRE(params[i].second.grad().defined());
    REQUIRE(checksum(params[i].second.grad()) == Approx(param_grads[i]).margin(tol * 10));
  }
}

}  // namespace ddl::test
