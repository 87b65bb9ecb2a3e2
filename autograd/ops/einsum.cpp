// einsum on Variables: instantiates the shared algorithm with Variable.
#include "autograd/ops/einsum.h"

#include "autograd/ops/elementwise.h"
#include "autograd/ops/reduce.h"
#include "tensor/einsum_impl.h"

namespace ddl {

Variable einsum(const std::string& equation, const std::vector<Variable>& operands) {
  DDL_CHECK(!operands.empty(), "einsum: no operands given for '", equation, "'");
  for (size_t k = 0; k < operands.size(); ++k) DDL_CHECK(operands[k].defined(), "einsum: operand ", k, " is undefined");
  return detail::einsum_impl(equation, operands);
}

}  // namespace ddl
