// The math of every elementwise op, written once as functors that serve both
// the CPU loops (tensor/cpu/elementwise.cpp, copy.cpp) and the CUDA kernels
// (tensor/cuda/elementwise.cu, copy.cu); DDL_HOST_DEVICE marks them for nvcc.
// Reductions and softmax/loss math live in reduce_functors.h and softmax_functors.h.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include <ddl/tensor/kernels/host_device.h>

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
  Sin,
  Cos,
  Tan,
  Asin,
  Acos,
  Atan,
  Sinh,
  Cosh,
  Asinh,
  Acosh,
  Atanh,
  Log1p,
  Expm1,
  Softplus,
  Floor,
  Ceil,
  Round,  // half to even; with decimals, a = 10^|decimals| and b = +1 (x * a) or -1 (x / a)
  Trunc,
  Frac,
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
  Atan2,
  Fmod,
  Remainder,
  Pow,
  DivTrunc,
  DivFloor,  // a / b rounded toward zero / down, as torch.div's rounding modes
};

inline bool is_comparison(BinaryOp op) { return op >= BinaryOp::Eq && op <= BinaryOp::Ge; }

// Math functions of integers compute in double, as <cmath>'s integer overloads
// do on the host (CUDA device code has only the float and double overloads).
template <typename T>
using MathT = std::conditional_t<std::is_integral_v<T>, double, T>;

// The unsigned type an integer T wraps in: at least unsigned int, since two uint16_t promote to int and their
// product can overflow it (C++20 [expr.arith.conv]); the low bits are T's two's-complement result.
template <typename T>
using WrapU = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

// x != x, false for integers (written so no compiler calls it tautological).
template <typename T>
DDL_HOST_DEVICE bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return x != x;
  else
    return false;
}

