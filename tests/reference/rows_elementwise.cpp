// Rows: arithmetic, unary math and activations (tensor/ops/elementwise.h, autograd/ops/elementwise.h, activation.h).
#include <cmath>
#include <optional>

#include "sweep.h"

namespace ddl::sweep {
namespace {

// A binary op with a tensor or (args "scalar") a double second operand.
#define DDL_SWEEP_BINARY(op) \
  [](const auto& in, const json& a) { return a.contains("scalar") ? op(in[0], f64(a, "scalar")) : op(in[0], in[1]); }
#define DDL_SWEEP_TENSORS(op) [](const auto& in, const json&) { return op(in[0], in[1]); }
#define DDL_SWEEP_UNARY(op) [](const auto& in, const json&) { return op(in[0]); }

std::optional<double> opt(const json& a, const char* k) {
  if (!a.contains(k) || a[k].is_null()) return std::nullopt;
  return a[k].get<double>();
}

std::vector<Sample> clamp_samples() {
  std::vector<Sample> v;
  const std::vector<std::pair<json, json>> bounds = {{-1.0, 1.0}, {0.5, nullptr}, {nullptr, -0.25}, {1.0, -1.0}};
  int i = 0;
  for (auto [lo, hi] : bounds) {
    json a = {{"lo", lo}, {"hi", hi}};
    add_all(v, unary_samples(), a);
    if (!lo.is_null() && !hi.is_null()) {
      a["pair"] = true;
      v.push_back({"pair f32 " + std::to_string(i), {make(DType::Float32, {3, 4}, 900 + i)}, a});
      v.push_back({"pair i64 " + std::to_string(i), {make(DType::Int64, {3, 4}, 910 + i)}, a});
    }
    ++i;
  }
  v.push_back({"int bounds i64", {make(DType::Int64, {3, 4}, 920)}, {{"lo", -2.0}, {"hi", 3.0}}});
  v.push_back({"at bound f64", {of(DType::Float64, {4}, {-1, 1, 0, 2})}, {{"lo", -1.0}, {"hi", 1.0}}});
  return v;
}

std::vector<Sample> pow_samples() {
  std::vector<Sample> v;
  for (double e : {2.0, 3.0, 0.5, -1.0, 0.0, -0.5, 1.5}) add_all(v, unary_samples({0.1, 3.0}), {{"exponent", e}});
  v.push_back({"negative base 2.5", {make(DType::Float64, {5}, 930)}, {{"exponent", 2.5}}});
  v.push_back({"zero base -1", {of(DType::Float64, {3}, {0.0, -0.0, 1.0})}, {{"exponent", -1.0}}});
  v.push_back({"zero base 2", {of(DType::Float64, {3}, {0.0, -0.0, 1.0})}, {{"exponent", 2.0}}});
  v.push_back({"zero base 0.5", {of(DType::Float64, {2}, {0.0, 4.0})}, {{"exponent", 0.5}}});
  v.push_back({"int base 2", {make(DType::Int64, {5}, 931)}, {{"exponent", 2.0}}});
  v.push_back({"int base 0.5", {make(DType::Int64, {5}, 932)}, {{"exponent", 0.5}}});
  return v;
}

std::vector<Sample> where_samples() {
  std::vector<Sample> v;
  uint64_t s = 940;
  for (DType t : kAllDTypes) {
    v.push_back({std::string("bool cond ") + short_name(t),
                 {make(DType::Bool, {3, 4}, s++), make(t, {3, 4}, s++), make(t, {3, 4}, s++)}});
  }
  v.push_back({"broadcast",
               {make(DType::Bool, {3, 1}, s++), make(DType::Float32, {1, 4}, s++), make(DType::Float32, {4}, s++)}});
  v.push_back(
      {"0-d operands", {make(DType::Bool, {3}, s++), make(DType::Float64, {}, s++), make(DType::Float64, {}, s++)}});
  v.push_back(
      {"empty", {make(DType::Bool, {0, 3}, s++), make(DType::Float32, {0, 3}, s++), make(DType::Float32, {3}, s++)}});
  v.push_back({"mixed f32 f64",
               {make(DType::Bool, {3, 4}, s++), make(DType::Float32, {3, 4}, s++), make(DType::Float64, {3, 4}, s++)}});
  v.push_back({"mixed i64 f32",
               {make(DType::Bool, {3, 4}, s++), make(DType::Int64, {3, 4}, s++), make(DType::Float32, {3, 4}, s++)}});
  v.push_back(
      {"uint8 cond",
       {make(DType::UInt8, {3, 4}, s++), make(DType::Float32, {3, 4}, s++), make(DType::Float32, {3, 4}, s++)}});
  v.push_back(
      {"float cond",
       {make(DType::Float32, {3, 4}, s++), make(DType::Float32, {3, 4}, s++), make(DType::Float32, {3, 4}, s++)}});
  v.push_back({"transposed",
               {with_layout(make(DType::Bool, {4, 3}, s++), "transposed"),
                with_layout(make(DType::Float64, {4, 3}, s++), "stepped"), make(DType::Float64, {4, 3}, s++)}});
  v.push_back({"special", {make(DType::Bool, {16}, s++), special(DType::Float64), special(DType::Float64, {16}, 3)}});
  v.push_back({"bad broadcast",
               {make(DType::Bool, {3, 4}, s++), make(DType::Float32, {3}, s++), make(DType::Float32, {3, 4}, s++)}});
  return v;
}

std::vector<Sample> allclose_samples() {
  std::vector<Sample> v;
  const double inf = INFINITY;
  v.push_back({"equal f32", {of(DType::Float32, {3}, {1, 2, 3}), of(DType::Float32, {3}, {1, 2, 3})}});
  v.push_back({"close f64", {of(DType::Float64, {2}, {1, 2}), of(DType::Float64, {2}, {1 + 1e-9, 2})}});
  v.push_back({"far f64", {of(DType::Float64, {2}, {1, 2}), of(DType::Float64, {2}, {1.1, 2})}});
  v.push_back({"rtol f64",
               {of(DType::Float64, {2}, {1, 2}), of(DType::Float64, {2}, {1.1, 2})},
               {{"rtol", 0.2}, {"atol", 0.0}}});
  v.push_back({"inf equal", {of(DType::Float64, {2}, {inf, -inf}), of(DType::Float64, {2}, {inf, -inf})}});
  v.push_back({"inf sign", {of(DType::Float64, {1}, {inf}), of(DType::Float64, {1}, {-inf})}});
  v.push_back({"inf vs big", {of(DType::Float64, {1}, {inf}), of(DType::Float64, {1}, {1e308})}});
  v.push_back({"inf vs big rtol",
               {of(DType::Float64, {1}, {inf}), of(DType::Float64, {1}, {1e308})},
               {{"rtol", 2.0}, {"atol", 0.0}}});
  v.push_back({"nan", {of(DType::Float64, {1}, {NAN}), of(DType::Float64, {1}, {NAN})}});
  v.push_back({"broadcast", {of(DType::Float32, {2, 2}, {1, 1, 1, 1}), of(DType::Float32, {2}, {1, 1})}});
  v.push_back({"mixed dtypes", {of(DType::Float32, {2}, {1, 2}), of(DType::Float64, {2}, {1, 2})}});
  v.push_back({"int", {of(DType::Int64, {2}, {1, 2}), of(DType::Int64, {2}, {1, 3})}});
  v.push_back({"empty", {make(DType::Float32, {0}, 1), make(DType::Float32, {0}, 2)}});
  v.push_back({"bad broadcast", {make(DType::Float32, {3}, 1), make(DType::Float32, {2}, 2)}});
  return v;
}

std::vector<Sample> backward_pair(Domain d) {
  std::vector<Sample> v;
  uint64_t s = 960;
  for (DType t : kFloatDTypes) {
    v.push_back({std::string("3x4 ") + short_name(t), {make(t, {3, 4}, s++), make(t, {3, 4}, s++, d.lo, d.hi)}});
  }
  v.push_back({"broadcast", {make(DType::Float32, {3, 4}, s++), make(DType::Float32, {4}, s++, d.lo, d.hi)}});
  v.push_back({"0-d", {make(DType::Float64, {}, s++), make(DType::Float64, {}, s++, d.lo, d.hi)}});
  v.push_back(
      {"transposed",
       {with_layout(make(DType::Float64, {4, 3}, s++), "transposed"), make(DType::Float64, {4, 3}, s++, d.lo, d.hi)}});
  v.push_back({"special", {make(DType::Float64, {16}, s++), special(DType::Float64)}});
  v.push_back({"int", {make(DType::Int64, {3}, s++), make(DType::Int64, {3}, s++)}});
  return v;
}

}  // namespace

void add_elementwise_rows(std::vector<Row>& rows) {
  const json sz = {{"signed_zero", true}};
  const std::vector<bool> d2 = {true, true};
  // Binary arithmetic: tensor or scalar second operand. A double scalar is the Python number ddl reads it as
  // (PYNUM: an integral value is an int; Note [Scalar operands] in tensor/ops/elementwise.cpp).
  {
    // add's alpha (a + alpha * b) exists on the Tensor overload only.
    std::vector<Sample> s = binary_samples({}, true);
    for (Sample x : binary_samples({}, false)) {
      if (x.tag.rfind("same", 0) != 0 && x.tag.rfind("special", 0) != 0 && x.tag.rfind("broadcast", 0) != 0) continue;
      x.tag = "alpha " + x.tag;
      x.args["alpha"] = -2.5;
      s.push_back(x);
    }
    rows.push_back(both(
        "add",
        "lambda x, y=None, scalar=None, alpha=1: torch.add(x, y if scalar is None else PYNUM(scalar), "
        "alpha=PYNUM(alpha))",
        [](const auto& in, const json& a) {
          if constexpr (std::is_same_v<std::decay_t<decltype(in[0])>, Tensor>) {
            if (a.contains("alpha")) return add(in[0], in[1], f64(a, "alpha"));
          } else {
            if (a.contains("alpha")) throw Skip{};
          }
          return a.contains("scalar") ? add(in[0], f64(a, "scalar")) : add(in[0], in[1]);
        },
        d2, s, true, sz));
  }
  rows.push_back(both("sub", "lambda x, y=None, scalar=None: torch.sub(x, y if scalar is None else PYNUM(scalar))",
                      DDL_SWEEP_BINARY(sub), d2, binary_samples({}, true), true, sz));
  rows.push_back(both("mul", "lambda x, y=None, scalar=None: torch.mul(x, y if scalar is None else PYNUM(scalar))",
                      DDL_SWEEP_BINARY(mul), d2, binary_samples({}, true), true, sz));
  rows.push_back(both("div", "lambda x, y=None, scalar=None: torch.div(x, y if scalar is None else PYNUM(scalar))",
                      DDL_SWEEP_BINARY(div), d2, binary_samples({}, true), true, sz));
  rows.push_back(
      both("maximum", "lambda x, y: torch.maximum(x, y)", DDL_SWEEP_TENSORS(maximum), d2, binary_samples(), true));
  rows.push_back(
      both("minimum", "lambda x, y: torch.minimum(x, y)", DDL_SWEEP_TENSORS(minimum), d2, binary_samples(), true));
  {
    std::vector<Sample> s;
    for (const Sample& x : binary_samples({}, true))
      if (x.args.contains("scalar")) s.push_back(x);
    rows.push_back(both(
        "rsub", "lambda x, scalar: torch.rsub(x, PYNUM(scalar))",
        [](const auto& in, const json& a) { return rsub(in[0], f64(a, "scalar")); }, {true}, s, true, sz));
  }
  rows.push_back(both(
      "pow", "lambda x, exponent: torch.pow(x, PYNUM(exponent))",
      [](const auto& in, const json& a) { return pow(in[0], f64(a, "exponent")); }, {true}, pow_samples(), true));
  // Unary math.
  rows.push_back(both("neg", "lambda x: torch.neg(x)", DDL_SWEEP_UNARY(neg), {true}, unary_samples(), true, sz));
  rows.push_back(both("exp", "lambda x: torch.exp(x)", DDL_SWEEP_UNARY(exp), {true}, unary_samples(), true));
  rows.push_back(both("log", "lambda x: torch.log(x)", DDL_SWEEP_UNARY(log), {true}, unary_samples({0.1, 3.0}), true));
  rows.push_back(
      both("sqrt", "lambda x: torch.sqrt(x)", DDL_SWEEP_UNARY(sqrt), {true}, unary_samples({0.1, 3.0}), true, sz));
  rows.push_back(
      both("rsqrt", "lambda x: torch.rsqrt(x)", DDL_SWEEP_UNARY(rsqrt), {true}, unary_samples({0.1, 3.0}), true));
  rows.push_back(both("abs", "lambda x: torch.abs(x)", DDL_SWEEP_UNARY(abs), {true}, unary_samples(), true, sz));
  rows.push_back(both("relu", "lambda x: torch.relu(x)", DDL_SWEEP_UNARY(relu), {true}, unary_samples(), true));
  rows.push_back(
      both("sigmoid", "lambda x: torch.sigmoid(x)", DDL_SWEEP_UNARY(sigmoid), {true}, unary_samples(), true));
  rows.push_back(both("tanh", "lambda x: torch.tanh(x)", DDL_SWEEP_UNARY(tanh), {true}, unary_samples(), true, sz));
  rows.push_back(ten_only("erf", "lambda x: torch.erf(x)", DDL_SWEEP_UNARY(erf), unary_samples(), sz));
  // sign: rows_rounding.cpp, with its gradient.
  rows.push_back(both(
      "clamp", "lambda x, lo=None, hi=None, pair=False: torch.clamp(x, PYNUM(lo), PYNUM(hi))",
      [](const auto& in, const json& a) {
        if (flag(a, "pair")) return clamp(in[0], f64(a, "lo"), f64(a, "hi"));
        return clamp(in[0], opt(a, "lo"), opt(a, "hi"));
      },
      {true}, clamp_samples(), true));
  rows.push_back(both(
      "where", "lambda c, x, y: torch.where(c, x, y)",
      [](const auto& in, const json&) { return where(in_t(in[0]), in[1], in[2]); }, {false, true, true},
      where_samples(), true));
  // Activations (autograd only).
  rows.push_back(
      var_only("silu", "lambda x: torch.nn.functional.silu(x)", DDL_SWEEP_UNARY(silu), {true}, unary_samples(), true));
  {
    std::vector<Sample> s;
    add_all(s, unary_samples(), {{"approximate", "none"}});
    add_all(s, unary_samples(), {{"approximate", "tanh"}});
    s.push_back({"bad approximate", {make(DType::Float32, {3}, 1)}, {{"approximate", "fast"}}});
    rows.push_back(var_only(
        "gelu", "lambda x, approximate: torch.nn.functional.gelu(x, approximate=approximate)",
        [](const auto& in, const json& a) { return gelu(in[0], a["approximate"].get<std::string>()); }, {true}, s,
        true));
  }
  {
    std::vector<Sample> s;
    add_all(s, unary_samples(), {{"negative_slope", 0.01}});
    add_all(s, unary_samples(), {{"negative_slope", -0.5}});
    rows.push_back(var_only(
        "leaky_relu", "lambda x, negative_slope: torch.nn.functional.leaky_relu(x, negative_slope)",
        [](const auto& in, const json& a) { return leaky_relu(in[0], f64(a, "negative_slope")); }, {true}, s, true));
  }
  rows.push_back(ten_only(
      "allclose", "lambda x, y, rtol=1e-5, atol=1e-8: torch.allclose(x, y, rtol, atol)",
      [](const auto& in, const json& a) { return allclose(in[0], in[1], f64(a, "rtol", 1e-5), f64(a, "atol", 1e-8)); },
      allclose_samples()));
  // The Tensor-level backward helpers.
  rows.push_back(ten_only(
      "relu_backward", "lambda g, x: torch.ops.aten.threshold_backward(g, x, 0)",
      [](const auto& in, const json&) { return relu_backward(in[0], in[1]); }, backward_pair({-2, 2})));
  rows.push_back(ten_only(
      "sigmoid_backward", "lambda g, y: torch.ops.aten.sigmoid_backward(g, y)",
      [](const auto& in, const json&) { return sigmoid_backward(in[0], in[1]); }, backward_pair({0, 1})));
  rows.push_back(ten_only(
      "tanh_backward", "lambda g, y: torch.ops.aten.tanh_backward(g, y)",
      [](const auto& in, const json&) { return tanh_backward(in[0], in[1]); }, backward_pair({-1, 1})));
}

}  // namespace ddl::sweep
