// Frontends of the elementwise ops: broadcast, promote, allocate, dispatch.
#include "tensor/elementwise.h"

#include <limits>
#include <utility>

#include "tensor/elementwise_kernel.h"
#include "tensor/factory.h"
#include "tensor/reduce.h"

namespace ddl {
namespace kernels {
DDL_DEFINE_KERNEL(unary_kernel, UnaryFnPtr);
DDL_DEFINE_KERNEL(binary_kernel, BinaryFnPtr);
DDL_DEFINE_KERNEL(where_kernel, WhereFnPtr);
}  // namespace kernels

namespace {

const char* binary_name(BinaryOp op) {
  static const char* names[] = {"add", "sub", "mul", "div", "maximum",       "minimum",          "eq",           "ne",
                                "lt",  "le",  "gt",  "ge",  "relu_backward", "sigmoid_backward", "tanh_backward"};
  return names[static_cast<int>(op)];
}

void check_pair(const Tensor& a, const Tensor& b, const char* op) {
  DDL_CHECK(a.defined() && b.defined(), op, ": undefined operand");
  DDL_CHECK(a.device() == b.device(), op, ": operands on different devices (", describe(a), " and ", describe(b), ")");
}

// The dtype a binary kernel computes in: bools compare as uint8 (kernels of
// every backend are numeric only); arithmetic on bools is refused.
DType compute_type(BinaryOp op, DType t) {
  if (t != DType::Bool) return t;
  DDL_CHECK(is_comparison(op), "elementwise: arithmetic on bool tensors; convert with .to(DType::Float32)");
  return DType::UInt8;
}

// Whether 16-bit operands of dtype t go through float32 copies: on the CPU,
// whose kernels have no 16-bit cases, and wherever an operand has another dtype
// (an integer must reach float32 unrounded, as the cast path takes it). CUDA
// kernels load 16 bits, compute in float and round once: the same bits.
bool casts_to_float(DType t, const Tensor& a, const Tensor& b) {
  return is_reduced_float(t) && (!a.device().is_cuda() || a.dtype() != t || b.dtype() != t);
}

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b, double alpha = 1.0) {
  const char* name = binary_name(op);
  check_pair(a, b, name);
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), name);
  const DType t = promote_types(a.dtype(), b.dtype());
  if (casts_to_float(t, a, b)) {  // See Note [Half compute]
    const Tensor r = binary(op, a.to(DType::Float32), b.to(DType::Float32), alpha);
    return is_comparison(op) ? r : r.to(t);
  }
  const DType ct = compute_type(op, t);
  Tensor out = empty(shape, TensorOptions(is_comparison(op) ? DType::Bool : t, a.device()));
  kernels::binary_kernel(a.device())(op, out, a.to(ct).expand(shape), b.to(ct).expand(shape), alpha);
  return out;
}

// Whether the bytes a and b reach (first to last element, strides >= 0) intersect.
bool memory_overlaps(const Tensor& a, const Tensor& b) {
  if (!a.shares_storage(b) || a.numel() == 0 || b.numel() == 0) return false;
  auto range = [](const Tensor& t) {
    int64_t last = 0;
    for (int64_t d = 0; d < t.dim(); ++d) last += (t.size(d) - 1) * t.stride(d);
    const auto* first = static_cast<const char*>(t.raw_data());
    return std::pair{first, first + (last + 1) * static_cast<int64_t>(t.element_size())};
  };
  const auto [a0, a1] = range(a);
  const auto [b0, b1] = range(b);
  return a0 < b1 && b0 < a1;
}

// In place: self op= other, other broadcast to self's shape.
void binary_inplace(BinaryOp op, const Tensor& self, const Tensor& other_in, double alpha = 1.0) {
  const char* name = binary_name(op);
  check_pair(self, other_in, name);
  const Shape shape = broadcast_shapes(self.shape(), other_in.shape(), name);
  DDL_CHECK(shape == self.shape(), name, "_: in-place result of shape ", shape, " does not fit ", self.shape());
  // An operand that overlaps self other than element for element (x.add_(x.t()), x.add_(x[0]))
  // would be read after some of its elements were written: read a copy, so the result is
  // self op old-other on every device and thread count (PyTorch refuses such partial overlap).
  const bool same_view =
      other_in.raw_data() == self.raw_data() && other_in.shape() == shape && other_in.strides() == self.strides();
  const Tensor other = !same_view && memory_overlaps(self, other_in) ? other_in.clone() : other_in;
  if (casts_to_float(self.dtype(), self, other)) {  // See Note [Half compute]
    self.copy_(binary(op, self, other, alpha));
    return;
  }
  const DType ct = compute_type(op, self.dtype());
  kernels::binary_kernel(self.device())(op, self, self.to(ct), other.to(ct).expand(shape), alpha);
}

