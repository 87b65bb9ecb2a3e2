// Frontends of the elementwise ops: broadcast, promote, allocate, dispatch.
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/kernels/elementwise_kernel.h>
#include <ddl/tensor/ops/elementwise.h>
#include <ddl/tensor/ops/reduce.h>

namespace ddl {
namespace kernels {
DDL_DEFINE_KERNEL(unary_kernel, UnaryFnPtr);
DDL_DEFINE_KERNEL(binary_kernel, BinaryFnPtr);
DDL_DEFINE_KERNEL(where_kernel, WhereFnPtr);
}  // namespace kernels

namespace {

const char* binary_name(BinaryOp op) {
  static const char* names[] = {
      "add", "sub", "mul", "div",           "maximum",          "minimum",       "eq",    "ne",   "lt",
      "le",  "gt",  "ge",  "relu_backward", "sigmoid_backward", "tanh_backward", "atan2", "fmod", "remainder",
      "pow", "div", "div"};
  return names[static_cast<int>(op)];
}

void check_pair(const Tensor& a, const Tensor& b, const char* op) {
  DDL_CHECK(a.defined() && b.defined(), op, ": undefined operand");
  DDL_CHECK(a.device() == b.device(), op, ": operands on different devices (", describe(a), " and ", describe(b), ")");
}

// The dtype a binary kernel computes in: bools as uint8 (kernels of every
// backend are numeric only). Arithmetic on two bools gives a bool, as in PyTorch
// (add is or, mul is and); subtraction with a bool is refused, as there.
DType compute_type(DType t) { return t == DType::Bool ? DType::UInt8 : t; }

void check_no_bool_sub(BinaryOp op, const Tensor& a, const Tensor& b, const char* name) {
  DDL_CHECK(op != BinaryOp::Sub || (a.dtype() != DType::Bool && b.dtype() != DType::Bool), name,
            ": subtraction with a bool tensor is not supported (", describe(a), ", ", describe(b),
            "); for exclusive or use ne(), or convert with .to(DType::Int64)");
}

// Whether 16-bit operands of dtype t go through float32 copies: on the CPU,
// whose kernels have no 16-bit cases, and wherever an operand has another dtype
// (an integer must reach float32 unrounded, as the cast path takes it). CUDA
// kernels load 16 bits, compute in float and round once: the same bits.
bool casts_to_float(DType t, const Tensor& a, const Tensor& b) {
  return is_reduced_float(t) && (!a.device().is_cuda() || a.dtype() != t || b.dtype() != t);
}

// Note [0-d operands]
// As torch.result_type: a 0-d tensor operand weighs less than a dimensioned one. Its dtype
// counts only when its category (bool < integer < float) is higher: f32[3] + f64[] is
// float32 and i32[3] + i64[] int32, but i32[3] + f64[] float64 and bool[3] + i32[] int32
// (PyTorch's "Type promotion" docs, and combine_categories in its TypeProperties.cpp).
int category(DType t) { return t == DType::Bool ? 0 : is_floating(t) ? 2 : 1; }

DType result_type(const Tensor& a, const Tensor& b) {
  if ((a.dim() == 0) == (b.dim() == 0)) return promote_types(a.dtype(), b.dtype());
  const DType dimensioned = a.dim() == 0 ? b.dtype() : a.dtype(), zero_dim = a.dim() == 0 ? a.dtype() : b.dtype();
  return category(zero_dim) > category(dimensioned) ? promote_types(dimensioned, zero_dim) : dimensioned;
}

// As torch.add: an integer or bool result takes only an integral alpha (a non-integral
// double is a Python float there; an integral one cannot be told from an int).
void check_alpha(BinaryOp op, DType t, double alpha, const char* name) {
  DDL_CHECK(op != BinaryOp::Add || is_floating(t) || alpha == std::trunc(alpha), name,
            ": for integral input tensors, argument alpha must not be a floating point number, got alpha = ", alpha,
            " for a ", t, " result");
}

Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b, double alpha = 1.0, const char* name = nullptr) {
  if (!name) name = binary_name(op);
  check_pair(a, b, name);
  check_no_bool_sub(op, a, b, name);
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), name);
  const DType t = result_type(a, b);  // Note [0-d operands]
  check_alpha(op, t, alpha, name);
  if (casts_to_float(t, a, b)) {  // See Note [Half compute]
    const Tensor r = binary(op, a.to(DType::Float32), b.to(DType::Float32), alpha, name);
    return is_comparison(op) ? r : r.to(t);
  }
  const DType ct = compute_type(t);
  const bool bool_math = t == DType::Bool && !is_comparison(op);  // computed in uint8, then nonzero
  Tensor out = empty(shape, TensorOptions(is_comparison(op) ? DType::Bool : ct, a.device()));
  kernels::binary_kernel(a.device())(op, out, a.to(ct).expand(shape), b.to(ct).expand(shape), alpha);
  return bool_math ? out.to(DType::Bool) : out;
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
// Whether a result of dtype `from` may be written into a tensor of dtype `to`, as torch's
// can_cast for in-place ops: never a float into an integer, nor a number into a bool.
void check_can_cast(DType from, DType to, const char* name) {
  DDL_CHECK((is_floating(to) || !is_floating(from)) && (to != DType::Bool || from == DType::Bool), name,
            "_: result type ", from, " can't be cast to the desired output type ", to);
}

