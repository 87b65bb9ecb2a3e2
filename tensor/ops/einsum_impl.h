// The einsum algorithm, written once for Tensor (tensor/ops/einsum.cpp) and
// Variable (autograd/ops/einsum.cpp): only permute, reshape, mul, sum and
// matmul are used, so on Variables the backward comes from those ops.
// Internal: include after the sum/mul/matmul overloads for T are declared.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/core/tensor.h>
#include <ddl/tensor/ops/elementwise.h>

namespace ddl::detail {

struct EinsumSpec {
  std::vector<std::string> inputs;  // one label per dim, per operand
  std::string output;
};

// Parses and validates "ab,bc->ac" (or implicit "ab,bc") for `n_operands` operands.
EinsumSpec parse_einsum(const std::string& equation, size_t n_operands);

template <typename T>
struct Labelled {
  T value;
  std::string labels;
};

inline bool has_label(const std::string& s, char c) { return s.find(c) != std::string::npos; }

// 'ii' -> 'i': multiply by an identity over the two dims and sum one away.
template <typename T>
Labelled<T> take_diagonals(Labelled<T> x) {
  for (size_t q = 0; q < x.labels.size(); ++q) {
    const size_t p = x.labels.find(x.labels[q]);
    if (p == q) continue;
    const int64_t n = x.value.size(static_cast<int64_t>(q));
    std::vector<int64_t> mask_shape(x.labels.size(), 1);
    mask_shape[p] = mask_shape[q] = n;
    const Tensor eye = eq(arange(n).reshape({n, 1}), arange(n).reshape({1, n}));
    const Tensor mask = eye.to(x.value.dtype()).reshape(Shape(mask_shape)).to(x.value.device());
    x.value = sum(mul(x.value, T(mask)), std::vector<int64_t>{static_cast<int64_t>(q)}, false);
    x.labels.erase(q, 1);
    --q;
  }
  return x;
}

// Sums away the labels not in `keep`.
template <typename T>
Labelled<T> sum_unused(Labelled<T> x, const std::string& keep) {
  std::vector<int64_t> dims;
  std::string kept;
  for (size_t i = 0; i < x.labels.size(); ++i) {
    if (has_label(keep, x.labels[i]))
      kept += x.labels[i];
    else
      dims.push_back(static_cast<int64_t>(i));
  }
  if (!dims.empty()) x.value = sum(x.value, dims, false);
  x.labels = kept;
  return x;
}

// Views x with its labels in `order` grouped as [prod(g0), prod(g1), prod(g2)].
template <typename T>
T as_3d(const Labelled<T>& x, const std::string& g0, const std::string& g1, const std::string& g2) {
  std::vector<int64_t> perm;
  int64_t sizes[3] = {1, 1, 1};
  const std::string groups[3] = {g0, g1, g2};
  for (int g = 0; g < 3; ++g)
    for (char c : groups[g]) {
      const int64_t at = static_cast<int64_t>(x.labels.find(c));
      perm.push_back(at);
      sizes[g] *= x.value.size(at);
    }
  return x.value.permute(perm).reshape({sizes[0], sizes[1], sizes[2]});
}

// Contracts a and b: labels in both but not in `keep` are summed by one
// batched matmul [batch, a_only, summed] x [batch, summed, b_only].
template <typename T>
Labelled<T> contract(const Labelled<T>& a, const Labelled<T>& b, const std::string& keep) {
  std::string batch, summed, a_only, b_only;
  for (char c : a.labels) {
    if (!has_label(b.labels, c))
      a_only += c;
    else if (has_label(keep, c))
      batch += c;
    else
      summed += c;
  }
  for (char c : b.labels)
    if (!has_label(a.labels, c)) b_only += c;
  const T product = matmul(as_3d(a, batch, a_only, summed), as_3d(b, batch, summed, b_only));
  std::vector<int64_t> shape;
  for (char c : batch) shape.push_back(a.value.size(static_cast<int64_t>(a.labels.find(c))));
  for (char c : a_only) shape.push_back(a.value.size(static_cast<int64_t>(a.labels.find(c))));
  for (char c : b_only) shape.push_back(b.value.size(static_cast<int64_t>(b.labels.find(c))));
  return {product.reshape(Shape(shape)), batch + a_only + b_only};
}

template <typename T>
T einsum_impl(const std::string& equation, const std::vector<T>& operands) {
  const EinsumSpec spec = parse_einsum(equation, operands.size());
  for (size_t k = 1; k < operands.size(); ++k)
    DDL_CHECK(operands[k].dtype() == operands[0].dtype(), "einsum: operands must share one dtype, got ",
              operands[0].dtype(), " (operand 0) and ", operands[k].dtype(), " (operand ", k, ")");
  std::map<char, std::pair<int64_t, size_t>> size_of;  // label -> (size, first operand)
  for (size_t k = 0; k < operands.size(); ++k) {
    const std::string& labels = spec.inputs[k];
    DDL_CHECK(operands[k].dim() == static_cast<int64_t>(labels.size()), "einsum: operand ", k, " has ",
              operands[k].dim(), " dims ", operands[k].shape(), " but the equation '", equation, "' gives it ",
              labels.size(), " subscripts ('", labels, "')");
    for (size_t i = 0; i < labels.size(); ++i) {
      const int64_t n = operands[k].size(static_cast<int64_t>(i));
      auto [it, fresh] = size_of.emplace(labels[i], std::make_pair(n, k));
      DDL_CHECK(fresh || it->second.first == n, "einsum: subscript '", labels[i], "' has size ", it->second.first,
                " in operand ", it->second.second, " but ", n, " in operand ", k,
                " (broadcasting of size-1 dims is not supported; expand the operand first)");
    }
  }
  // Labels still needed after operand k: the output's and those of later operands.
  auto needed_after = [&](size_t k) {
    std::string keep = spec.output;
    for (size_t j = k + 1; j < operands.size(); ++j) keep += spec.inputs[j];
    return keep;
  };
  Labelled<T> acc = sum_unused(take_diagonals(Labelled<T>{operands[0], spec.inputs[0]}), needed_after(0));
  for (size_t k = 1; k < operands.size(); ++k) {
    const std::string keep = needed_after(k);
    const Labelled<T> next = sum_unused(take_diagonals(Labelled<T>{operands[k], spec.inputs[k]}), keep + acc.labels);
    acc = contract(sum_unused(acc, keep + next.labels), next, keep);
  }
  acc = sum_unused(acc, spec.output);
  std::vector<int64_t> perm;
  for (char c : spec.output) perm.push_back(static_cast<int64_t>(acc.labels.find(c)));
  return acc.value.permute(perm).contiguous();
}

}  // namespace ddl::detail