Tensor unary(UnaryOp op, const Tensor& x, double a = 0, double b = 0) {
  DDL_CHECK(x.defined(), "elementwise: undefined operand");
  const bool keeps_int =
      op == UnaryOp::Neg || op == UnaryOp::Abs || op == UnaryOp::Sign || op == UnaryOp::Relu || op == UnaryOp::Clamp;
  // Math functions of integers give floats, as in PyTorch.
  const Tensor in = is_floating(x.dtype()) || keeps_int ? x : x.to(DType::Float32);
  if (casts_to_float(in.dtype(), in, in))
    return unary(op, in.to(DType::Float32), a, b).to(in.dtype());  // Note [Half compute]
  Tensor out = empty(in.shape(), TensorOptions(in.dtype(), in.device()));
  kernels::unary_kernel(in.device())(op, out, in, a, b);
  return out;
}

Tensor scalar_like(const Tensor& a, double v) {
  return scalar_tensor(v, TensorOptions(is_floating(a.dtype()) ? a.dtype() : DType::Float64, a.device()));
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b, double alpha) { return binary(BinaryOp::Add, a, b, alpha); }
Tensor sub(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Sub, a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Mul, a, b); }
Tensor div(const Tensor& a, const Tensor& b) {
  if (!is_floating(a.dtype()) && !is_floating(b.dtype()))
    return binary(BinaryOp::Div, a.to(DType::Float32), b.to(DType::Float32));
  return binary(BinaryOp::Div, a, b);
}
Tensor maximum(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Maximum, a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Minimum, a, b); }

Tensor add(const Tensor& a, double b) {
  return is_floating(a.dtype()) ? unary(UnaryOp::AddScalar, a, b) : add(a, scalar_like(a, b));
}
Tensor sub(const Tensor& a, double b) { return add(a, -b); }
Tensor mul(const Tensor& a, double b) {
  return is_floating(a.dtype()) ? unary(UnaryOp::MulScalar, a, b) : mul(a, scalar_like(a, b));
}
Tensor div(const Tensor& a, double b) {
  return mul(a.to(is_floating(a.dtype()) ? a.dtype() : DType::Float32), 1.0 / b);
}
Tensor rsub(const Tensor& a, double b) {
  return is_floating(a.dtype()) ? unary(UnaryOp::RsubScalar, a, b) : sub(scalar_like(a, b), a);
}
Tensor pow(const Tensor& a, double e) { return unary(UnaryOp::PowScalar, a, e); }

Tensor neg(const Tensor& a) { return unary(UnaryOp::Neg, a); }
Tensor exp(const Tensor& a) { return unary(UnaryOp::Exp, a); }
Tensor log(const Tensor& a) { return unary(UnaryOp::Log, a); }
Tensor sqrt(const Tensor& a) { return unary(UnaryOp::Sqrt, a); }
Tensor rsqrt(const Tensor& a) { return unary(UnaryOp::Rsqrt, a); }
Tensor abs(const Tensor& a) { return unary(UnaryOp::Abs, a); }
Tensor sign(const Tensor& a) { return unary(UnaryOp::Sign, a); }
Tensor relu(const Tensor& a) { return unary(UnaryOp::Relu, a); }
Tensor sigmoid(const Tensor& a) { return unary(UnaryOp::Sigmoid, a); }
Tensor tanh(const Tensor& a) { return unary(UnaryOp::Tanh, a); }
Tensor erf(const Tensor& a) { return unary(UnaryOp::Erf, a); }
Tensor clamp(const Tensor& a, double lo, double hi) {
  DDL_CHECK(lo <= hi, "clamp: lower bound ", lo, " exceeds upper bound ", hi);
  return unary(UnaryOp::Clamp, a, lo, hi);
}
Tensor clamp(const Tensor& a, std::optional<double> lo, std::optional<double> hi) {
  DDL_CHECK(lo || hi, "clamp: at least one of min and max must be given");
  if (lo && hi) return clamp(a, *lo, *hi);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (is_floating(a.dtype())) return clamp(a, lo.value_or(-kInf), hi.value_or(kInf));
  // Integer kernels cannot hold an infinite bound: select instead (the bound cast to a's dtype, as above).
  const Tensor bound = scalar_tensor(lo ? *lo : *hi, TensorOptions(a.dtype(), a.device()));
  return where(lo ? lt(a, bound) : gt(a, bound), bound, a);
}