// a, b: the scalar parameters of AddScalar (a), MulScalar (a), RsubScalar (a - x), PowScalar (a), Clamp (a, b),
// Softplus (beta a, threshold b), Round (the scale a and its direction b).
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
      else if constexpr (std::is_floating_point_v<T>)
        return std::fabs(x);  // abs(-0.0) is +0.0
      else
        return x < T(0) ? -x : x;
    }
    if constexpr (Op == UnaryOp::Sign) {
      if constexpr (std::is_unsigned_v<T>)
        return T(x > T(0));
      else
        return T((x > T(0)) - (x < T(0)));
    }
    if constexpr (Op == UnaryOp::Relu) {
      // torch.relu keeps NaN and -0.0 (it is clamp_min(x, 0)).
      if constexpr (std::is_unsigned_v<T>)
        return x;
      else
        return x < T(0) ? T(0) : x;
    }
    if constexpr (Op == UnaryOp::Sigmoid) return T(T(1) / (T(1) + std::exp(MathT<T>(-x))));
    if constexpr (Op == UnaryOp::Tanh) return T(std::tanh(MathT<T>(x)));
    if constexpr (Op == UnaryOp::AddScalar) return x + a;
    if constexpr (Op == UnaryOp::MulScalar) return x * a;
    if constexpr (Op == UnaryOp::RsubScalar) return a - x;
    if constexpr (Op == UnaryOp::PowScalar) {
      if constexpr (std::is_integral_v<T>) {
        // Exact, by squaring, wrapping on overflow as PyTorch's integer pow (a >= 0: the frontend checks).
        using U = WrapU<T>;
        U r = 1, base = static_cast<U>(x);
        for (U e = static_cast<U>(a); e > 0; e /= 2) {
          if (e % 2) r = static_cast<U>(r * base);
          base = static_cast<U>(base * base);
        }
        return static_cast<T>(r);
      }
      // PyTorch's special exponents (pow_tensor_scalar_optimized_kernel): sqrt(-0) is -0 and
      // sqrt(-inf) NaN, where std::pow gives +0 and +inf.
      if (a == T(2)) return x * x;
      if (a == T(3)) return x * x * x;
      if (a == T(0.5)) return T(std::sqrt(MathT<T>(x)));
      if (a == T(-0.5)) return T(T(1) / std::sqrt(MathT<T>(x)));
      if (a == T(-1)) return T(T(1) / x);
      if (a == T(-2)) return T(T(1) / (x * x));
      return T(std::pow(MathT<T>(x), MathT<T>(a)));
    }
    if constexpr (Op == UnaryOp::Clamp) {
      // min(max(x, a), b) as torch.clamp: NaN x stays, a NaN bound gives NaN, a > b gives b.
      if (is_nan(a)) return a;
      if (is_nan(b)) return b;
      const T y = x < a ? a : x;
      return y > b ? b : y;
    }
    if constexpr (Op == UnaryOp::Erf) return T(std::erf(MathT<T>(x)));
    if constexpr (Op == UnaryOp::Sin) return T(std::sin(MathT<T>(x)));
    if constexpr (Op == UnaryOp::Cos) return T(std::cos(MathT<T>(x)));
    if constexpr (Op == UnaryOp::Tan) return T(std::tan(MathT<T>(x)));
    if constexpr (Op == UnaryOp::Asin) return T(std::asin(MathT<T>(x)));
    if constexpr (Op == UnaryOp::Acos) return T(std::acos(MathT<T>(x)));
    if constexpr (Op == UnaryOp::Atan) return T(std::atan(MathT<T>(x)));
    if constexpr (Op == UnaryOp::Sinh) return T(std::sinh(MathT<T>(x)));
    if constexpr (Op == UnaryOp::Cosh) return T(std::cosh(MathT<T>(x)));
    if constexpr (Op == UnaryOp::Asinh) return T(std::asinh(MathT<T>(x)));
    if constexpr (Op == UnaryOp::Acosh) return T(std::acosh(MathT<T>(x)));
    if constexpr (Op == UnaryOp::Atanh) return T(std::atanh(MathT<T>(x)));
    if constexpr (Op == UnaryOp::Log1p) return T(std::log1p(MathT<T>(x)));
    if constexpr (Op == UnaryOp::Expm1) return T(std::expm1(MathT<T>(x)));
    if constexpr (Op == UnaryOp::Softplus) {
      // As torch.nn.functional.softplus: x itself once beta * x exceeds the threshold.
      const MathT<T> z = MathT<T>(x) * MathT<T>(a);
      return z > MathT<T>(b) ? x : T(std::log1p(std::exp(z)) / MathT<T>(a));
    }
    if constexpr (Op == UnaryOp::Floor) return T(std::floor(MathT<T>(x)));
    if constexpr (Op == UnaryOp::Ceil) return T(std::ceil(MathT<T>(x)));
    if constexpr (Op == UnaryOp::Trunc) return T(std::trunc(MathT<T>(x)));
    if constexpr (Op == UnaryOp::Frac) return T(MathT<T>(x) - std::trunc(MathT<T>(x)));
    if constexpr (Op == UnaryOp::Round) {
      // nearbyint rounds half to even in the default rounding mode, as torch.round; with decimals
      // PyTorch's round_decimals_kernel scales in the compute type first (1.2345 at 2 gives 1.23).
      const MathT<T> v = MathT<T>(x), s = MathT<T>(a);
      if (b == T(0)) return T(std::nearbyint(v));
      return b > T(0) ? T(std::nearbyint(v * s) / s) : T(std::nearbyint(v / s) * s);
    }
    return x;
  }
};

// a % b truncated, without the traps: the frontend refuses a zero divisor, and INT_MIN % -1 is 0.
template <typename T>
DDL_HOST_DEVICE T modulo(T a, T b) {
  if constexpr (std::is_signed_v<T>)
    if (b == T(-1)) return T(0);
  return b == T(0) ? T(0) : T(a % b);
}

// a / b for integers rounded toward zero, or down (Python's //) when `floor`: the frontend refuses
// a zero divisor; INT_MIN / -1 wraps to INT_MIN instead of trapping.
template <typename T>
DDL_HOST_DEVICE T int_div(T a, T b, bool floor) {
  if (b == T(0)) return T(0);
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return static_cast<T>(std::make_unsigned_t<T>(0) - static_cast<std::make_unsigned_t<T>>(a));
    const T q = T(a / b);
    return floor && a % b != T(0) && ((a < T(0)) != (b < T(0))) ? T(q - T(1)) : q;
  } else {
    return T(a / b);
  }
}

