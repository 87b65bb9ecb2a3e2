// In-place ops on a Variable (add_, mul_, fill_, copy_, ...), recorded in the graph.
//
// Note [In-place on views]: an in-place op computes the new value out of place, with the
// differentiable op it is the in-place form of (so its gradient is that op's), writes it into
// the variable's storage with Tensor::copy_ (which bumps the storage's version, so a backward
// that saved the old values raises, Note [Saved tensor versions] in node.cpp), and makes the
// result's node the variable's grad_fn: every handle of the variable sees the new history.
// An op whose backward reads the variable's old values (mul_, div_) computes from a clone, so
// that the write does not invalidate its own node. When the variable is a view of another
// variable (made by view, select, slice, operator[], ...: VariableImpl::view_base), the write
// also changed the base, so the base's history is updated as PyTorch's CopySlices does: the
// base's new grad_fn sends the gradient of the written region through the op, and the rest
// to the base's old history; the view then becomes a strided view of the new base. This is
// how `out[i] = f(x)` into a zeros tensor carries x's gradient. A base that is not contiguous
// is refused.
//
// Note [Views after an in-place write]: other views of the base, taken before the write, still
// hold a history that describes the old values: a gradient through them would be silently
// wrong. As PyTorch (VariableHooks::grad_fn in torch/csrc/autograd/variable.cpp), such a view's
// grad_fn is rebuilt, when next read, as an as_strided view of the base's current history. A
// view knows it is stale by a count on its base of the recorded writes into the base or its
// views (VariableImpl::history_epoch), not by the storage version: a write that records
// nothing (an optimizer step, a NoGradGuard write) leaves every history true, so views keep
// theirs. A view taken under NoGradGuard is refused then, as PyTorch refuses it, and so is a
// view of a non-contiguous base. retain_grad carries over to the new node; hooks do not (as 1.13).
#include <ddl/autograd/grad_mode.h>
#include <ddl/autograd/node.h>
#include <ddl/autograd/ops/elementwise.h>
#include <ddl/autograd/variable_impl.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/indexing.h>
#include <ddl/tensor/ops/reduce.h>