Tensor eq(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Eq, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Ne, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Lt, a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Le, a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Gt, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Ge, a, b); }
Tensor eq(const Tensor& a, double b) { return eq(a, scalar_like(a, b)); }
Tensor ne(const Tensor& a, double b) { return ne(a, scalar_like(a, b)); }
Tensor lt(const Tensor& a, double b) { return lt(a, scalar_like(a, b)); }
Tensor le(const Tensor& a, double b) { return le(a, scalar_like(a, b)); }
Tensor gt(const Tensor& a, double b) { return gt(a, scalar_like(a, b)); }
Tensor ge(const Tensor& a, double b) { return ge(a, scalar_like(a, b)); }

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  check_pair(a, b, "where");
  check_pair(cond, a, "where");
  const Shape shape = broadcast_shapes(broadcast_shapes(cond.shape(), a.shape(), "where"), b.shape(), "where");
  const DType t = promote_types(a.dtype(), b.dtype());
  if (casts_to_float(t, a, b))
    return where(cond, a.to(DType::Float32), b.to(DType::Float32)).to(t);  // Note [Half compute]
  const Tensor c = cond.dtype() == DType::Bool ? cond : ne(cond, 0.0);
  Tensor out = empty(shape, TensorOptions(t, a.device()));
  kernels::where_kernel(a.device())(out, c.expand(shape), a.to(t).expand(shape), b.to(t).expand(shape));
  return out;
}

Tensor relu_backward(const Tensor& grad, const Tensor& input) { return binary(BinaryOp::ReluBackward, grad, input); }
Tensor sigmoid_backward(const Tensor& grad, const Tensor& output) {
  return binary(BinaryOp::SigmoidBackward, grad, output);
}
Tensor tanh_backward(const Tensor& grad, const Tensor& output) { return binary(BinaryOp::TanhBackward, grad, output); }

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol) {
  if (a.shape() != b.shape()) return false;
  if (a.numel() == 0) return true;
  const Tensor ad = a.to(DType::Float64), bd = b.to(DType::Float64);
  const Tensor diff = abs(sub(ad, bd));
  const Tensor tol = add(mul(abs(bd), rtol), atol);
  // NaN in either operand fails: le(NaN, tol) is false.
  return sum(le(diff, tol).to(DType::Int64)).item() == static_cast<double>(a.numel());
}

const Tensor& Tensor::add_(const Tensor& other, double alpha) const {
  binary_inplace(BinaryOp::Add, *this, other, alpha);
  return *this;
}
const Tensor& Tensor::mul_(const Tensor& other) const {
  binary_inplace(BinaryOp::Mul, *this, other);
  return *this;
}
const Tensor& Tensor::div_(const Tensor& other) const {
  binary_inplace(BinaryOp::Div, *this, other);
  return *this;
}
const Tensor& Tensor::add_(double value) const {
  DDL_CHECK(defined(), "add_: undefined tensor");
  if (casts_to_float(dtype(), *this, *this))
    return copy_(unary(UnaryOp::AddScalar, *this, value));  // Note [Half compute]
  kernels::unary_kernel(device())(UnaryOp::AddScalar, *this, *this, value, 0);
  return *this;
}
const Tensor& Tensor::mul_(double value) const {
  DDL_CHECK(defined(), "mul_: undefined tensor");
  if (casts_to_float(dtype(), *this, *this))
    return copy_(unary(UnaryOp::MulScalar, *this, value));  // Note [Half compute]
  kernels::unary_kernel(device())(UnaryOp::MulScalar, *this, *this, value, 0);
  return *this;
}
const Tensor& Tensor::clamp_(double lo, double hi) const {
  DDL_CHECK(defined() && lo <= hi, "clamp_: undefined tensor or lower bound ", lo, " above ", hi);
  if (casts_to_float(dtype(), *this, *this)) return copy_(unary(UnaryOp::Clamp, *this, lo, hi));  // Note [Half compute]
  kernels::unary_kernel(device())(UnaryOp::Clamp, *this, *this, lo, hi);
  return *this;
}

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator-(const Tensor& a) { return neg(a); }
Tensor operator+(const Tensor& a, double b) { return add(a, b); }
Tensor operator-(const Tensor& a, double b) { return sub(a, b); }
Tensor operator*(const Tensor& a, double b) { return mul(a, b); }
Tensor operator/(const Tensor& a, double b) { return div(a, b); }
Tensor operator+(double a, const Tensor& b) { return add(b, a); }
Tensor operator-(double a, const Tensor& b) { return rsub(b, a); }
Tensor operator*(double a, const Tensor& b) { return mul(b, a); }

}  // namespace ddl
