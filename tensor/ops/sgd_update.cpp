// sgd_update_ frontend: checks the operands, then takes the device's kernel when
// the fused preconditions hold, the composite otherwise (tensor/ops/sgd_update.h).
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/sgd_update.h>

namespace ddl::kernels {
DDL_DEFINE_KERNEL(sgd_update_kernel, SgdUpdateFn);
}  // namespace ddl::kernels

namespace ddl {
namespace {

// What a fused kernel needs: contiguous operands of one float dtype, in separate storage
// (the composite's in-place ops copy an overlapping operand first; the kernel cannot).
bool fusable(const Tensor& w, const Tensor& grad, const Tensor& buf) {
  const DType t = w.dtype();
  return is_floating(t) && grad.dtype() == t && w.is_contiguous() && grad.is_contiguous() && !grad.shares_storage(w) &&
         (!buf.defined() ||
          (buf.dtype() == t && buf.is_contiguous() && !buf.shares_storage(w) && !buf.shares_storage(grad)));
}

}  // namespace

namespace detail {

// Exactly the ops optim::SGD::step ran per parameter before this op existed, so the
// CPU's bits are unchanged.
void sgd_update_composite(const Tensor& w, const Tensor& grad, Tensor& momentum_buffer, const SgdUpdate& o) {
  Tensor d = grad;
  if (o.weight_decay != 0) d = add(d, w, o.weight_decay);
  if (o.momentum != 0) {
    if (!momentum_buffer.defined()) {
      momentum_buffer = d.clone();
    } else {
      momentum_buffer.mul_(o.momentum).add_(d, 1 - o.dampening);
    }
    d = o.nesterov ? add(d, momentum_buffer, o.momentum) : momentum_buffer;
  }
  w.add_(d, -o.lr);
}

}  // namespace detail

void sgd_update_(const Tensor& w, const Tensor& grad, Tensor& momentum_buffer, const SgdUpdate& o) {
  const char* op = "sgd_update_";
  DDL_CHECK(w.defined() && grad.defined(), op, ": the parameter and its gradient must be defined");
  DDL_CHECK(grad.shape() == w.shape(), op, ": the gradient has shape ", grad.shape(), " but the parameter has ",
            w.shape());
  DDL_CHECK(grad.device() == w.device(), op, ": the gradient is on ", grad.device(), " but the parameter is on ",
            w.device());
  DDL_CHECK(o.momentum != 0 || !momentum_buffer.defined(), op,
            ": momentum is 0, so no momentum buffer is expected (pass an undefined tensor)");
  if (momentum_buffer.defined()) {
    DDL_CHECK(momentum_buffer.shape() == w.shape(), op, ": the momentum buffer has shape ", momentum_buffer.shape(),
              " but the parameter has ", w.shape());
    DDL_CHECK(momentum_buffer.device() == w.device(), op, ": the momentum buffer is on ", momentum_buffer.device(),
              " but the parameter is on ", w.device());
  }
  w.bump_version();  // every in-place write counts (the buffer's too): see Storage::version
  momentum_buffer.bump_version();
  if (fusable(w, grad, momentum_buffer))
    kernels::sgd_update_kernel(w.device())(w, grad, momentum_buffer, o);
  else
    detail::sgd_update_composite(w, grad, momentum_buffer, o);
}

}  // namespace ddl
