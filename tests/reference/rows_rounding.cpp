// Rows: rounding and the integer-flavoured math of tensor/ops/math_ops.h and autograd/ops/math_ops.h:
// floor, ceil, round (ties to even, and with decimals), trunc, frac, sign, pow of two tensors,
// div with a rounding mode and remainder of a number by a tensor.
#include <string>

#include "sweep.h"

namespace ddl::sweep {
namespace {

#define DDL_SWEEP_UNARY(op) [](const auto& in, const json&) { return op(in[0]); }

// Halves and their neighbours, where rounding modes part: ties go to even in torch.round.
std::vector<Sample> tie_samples() {
  std::vector<Sample> v;
  const std::vector<double> ties = {0.5, 1.5,  2.5,        -0.5,        -1.5,      -2.5,
                                    3.5, -3.5, 0.49999997, -0.50000006, 1e7 + 0.5, 7.0};
  for (DType t : kFloatDTypes) v.push_back({std::string("ties ") + short_name(t), {of(t, {12}, ties)}});
  return v;
}

std::vector<Sample> rounding_samples() {
  std::vector<Sample> v = unary_samples({-4.0, 4.0});
  for (const Sample& s : tie_samples()) v.push_back(s);
  return v;
}

std::vector<Sample> round_samples() {
  std::vector<Sample> v = rounding_samples();
  uint64_t s = 4100;
  const std::vector<double> fine = {1.2345, -1.2355, 1234.5, 0.125, -0.125, 0.0, -0.0, 1250.0, 1350.0, -1450.0};
  for (int64_t d : {1, 2, 3, -1, -2}) {
    const json a = {{"decimals", d}};
    const std::string n = " decimals=" + std::to_string(d);
    for (DType t : {DType::Float32, DType::Float64, DType::BFloat16}) {
      v.push_back({std::string("fine ") + short_name(t) + n, {of(t, {10}, fine)}, a});
      v.push_back({std::string("3x4 ") + short_name(t) + n, {make(t, {3, 4}, s++, -2000.0, 2000.0)}, a});
    }
    v.push_back({"special f64" + n, {special(DType::Float64)}, a});
    v.push_back({"special f32" + n, {special(DType::Float32)}, a});
    v.push_back({"transposed f64" + n, {with_layout(make(DType::Float64, {3, 4}, s++), "transposed")}, a});
    v.push_back({"empty f32" + n, {make(DType::Float32, {0, 3}, s++)}, a});
    // float16 computes in float32 (1.13's CPU has no kernel; the sweep's reference upcasts), integers are refused.
    v.push_back({"f16" + n, {make(DType::Float16, {4}, s++)}, a});
    v.push_back({"i64" + n, {make(DType::Int64, {4}, s++)}, a});
  }
  v.push_back({"huge decimals f64", {of(DType::Float64, {3}, {1.5, 2.25, -3.125})}, {{"decimals", 400}}});
  return v;
}

// pow of two tensors: the generic binary samples, positive bases (finite gradients everywhere) and the
// edges of pow_backward: 0 to the power 0, 0.5, -1, 2, and negative bases to integral powers.
std::vector<Sample> pow_samples() {
  std::vector<Sample> v = binary_samples();
  for (Sample s : binary_samples({0.2, 2.0, false}, false, {DType::Float32, DType::Float64})) {
    s.tag = "positive " + s.tag;
    v.push_back(s);
  }
  for (DType t : {DType::Float32, DType::Float64}) {
    v.push_back({std::string("edges ") + short_name(t),
                 {of(t, {8}, {0.0, 0.0, 0.0, 0.0, -2.0, -2.0, 1.5, -0.0}),
                  of(t, {8}, {0.0, 0.5, -1.0, 2.0, 2.0, 3.0, 0.0, 3.0})}});
  }
  v.push_back({"int negative powers",
               {of(DType::Int64, {6}, {0, 2, -2, 1, -1, 3}), of(DType::Int64, {6}, {-1, -1, -2, -5, -3, 4})}});
  v.push_back({"uint8 wraps", {of(DType::UInt8, {3}, {2, 3, 200}), of(DType::UInt8, {3}, {9, 2, 2})}});
  v.push_back({"int by 0-d float", {of(DType::Int64, {3}, {1, -2, 3}), of(DType::Float32, {}, {2.5})}});
  return v;
}

std::vector<Sample> div_samples() {
  std::vector<Sample> v;
  for (const char* mode : {"trunc", "floor"}) {
    add_all(v, binary_samples({}, true), {{"mode", mode}});
    std::vector<Sample> extra;
    for (DType t : {DType::Int64, DType::Int32, DType::UInt8}) {
      const bool u = t == DType::UInt8;
      extra.push_back(
          {std::string("signs ") + short_name(t),
           {of(t, {4}, {7, u ? 9.0 : -7.0, 7, u ? 200.0 : -7.0}), of(t, {4}, {2, 2, u ? 3.0 : -2.0, u ? 3.0 : -2.0})}});
    }
    extra.push_back({"zero divisor int", {of(DType::Int64, {3}, {1, -2, 3}), of(DType::Int64, {3}, {0, 1, 1})}});
    extra.push_back(
        {"zero divisor f64", {of(DType::Float64, {4}, {7, -7, 1, 0}), of(DType::Float64, {4}, {0, 0, 0, 0})}});
    extra.push_back({"exact quotients f32",
                     {of(DType::Float32, {6}, {0.3, -0.3, 1e-45, 5.0, -5.0, 1.0}),
                      of(DType::Float32, {6}, {0.1, 0.1, 1e30, -0.5, -0.5, 3.0})}});
    add_all(v, extra, {{"mode", mode}});
  }
  // Any other mode is refused by both.
  v.push_back({"bad mode", {make(DType::Float32, {3}, 4200), make(DType::Float32, {3}, 4201)}, {{"mode", "round"}}});
  return v;
}

std::vector<Sample> remainder_base_samples() {
  std::vector<Sample> v;
  for (double base : {5.0, -5.0, 5.5, 0.0, -0.5})
    add_all(v, unary_samples({-3.0, 3.0}, {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}),
            {{"base", base}});
  // Integer divisors: zero is refused (the samples hold zeros), so nonzero ones on their own.
  add_all(v,
          {{"nonzero i64", {of(DType::Int64, {4}, {2, -2, 3, -7})}},
           {"nonzero i32", {of(DType::Int32, {4}, {2, -2, 3, -7})}},
           {"nonzero u8", {of(DType::UInt8, {3}, {2, 7, 255})}},
           {"zero i64", {of(DType::Int64, {2}, {0, 1})}}},
          {{"base", -3.0}});
  add_all(v, {{"nonzero i64 float base", {of(DType::Int64, {4}, {2, -2, 3, -7})}}}, {{"base", 2.5}});
  return v;
}

}  // namespace

void add_rounding_rows(std::vector<Row>& rows) {
  const json sz = {{"signed_zero", true}};
  rows.push_back(
      both("floor", "lambda x: torch.floor(x)", DDL_SWEEP_UNARY(floor), {true}, rounding_samples(), true, sz));
  rows.push_back(both("ceil", "lambda x: torch.ceil(x)", DDL_SWEEP_UNARY(ceil), {true}, rounding_samples(), true, sz));
  rows.push_back(
      both("trunc", "lambda x: torch.trunc(x)", DDL_SWEEP_UNARY(trunc), {true}, rounding_samples(), true, sz));
  rows.push_back(both("frac", "lambda x: torch.frac(x)", DDL_SWEEP_UNARY(frac), {true}, rounding_samples(), true, sz));
  rows.push_back(both(
      "round", "lambda x, decimals=0: torch.round(x, decimals=decimals)",
      [](const auto& in, const json& a) { return round(in[0], i64(a, "decimals")); }, {true}, round_samples(), true,
      sz));
  rows.push_back(both("sign", "lambda x: torch.sign(x)", DDL_SWEEP_UNARY(sign), {true}, rounding_samples(), true));
  rows.push_back(both("pow_tensor", "lambda x, y: torch.pow(x, y)",
                      [](const auto& in, const json&) { return pow(in[0], in[1]); }, {true, true}, pow_samples(), true,
                      {{"aliases", {"pow"}}}));
  rows.push_back(both("div_rounding",
                      "lambda x, y=None, scalar=None, mode=None: torch.div(x, y if scalar is None else PYNUM(scalar), "
                      "rounding_mode=mode)",
                      [](const auto& in, const json& a) {
                        const std::string mode = a.at("mode").get<std::string>();
                        return a.contains("scalar") ? div(in[0], f64(a, "scalar"), mode) : div(in[0], in[1], mode);
                      },
                      {true, true}, div_samples(), true, {{"aliases", {"div"}}, {"signed_zero", true}}));
  // The Variable overload's backward throws, as PyTorch's (no derivative): tests/tensor/test_rounding_ops.cpp.
  rows.push_back(ten_only("remainder_scalar_base", "lambda x, base: torch.remainder(PYNUM(base), x)",
                          [](const auto& in, const json& a) { return remainder(f64(a, "base"), in[0]); },
                          remainder_base_samples(), {{"aliases", {"remainder"}}}));
}

}  // namespace ddl::sweep
