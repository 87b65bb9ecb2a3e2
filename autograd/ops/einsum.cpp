// einsum on Variables: instantiates the shared algorithm with Variable.
#include <ddl/autograd/autocast.h>
#include <ddl/autograd/ops/einsum.h>
#include <ddl/autograd/ops/elementwise.h>
#include <ddl/autograd/ops/reduce.h>
#include <ddl/tensor/ops/einsum_impl.h>

namespace ddl {

Variable einsum(const std::string& equation, const std::vector<Variable>& operands) {
  DDL_CHECK(!operands.empty(), "einsum: no operands given for '", equation, "'");
  for (size_t k = 0; k < operands.size(); ++k) DDL_CHECK(operands[k].defined(), "einsum: operand ", k, " is undefined");
  if (autocast::is_enabled()) {  // See Note [Autocast]: a contraction is a matmul, so it runs in the low dtype.
    std::vector<Variable> low;
    for (const Variable& v : operands) low.push_back(autocast::to_low(v));
    // Its inner sums and products run as cast (PyTorch's autocast wrappers exclude autocast for the callee).
    autocast::Guard off(autocast::low_dtype(), false);
    return detail::einsum_impl(equation, low);
  }
  return detail::einsum_impl(equation, operands);
}

}  // namespace ddl