void binary_inplace(BinaryOp op, const Tensor& self, const Tensor& other_in, double alpha = 1.0,
                    const char* name = nullptr) {
  if (!name) name = binary_name(op);
  const std::string called = std::string(name) + "_";
  check_pair(self, other_in, called.c_str());
  check_no_bool_sub(op, self, other_in, called.c_str());
  const Shape shape = broadcast_shapes(self.shape(), other_in.shape(), called.c_str());
  DDL_CHECK(shape == self.shape(), called, ": in-place result of shape ", shape, " does not fit ", self.shape());
  const DType result = result_type(self, other_in);  // Note [0-d operands]
  check_alpha(op, result, alpha, called.c_str());
  check_can_cast(op == BinaryOp::Div ? promote_types(DType::Float32, result) : result, self.dtype(), name);
  // An operand that overlaps self other than element for element (x.add_(x.t()), x.add_(x[0]))
  // would be read after some of its elements were written: read a copy, so the result is
  // self op old-other on every device and thread count (PyTorch refuses such partial overlap).
  const bool same_view =
      other_in.raw_data() == self.raw_data() && other_in.shape() == shape && other_in.strides() == self.strides();
  const Tensor other = !same_view && memory_overlaps(self, other_in) ? other_in.clone() : other_in;
  self.bump_version();                              // every in-place write counts: see Storage::version
  if (casts_to_float(self.dtype(), self, other)) {  // See Note [Half compute]
    self.copy_(binary(op, self, other, alpha));
    return;
  }
  if (self.dtype() == DType::Bool) {  // computed in uint8 (see compute_type)
    self.copy_(binary(op, self, other, alpha, name));
    return;
  }
  kernels::binary_kernel(self.device())(op, self, self, other.to(self.dtype()).expand(shape), alpha);
}

Tensor unary(UnaryOp op, const Tensor& x, const char* name, double a = 0, double b = 0) {
  DDL_CHECK(x.defined(), name, ": undefined operand");
  const bool keeps_int = op == UnaryOp::Neg || op == UnaryOp::Abs || op == UnaryOp::Sign || op == UnaryOp::Relu ||
                         op == UnaryOp::Clamp || op == UnaryOp::PowScalar || op == UnaryOp::AddScalar ||
                         op == UnaryOp::MulScalar || op == UnaryOp::RsubScalar;
  if (x.dtype() == DType::Bool && keeps_int) {
    // As PyTorch: sign keeps a bool; neg, abs and relu of one are refused.
    DDL_CHECK(op == UnaryOp::Sign, name, ": not supported for a bool tensor (", describe(x),
              "); convert it with .to(DType::Int64)");
    return x.clone();
  }
  // Math functions of integers give floats, as in PyTorch.
  const Tensor in = is_floating(x.dtype()) || keeps_int ? x : x.to(DType::Float32);
  if (casts_to_float(in.dtype(), in, in))
    return unary(op, in.to(DType::Float32), name, a, b).to(in.dtype());  // Note [Half compute]
  Tensor out = empty(in.shape(), TensorOptions(in.dtype(), in.device()));
  kernels::unary_kernel(in.device())(op, out, in, a, b);
  return out;
}

// Note [Scalar operands]
// A double scalar stands for a Python number: an integral value in int64's range for a
// Python int, anything else (0.5, inf, NaN, 1e20) for a Python float. As in PyTorch's
// type promotion, a Python int leaves an integer tensor's dtype alone (a bool one becomes
// int64) and a Python float makes an integer or bool result float32, the default dtype;
// a floating tensor keeps its dtype. (PyTorch gives float32 for add(int_tensor, 2.0) too:
// a double cannot tell 2.0 from 2, and ddl reads it as the int.)
bool is_int_scalar(double v) { return v == std::trunc(v) && v >= -0x1p63 && v < 0x1p63; }

