// The math of every elementwise op, written once as functors that serve both
// the CPU loops (tensor/cpu/elementwise.cpp, copy.cpp) and the CUDA kernels
// (tensor/cuda/elementwise.cu, copy.cu); DDL_HOST_DEVICE marks them for nvcc.
// Reductions and softmax/loss math live in reduce_functors.h and softmax_functors.h.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "tensor/host_device.h"

namespace ddl {

enum class UnaryOp : uint8_t {
  Neg,
  Exp,
  Log,
  Sqrt,
  Rsqrt,
  Abs,
  Sign,
  Relu,
  Sigmoid,
  Tanh,
  AddScalar,
  MulScalar,
  RsubScalar,
  PowScalar,
  Clamp,
  Erf,
};
enum class BinaryOp : uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  Maximum,
  Minimum,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,  // produce bool
  ReluBackward,
  SigmoidBackward,
  TanhBackward,  // (grad, saved) -> grad_input
};

inline bool is_comparison(BinaryOp op) { return op >= BinaryOp::Eq && op <= BinaryOp::Ge; }

// Math functions of integers compute in double, as <cmath>'s integer overloads
// do on the host (CUDA device code has only the float and double overloads).
template <typename T>
using MathT = std::conditional_t<std::is_integral_v<T>, double, T>;

// a, b: the scalar parameters of AddScalar (a), MulScalar (a), RsubScalar (a - x), PowScalar (a), Clamp (a, b).
template <UnaryOp Op, typename T>
struct UnaryFn {
  T a, b;
  DDL_HOST_DEVICE T operator()(T x) const {
    if constexpr (Op == UnaryOp::Neg) return -x;
    if constexpr (Op == UnaryOp::Exp) return T(std::exp(MathT<T>(x)));
    if constexpr (Op == UnaryOp::Log) return T(std::log(MathT<T>(x)));
    if constexpr (Op == UnaryOp::Sqrt) return T(std::sqrt(MathT<T>(x)));
    if constexpr (Op == UnaryOp::Rsqrt) return T(T(1) / std::sqrt(MathT<T>(x)));
    if constexpr (Op == UnaryOp::Abs) {
      if constexpr (std::is_unsigned_v<T>)
        return x;  // (nvcc warns on x < 0 for unsigned x)
      else
        return x < T(0) ? -x : x;
    }
    if constexpr (Op == UnaryOp::Sign) {
      if constexpr (std::is_unsigned_v<T>)
        return T(x > T(0));
      else
        return T((x > T(0)) - (x < T(0)));
    }
    if constexpr (Op == UnaryOp::Relu) return x > T(0) ? x : T(0);
    if constexpr (Op == UnaryOp::Sigmoid) return T(T(1) / (T(1) + std::exp(MathT<T>(-x))));
    if constexpr (Op == UnaryOp::Tanh) return T(std::tanh(MathT<T>(x)));
    if constexpr (Op == UnaryOp::AddScalar) return x + a;
    if constexpr (Op == UnaryOp::MulScalar) return x * a;
    if constexpr (Op == UnaryOp::RsubScalar) return a - x;
    if constexpr (Op == UnaryOp::PowScalar) {
      if (a == T(2)) return x * x;
      return T(std::pow(MathT<T>(x), MathT<T>(a)));
    }
    if constexpr (Op == UnaryOp::Clamp) return x < a ? a : (x > b ? b : x);
    if constexpr (Op == UnaryOp::Erf) return T(std::erf(MathT<T>(x)));
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

// Same-device copies convert with static_cast, on both backends.
template <typename D, typename S>
struct CastFn {
  DDL_HOST_DEVICE D operator()(S x) const { return static_cast<D>(x); }
};

template <typename T>
struct WhereFn {
  DDL_HOST_DEVICE T operator()(bool c, T a, T b) const { return c ? a : b; }
};

}  // namespace ddl