// a^b for integers, by squaring and wrapping as PyTorch's powi; a negative b gives 0 except
// for a base of 1 or -1.
template <typename T>
DDL_HOST_DEVICE T int_pow(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b < T(0)) {
      if (a == T(1)) return T(1);
      if (a == T(-1)) return T(b % T(2) == T(0) ? 1 : -1);
      return T(0);
    }
  }
  using U = WrapU<T>;
  U r = 1, base = static_cast<U>(a);
  for (U e = static_cast<U>(b); e > 0; e /= 2) {
    if (e % 2) r = static_cast<U>(r * base);
    base = static_cast<U>(base * base);
  }
  return static_cast<T>(r);
}

// torch.div(a, b, rounding_mode="floor") for floats, as PyTorch's div_floor_floating: from fmod,
// so the quotient is exact where floor(a / b) would round first; a zero b gives a / b.
template <typename T>
DDL_HOST_DEVICE T div_floor(T a, T b) {
  if (b == T(0)) return a / b;
  const T mod = std::fmod(a, b);
  T div = (a - mod) / b;
  if (mod != T(0) && (b < T(0)) != (mod < T(0))) div -= T(1);
  if (div == T(0)) return std::copysign(T(0), a / b);
  T floordiv = std::floor(div);
  if (div - floordiv > T(0.5)) floordiv += T(1);
  return floordiv;
}

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
    // As torch's threshold_backward: the gradient passes unless input <= 0 (so it passes at NaN).
    if constexpr (Op == BinaryOp::ReluBackward) return b > T(0) || is_nan(b) ? a : T(0);
    if constexpr (Op == BinaryOp::SigmoidBackward) return a * b * (T(1) - b);
    if constexpr (Op == BinaryOp::TanhBackward) return a * (T(1) - b * b);
    if constexpr (Op == BinaryOp::Atan2) return T(std::atan2(MathT<T>(a), MathT<T>(b)));
    if constexpr (Op == BinaryOp::Fmod) {
      if constexpr (std::is_floating_point_v<T>)
        return std::fmod(a, b);
      else
        return modulo(a, b);
    }
    if constexpr (Op == BinaryOp::Remainder) {
      // Python's a % b, the sign of b (PyTorch's remainder kernels): fmod, then b added where the signs differ.
      T r;
      if constexpr (std::is_floating_point_v<T>)
        r = std::fmod(a, b);
      else
        r = modulo(a, b);
      if constexpr (!std::is_unsigned_v<T>)
        if (r != T(0) && ((b < T(0)) != (r < T(0)))) r += b;
      return r;
    }
    if constexpr (Op == BinaryOp::Pow) {
      if constexpr (std::is_integral_v<T>) return int_pow(a, b);
      return T(std::pow(MathT<T>(a), MathT<T>(b)));
    }
    if constexpr (Op == BinaryOp::DivTrunc) {
      if constexpr (std::is_floating_point_v<T>)
        return std::trunc(a / b);
      else
        return int_div(a, b, false);
    }
    if constexpr (Op == BinaryOp::DivFloor) {
      if constexpr (std::is_floating_point_v<T>)
        return div_floor(a, b);
      else
        return int_div(a, b, true);
    }
    return a;
  }
};

// Same-device copies convert with static_cast, on both backends, except floats into the integer dtypes
// narrower than 32 bits: those go through int64 as PyTorch's conversions do on x86, so 300.0 becomes 44 in
// int8 and -1.0 255 in uint8, and NaN, inf or a value beyond int64 becomes 0 (the low bits of the x86
// conversion's 2^63). Converted straight, a float out of the target's range is undefined (C++20 [conv.fpint]).
template <typename D, typename S>
struct CastFn {
  DDL_HOST_DEVICE D operator()(S x) const {
    if constexpr (std::is_integral_v<D> && !std::is_same_v<D, bool> && sizeof(D) < 4 && !std::is_integral_v<S>) {
      const double v = static_cast<double>(x);
      return v >= -0x1p63 && v < 0x1p63 ? static_cast<D>(static_cast<int64_t>(v)) : D(0);
    } else {
      return static_cast<D>(x);
    }
  }
};

template <typename T>
struct WhereFn {
  DDL_HOST_DEVICE T operator()(bool c, T a, T b) const { return c ? a : b; }
};

}  // namespace ddl
