// The autocast state (per thread) and the casts the ops call.
//
// Note [Autocast]
// torch.autocast sorts ops into lists (see "Autocast Op Reference" in the
// torch.amp docs): ops that gain from tensor cores and accumulate in float32
// anyway (matmul, linear, conv) run in float16/bfloat16; ops whose range or
// precision matters (softmax, log_softmax, sums, exp/log/pow, losses, layer
// and group norm) run in float32; the rest, batch_norm among them, run in
// whatever their inputs are. ddl keeps the same lists for the ops it has,
// taking CUDA's lists on every device. Each listed op calls a hook at its
// top: a lower-precision op casts its inputs with to_low(); a float32 op
// re-enters itself on to_float32() inputs (`// See Note [Autocast]` marks the
// sites). The casts are ordinary recorded Variable::to ops, so the backward of
// a bf16 linear computes in bf16 and ToBackward hands its float32 weight a
// float32 gradient: master weights, and the optimizer state, stay float32.
// An unlisted op on a 16-bit and a float32 input (a float32 residual added to
// a bf16 linear) runs in float32; the engine casts the gradient it hands the
// 16-bit input back to 16 bits (Note [Gradient dtype] in autograd/node.cpp).
#include <ddl/autograd/autocast.h>

namespace ddl::autocast {
namespace {
struct State {
  bool enabled = false;
  DType dtype = DType::BFloat16;
};
thread_local State state;
}  // namespace

Guard::Guard(DType dtype, bool enabled) : prev_enabled_(state.enabled), prev_dtype_(state.dtype) {
  DDL_CHECK(is_reduced_float(dtype), "autocast::Guard: expected Float16 or BFloat16, got ", dtype);
  state.enabled = enabled;
  state.dtype = dtype;
}

Guard::~Guard() {
  state.enabled = prev_enabled_;
  state.dtype = prev_dtype_;
}

bool is_enabled() { return state.enabled; }
DType low_dtype() { return state.dtype; }

bool needs_low(const Variable& v) {
  // As cached_cast in PyTorch's aten/src/ATen/autocast_mode.h: every floating input but
  // float64 (is_autocast_eligible) whose dtype is not the autocast dtype, so under float16
  // a bfloat16 activation and a float32 weight both become float16.
  if (!state.enabled || !v.defined()) return false;
  const DType t = v.dtype();
  return t != state.dtype && (t == DType::Float32 || is_reduced_float(t));
}

Variable to_low(const Variable& v) { return needs_low(v) ? v.to(state.dtype) : v; }

bool needs_float32(const Variable& v) { return state.enabled && v.defined() && is_reduced_float(v.dtype()); }

Variable to_float32(const Variable& v) { return needs_float32(v) ? v.to(DType::Float32) : v; }

}  // namespace ddl::autocast