DType scalar_result_type(DType t, double v) {
  if (is_floating(t)) return t;
  if (!is_int_scalar(v)) return DType::Float32;
  return t == DType::Bool ? DType::Int64 : t;
}

// v as a 0-d tensor of the integer dtype t, wrapping as PyTorch does (uint8 + 300 adds 44).
Tensor int_scalar(double v, DType t, Device device) {
  const Tensor s = scalar_tensor(v, TensorOptions(DType::Int64, device));
  return t == DType::Int64 ? s : s.to(t);
}

// a + v, a * v and v - a by the rules of Note [Scalar operands].
Tensor scalar_op(UnaryOp op, const Tensor& a, double v, const char* name) {
  DDL_CHECK(a.defined(), name, ": undefined operand");
  DDL_CHECK(op != UnaryOp::RsubScalar || a.dtype() != DType::Bool, name,
            ": subtraction with a bool tensor is not supported (", describe(a), "); convert with .to(DType::Int64)");
  const DType t = scalar_result_type(a.dtype(), v);
  const Tensor x = a.dtype() == t ? a : a.to(t);
  if (is_floating(t)) return unary(op, x, name, v);
  const Tensor s = int_scalar(v, t, a.device());
  if (op == UnaryOp::AddScalar) return binary(BinaryOp::Add, x, s, 1.0, name);
  if (op == UnaryOp::MulScalar) return binary(BinaryOp::Mul, x, s, 1.0, name);
  return binary(BinaryOp::Sub, s, x, 1.0, name);
}

// The scalar a comparison with x reads: int64 for a Python int against an integer or bool
// tensor (exact, and uint8 against 300 does not wrap), else float64 or x's float dtype.
Tensor compare_scalar(const Tensor& x, double v) {
  const DType t = is_floating(x.dtype()) ? x.dtype() : is_int_scalar(v) ? DType::Int64 : DType::Float64;
  return scalar_tensor(v, TensorOptions(t, x.device()));
}

