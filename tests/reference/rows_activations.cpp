// Rows: the activations of autograd/ops/activation_more.h (elu ... hardsigmoid, prelu, rrelu in eval, glu,
// softmin) and pixel_shuffle / pixel_unshuffle. rrelu's training mode is random: tests/nn/test_activations2.cpp
// checks it statistically.
#include "sweep.h"

namespace ddl::sweep {
namespace {

#define DDL_SWEEP_ACT(op) [](const auto& in, const json&) { return op(in[0]); }

std::vector<Sample> glu_samples() {
  std::vector<Sample> v;
  uint64_t s = 7100;
  for (DType t : kAllDTypes) v.push_back({std::string("4x6 ") + short_name(t), {make(t, {4, 6}, s++)}, {{"dim", -1}}});
  v.push_back({"dim 0", {make(DType::Float64, {4, 3}, s++)}, {{"dim", 0}}});
  v.push_back({"dim 1 of 3-d", {make(DType::Float64, {2, 4, 3}, s++)}, {{"dim", 1}}});
  v.push_back({"dim -2", {make(DType::Float32, {2, 6, 3}, s++)}, {{"dim", -2}}});
  v.push_back({"transposed", {with_layout(make(DType::Float64, {4, 6}, s++), "transposed")}, {{"dim", 0}}});
  v.push_back({"empty", {make(DType::Float32, {0, 4}, s++)}, {{"dim", 1}}});
  v.push_back({"special f64", {special(DType::Float64, {2, 16})}, {{"dim", 0}}});
  v.push_back({"special f32", {special(DType::Float32, {16})}, {{"dim", 0}}});
  v.push_back({"odd size", {make(DType::Float32, {4, 5}, s++)}, {{"dim", 1}}});
  v.push_back({"0-d", {make(DType::Float32, {}, s++)}, {{"dim", 0}}});
  v.push_back({"dim out of range", {make(DType::Float32, {4, 6}, s++)}, {{"dim", 2}}});
  return v;
}

std::vector<Sample> prelu_samples() {
  std::vector<Sample> v;
  uint64_t s = 7200;
  auto f = [&](std::vector<int64_t> sh, DType t) { return make(t, std::move(sh), s++); };
  for (DType t : kFloatDTypes) {
    const std::string n = short_name(t);
    v.push_back({"channels " + n, {f({2, 3, 4}, t), f({3}, t)}});
    v.push_back({"one weight " + n, {f({2, 3, 4}, t), f({1}, t)}});
  }
  v.push_back({"2-d", {f({4, 3}, DType::Float64), f({3}, DType::Float64)}});
  v.push_back({"1-d", {f({5}, DType::Float64), f({1}, DType::Float64)}});
  v.push_back({"0-d", {f({}, DType::Float64), f({1}, DType::Float64)}});
  v.push_back({"0-d weight", {f({2, 3}, DType::Float64), f({}, DType::Float64)}});
  v.push_back({"4-d", {f({2, 3, 2, 2}, DType::Float32), f({3}, DType::Float32)}});
  v.push_back({"transposed", {with_layout(f({3, 4}, DType::Float64), "transposed"), f({4}, DType::Float64)}});
  v.push_back({"empty", {f({0, 3}, DType::Float32), f({3}, DType::Float32)}});
  v.push_back({"special f64", {special(DType::Float64, {1, 16}), f({1}, DType::Float64)}});
  v.push_back({"special f32", {special(DType::Float32, {16}), f({1}, DType::Float32)}});
  v.push_back({"mismatch", {f({2, 3}, DType::Float32), f({2}, DType::Float32)}});
  v.push_back({"2-d weight", {f({2, 3}, DType::Float32), f({3, 1}, DType::Float32)}});
  v.push_back({"int", {f({2, 3}, DType::Int64), f({1}, DType::Int64)}});
  return v;
}

std::vector<Sample> shuffle_samples(bool up) {
  std::vector<Sample> v;
  uint64_t s = 7300;
  const std::vector<int64_t> base = up ? std::vector<int64_t>{1, 8, 2, 3} : std::vector<int64_t>{1, 2, 4, 6};
  for (DType t : kAllDTypes) v.push_back({std::string("r2 ") + short_name(t), {make(t, base, s++)}, {{"r", 2}}});
  v.push_back({"3-d",
               {make(DType::Float64, up ? std::vector<int64_t>{9, 2, 2} : std::vector<int64_t>{1, 6, 3}, s++)},
               {{"r", 3}}});
  v.push_back(
      {"5-d",
       {make(DType::Float64, up ? std::vector<int64_t>{2, 1, 4, 2, 2} : std::vector<int64_t>{2, 1, 2, 4, 2}, s++)},
       {{"r", 2}}});
  v.push_back({"r1", {make(DType::Float32, base, s++)}, {{"r", 1}}});
  v.push_back({"transposed", {with_layout(make(DType::Float64, base, s++), "transposed")}, {{"r", 2}}});
  v.push_back({"not divisible", {make(DType::Float32, {1, 3, 3, 3}, s++)}, {{"r", 2}}});
  v.push_back({"2-d", {make(DType::Float32, {4, 4}, s++)}, {{"r", 2}}});
  v.push_back({"r0", {make(DType::Float32, base, s++)}, {{"r", 0}}});
  return v;
}

}  // namespace

void add_activation_rows(std::vector<Row>& rows) {
  const std::vector<bool> d1 = {true};
  const std::string F = "torch.nn.functional.";
  auto with = [](std::vector<Sample> base, std::vector<json> args) {
    std::vector<Sample> s;
    for (const json& a : args) add_all(s, base, a);
    return s;
  };
  rows.push_back(var_only(
      "elu", "lambda x, alpha: " + F + "elu(x, alpha)",
      [](const auto& in, const json& a) { return elu(in[0], f64(a, "alpha")); }, d1,
      with(unary_samples(), {{{"alpha", 1.0}}, {{"alpha", 0.5}}, {{"alpha", -2.0}}}), true));
  rows.push_back(var_only("selu", "lambda x: " + F + "selu(x)", DDL_SWEEP_ACT(selu), d1, unary_samples(), true));
  {
    auto s = with(unary_samples(), {{{"alpha", 1.0}}, {{"alpha", 2.0}}});
    s.push_back({"alpha 0", {make(DType::Float32, {3}, 7000)}, {{"alpha", 0.0}}});
    rows.push_back(var_only(
        "celu", "lambda x, alpha: " + F + "celu(x, alpha)",
        [](const auto& in, const json& a) { return celu(in[0], f64(a, "alpha")); }, d1, s, true));
  }
  rows.push_back(var_only(
      "glu", "lambda x, dim: " + F + "glu(x, dim)",
      [](const auto& in, const json& a) { return glu(in[0], i64(a, "dim")); }, d1, glu_samples(), true));
  rows.push_back(var_only(
      "hardtanh", "lambda x, lo, hi: " + F + "hardtanh(x, lo, hi)",
      [](const auto& in, const json& a) { return hardtanh(in[0], f64(a, "lo"), f64(a, "hi")); }, d1,
      with(unary_samples(), {{{"lo", -1.0}, {"hi", 1.0}}, {{"lo", -0.5}, {"hi", 2.0}}, {{"lo", 1.0}, {"hi", -1.0}}}),
      true));
  rows.push_back(
      var_only("relu6", "lambda x: " + F + "relu6(x)", DDL_SWEEP_ACT(relu6), d1, unary_samples({-2.0, 8.0}), true));
  rows.push_back(var_only(
      "hardshrink", "lambda x, lambd: " + F + "hardshrink(x, lambd)",
      [](const auto& in, const json& a) { return hardshrink(in[0], f64(a, "lambd")); }, d1,
      with(unary_samples(), {{{"lambd", 0.5}}, {{"lambd", -0.5}}}), true));
  rows.push_back(var_only(
      "softshrink", "lambda x, lambd: " + F + "softshrink(x, lambd)",
      [](const auto& in, const json& a) { return softshrink(in[0], f64(a, "lambd")); }, d1,
      with(unary_samples(), {{{"lambd", 0.5}}, {{"lambd", 0.0}}, {{"lambd", -0.5}}}), true));
  rows.push_back(
      var_only("tanhshrink", "lambda x: " + F + "tanhshrink(x)", DDL_SWEEP_ACT(tanhshrink), d1, unary_samples(), true));
  rows.push_back(var_only(
      "threshold", "lambda x, th, value: " + F + "threshold(x, th, value)",
      [](const auto& in, const json& a) { return threshold(in[0], f64(a, "th"), f64(a, "value")); }, d1,
      with(unary_samples(), {{{"th", 0.5}, {"value", 2.0}}, {{"th", -1.0}, {"value", 0.0}}}), true));
  rows.push_back(var_only(
      "prelu", "lambda x, w: " + F + "prelu(x, w)", [](const auto& in, const json&) { return prelu(in[0], in[1]); },
      {true, true}, prelu_samples(), true));
  {
    auto s = with(unary_samples(), {{{"lower", 0.125}, {"upper", 1.0 / 3}}, {{"lower", 0.2}, {"upper", 0.2}}});
    s.push_back({"lower > upper", {make(DType::Float32, {3}, 7001)}, {{"lower", 0.5}, {"upper", 0.1}}});
    rows.push_back(var_only(
        "rrelu", "lambda x, lower, upper: " + F + "rrelu(x, lower, upper, training=False)",
        [](const auto& in, const json& a) { return rrelu(in[0], f64(a, "lower"), f64(a, "upper"), false); }, d1, s,
        true));
  }
  rows.push_back(
      var_only("logsigmoid", "lambda x: " + F + "logsigmoid(x)", DDL_SWEEP_ACT(logsigmoid), d1, unary_samples(), true));
  rows.push_back(var_only(
      "softmin", "lambda x, dim: " + F + "softmin(x, dim)",
      [](const auto& in, const json& a) { return softmin(in[0], i64(a, "dim")); }, d1, dim_samples(kAllDTypes, false),
      true));
  rows.push_back(
      var_only("softsign", "lambda x: " + F + "softsign(x)", DDL_SWEEP_ACT(softsign), d1, unary_samples(), true));
  rows.push_back(
      var_only("mish", "lambda x: " + F + "mish(x)", DDL_SWEEP_ACT(mish), d1, unary_samples({-6.0, 6.0}), true));
  rows.push_back(var_only("hardswish", "lambda x: " + F + "hardswish(x)", DDL_SWEEP_ACT(hardswish), d1,
                          unary_samples({-5.0, 5.0}), true));
  rows.push_back(var_only("hardsigmoid", "lambda x: " + F + "hardsigmoid(x)", DDL_SWEEP_ACT(hardsigmoid), d1,
                          unary_samples({-5.0, 5.0}), false));
  rows.push_back(var_only(
      "pixel_shuffle", "lambda x, r: " + F + "pixel_shuffle(x, r)",
      [](const auto& in, const json& a) { return pixel_shuffle(in[0], i64(a, "r")); }, d1, shuffle_samples(true),
      true));
  rows.push_back(var_only(
      "pixel_unshuffle", "lambda x, r: " + F + "pixel_unshuffle(x, r)",
      [](const auto& in, const json& a) { return pixel_unshuffle(in[0], i64(a, "r")); }, d1, shuffle_samples(false),
      true));
}

}  // namespace ddl::sweep
