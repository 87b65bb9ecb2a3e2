// Rows: the layers' functions of autograd/ops/norm_more.h (instance_norm, local_response_norm),
// dropout_more.h (random: shape, dtype and a property; deterministic cases by value), fold.h,
// bilinear.h, and pad in 3-D reflect/replicate (the padding layers' modes). instance_norm returns
// the updated running statistics beside y, so their update is compared too.
#include "sweep.h"
#include <ddl/autograd/ops/bilinear.h>
#include <ddl/autograd/ops/dropout_more.h>
#include <ddl/autograd/ops/fold.h>
#include <ddl/autograd/ops/norm_more.h>

namespace ddl::sweep {
namespace {

// Inputs: x, weight, bias (used when args "affine"), then running mean and var when args "stats".
std::vector<Sample> instance_norm_samples() {
  std::vector<Sample> v;
  uint64_t s = 9100;
  auto f = [&](std::vector<int64_t> sh, DType t = DType::Float64, double lo = -2, double hi = 2) {
    return make(t, std::move(sh), s++, lo, hi);
  };
  auto add = [&](std::string name, std::vector<int64_t> shape, DType t, DType pt, bool affine, bool stats,
                 bool use_input_stats) {
    const int64_t c = shape.size() > 1 ? shape[1] : 1;
    Sample x{std::move(name), {f(shape, t)}, {{"affine", affine}, {"stats", stats}, {"uis", use_input_stats}}};
    x.inputs.push_back(f({c}, pt)), x.inputs.push_back(f({c}, pt));  // used when affine
    if (stats) x.inputs.push_back(f({c}, pt)), x.inputs.push_back(f({c}, pt, 0.5, 2));
    v.push_back(x);
  };
  for (DType t : {DType::Float32, DType::Float64}) {
    const std::string n = short_name(t);
    add("3-d " + n, {2, 3, 5}, t, t, false, false, true);
    add("4-d affine " + n, {2, 3, 2, 3}, t, t, true, false, true);
    add("5-d stats " + n, {2, 2, 2, 2, 3}, t, t, true, true, true);
    add("eval stats " + n, {3, 2, 4}, t, t, true, true, false);
  }
  add("f16 input", {2, 3, 4}, DType::Float16, DType::Float32, true, false, true);
  add("bf16 stats", {2, 3, 4}, DType::BFloat16, DType::Float32, false, true, true);
  add("stats no affine", {2, 3, 4}, DType::Float64, DType::Float64, false, true, true);
  add("one sample", {1, 4, 3}, DType::Float64, DType::Float64, true, true, true);
  add("empty batch", {0, 3, 4}, DType::Float64, DType::Float64, false, false, true);
  v.push_back(
      {"transposed", {with_layout(f({2, 3, 4}), "transposed")}, {{"affine", false}, {"stats", false}, {"uis", true}}});
  // Refusals: one spatial element, no spatial dims, wrong parameter sizes, an integer input.
  add("one spatial element", {2, 3, 1}, DType::Float64, DType::Float64, false, false, true);
  add("2-d", {2, 3}, DType::Float64, DType::Float64, false, false, true);
  add("int", {2, 3, 4}, DType::Int64, DType::Float32, false, false, true);
  add("f32 weight, f64 input", {2, 3, 4}, DType::Float64, DType::Float32, true, false, true);
  Sample bad{"weight size", {f({2, 3, 4}), f({2}), f({2})}, {{"affine", true}, {"stats", false}, {"uis", true}}};
  v.push_back(bad);
  Sample bad_rm{"running stats size",
                {f({2, 3, 4}), f({3}), f({3}), f({4}), f({4}, DType::Float64, 0.5, 2)},
                {{"affine", false}, {"stats", true}, {"uis", true}}};
  v.push_back(bad_rm);
  return v;
}

std::vector<Sample> lrn_samples() {
  std::vector<Sample> v;
  uint64_t s = 9200;
  auto f = [&](std::vector<int64_t> sh, DType t = DType::Float64) { return make(t, std::move(sh), s++); };
  const json d = {{"size", 3}, {"alpha", 1e-4}, {"beta", 0.75}, {"k", 1.0}};
  for (DType t : kFloatDTypes) v.push_back({std::string("3-d ") + short_name(t), {f({2, 5, 4}, t)}, d});
  v.push_back({"4-d", {f({2, 6, 3, 2})}, {{"size", 2}, {"alpha", 0.5}, {"beta", 0.75}, {"k", 2.0}}});
  v.push_back({"5-d", {f({1, 4, 2, 2, 3})}, {{"size", 4}, {"alpha", 1.0}, {"beta", 0.5}, {"k", 1.0}}});
  v.push_back({"size 1", {f({2, 3, 4})}, {{"size", 1}, {"alpha", 2.0}, {"beta", 1.0}, {"k", 1.0}}});
  v.push_back({"size > C", {f({2, 3, 4})}, {{"size", 7}, {"alpha", 3.0}, {"beta", 0.75}, {"k", 1.0}}});
  v.push_back({"transposed", {with_layout(f({2, 3, 4}), "transposed")}, d});
  v.push_back({"empty", {f({0, 3, 4})}, d});
  v.push_back({"special f64", {special(DType::Float64, {1, 4, 4})}, d});
  v.push_back({"2-d", {f({3, 4})}, d});
  v.push_back({"size 0", {f({2, 3, 4})}, {{"size", 0}, {"alpha", 1e-4}, {"beta", 0.75}, {"k", 1.0}}});
  v.push_back({"int", {f({2, 3, 4}, DType::Int32)}, d});
  return v;
}

// Deterministic dropout cases (eval, p = 0, p = 1, empty) and refusals, for every variant.
std::vector<Sample> dropout_fixed_samples(const std::vector<int64_t>& shape) {
  std::vector<Sample> v;
  uint64_t s = 9300;
  auto f = [&](DType t = DType::Float32) { return make(t, shape, s++); };
  v.push_back({"eval", {f()}, {{"p", 0.5}, {"training", false}}});
  v.push_back({"p=0", {f(DType::Float64)}, {{"p", 0.0}, {"training", true}}});
  v.push_back({"p=1", {f()}, {{"p", 1.0}, {"training", true}}});
  v.push_back({"p out of range", {f()}, {{"p", 1.5}, {"training", true}}});
  v.push_back({"negative p", {f()}, {{"p", -0.1}, {"training", false}}});
  std::vector<int64_t> empty = shape;
  empty[0] = 0;
  v.push_back({"empty", {make(DType::Float32, empty, s++)}, {{"p", 0.5}, {"training", true}}});
  return v;
}

// Random dropout cases with values in [0.5, 2) (no zeros, so a zero marks a dropped element).
std::vector<Sample> dropout_random_samples(const std::vector<std::vector<int64_t>>& shapes) {
  std::vector<Sample> v;
  uint64_t s = 9400;
  for (const auto& sh : shapes)
    for (DType t : {DType::Float32, DType::Float64}) {
      std::string name = std::to_string(sh.size()) + "-d " + short_name(t);
      v.push_back({name, {make(t, sh, s++, 0.5, 2.0)}, {{"p", 0.4}, {"training", true}}});
    }
  return v;
}

std::vector<Sample> fold_samples(bool unfold_side) {
  std::vector<Sample> v;
  uint64_t s = 9500;
  // Each case: image size, channels, kernel, dilation, padding, stride.
  struct Case {
    std::string name;
    int64_t h, w, c, kh, kw, dh, dw, ph, pw, sh, sw;
  };
  const std::vector<Case> cases = {{"k2", 4, 5, 2, 2, 2, 1, 1, 0, 0, 1, 1},
                                   {"k2x3 all", 5, 6, 3, 2, 3, 1, 2, 1, 0, 2, 1},
                                   {"stride 2 pad 1", 5, 5, 1, 3, 3, 1, 1, 1, 1, 2, 2},
                                   {"dilation 2", 6, 5, 2, 2, 2, 2, 2, 0, 1, 1, 2},
                                   {"k1", 3, 3, 2, 1, 1, 1, 1, 0, 0, 1, 1}};
  auto args = [](const Case& k) {
    return json{
        {"out", {k.h, k.w}}, {"k", {k.kh, k.kw}}, {"d", {k.dh, k.dw}}, {"p", {k.ph, k.pw}}, {"s", {k.sh, k.sw}}};
  };
  auto blocks = [](const Case& k) {
    return ((k.h + 2 * k.ph - k.dh * (k.kh - 1) - 1) / k.sh + 1) *
           ((k.w + 2 * k.pw - k.dw * (k.kw - 1) - 1) / k.sw + 1);
  };
  for (const Case& k : cases) {
    const std::vector<int64_t> shape =
        unfold_side ? std::vector<int64_t>{2, k.c, k.h, k.w} : std::vector<int64_t>{2, k.c * k.kh * k.kw, blocks(k)};
    v.push_back({k.name, {make(DType::Float64, shape, s++)}, args(k)});
  }
  const Case& b = cases[1];
  const std::vector<int64_t> base =
      unfold_side ? std::vector<int64_t>{2, b.c, b.h, b.w} : std::vector<int64_t>{2, b.c * b.kh * b.kw, blocks(b)};
  for (DType t : kFloatDTypes) v.push_back({std::string("dtype ") + short_name(t), {make(t, base, s++)}, args(b)});
  std::vector<int64_t> unbatched(base.begin() + 1, base.end());
  v.push_back({"unbatched", {make(DType::Float64, unbatched, s++)}, args(b)});
  std::vector<int64_t> empty = base;
  empty[0] = 0;
  v.push_back({"empty batch", {make(DType::Float64, empty, s++)}, args(b)});
  v.push_back({"transposed", {with_layout(make(DType::Float64, base, s++), "transposed")}, args(b)});
  v.push_back({"int", {make(DType::Int64, base, s++)}, args(b)});
  auto bad = [&](std::string name, const char* key, std::vector<int64_t> val) {
    json a = args(b);
    a[key] = val;
    v.push_back({std::move(name), {make(DType::Float64, base, s++)}, a});
  };
  bad("kernel 0", "k", {0, 2});
  bad("stride 0", "s", {1, 0});
  bad("dilation 0", "d", {0, 1});
  bad("negative padding", "p", {-1, 0});
  if (unfold_side) {
    bad("kernel too big", "k", {7, 3});
    v.push_back({"2-d", {make(DType::Float64, {5, 6}, s++)}, args(b)});
    v.push_back({"5-d", {make(DType::Float64, {1, 3, 5, 6, 1}, s++)}, args(b)});
    v.push_back({"no channels", {make(DType::Float64, {1, 0, 5, 6}, s++)}, args(b)});
  } else {
    v.push_back({"not divisible", {make(DType::Float64, {2, 7, blocks(b)}, s++)}, args(b)});
    v.push_back({"wrong block count", {make(DType::Float64, {2, 18, blocks(b) + 1}, s++)}, args(b)});
    v.push_back({"4-d", {make(DType::Float64, {1, 18, blocks(b), 1}, s++)}, args(b)});
    v.push_back({"no blocks", {make(DType::Float64, {2, 18, 0}, s++)}, args(b)});
  }
  return v;
}

std::vector<Sample> bilinear_samples() {
  std::vector<Sample> v;
  uint64_t s = 9600;
  auto f = [&](std::vector<int64_t> sh, DType t = DType::Float64) { return make(t, std::move(sh), s++); };
  for (DType t : {DType::Float32, DType::Float64, DType::BFloat16})
    v.push_back({std::string("2-d ") + short_name(t), {f({3, 2}, t), f({3, 4}, t), f({5, 2, 4}, t), f({5}, t)}});
  v.push_back({"no bias", {f({3, 2}), f({3, 4}), f({5, 2, 4})}});
  v.push_back({"3-d", {f({2, 3, 2}), f({2, 3, 4}), f({5, 2, 4}), f({5})}});
  v.push_back({"1-d", {f({2}), f({4}), f({5, 2, 4}), f({5})}});
  v.push_back({"empty", {f({0, 2}), f({0, 4}), f({5, 2, 4}), f({5})}});
  v.push_back({"transposed", {with_layout(f({2, 3}), "transposed"), f({3, 4}), f({5, 2, 4}), f({5})}});
  v.push_back({"batch mismatch", {f({3, 2}), f({2, 4}), f({5, 2, 4}), f({5})}});
  v.push_back({"in1 mismatch", {f({3, 3}), f({3, 4}), f({5, 2, 4}), f({5})}});
  v.push_back({"in2 mismatch", {f({3, 2}), f({3, 3}), f({5, 2, 4}), f({5})}});
  v.push_back({"2-d weight", {f({3, 2}), f({3, 4}), f({2, 4}), f({5})}});
  v.push_back({"bias size", {f({3, 2}), f({3, 4}), f({5, 2, 4}), f({4})}});
  v.push_back({"mixed dtypes", {f({3, 2}), f({3, 4}, DType::Float32), f({5, 2, 4}), f({5})}});
  return v;
}

std::vector<Sample> pad3d_samples() {
  std::vector<Sample> v;
  uint64_t s = 9700;
  auto f = [&](std::vector<int64_t> sh, DType t = DType::Float64) { return make(t, std::move(sh), s++); };
  for (const char* mode : {"reflect", "replicate"}) {
    const std::string m = mode;
    v.push_back({m + " 5-d", {f({2, 2, 3, 4, 3})}, {{"pad", {1, 2, 0, 3, 2, 1}}, {"mode", m}}});
    v.push_back({m + " unbatched 4-d", {f({2, 3, 4, 3}, DType::Float32)}, {{"pad", {2, 1, 1, 1, 1, 2}}, {"mode", m}}});
    v.push_back({m + " 2-d pads on 4-d", {f({2, 2, 3, 4})}, {{"pad", {1, 2, 2, 1}}, {"mode", m}}});
    v.push_back({m + " 1-d pads on 3-d", {f({2, 3, 4})}, {{"pad", {3, 1}}, {"mode", m}}});
    v.push_back({m + " negative", {f({1, 2, 4, 4, 4})}, {{"pad", {-1, 2, 1, -2, 0, 1}}, {"mode", m}}});
    v.push_back({m + " too big", {f({1, 1, 2, 2, 2})}, {{"pad", {2, 2, 0, 0, 0, 0}}, {"mode", m}}});
    v.push_back({m + " f16", {f({1, 2, 2, 3, 3}, DType::Float16)}, {{"pad", {1, 1, 1, 1, 1, 1}}, {"mode", m}}});
    v.push_back(
        {m + " transposed", {with_layout(f({2, 3, 4, 3}), "transposed")}, {{"pad", {1, 1, 1, 1, 1, 1}}, {"mode", m}}});
  }
  return v;
}

std::vector<Sample> embedding_bag_samples() {
  std::vector<Sample> v;
  uint64_t s = 9800;
  auto w = [&](DType t = DType::Float64) { return make(t, {10, 3}, s++); };
  auto idx = [](std::vector<double> values, DType t = DType::Int64) {
    const int64_t n = static_cast<int64_t>(values.size());
    return of(t, {n}, std::move(values));
  };
  const std::vector<double> ids = {1, 2, 4, 5, 4, 3, 2, 9};
  for (const char* mode : {"sum", "mean", "max"}) {
    const std::string m = mode;
    v.push_back({m + " offsets", {idx(ids), w(), idx({0, 3, 3, 5})}, {{"mode", m}}});
    v.push_back({m + " 2-d", {of(DType::Int64, {2, 4}, ids), w()}, {{"mode", m}}});
    v.push_back({m + " padding_idx", {idx(ids), w(), idx({0, 4})}, {{"mode", m}, {"padding_idx", 4}}});
    v.push_back({m + " all padding", {idx({4, 4, 1}), w(), idx({0, 2})}, {{"mode", m}, {"padding_idx", -6}}});
    v.push_back({m + " include_last_offset", {idx(ids), w(), idx({0, 2, 8})}, {{"mode", m}, {"ilo", true}}});
    v.push_back({m + " f32", {idx(ids), w(DType::Float32), idx({0, 4})}, {{"mode", m}}});
    v.push_back({m + " int32", {idx(ids, DType::Int32), w(), idx({0, 4}, DType::Int32)}, {{"mode", m}}});
  }
  v.push_back({"repeated index max", {idx({3, 3, 7}), w(), idx({0})}, {{"mode", "max"}}});
  v.push_back({"per_sample_weights", {idx(ids), w(), idx({0, 5}), make(DType::Float64, {8}, s++)}, {{"mode", "sum"}}});
  v.push_back({"per_sample_weights 2-d",
               {of(DType::Int64, {2, 4}, ids), w(), make(DType::Float64, {2, 4}, s++)},
               {{"mode", "sum"}, {"psw_2d", true}}});
  v.push_back({"empty input", {idx({}), w(), idx({0})}, {{"mode", "mean"}}});
  v.push_back({"f16", {idx(ids), w(DType::Float16), idx({0, 4})}, {{"mode", "sum"}}});
  // Refusals.
  v.push_back({"offsets[0] not 0", {idx(ids), w(), idx({1, 4})}, {{"mode", "sum"}}});
  v.push_back({"offset past end", {idx(ids), w(), idx({0, 9})}, {{"mode", "sum"}}});
  v.push_back({"index out of range", {idx({1, 10}), w(), idx({0})}, {{"mode", "sum"}}});
  v.push_back({"negative index", {idx({1, -1}), w(), idx({0})}, {{"mode", "sum"}}});
  v.push_back({"padding_idx out of range", {idx(ids), w(), idx({0, 4})}, {{"mode", "sum"}, {"padding_idx", 10}}});
  v.push_back(
      {"per_sample_weights mean", {idx(ids), w(), idx({0, 5}), make(DType::Float64, {8}, s++)}, {{"mode", "mean"}}});
  v.push_back(
      {"per_sample_weights shape", {idx(ids), w(), idx({0, 5}), make(DType::Float64, {7}, s++)}, {{"mode", "sum"}}});
  v.push_back({"float indices", {idx(ids, DType::Float32), w(), idx({0, 4})}, {{"mode", "sum"}}});
  v.push_back({"3-d input", {of(DType::Int64, {2, 2, 2}, ids), w()}, {{"mode", "sum"}}});
  v.push_back({"1-d weight", {idx(ids), make(DType::Float64, {10}, s++), idx({0, 4})}, {{"mode", "sum"}}});
  return v;
}

}  // namespace

void add_layers_more_rows(std::vector<Row>& rows) {
  rows.push_back(var_only(
      "instance_norm",
      "lambda x, *p, affine=False, stats=False, uis=True: (torch.nn.functional.instance_norm(x, "
      "p[2] if stats else None, p[3] if stats else None, p[0] if affine else None, p[1] if affine else None, "
      "uis, 0.1, 1e-5), p[2] if stats else None, p[3] if stats else None)",
      [](const auto& in, const json& a) {
        using V = std::decay_t<decltype(in[0])>;
        const bool affine = flag(a, "affine"), stats = flag(a, "stats");
        const Tensor rm = stats ? in_t(in[3]) : Tensor(), rv = stats ? in_t(in[4]) : Tensor();
        const V y = instance_norm(in[0], rm, rv, affine ? in[1] : V(), affine ? in[2] : V(), flag(a, "uis"), 0.1, 1e-5);
        if (!stats) return Outs{y, V(), V()};
        return Outs{y, Variable(rm), Variable(rv)};
      },
      {true, true, true}, instance_norm_samples(), true));
  rows.push_back(var_only(
      "local_response_norm",
      "lambda x, size, alpha, beta, k: torch.nn.functional.local_response_norm(x, size, PYNUM(alpha), PYNUM(beta), "
      "PYNUM(k))",
      [](const auto& in, const json& a) {
        return local_response_norm(in[0], i64(a, "size"), f64(a, "alpha"), f64(a, "beta"), f64(a, "k"));
      },
      {true}, lrn_samples(), true));

  // Dropout variants. The random rows compare dtype and shape and check that every element is
  // dropped or scaled, and (channel-wise variants) that a channel is dropped whole.
  const std::string F = "torch.nn.functional.";
  const std::string kept = "((o[0] == 0) | ((o[0] - x / (1 - p)).abs() <= 1e-5 * (1 + x.abs())))";
  auto whole = [](const char* flat) {
    return std::string("((o[0]") + flat + " == 0).all(-1) | (o[0]" + flat + " != 0).all(-1)).all()";
  };
  struct Variant {
    const char* name;
    Variable (*fn)(const Variable&, double, bool, Generator&);
    std::vector<std::vector<int64_t>> shapes;
    std::string check;
  };
  const std::string alpha_ok =
      "(lambda al, a: ((o[0] - (a * x + al * a * p)).abs() <= 1e-5 * (1 + x.abs())) | ((o[0] + al * a * (1 - p)).abs() "
      "<= 1e-5))(1.7580993408473766, 1 / ((1.7580993408473766 ** 2 * p + 1) * (1 - p)) ** 0.5)";
  const std::string alpha_whole =
      "(lambda al, a: ((o[0] + al * a * (1 - p)).abs() <= 1e-5).flatten(2))(1.7580993408473766, 1 / "
      "((1.7580993408473766 "
      "** 2 * p + 1) * (1 - p)) ** 0.5)";
  const std::vector<Variant> variants = {
      {"dropout1d", dropout1d, {{3, 4, 6}}, "bool(" + kept + ".all() and " + whole(".flatten(2)") + ")"},
      {"dropout2d", dropout2d, {{3, 4, 2, 3}, {3, 4, 6}}, "bool(" + kept + ".all() and " + whole(".flatten(2)") + ")"},
      {"dropout3d", dropout3d, {{2, 4, 2, 2, 2}}, "bool(" + kept + ".all() and " + whole(".flatten(2)") + ")"},
      {"alpha_dropout", alpha_dropout, {{4, 30}, {2, 3, 4}}, "bool((" + alpha_ok + ").all())"},
      {"feature_alpha_dropout",
       feature_alpha_dropout,
       {{3, 4, 6}, {2, 4, 2, 3}},
       "bool((" + alpha_ok + ").all() and (lambda z: (z.all(-1) | (~z).all(-1)).all())(" + alpha_whole + "))"}};
  for (const Variant& d : variants) {
    const std::string torch = "lambda x, p, training: " + F + d.name + "(x, p, training)";
    auto fn = d.fn;
    auto call = [fn](const auto& in, const json& a) {
      Generator g(11);
      return fn(in[0], f64(a, "p"), flag(a, "training"), g);
    };
    std::vector<Sample> fixed = dropout_fixed_samples(d.shapes[0]);
    const bool channel = std::string(d.name) != "alpha_dropout";
    if (channel) {  // the ranks each refuses or takes as unbatched
      fixed.push_back({"1-d", {make(DType::Float32, {6}, 9390)}, {{"p", 1.0}, {"training", true}}});
      fixed.push_back({"2-d", {make(DType::Float32, {4, 6}, 9391, 0.5, 2.0)}, {{"p", 0.0}, {"training", true}}});
    }
    rows.push_back(var_only(d.name, torch, call, {true}, fixed));
    rows.push_back(var_only(d.name, torch, call, {true}, dropout_random_samples(d.shapes), false,
                            {{"values", false}, {"check", "lambda o, x, p, training: " + d.check}}));
  }
  rows.push_back(var_only(
      "unfold", "lambda x, out, k, d, p, s: torch.nn.functional.unfold(x, k, d, p, s)",
      [](const auto& in, const json& a) {
        auto two = [&](const char* key) { return std::array<int64_t, 2>{ints(a, key)[0], ints(a, key)[1]}; };
        return unfold(in[0], two("k"), two("d"), two("p"), two("s"));
      },
      {true}, fold_samples(true), true));
  rows.push_back(var_only(
      "fold", "lambda x, out, k, d, p, s: torch.nn.functional.fold(x, out, k, d, p, s)",
      [](const auto& in, const json& a) {
        auto two = [&](const char* key) { return std::array<int64_t, 2>{ints(a, key)[0], ints(a, key)[1]}; };
        return fold(in[0], two("out"), two("k"), two("d"), two("p"), two("s"));
      },
      {true}, fold_samples(false), true));
  rows.push_back(var_only(
      "bilinear", "lambda x1, x2, w, b=None: torch.nn.functional.bilinear(x1, x2, w, b)",
      [](const auto& in, const json&) {
        using V = std::decay_t<decltype(in[0])>;
        return bilinear(in[0], in[1], in[2], in.size() > 3 ? in[3] : V());
      },
      {true, true, true, true}, bilinear_samples(), true));
  rows.push_back(var_only(
      "pad", "lambda x, pad, mode: torch.nn.functional.pad(x, pad, mode)",
      [](const auto& in, const json& a) {
        return pad(in[0], ints(a, "pad"), a["mode"] == "reflect" ? PadMode::Reflect : PadMode::Replicate);
      },
      {true}, pad3d_samples(), true));
  rows.push_back(var_only(
      "embedding_bag",
      "lambda i, w, o=None, psw=None, mode='mean', padding_idx=None, ilo=False, psw_2d=False: "
      "torch.nn.functional.embedding_bag(i, w, psw if psw_2d else o, mode=mode, "
      "per_sample_weights=o if psw_2d else psw, include_last_offset=ilo, padding_idx=padding_idx)",
      [](const auto& in, const json& a) {
        using V = std::decay_t<decltype(in[0])>;
        const std::string m = a.at("mode").get<std::string>();
        const EmbeddingBagMode mode =
            m == "sum" ? EmbeddingBagMode::Sum : (m == "max" ? EmbeddingBagMode::Max : EmbeddingBagMode::Mean);
        const bool psw_2d = flag(a, "psw_2d");
        const Tensor offsets = psw_2d || in.size() < 3 ? Tensor() : in_t(in[2]);
        const V psw = psw_2d ? in[2] : (in.size() > 3 ? in[3] : V());
        std::optional<int64_t> padding_idx;
        if (a.contains("padding_idx")) padding_idx = i64(a, "padding_idx");
        return embedding_bag(in_t(in[0]), in[1], offsets, mode, psw, flag(a, "ilo"), padding_idx);
      },
      {false, true, true, true}, embedding_bag_samples(), false));
}

}  // namespace ddl::sweep
