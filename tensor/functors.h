// The math of every elementwise op, written once as functors that serve the
// CPU loops now and CUDA kernels later (DDL_HOST_DEVICE marks them for nvcc).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#ifdef __CUDACC__
#define DDL_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define DDL_HOST_DEVICE inline
#endif

namespace ddl {

enum class UnaryOp : uint8_t {
  Neg, Exp, Log, Sqrt, Rsqrt, Abs, Sign, Relu, Sigmoid, Tanh,
  AddScalar, MulScalar, RsubScalar, PowScalar, Clamp,
};
enum class BinaryOp : uint8_t {
  Add, Sub, Mul, Div, Maximum, Minimum,
  Eq, Ne, Lt, Le, Gt, Ge,                        // produce bool
  ReluBackward, SigmoidBackward, TanhBackward,  // (grad, saved) -> grad_input
};

inline bool is_comparison(BinaryOp op) { return op >= BinaryOp::Eq && op <= BinaryOp::Ge; }

// a, b: the scalar parameters of AddScalar (a), MulScalar (a), RsubScalar (a - x), PowScalar (a), Clamp (a, b).
template <UnaryOp Op, typename T>
struct UnaryFn {
  T a, b;
  DDL_HOST_DEVICE T operator()(T x) const {
    if constexpr (Op == UnaryOp::Neg) return -x;
    if constexpr (Op == UnaryOp::Exp) return std::exp(x);
    if constexpr (Op == UnaryOp::Log) return std::log(x);
    if constexpr (Op == UnaryOp::Sqrt) return std::sqrt(x);
    if constexpr (Op == UnaryOp::Rsqrt) return T(1) / std::sqrt(x);
    if constexpr (Op == UnaryOp::Abs) return x < T(0) ? -x : x;
    if constexpr (Op == UnaryOp::Sign) return T((x > T(0)) - (x < T(0)));
    if constexpr (Op == UnaryOp::Relu) return x > T(0) ? x : T(0);
    if constexpr (Op == UnaryOp::Sigmoid) return T(1) / (T(1) + std::exp(-x));
    if constexpr (Op == UnaryOp::Tanh) return std::tanh(x);
    if constexpr (Op == UnaryOp::AddScalar) return x + a;
    if constexpr (Op == UnaryOp::MulScalar) return x * a;
    if constexpr (Op == UnaryOp::RsubScalar) return a - x;
    if constexpr (Op == UnaryOp::PowScalar) {
      if (a == T(2)) return x * x;
      return std::pow(x, a);
    }
    if constexpr (Op == UnaryOp::Clamp) return x < a ? a : (x > b ? b : x);
    return x;
  }
};

// Out is T, except comparisons, which produce bool.
template <BinaryOp Op, typename T>
struct BinaryFn {
  using Out = std::conditional_t<(Op >= BinaryOp::Eq && Op <= BinaryOp::Ge), bool, T>;
  T alpha;  // Add computes a + alpha * b
  DDL_HOST_DEVICE Out operator()(T a, T b) const {
    if constexpr (Op == BinaryOp::Add) return a + alpha * b;
    if constexpr (Op == BinaryOp::Sub) return a - b;
    if constexpr (Op == BinaryOp::Mul) return a * b;
    if constexpr (Op == BinaryOp::Div) return a / b;
    if constexpr (Op == BinaryOp::Maximum) return a > b || a != a ? a : b;  // NaN propagates
    if constexpr (Op == BinaryOp::Minimum) return a < b || a != a ? a : b;
    if constexpr (Op == BinaryOp::Eq) return a == b;
    if constexpr (Op == BinaryOp::Ne) return a != b;
    if constexpr (Op == BinaryOp::Lt) return a < b;
    if constexpr (Op == BinaryOp::Le) return a <= b;
    if constexpr (Op == BinaryOp::Gt) return a > b;
    if constexpr (Op == BinaryOp::Ge) return a >= b;
    if constexpr (Op == BinaryOp::ReluBackward) return b > T(0) ? a : T(0);
    if constexpr (Op == BinaryOp::SigmoidBackward) return a * b * (T(1) - b);
    if constexpr (Op == BinaryOp::TanhBackward) return a * (T(1) - b * b);
    return a;
  }
};

}  // namespace ddl
