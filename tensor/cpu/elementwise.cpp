// CPU elementwise kernels: one strided loop per op, specialised at compile time
// on the functor (tensor/kernels/functors.h, shared with CUDA) so the contiguous inner
// loop vectorises.
#include <ddl/tensor/cpu/loops.h>
#include <ddl/tensor/kernels/elementwise_kernel.h>

namespace ddl::cpu {
namespace {

template <UnaryOp Op, typename T>
void unary_loop(const Tensor& out, const Tensor& in, double a, double b) {
  const UnaryFn<Op, T> f{static_cast<T>(a), static_cast<T>(b)};
  StridedLoop<2> loop({&out, &in});
  loop.run([&](const std::array<char*, 2>& p, const std::array<int64_t, 2>& st, int64_t n) {
    if (st[0] == sizeof(T) && st[1] == sizeof(T)) {
      T* o = reinterpret_cast<T*>(p[0]);
      const T* x = reinterpret_cast<const T*>(p[1]);
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i]);
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<T*>(p[0] + i * st[0]) = f(*reinterpret_cast<const T*>(p[1] + i * st[1]));
    }
  });
}

template <BinaryOp Op, typename T>
void binary_loop(const Tensor& out, const Tensor& a, const Tensor& b, double alpha) {
  const BinaryFn<Op, T> f{static_cast<T>(alpha)};
  using Out = typename BinaryFn<Op, T>::Out;
  StridedLoop<3> loop({&out, &a, &b});
  loop.run([&](const std::array<char*, 3>& p, const std::array<int64_t, 3>& st, int64_t n) {
    Out* o = reinterpret_cast<Out*>(p[0]);
    const T* x = reinterpret_cast<const T*>(p[1]);
    const T* y = reinterpret_cast<const T*>(p[2]);
    if (st[0] == sizeof(Out) && st[1] == sizeof(T) && st[2] == sizeof(T)) {
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
    } else if (st[0] == sizeof(Out) && st[1] == sizeof(T) && st[2] == 0) {  // tensor op broadcast scalar/row
      const T yv = *y;
      for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], yv);
    } else if (st[0] == sizeof(Out) && st[1] == 0 && st[2] == sizeof(T)) {
      const T xv = *x;
      for (int64_t i = 0; i < n; ++i) o[i] = f(xv, y[i]);
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<Out*>(p[0] + i * st[0]) =
            f(*reinterpret_cast<const T*>(p[1] + i * st[1]), *reinterpret_cast<const T*>(p[2] + i * st[2]));
    }
  });
}

template <typename T>
void unary_typed(UnaryOp op, const Tensor& out, const Tensor& in, double a, double b) {
  switch (op) {
// Rows of cases, kept as written: clang-format 14 re-wraps them differently on each run.
// clang-format off
#define DDL_UNARY_CASE(name) \
  case UnaryOp::name: return unary_loop<UnaryOp::name, T>(out, in, a, b);
    DDL_UNARY_CASE(Neg) DDL_UNARY_CASE(Exp) DDL_UNARY_CASE(Log) DDL_UNARY_CASE(Sqrt) DDL_UNARY_CASE(Rsqrt)
    DDL_UNARY_CASE(Abs) DDL_UNARY_CASE(Sign) DDL_UNARY_CASE(Relu) DDL_UNARY_CASE(Sigmoid) DDL_UNARY_CASE(Tanh)
    DDL_UNARY_CASE(AddScalar) DDL_UNARY_CASE(MulScalar) DDL_UNARY_CASE(RsubScalar) DDL_UNARY_CASE(PowScalar)
    DDL_UNARY_CASE(Clamp) DDL_UNARY_CASE(Erf) DDL_UNARY_CASE(Sin) DDL_UNARY_CASE(Cos) DDL_UNARY_CASE(Tan)
    DDL_UNARY_CASE(Asin) DDL_UNARY_CASE(Acos) DDL_UNARY_CASE(Atan) DDL_UNARY_CASE(Sinh) DDL_UNARY_CASE(Cosh)
    DDL_UNARY_CASE(Asinh) DDL_UNARY_CASE(Acosh) DDL_UNARY_CASE(Atanh) DDL_UNARY_CASE(Log1p) DDL_UNARY_CASE(Expm1)
    DDL_UNARY_CASE(Softplus) DDL_UNARY_CASE(Floor) DDL_UNARY_CASE(Ceil) DDL_UNARY_CASE(Round) DDL_UNARY_CASE(Trunc)
    DDL_UNARY_CASE(Frac)
#undef DDL_UNARY_CASE
    // clang-format on
  }
}

template <typename T>
void binary_typed(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, double alpha) {
  switch (op) {
// Rows of cases, kept as written: clang-format 14 re-wraps them differently on each run.
// clang-format off
#define DDL_BINARY_CASE(name) \
  case BinaryOp::name: return binary_loop<BinaryOp::name, T>(out, a, b, alpha);
    DDL_BINARY_CASE(Add) DDL_BINARY_CASE(Sub) DDL_BINARY_CASE(Mul) DDL_BINARY_CASE(Div) DDL_BINARY_CASE(Maximum)
    DDL_BINARY_CASE(Minimum) DDL_BINARY_CASE(Eq) DDL_BINARY_CASE(Ne) DDL_BINARY_CASE(Lt) DDL_BINARY_CASE(Le)
    DDL_BINARY_CASE(Gt) DDL_BINARY_CASE(Ge) DDL_BINARY_CASE(ReluBackward) DDL_BINARY_CASE(SigmoidBackward)
    DDL_BINARY_CASE(TanhBackward) DDL_BINARY_CASE(Atan2) DDL_BINARY_CASE(Fmod) DDL_BINARY_CASE(Remainder)
    DDL_BINARY_CASE(Pow) DDL_BINARY_CASE(DivTrunc) DDL_BINARY_CASE(DivFloor)
#undef DDL_BINARY_CASE
    // clang-format on
  }
}

void unary_cpu(UnaryOp op, const Tensor& out, const Tensor& in, double a, double b) {
  DDL_DISPATCH_NUMERIC(in.dtype(), "elementwise", [&] { unary_typed<scalar_t>(op, out, in, a, b); });
}

void binary_cpu(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, double alpha) {
  // Bools arrive as uint8 (tensor/ops/elementwise.cpp, compute_type).
  DDL_DISPATCH_NUMERIC(a.dtype(), "elementwise", [&] { binary_typed<scalar_t>(op, out, a, b, alpha); });
}

void where_cpu(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  DDL_DISPATCH_ALL(out.dtype(), "where", [&] {
    using T = scalar_t;
    const WhereFn<T> f;
    StridedLoop<4> loop({&out, &cond, &a, &b});
    loop.run([&](const std::array<char*, 4>& p, const std::array<int64_t, 4>& st, int64_t n) {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<T*>(p[0] + i * st[0]) =
            f(*reinterpret_cast<const bool*>(p[1] + i * st[1]), *reinterpret_cast<const T*>(p[2] + i * st[2]),
              *reinterpret_cast<const T*>(p[3] + i * st[3]));
    });
  });
}

}  // namespace

DDL_REGISTER_KERNEL(kernels::unary_kernel, CPU, &unary_cpu);
DDL_REGISTER_KERNEL(kernels::binary_kernel, CPU, &binary_cpu);
DDL_REGISTER_KERNEL(kernels::where_kernel, CPU, &where_cpu);

}  // namespace ddl::cpu
