// CUDA elementwise kernels: one grid-stride launch per op over operands of any
// strides (tensor/cuda/indexing.h), the math from tensor/kernels/functors.h, the
// same functors the CPU loops run. Dtype coverage and bool handling mirror
// tensor/cpu/elementwise.cpp, plus float16/bfloat16, which load as float,
// compute in float and round once on store (see Note [Half compute]).
#include <type_traits>

#include <ddl/tensor/cuda/half_compute.h>
#include <ddl/tensor/cuda/indexing.h>
#include <ddl/tensor/kernels/elementwise_kernel.h>

namespace ddl::cuda {
namespace {

using detail::ComputeT;
using detail::dispatch_numeric_and_half;
using detail::strided_apply;

// out[i] = f(in[i]); out, in: the same shape, any strides.
template <typename Fn, typename T>
struct UnaryApply {
  Fn f;
  T* out;
  const T* in;
  __device__ __forceinline__ void operator()(const int64_t (&off)[2]) const {
    out[off[0]] = static_cast<T>(f(static_cast<ComputeT<T>>(in[off[1]])));
  }
};

template <typename Fn, typename T, typename Out>
struct BinaryApply {
  Fn f;
  Out* out;
  const T* a;
  const T* b;
  __device__ __forceinline__ void operator()(const int64_t (&off)[3]) const {
    using C = ComputeT<T>;
    out[off[0]] = static_cast<Out>(f(static_cast<C>(a[off[1]]), static_cast<C>(b[off[2]])));
  }
};

// The select goes through float too, so a 16-bit NaN leaves with the bits a
// float32 round trip gives it (the cast path's), not its own payload.
template <typename T>
struct WhereApply {
  WhereFn<ComputeT<T>> f;
  T* out;
  const bool* cond;
  const T* a;
  const T* b;
  __device__ __forceinline__ void operator()(const int64_t (&off)[4]) const {
    using C = ComputeT<T>;
    out[off[0]] = static_cast<T>(f(cond[off[1]], static_cast<C>(a[off[2]]), static_cast<C>(b[off[3]])));
  }
};

// Scalars (a, b, alpha) are converted to the compute type, never rounded to a 16-bit T.
template <UnaryOp Op, typename T>
void unary_launch(const Tensor& out, const Tensor& in, double a, double b) {
  using C = ComputeT<T>;
  using Fn = UnaryFn<Op, C>;
  const UnaryApply<Fn, T> apply{Fn{static_cast<C>(a), static_cast<C>(b)}, out.data<T>(), in.data<T>()};
  strided_apply<2>(out.device().index, {&out, &in}, apply, "elementwise");
}

template <BinaryOp Op, typename T>
void binary_launch(const Tensor& out, const Tensor& a, const Tensor& b, double alpha) {
  using C = ComputeT<T>;
  using Fn = BinaryFn<Op, C>;
  // Comparisons write bool; the rest write T.
  using Out = std::conditional_t<std::is_same_v<typename Fn::Out, bool>, bool, T>;
  const BinaryApply<Fn, T, Out> apply{Fn{static_cast<C>(alpha)}, out.data<Out>(), a.data<T>(), b.data<T>()};
  strided_apply<3>(out.device().index, {&out, &a, &b}, apply, "elementwise");
}

template <typename T>
void unary_typed(UnaryOp op, const Tensor& out, const Tensor& in, double a, double b) {
  switch (op) {
// Rows of cases, kept as written: clang-format 14 re-wraps them differently on each run.
// clang-format off
#define DDL_UNARY_CASE(name) \
  case UnaryOp::name:        \
    return unary_launch<UnaryOp::name, T>(out, in, a, b);
    DDL_UNARY_CASE(Neg)
    DDL_UNARY_CASE(Exp) DDL_UNARY_CASE(Log) DDL_UNARY_CASE(Sqrt) DDL_UNARY_CASE(Rsqrt) DDL_UNARY_CASE(Abs)
        DDL_UNARY_CASE(Sign) DDL_UNARY_CASE(Relu) DDL_UNARY_CASE(Sigmoid) DDL_UNARY_CASE(Tanh) DDL_UNARY_CASE(AddScalar)
            DDL_UNARY_CASE(MulScalar) DDL_UNARY_CASE(RsubScalar) DDL_UNARY_CASE(PowScalar) DDL_UNARY_CASE(Clamp)
                DDL_UNARY_CASE(Erf)
    DDL_UNARY_CASE(Sin) DDL_UNARY_CASE(Cos) DDL_UNARY_CASE(Tan) DDL_UNARY_CASE(Asin) DDL_UNARY_CASE(Acos)
    DDL_UNARY_CASE(Atan) DDL_UNARY_CASE(Sinh) DDL_UNARY_CASE(Cosh) DDL_UNARY_CASE(Asinh) DDL_UNARY_CASE(Acosh)
    DDL_UNARY_CASE(Atanh) DDL_UNARY_CASE(Log1p) DDL_UNARY_CASE(Expm1) DDL_UNARY_CASE(Softplus)
    DDL_UNARY_CASE(Floor) DDL_UNARY_CASE(Ceil) DDL_UNARY_CASE(Round) DDL_UNARY_CASE(Trunc) DDL_UNARY_CASE(Frac)
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
  case BinaryOp::name:        \
    return binary_launch<BinaryOp::name, T>(out, a, b, alpha);
    DDL_BINARY_CASE(Add)
    DDL_BINARY_CASE(Sub) DDL_BINARY_CASE(Mul) DDL_BINARY_CASE(Div) DDL_BINARY_CASE(Maximum) DDL_BINARY_CASE(Minimum)
        DDL_BINARY_CASE(Eq) DDL_BINARY_CASE(Ne) DDL_BINARY_CASE(Lt) DDL_BINARY_CASE(Le) DDL_BINARY_CASE(Gt)
            DDL_BINARY_CASE(Ge) DDL_BINARY_CASE(ReluBackward) DDL_BINARY_CASE(SigmoidBackward)
                DDL_BINARY_CASE(TanhBackward)
    DDL_BINARY_CASE(Atan2) DDL_BINARY_CASE(Fmod) DDL_BINARY_CASE(Remainder) DDL_BINARY_CASE(Pow)
    DDL_BINARY_CASE(DivTrunc) DDL_BINARY_CASE(DivFloor)
#undef DDL_BINARY_CASE
    // clang-format on
  }
}

void unary_cuda(UnaryOp op, const Tensor& out, const Tensor& in, double a, double b) {
  dispatch_numeric_and_half(in.dtype(), "elementwise",
                            [&](auto tag) { unary_typed<decltype(tag)>(op, out, in, a, b); });
}

void binary_cuda(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, double alpha) {
  // Bools arrive as uint8 (tensor/ops/elementwise.cpp, compute_type).
  dispatch_numeric_and_half(a.dtype(), "elementwise",
                            [&](auto tag) { binary_typed<decltype(tag)>(op, out, a, b, alpha); });
}

void where_cuda(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  DDL_DISPATCH_ALL_AND_HALF(out.dtype(), "where", [&] {
    using T = scalar_t;
    const WhereApply<T> apply{{}, out.data<T>(), cond.data<bool>(), a.data<T>(), b.data<T>()};
    strided_apply<4>(out.device().index, {&out, &cond, &a, &b}, apply, "where");
  });
}

}  // namespace

DDL_REGISTER_KERNEL(kernels::unary_kernel, CUDA, &unary_cuda);
DDL_REGISTER_KERNEL(kernels::binary_kernel, CUDA, &binary_cuda);
DDL_REGISTER_KERNEL(kernels::where_kernel, CUDA, &where_cuda);

}  // namespace ddl::cuda
