// Rows: the math of tensor/ops/math_ops.h and autograd/ops/math_ops.h (trigonometric and hyperbolic
// functions, log1p, expm1, softplus, atan2, fmod, remainder, lerp, clamp by tensors, clamp_min,
// clamp_max, pow of a scalar base). The scalar on the left of `/` is in rows_compare.cpp's operator/.
#include <cmath>
#include <string>

#include "sweep.h"

namespace ddl::sweep {
namespace {

#define DDL_SWEEP_UNARY(op) [](const auto& in, const json&) { return op(in[0]); }
#define DDL_SWEEP_BINARY(op) \
  [](const auto& in, const json& a) { return a.contains("scalar") ? op(in[0], f64(a, "scalar")) : op(in[0], in[1]); }

std::vector<Sample> softplus_samples() {
  std::vector<Sample> v;
  for (auto [beta, threshold] : {std::pair{1.0, 20.0}, {2.0, 1.0}, {0.5, 3.0}, {-1.0, 20.0}})
    add_all(v, unary_samples(), {{"beta", beta}, {"threshold", threshold}});
  return v;
}

std::vector<Sample> lerp_samples() {
  std::vector<Sample> v;
  uint64_t s = 3100;
  for (double w : {0.25, 0.75, 0.0, 1.0, -0.5, 1.5}) {
    for (DType t : kFloatDTypes) {
      v.push_back({"3x4 " + std::string(short_name(t)) + " w=" + std::to_string(w),
                   {make(t, {3, 4}, s++), make(t, {3, 4}, s++)},
                   {{"weight", w}}});
    }
  }
  v.push_back(
      {"broadcast f32", {make(DType::Float32, {3, 1}, s++), make(DType::Float32, {4}, s++)}, {{"weight", 0.3}}});
  v.push_back({"special f64", {special(DType::Float64), special(DType::Float64, {16}, 5)}, {{"weight", 0.6}}});
  v.push_back(
      {"nan weight f64", {make(DType::Float64, {3}, s++), make(DType::Float64, {3}, s++)}, {{"weight", "nan"}}});
  v.push_back({"int", {make(DType::Int64, {3}, s++), make(DType::Int64, {3}, s++)}, {{"weight", 0.5}}});
  v.push_back({"mixed f32 f64", {make(DType::Float32, {3}, s++), make(DType::Float64, {3}, s++)}, {{"weight", 0.5}}});
  v.push_back({"empty f32", {make(DType::Float32, {0, 3}, s++), make(DType::Float32, {3}, s++)}, {{"weight", 0.5}}});
  v.push_back({"bad broadcast", {make(DType::Float32, {3}, s++), make(DType::Float32, {2}, s++)}, {{"weight", 0.5}}});
  // A tensor weight: a third input.
  for (DType t : kFloatDTypes) {
    v.push_back({"tensor weight " + std::string(short_name(t)),
                 {make(t, {3, 4}, s++), make(t, {3, 4}, s++), make(t, {3, 4}, s++, -0.5, 1.5)}});
  }
  v.push_back({"tensor weight broadcast",
               {make(DType::Float32, {3, 1}, s++), make(DType::Float32, {4}, s++), make(DType::Float32, {}, s++)}});
  v.push_back({"tensor weight 0-d all",
               {make(DType::Float64, {}, s++), make(DType::Float64, {}, s++), make(DType::Float64, {}, s++)}});
  v.push_back({"tensor weight special",
               {special(DType::Float64), special(DType::Float64, {16}, 3), special(DType::Float64, {16}, 7)}});
  v.push_back({"tensor weight transposed",
               {with_layout(make(DType::Float64, {4, 3}, s++), "transposed"), make(DType::Float64, {4, 3}, s++),
                with_layout(make(DType::Float64, {4, 3}, s++), "stepped")}});
  v.push_back({"tensor weight mixed",
               {make(DType::Float32, {3}, s++), make(DType::Float32, {3}, s++), make(DType::Float64, {3}, s++)}});
  v.push_back({"tensor weight int",
               {make(DType::Int64, {3}, s++), make(DType::Int64, {3}, s++), make(DType::Int64, {3}, s++)}});
  return v;
}

// x, lo, hi; args "bounds": "both", "min" or "max" (the unused input is passed but not read).
std::vector<Sample> clamp_tensor_samples() {
  std::vector<Sample> v;
  uint64_t s = 3200;
  for (const char* b : {"both", "min", "max"}) {
    const json a = {{"bounds", b}};
    const std::string n = b;
    for (DType t : kAllDTypes) {
      v.push_back({n + " 3x4 " + short_name(t),
                   {make(t, {3, 4}, s++), make(t, {3, 4}, s++, -2.0, 0.0), make(t, {3, 4}, s++, 0.0, 2.0)},
                   a});
    }
    v.push_back({n + " lo > hi f32",
                 {make(DType::Float32, {6}, s++), make(DType::Float32, {6}, s++, 0.5, 1.0),
                  make(DType::Float32, {6}, s++, -1.0, 0.0)},
                 a});
    v.push_back({n + " broadcast f64",
                 {make(DType::Float64, {3, 4}, s++), make(DType::Float64, {4}, s++, -1.0, 0.0),
                  make(DType::Float64, {}, s++, 0.0, 1.0)},
                 a});
    v.push_back({n + " special f64",
                 {special(DType::Float64), special(DType::Float64, {16}, 3), special(DType::Float64, {16}, 9)},
                 a});
    v.push_back({n + " mixed i64 f32",
                 {make(DType::Int64, {3, 4}, s++), make(DType::Float32, {4}, s++, -2.0, 0.0),
                  make(DType::Float64, {}, s++, 0.0, 2.0)},
                 a});
    v.push_back({n + " 0-d bounds i32",
                 {make(DType::Int32, {5}, s++), make(DType::Int64, {}, s++, -2.0, 0.0),
                  make(DType::Float64, {}, s++, 0.0, 2.0)},
                 a});
    v.push_back({n + " empty f32",
                 {make(DType::Float32, {0, 3}, s++), make(DType::Float32, {3}, s++), make(DType::Float32, {1}, s++)},
                 a});
    v.push_back({n + " bad broadcast",
                 {make(DType::Float32, {3}, s++), make(DType::Float32, {2}, s++), make(DType::Float32, {2}, s++)},
                 a});
  }
  return v;
}

std::vector<Sample> pow_base_samples() {
  std::vector<Sample> v;
  for (double base : {2.0, 0.5, 0.0, -2.0, 1.0, -1.0}) add_all(v, unary_samples(), {{"base", base}});
  add_all(v, unary_samples({-3.0, 3.0, false}, {DType::Int64, DType::Int32, DType::UInt8, DType::Int8, DType::Int16}),
          {{"base", 3.0}});
  add_all(v, unary_samples({-3.0, 3.0, false}, {DType::Int64, DType::Bool}), {{"base", 2.5}});
  return v;
}

}  // namespace

void add_math_rows(std::vector<Row>& rows) {
  const json sz = {{"signed_zero", true}};
  // Unary math: every dtype (integers and bools give float32), special values, on a domain where the
  // function is finite for the ordinary samples.
  rows.push_back(both("sin", "lambda x: torch.sin(x)", DDL_SWEEP_UNARY(sin), {true}, unary_samples(), true, sz));
  rows.push_back(both("cos", "lambda x: torch.cos(x)", DDL_SWEEP_UNARY(cos), {true}, unary_samples(), true));
  rows.push_back(both("tan", "lambda x: torch.tan(x)", DDL_SWEEP_UNARY(tan), {true}, unary_samples(), true, sz));
  rows.push_back(
      both("asin", "lambda x: torch.asin(x)", DDL_SWEEP_UNARY(asin), {true}, unary_samples({-0.9, 0.9}), true, sz));
  rows.push_back(
      both("acos", "lambda x: torch.acos(x)", DDL_SWEEP_UNARY(acos), {true}, unary_samples({-0.9, 0.9}), true));
  rows.push_back(both("atan", "lambda x: torch.atan(x)", DDL_SWEEP_UNARY(atan), {true}, unary_samples(), true, sz));
  rows.push_back(both("sinh", "lambda x: torch.sinh(x)", DDL_SWEEP_UNARY(sinh), {true}, unary_samples(), true, sz));
  rows.push_back(both("cosh", "lambda x: torch.cosh(x)", DDL_SWEEP_UNARY(cosh), {true}, unary_samples(), true));
  rows.push_back(both("asinh", "lambda x: torch.asinh(x)", DDL_SWEEP_UNARY(asinh), {true}, unary_samples(), true, sz));
  rows.push_back(
      both("acosh", "lambda x: torch.acosh(x)", DDL_SWEEP_UNARY(acosh), {true}, unary_samples({1.1, 3.0}), true));
  rows.push_back(
      both("atanh", "lambda x: torch.atanh(x)", DDL_SWEEP_UNARY(atanh), {true}, unary_samples({-0.9, 0.9}), true, sz));
  rows.push_back(
      both("log1p", "lambda x: torch.log1p(x)", DDL_SWEEP_UNARY(log1p), {true}, unary_samples({-0.9, 3.0}), true, sz));
  rows.push_back(both("expm1", "lambda x: torch.expm1(x)", DDL_SWEEP_UNARY(expm1), {true}, unary_samples(), true, sz));
  rows.push_back(both(
      "softplus", "lambda x, beta, threshold: torch.nn.functional.softplus(x, PYNUM(beta), PYNUM(threshold))",
      [](const auto& in, const json& a) { return softplus(in[0], f64(a, "beta"), f64(a, "threshold")); }, {true},
      softplus_samples(), true));
  // Binary math.
  const std::vector<bool> d2 = {true, true};
  rows.push_back(both(
      "atan2", "lambda x, y: torch.atan2(x, y)", [](const auto& in, const json&) { return atan2(in[0], in[1]); }, d2,
      binary_samples(), true));
  rows.push_back(both("fmod", "lambda x, y=None, scalar=None: torch.fmod(x, y if scalar is None else PYNUM(scalar))",
                      DDL_SWEEP_BINARY(fmod), d2, binary_samples({}, true), true));
  rows.push_back(both("remainder",
                      "lambda x, y=None, scalar=None: torch.remainder(x, y if scalar is None else PYNUM(scalar))",
                      DDL_SWEEP_BINARY(remainder), d2, binary_samples({}, true), true));
  rows.push_back(both(
      "lerp", "lambda x, y, w=None, weight=None: torch.lerp(x, y, w if weight is None else weight)",
      [](const auto& in, const json& a) {
        return in.size() == 3 ? lerp(in[0], in[1], in[2]) : lerp(in[0], in[1], f64(a, "weight"));
      },
      {true, true, true}, lerp_samples(), true));
  const json clamp_alias = {{"aliases", {"clamp", "maximum", "minimum"}}};
  rows.push_back(both(
      "clamp_tensor",
      "lambda x, lo, hi, bounds: torch.clamp(x, lo if bounds != 'max' else None, hi if bounds != 'min' else None)",
      [](const auto& in, const json& a) {
        using V = std::decay_t<decltype(in[0])>;
        const std::string b = a["bounds"].get<std::string>();
        return clamp(in[0], b != "max" ? std::optional<V>(in[1]) : std::nullopt,
                     b != "min" ? std::optional<V>(in[2]) : std::nullopt);
      },
      {true, true, true}, clamp_tensor_samples(), true, clamp_alias));
  rows.push_back(both("clamp_min",
                      "lambda x, y=None, scalar=None: torch.clamp_min(x, y if scalar is None else PYNUM(scalar))",
                      DDL_SWEEP_BINARY(clamp_min), d2, binary_samples({}, true), true, clamp_alias));
  rows.push_back(both("clamp_max",
                      "lambda x, y=None, scalar=None: torch.clamp_max(x, y if scalar is None else PYNUM(scalar))",
                      DDL_SWEEP_BINARY(clamp_max), d2, binary_samples({}, true), true, clamp_alias));
  rows.push_back(both("pow_scalar_base", "lambda x, base: torch.pow(PYNUM(base), x)",
                      [](const auto& in, const json& a) { return pow(f64(a, "base"), in[0]); }, {true},
                      pow_base_samples(), true, {{"aliases", {"pow"}}}));
}

}  // namespace ddl::sweep
