// Automatic mixed precision, as torch.autocast: inside an autocast::Guard,
// matmul, linear, the convolutions, einsum and the LSTM/GRU layers cast their
// float32 and other 16-bit inputs to the guard's 16-bit dtype and return that
// dtype, while softmax, log_softmax, sum, cumsum, exp, log, pow, the losses and
// layer/group norm widen 16-bit inputs to float32 (batch_norm is on neither
// list: it takes 16-bit inputs with float32 parameters, as in PyTorch). The
// casts are recorded ops (Variable::to), so gradients reach float32 master
// weights in float32. It does not cache casts of weights between ops, and
// other ops run in their inputs' dtype. See Note [Autocast] and
// docs/mixed_precision.md.
#pragma once

#include <ddl/autograd/variable.h>

namespace ddl::autocast {

// Enables autocast to `dtype` (Float16 or BFloat16) on this thread for its
// scope, on every device; Guard(dtype, false) disables it for a nested scope.
class Guard {
 public:
  explicit Guard(DType dtype, bool enabled = true);
  ~Guard();
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;

 private:
  bool prev_enabled_;
  DType prev_dtype_;
};

bool is_enabled();
DType low_dtype();  // the dtype of the innermost Guard (meaningful while is_enabled())

// The op hooks. needs_low: enabled and v is float32, or the 16-bit dtype that is not
// low_dtype() (float64 is never cast, as in PyTorch); the lower-precision ops re-enter on
// to_low inputs.
bool needs_low(const Variable& v);
// to_low: v cast to low_dtype() when needs_low(v),
// otherwise (disabled, undefined, integer, float64, already low_dtype()) v itself.
Variable to_low(const Variable& v);
// True while enabled and v is a 16-bit float: the float32 ops call themselves again on to_float32(v).
bool needs_float32(const Variable& v);
Variable to_float32(const Variable& v);

}  // namespace ddl::autocast