// clamp and clamp_ (a missing bound is std::nullopt), with the result dtype of Note [Scalar
// operands]. As torch.clamp: a NaN bound gives NaN, except that with only one bound given
// a NaN one leaves x as it is; lo > hi gives hi.
Tensor clamp_impl(const Tensor& a, std::optional<double> lo, std::optional<double> hi, const char* name) {
  DDL_CHECK(a.defined(), name, ": undefined operand");
  DDL_CHECK(lo || hi, name, ": at least one of min and max must be given");
  DType t = a.dtype();
  for (const auto& bound : {lo, hi})
    if (bound) t = scalar_result_type(t, *bound);
  const Tensor x = a.dtype() == t ? a : a.to(t);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (is_floating(t)) {
    if (!(lo && hi) && std::isnan(lo ? *lo : *hi)) return x.shares_storage(a) ? x.clone() : x;
    return unary(UnaryOp::Clamp, x, name, lo.value_or(-kInf), hi.value_or(kInf));
  }
  // As c10::checked_convert, a uint8 bound may be negative down to -255 and wraps (-1 is 255).
  const double least = t == DType::UInt8 ? -255.0 : integral_range(t).first, most = integral_range(t).second;
  for (auto* bound : {&lo, &hi}) {
    if (!*bound) continue;
    const double b = **bound;
    DDL_CHECK(b >= least && (t == DType::Int64 ? b < most : b <= most), name, ": bound ", b, " cannot be converted to ",
              t, " without overflow");
    if (b < 0 && t == DType::UInt8) *bound = b + 256;
  }
  if (lo && hi) return unary(UnaryOp::Clamp, x, name, *lo, *hi);
  // One bound: int64's other end is no double, so select instead.
  const Tensor bound = int_scalar(lo ? *lo : *hi, t, a.device());
  return where(lo ? binary(BinaryOp::Lt, x, bound, 1.0, name) : binary(BinaryOp::Gt, x, bound, 1.0, name), bound, x);
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

Tensor add(const Tensor& a, double b) { return scalar_op(UnaryOp::AddScalar, a, b, "add"); }
Tensor sub(const Tensor& a, double b) {
  DDL_CHECK(!a.defined() || a.dtype() != DType::Bool, "sub: subtraction with a bool tensor is not supported (",
            describe(a), "); convert with .to(DType::Int64)");
  return scalar_op(UnaryOp::AddScalar, a, -b, "sub");
}
Tensor mul(const Tensor& a, double b) { return scalar_op(UnaryOp::MulScalar, a, b, "mul"); }
Tensor div(const Tensor& a, double b) {
  DDL_CHECK(a.defined(), "div: undefined operand");
  return scalar_op(UnaryOp::MulScalar, a.to(is_floating(a.dtype()) ? a.dtype() : DType::Float32), 1.0 / b, "div");
}
Tensor rsub(const Tensor& a, double b) { return scalar_op(UnaryOp::RsubScalar, a, b, "rsub"); }
Tensor pow(const Tensor& a, double e) {
  DDL_CHECK(a.defined(), "pow: undefined operand");
  const DType t = scalar_result_type(a.dtype(), e);
  DDL_CHECK(is_floating(t) || e >= 0, "pow: integers to negative integer powers are not allowed (", describe(a),
            " to the power ", e, ")");
  DDL_CHECK(is_floating(t) || e <= integral_range(t).second, "pow: exponent ", e, " cannot be converted to ", t,
            " without overflow");
  return unary(UnaryOp::PowScalar, a.dtype() == t ? a : a.to(t), "pow", e);
}

Tensor neg(const Tensor& a) { return unary(UnaryOp::Neg, a, "neg"); }
Tensor exp(const Tensor& a) { return unary(UnaryOp::Exp, a, "exp"); }
Tensor log(const Tensor& a) { return unary(UnaryOp::Log, a, "log"); }
Tensor sqrt(const Tensor& a) { return unary(UnaryOp::Sqrt, a, "sqrt"); }
Tensor rsqrt(const Tensor& a) { return unary(UnaryOp::Rsqrt, a, "rsqrt"); }
Tensor abs(const Tensor& a) { return unary(UnaryOp::Abs, a, "abs"); }
Tensor sign(const Tensor& a) { return unary(UnaryOp::Sign, a, "sign"); }
Tensor relu(const Tensor& a) { return unary(UnaryOp::Relu, a, "relu"); }
Tensor sigmoid(const Tensor& a) { return unary(UnaryOp::Sigmoid, a, "sigmoid"); }
Tensor tanh(const Tensor& a) { return unary(UnaryOp::Tanh, a, "tanh"); }
Tensor erf(const Tensor& a) { return unary(UnaryOp::Erf, a, "erf"); }
Tensor clamp(const Tensor& a, double lo, double hi) { return clamp_impl(a, lo, hi, "clamp"); }
Tensor clamp(const Tensor& a, std::optional<double> lo, std::optional<double> hi) {
  return clamp_impl(a, lo, hi, "clamp");
}

Tensor eq(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Eq, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Ne, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Lt, a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Le, a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Gt, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Ge, a, b); }
Tensor eq(const Tensor& a, double b) {
  DDL_CHECK(a.defined(), "eq: undefined operand");
  return eq(a, compare_scalar(a, b));
}
Tensor ne(const Tensor& a, double b) {
  DDL_CHECK(a.defined(), "ne: undefined operand");
  return ne(a, compare_scalar(a, b));
}
Tensor lt(const Tensor& a, double b) {
  DDL_CHECK(a.defined(), "lt: undefined operand");
  return lt(a, compare_scalar(a, b));
}
Tensor le(const Tensor& a, double b) {
  DDL_CHECK(a.defined(), "le: undefined operand");
  return le(a, compare_scalar(a, b));
}
Tensor gt(const Tensor& a, double b) {
  DDL_CHECK(a.defined(), "gt: undefined operand");
  return gt(a, compare_scalar(a, b));
}
Tensor ge(const Tensor& a, double b) {
  DDL_CHECK(a.defined(), "ge: undefined operand");
  return ge(a, compare_scalar(a, b));
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  check_pair(a, b, "where");
  check_pair(cond, a, "where");
  // PyTorch 1.13 takes a bool condition, and a uint8 one with a deprecation warning.
  DDL_CHECK(cond.dtype() == DType::Bool || cond.dtype() == DType::UInt8, "where: expected a bool condition, got ",
            describe(cond), "; compare it first, e.g. ne(cond, 0.0)");
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
// As PyTorch's sigmoid_backward and tanh_backward, which have floating kernels only.
static Tensor activation_backward(BinaryOp op, const Tensor& grad, const Tensor& output) {
  const char* name = binary_name(op);
  check_pair(grad, output, name);
  DDL_CHECK(is_floating(result_type(grad, output)), name, ": expected a floating grad or output, got ", describe(grad),
            " and ", describe(output));
  return binary(op, grad, output);
}
Tensor sigmoid_backward(const Tensor& grad, const Tensor& output) {
  return activation_backward(BinaryOp::SigmoidBackward, grad, output);
}
Tensor tanh_backward(const Tensor& grad, const Tensor& output) {
  return activation_backward(BinaryOp::TanhBackward, grad, output);
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  check_pair(a, b, "allclose");
  // As torch.allclose, which refuses to compare across dtypes ("Float did not match Double").
  DDL_CHECK(a.dtype() == b.dtype(), "allclose: ", describe(a), " and ", describe(b),
            " have different dtypes; convert one with .to()");
  DDL_CHECK(rtol >= 0 && atol >= 0, "allclose: rtol and atol must be >= 0, got ", rtol, " and ", atol);
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), "allclose");
  if (shape.numel() == 0) return true;
  // As torch.isclose: equal (so inf matches an inf of its sign), or a finite |a - b|
  // within atol + rtol·|b|; NaN matches NaN only with equal_nan.
  const Tensor ad = a.to(DType::Float64), bd = b.to(DType::Float64);
  const Tensor diff = abs(sub(ad, bd));
  const Tensor tol = add(mul(abs(bd), rtol), atol);
  const Tensor finite = le(diff, std::numeric_limits<double>::max());
  Tensor close = maximum(eq(ad, bd), mul(le(diff, tol), finite));  // of bools: or, and
  if (equal_nan) close = maximum(close, mul(ne(ad, ad), ne(bd, bd)));
  return sum(close.to(DType::Int64)).item() == static_cast<double>(shape.numel());
}