namespace ddl {

namespace autograd::detail {
namespace {
using Grads = std::vector<Tensor>;
using Needs = std::vector<bool>;
}  // namespace

Variable as_view(Variable out, const Variable& in) {
  if (!out.defined() || !in.defined() || out.impl() == in.impl() || !out.data().shares_storage(in.data())) return out;
  VariableImpl& view = *out.impl();
  view.view_base = in.impl()->view_base ? in.impl()->view_base : in.impl_ptr();
  view.history_epoch = view.view_base->history_epoch;
  view.view_made_without_grad = !is_grad_enabled();
  return out;
}

// See Note [Views after an in-place write].
void regenerate_view(const std::shared_ptr<VariableImpl>& view_ptr) {
  VariableImpl& view = *view_ptr;
  const std::shared_ptr<VariableImpl> base = view.view_base;
  DDL_CHECK(!view.view_made_without_grad,
            "a view was created in no_grad mode and its base or another view of its base has been modified "
            "inplace with grad mode enabled; take the view and write in place both inside NoGradGuard or both "
            "outside it");
  const Tensor bd = base->data, vd = view.data;
  DDL_CHECK(bd.is_contiguous() && vd.offset() >= bd.offset(), "a view of shape ", vd.shape(),
            " was taken before an in-place change of its base, of shape ", bd.shape(),
            ", which is not contiguous, so its history cannot be rebuilt; take the view again after the write");
  const Shape vshape = vd.shape(), bshape = bd.shape();
  const Strides vstrides = vd.strides();
  const int64_t rel = vd.offset() - bd.offset();
  const DType bt = bd.dtype();
  GradModeGuard grad_on(true);
  const Variable base_var(base);
  // The base's gradient: g's elements added at the positions the view reads (several, for an
  // overlapping view such as expand's).
  Variable rebuilt = make_result(vd, "AsStridedBackward", {&base_var},
                                 [vshape, vstrides, rel, bshape, bt](const Tensor& g, const Needs&) -> Grads {
                                   const Tensor at = ddl::arange(bshape.numel(), TensorOptions(kInt64, g.device()))
                                                         .as_strided(vshape, vstrides, rel)
                                                         .contiguous()
                                                         .view({-1});
                                   const Tensor flat = ddl::zeros({bshape.numel()}, TensorOptions(bt, g.device()));
                                   return {index_add(flat, 0, at, g.contiguous().view({-1}).to(bt)).view(bshape)};
                                 });
  if (view.grad_fn && rebuilt.grad_fn() && view.grad_fn->retains(view_ptr.get()))  // as PyTorch, keep retain_grad
    rebuilt.grad_fn()->set_retained(view_ptr);
  view.grad_fn = rebuilt.grad_fn();
  view.requires_grad = rebuilt.requires_grad();
  view.history_epoch = base->history_epoch;
}
}  // namespace autograd::detail

namespace {

using autograd::make_result;
using Grads = std::vector<Tensor>;
using Needs = std::vector<bool>;

// The variable's values before the write, with its history: the variable itself, or (when the
// op's backward reads those values) a clone carrying the same grad_fn.
Variable old_values(const Variable& self, bool clone) {
  if (!clone) return self;
  auto impl = std::make_shared<VariableImpl>();
  impl->data = self.data().clone();
  impl->requires_grad = self.requires_grad();
  impl->grad_fn = self.grad_fn();
  return Variable(std::move(impl));
}

// After the write into the view `self` of `base`: see Note [In-place on views].
void rebase_view(const Variable& self, const std::shared_ptr<VariableImpl>& base, const Variable& result,
                 const char* op) {
  const Tensor bd = base->data;
  DDL_CHECK(bd.is_contiguous(), op, ": an in-place write into a view of a non-contiguous variable of shape ",
            bd.shape(), " is not supported; write into a view of base.contiguous() instead");
  const Shape vshape = self.shape();
  const Strides vstrides = self.data().strides();
  const int64_t rel = self.data().offset() - bd.offset();
  auto region = [vshape, vstrides, rel](const Tensor& t) { return t.as_strided(vshape, vstrides, t.offset() + rel); };
  const Variable base_before(base);
  Variable copied =
      make_result(bd, "CopySlices", {&base_before, &result}, [region](const Tensor& g, const Needs& needs) -> Grads {
        const Tensor gc = g.contiguous();
        Grads out(2);
        if (needs[1]) out[1] = region(gc).contiguous();
        if (needs[0]) {
          Tensor rest = gc.clone();
          region(rest).zero_();
          out[0] = std::move(rest);
        }
        return out;
      });
  if (!copied.grad_fn()) return;
  base->grad_fn = copied.grad_fn();
  base->requires_grad = true;
  ++base->history_epoch;  // See Note [Views after an in-place write]
  const Variable base_after(base);
  const Shape bshape = bd.shape();
  const DType bt = bd.dtype();
  Variable view = make_result(self.data(), "AsStridedBackward", {&base_after},
                              [region, bshape, bt](const Tensor& g, const Needs&) -> Grads {
                                Tensor gb = zeros(bshape, TensorOptions(bt, g.device()));
                                region(gb).copy_(g);
                                return {gb};
                              });
  self.impl()->grad_fn = view.grad_fn();
  self.impl()->requires_grad = true;
  self.impl()->history_epoch = base->history_epoch;
}

// compute(old) gives the new value as a differentiable Variable; plain(t) is the Tensor op,
// run when nothing is recorded.
template <typename Compute, typename Plain>
const Variable& apply_inplace(const Variable& self, const char* op, const Variable* other, bool reads_old,
                              Compute compute, Plain plain) {
  DDL_CHECK(self.defined(), op, ": the variable is undefined");
  const std::shared_ptr<VariableImpl> base = self.impl()->view_base;
  const bool other_rg = other && other->defined() && other->requires_grad();
  const bool base_rg = base && base->requires_grad;
  const bool record = is_grad_enabled() && (self.requires_grad() || other_rg || base_rg) && is_floating(self.dtype());
  if (!record) {
    plain(self.data());
    return self;
  }
  DDL_CHECK(!(self.is_leaf() && self.requires_grad()), op,
            ": a leaf Variable that requires grad is being used in an in-place operation; write under NoGradGuard "
            "(as an optimizer step does), or into a clone()");
  DDL_CHECK(!(base && !base->grad_fn && base->requires_grad), op,
            ": a view of a leaf Variable that requires grad is being used in an in-place operation; write under "
            "NoGradGuard, or into a clone()");
  Variable result = compute(old_values(self, reads_old));
  if (result.dtype() != self.dtype()) result = result.to(self.dtype());
  DDL_CHECK(result.shape() == self.shape(), op, ": output with shape ", self.shape(),
            " doesn't match the broadcast shape ", result.shape());
  {
    NoGradGuard no_grad;
    self.data().copy_(result.data());
  }
  if (base) {
    rebase_view(self, base, result, op);
  } else if (result.grad_fn()) {
    self.impl()->grad_fn = result.grad_fn();
    self.impl()->requires_grad = true;
    ++self.impl()->history_epoch;  // its views are now stale: Note [Views after an in-place write]
  }
  return self;
}

Variable scaled(const Variable& v, double alpha) { return alpha == 1.0 ? v : mul(v, alpha); }

}  // namespace

const Variable& Variable::add_(const Variable& other, double alpha) const {
  return apply_inplace(
      *this, "add_", &other, false, [&](const Variable& old) { return add(old, scaled(other, alpha)); },
      [&](const Tensor& t) { t.add_(other.data(), alpha); });
}

const Variable& Variable::sub_(const Variable& other, double alpha) const {
  return apply_inplace(
      *this, "sub_", &other, false, [&](const Variable& old) { return sub(old, scaled(other, alpha)); },
      [&](const Tensor& t) {
        if (alpha == 1.0)
          t.sub_(other.data());
        else
          t.add_(other.data(), -alpha);
      });
}

const Variable& Variable::mul_(const Variable& other) const {
  return apply_inplace(
      *this, "mul_", &other, true, [&](const Variable& old) { return mul(old, other); },
      [&](const Tensor& t) { t.mul_(other.data()); });
}

const Variable& Variable::div_(const Variable& other) const {
  return apply_inplace(
      *this, "div_", &other, true, [&](const Variable& old) { return div(old, other); },
      [&](const Tensor& t) { t.div_(other.data()); });
}

const Variable& Variable::add_(double value) const {
  return apply_inplace(
      *this, "add_", nullptr, false, [&](const Variable& old) { return add(old, value); },
      [&](const Tensor& t) { t.add_(value); });
}

const Variable& Variable::sub_(double value) const {
  return apply_inplace(
      *this, "sub_", nullptr, false, [&](const Variable& old) { return sub(old, value); },
      [&](const Tensor& t) { t.add_(-value); });
}

const Variable& Variable::mul_(double value) const {
  return apply_inplace(
      *this, "mul_", nullptr, false, [&](const Variable& old) { return mul(old, value); },
      [&](const Tensor& t) { t.mul_(value); });
}

const Variable& Variable::div_(double value) const {
  return apply_inplace(
      *this, "div_", nullptr, false, [&](const Variable& old) { return div(old, value); },
      [&](const Tensor& t) { t.div_(value); });
}

const Variable& Variable::fill_(double value) const {
  return apply_inplace(
      *this, "fill_", nullptr, false,
      [&](const Variable& old) {
        return make_result(full_like(old.data(), value), "FillBackward", {&old},
                           [](const Tensor& g, const Needs&) -> Grads { return {zeros_like(g)}; });
      },
      [&](const Tensor& t) { t.fill_(value); });
}

const Variable& Variable::clamp_(std::optional<double> min, std::optional<double> max) const {
  return apply_inplace(
      *this, "clamp_", nullptr, false, [&](const Variable& old) { return ddl::clamp(old, min, max); },
      [&](const Tensor& t) {
        DDL_CHECK(min || max, "clamp_: at least one of min and max must be given");
        t.copy_(ddl::clamp(t, min, max));
      });
}

const Variable& Variable::copy_(const Variable& src) const {
  DDL_CHECK(src.defined(), "copy_: the source variable is undefined");
  return apply_inplace(
      *this, "copy_", &src, false,
      [&](const Variable& old) {
        const Shape ss = src.shape();
        const Device sd = src.device();
        DDL_CHECK(broadcast_shapes(ss, shape(), "copy_") == shape(), "copy_: the source of shape ", ss,
                  " cannot be broadcast to the destination's shape ", shape());
        const Tensor value = src.data().to(device()).to(dtype()).expand(shape()).contiguous();
        return make_result(value, "CopyBackwards", {&old, &src},
                           [ss, sd](const Tensor& g, const Needs& needs) -> Grads {
                             Grads out(2);
                             if (needs[0]) out[0] = zeros_like(g);
                             if (needs[1]) out[1] = sum_to(g.to(sd), ss);
                             return out;
                           });
      },
      [&](const Tensor& t) { t.copy_(src.data()); });
}

}  // namespace ddl
