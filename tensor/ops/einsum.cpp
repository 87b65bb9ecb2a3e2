// einsum on tensors, and the equation parser both frontends share.
#include <cctype>

#include <ddl/tensor/ops/einsum.h>
#include <ddl/tensor/ops/einsum_impl.h>
#include <ddl/tensor/ops/linalg.h>
#include <ddl/tensor/ops/reduce.h>

namespace ddl {
namespace detail {

EinsumSpec parse_einsum(const std::string& equation, size_t n_operands) {
  std::string eq;
  for (char c : equation)
    if (!std::isspace(static_cast<unsigned char>(c))) eq += c;
  DDL_CHECK(eq.find("...") == std::string::npos, "einsum: ellipsis ('...') is not supported in '", equation,
            "'; name every dim with a letter");
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  EinsumSpec spec;
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    spec.inputs.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  DDL_CHECK(spec.inputs.size() == n_operands, "einsum: the equation '", equation, "' names ", spec.inputs.size(),
            " operands but ", n_operands, " were given");
  auto check_letters = [&](const std::string& s) {
    for (char c : s)
      DDL_CHECK(std::isalpha(static_cast<unsigned char>(c)), "einsum: subscripts must be letters a-z or A-Z, got '", c,
                "' in '", equation, "'");
  };
  std::map<char, int> count;
  for (const std::string& in : spec.inputs) {
    check_letters(in);
    for (char c : in) ++count[c];
  }
  if (arrow == std::string::npos) {
    // Implicit output: the labels used exactly once, in alphabetical order (as torch.einsum).
    for (auto [c, n] : count)
      if (n == 1) spec.output += c;
    return spec;
  }
  spec.output = eq.substr(arrow + 2);
  check_letters(spec.output);
  for (size_t i = 0; i < spec.output.size(); ++i) {
    const char c = spec.output[i];
    DDL_CHECK(count.count(c), "einsum: output subscript '", c, "' does not appear in any input of '", equation, "'");
    DDL_CHECK(spec.output.find(c) == i, "einsum: output subscript '", c, "' appears twice in '", equation, "'");
  }
  return spec;
}

}  // namespace detail

Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  DDL_CHECK(!operands.empty(), "einsum: no operands given for '", equation, "'");
  for (size_t k = 0; k < operands.size(); ++k) DDL_CHECK(operands[k].defined(), "einsum: operand ", k, " is undefined");
  return detail::einsum_impl(equation, operands);
}

Tensor einsum(const std::string& equation, std::initializer_list<Tensor> operands) {
  return einsum(equation, std::vector<Tensor>(operands));
}

}  // namespace ddl