const Tensor& Tensor::add_(const Tensor& other, double alpha) const {
  binary_inplace(BinaryOp::Add, *this, other, alpha);
  return *this;
}
const Tensor& Tensor::mul_(const Tensor& other) const {
  binary_inplace(BinaryOp::Mul, *this, other);
  return *this;
}
const Tensor& Tensor::sub_(const Tensor& other) const {
  DDL_CHECK(defined() && other.defined(), "sub_: undefined operand");
  check_no_bool_sub(BinaryOp::Sub, *this, other, "sub_");
  binary_inplace(BinaryOp::Add, *this, other, -1.0, "sub");
  return *this;
}
const Tensor& Tensor::div_(const Tensor& other) const {
  binary_inplace(BinaryOp::Div, *this, other);
  return *this;
}
// An integer tensor takes a Python-int scalar (Note [Scalar operands]) through the binary
// kernel, which wraps it as PyTorch does; a Python float cannot be written into one.
const Tensor& Tensor::add_(double value) const {
  DDL_CHECK(defined(), "add_: undefined tensor");
  check_can_cast(scalar_result_type(dtype(), value), dtype(), "add");
  if (!is_floating(dtype())) return add_(int_scalar(value, dtype(), device()));
  bump_version();  // every in-place write counts: see Storage::version
  if (casts_to_float(dtype(), *this, *this))
    return copy_(unary(UnaryOp::AddScalar, *this, "add_", value));  // Note [Half compute]
  kernels::unary_kernel(device())(UnaryOp::AddScalar, *this, *this, value, 0);
  return *this;
}
const Tensor& Tensor::mul_(double value) const {
  DDL_CHECK(defined(), "mul_: undefined tensor");
  check_can_cast(scalar_result_type(dtype(), value), dtype(), "mul");
  if (!is_floating(dtype())) return mul_(int_scalar(value, dtype(), device()));
  bump_version();  // every in-place write counts: see Storage::version
  if (casts_to_float(dtype(), *this, *this))
    return copy_(unary(UnaryOp::MulScalar, *this, "mul_", value));  // Note [Half compute]
  kernels::unary_kernel(device())(UnaryOp::MulScalar, *this, *this, value, 0);
  return *this;
}
const Tensor& Tensor::div_(double value) const {
  DDL_CHECK(defined(), "div_: undefined tensor");
  check_can_cast(DType::Float32, dtype(), "div");  // true division
  return mul_(1.0 / value);
}
const Tensor& Tensor::clamp_(double lo, double hi) const {
  DDL_CHECK(defined(), "clamp_: undefined tensor");
  check_can_cast(scalar_result_type(scalar_result_type(dtype(), lo), hi), dtype(), "clamp");
  return copy_(clamp_impl(*this, lo, hi, "clamp_"));
}

namespace detail {
// For the frontends of tensor/ops/math_ops.cpp (tensor/ops/elementwise_impl.h).
Tensor unary_op(UnaryOp op, const Tensor& x, const char* name, double a, double b) { return unary(op, x, name, a, b); }
Tensor binary_op(BinaryOp op, const Tensor& a, const Tensor& b, const char* name) {
  return binary(op, a, b, 1.0, name);
}
DType result_type(const Tensor& a, const Tensor& b) { return ddl::result_type(a, b); }
DType scalar_result_type(DType t, double v) { return ddl::scalar_result_type(t, v); }
}  // namespace detail

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
