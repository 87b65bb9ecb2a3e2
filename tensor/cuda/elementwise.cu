// CUDA elementwise kernels: one grid-stride launch per op over operands of any
// strides (tensor/cuda/indexing.h), the math from tensor/functors.h, the
// same functors the CPU loops run. Dtype coverage and bool handling mirror
// tensor/cpu/elementwise.cpp.
#include "tensor/cuda/indexing.h"
#include "tensor/elementwise_kernel.h"

namespace ddl::cuda {
namespace {

using detail::strided_apply;

// out[i] = f(in[i]); out, in: the same shape, any strides.
template <typename Fn, typename T>
struct UnaryApply {
  Fn f;
  T* out;
  const T* in;
  __device__ __forceinline__ void operator()(const int64_t (&off)[2]) const { out[off[0]] = f(in[off[1]]); }
};

template <typename Fn, typename T, typename Out>
struct BinaryApply {
  Fn f;
  Out* out;
  const T* a;
  const T* b;
  __device__ __forceinline__ void operator()(const int64_t (&off)[3]) const { out[off[0]] = f(a[off[1]], b[off[2]]); }
};

template <typename T>
struct WhereApply {
  WhereFn<T> f;
  T* out;
  const bool* cond;
  const T* a;
  const T* b;
  __device__ __forceinline__ void operator()(const int64_t (&off)[4]) const {
    out[off[0]] = f(cond[off[1]], a[off[2]], b[off[3]]);
  }
};

template <UnaryOp Op, typename T>
void unary_launch(const Tensor& out, const Tensor& in, double a, double b) {
  using Fn = UnaryFn<Op, T>;
  const UnaryApply<Fn, T> apply{Fn{static_cast<T>(a), static_cast<T>(b)}, out.data<T>(), in.data<T>()};
  strided_apply<2>(out.device().index, {&out, &in}, apply, "elementwise");
}

template <BinaryOp Op, typename T>
void binary_launch(const Tensor& out, const Tensor& a, const Tensor& b, double alpha) {
  using Fn = BinaryFn<Op, T>;
  using Out = typename Fn::Out;
  const BinaryApply<Fn, T, Out> apply{Fn{static_cast<T>(alpha)}, out.data<Out>(), a.data<T>(), b.data<T>()};
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
#undef DDL_BINARY_CASE
    // clang-format on
  }
}

void unary_cuda(UnaryOp op, const Tensor& out, const Tensor& in, double a, double b) {
  DDL_DISPATCH_NUMERIC(in.dtype(), "elementwise", [&] { unary_typed<scalar_t>(op, out, in, a, b); });
}

void binary_cuda(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, double alpha) {
  // Bools arrive as uint8 (tensor/elementwise.cpp, compute_type).
  DDL_DISPATCH_NUMERIC(a.dtype(), "elementwise", [&] { binary_typed<scalar_t>(op, out, a, b, alpha); });
}

void where_cuda(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  DDL_DISPATCH_ALL(out.dtype(), "where", [&] {
    using T = scalar_t;
    const WhereApply<T> apply{WhereFn<T>{}, out.data<T>(), cond.data<bool>(), a.data<T>(), b.data<T>()};
    strided_apply<4>(out.device().index, {&out, &cond, &a, &b}, apply, "where");
  });
}

}  // namespace

DDL_REGISTER_KERNEL(kernels::unary_kernel, CUDA, &unary_cuda);
DDL_REGISTER_KERNEL(kernels::binary_kernel, CUDA, &binary_cuda);
DDL_REGISTER_KERNEL(kernels::where_kernel, CUDA, &where_cuda);

}  // namespace ddl::cuda
