// Rows: factories and random tensors (tensor/core/factory.h, random.h, autograd/ops/dropout.h). PyTorch draws
// different random numbers, so random rows compare dtype and shape with PyTorch's and check a property of
// ddl's values (meta "values": false and "check": a Python lambda over ddl's outputs, inputs and args).
#include "sweep.h"

namespace ddl::sweep {
namespace {

DType dtype_arg(const json& a) {
  const std::string n = a.contains("dtype") ? a["dtype"].get<std::string>() : "f32";
  for (DType t : kAllDTypes)
    if (n == short_name(t)) return t;
  return DType::Float32;
}

// Every dtype by its short name; compare.py's DT maps the short names to torch dtypes.
std::vector<Sample> shape_dtype_samples(json extra = json::object()) {
  std::vector<Sample> v;
  for (DType t : kAllDTypes) {
    json a = {{"shape", {2, 3}}, {"dtype", short_name(t)}};
    for (auto& [k, x] : extra.items()) a[k] = x;
    v.push_back({std::string("2x3 ") + short_name(t), {}, a});
  }
  for (const auto& [tag, shape] : std::vector<std::pair<std::string, json>>{
           {"0-d", json::array()}, {"empty", {0, 4}}, {"3-d", {2, 1, 3}}, {"negative", {2, -1}}}) {
    json a = {{"shape", shape}, {"dtype", "f64"}};
    for (auto& [k, x] : extra.items()) a[k] = x;
    v.push_back({tag, {}, a});
  }
  return v;
}

std::vector<Sample> like_samples(json extra = json::object()) {
  std::vector<Sample> v;
  uint64_t s = 3000;
  for (DType t : kAllDTypes) v.push_back({std::string("3x4 ") + short_name(t), {make(t, {3, 4}, s++)}, extra});
  v.push_back({"0-d", {make(DType::Float64, {}, s++)}, extra});
  v.push_back({"empty", {make(DType::Float32, {0, 2}, s++)}, extra});
  v.push_back({"transposed", {with_layout(make(DType::Float32, {4, 3}, s++), "transposed")}, extra});
  v.push_back({"expanded", {with_layout(make(DType::Float32, {3, 4}, s++), "expanded", 0)}, extra});
  return v;
}

std::vector<Sample> arange_samples() {
  std::vector<Sample> v;
  auto a = [](double start, double end, double step, const char* dt) {
    return json{{"start", start}, {"end", end}, {"step", step}, {"dtype", dt}};
  };
  v.push_back({"0..5", {}, a(0, 5, 1, "f32")});
  v.push_back({"fraction step", {}, a(0, 1, 0.1, "f32")});
  v.push_back({"fraction step f64", {}, a(-1, 1, 0.3, "f64")});
  v.push_back({"negative step", {}, a(5, 0, -1.5, "f64")});
  v.push_back({"empty", {}, a(3, 3, 1, "f32")});
  v.push_back({"wrong direction", {}, a(0, 5, -1, "f32")});
  v.push_back({"zero step", {}, a(0, 5, 0, "f32")});
  v.push_back({"int64", {}, a(0, 10, 3, "i64")});
  v.push_back({"int64 fraction", {}, a(0, 3, 0.5, "i64")});
  v.push_back({"int32", {}, a(-3, 3, 1, "i32")});
  v.push_back({"uint8", {}, a(0, 5, 1, "u8")});
  v.push_back({"f16", {}, a(0, 2, 0.25, "f16")});
  v.push_back({"bf16", {}, a(0, 2, 0.25, "bf16")});
  v.push_back({"bool", {}, a(0, 2, 1, "bool")});
  v.push_back({"large f32", {}, a(0, 1e5, 7.3, "f32")});
  for (int64_t n : {0, 1, 7}) v.push_back({"end only " + std::to_string(n), {}, {{"n", n}}});
  v.push_back({"end only negative", {}, {{"n", -2}}});
  return v;
}

// PyTorch's expression for a factory with a dtype argument.
std::string with_dtype(const std::string& call) { return "lambda shape, dtype, **k: " + call; }

}  // namespace

void add_factory_rows(std::vector<Row>& rows) {
  rows.push_back(ten_only(
      "zeros", with_dtype("torch.zeros(shape, dtype=DT(dtype))"),
      [](const auto&, const json& a) { return zeros(Shape(ints(a, "shape")), dtype_arg(a)); }, shape_dtype_samples()));
  rows.push_back(ten_only(
      "ones", with_dtype("torch.ones(shape, dtype=DT(dtype))"),
      [](const auto&, const json& a) { return ones(Shape(ints(a, "shape")), dtype_arg(a)); }, shape_dtype_samples()));
  {
    std::vector<Sample> s = shape_dtype_samples({{"value", 2.5}});
    add_all(s, shape_dtype_samples({{"value", -3.0}}));
    s.push_back({"inf", {}, {{"shape", {2}}, {"dtype", "f32"}, {"value", "inf"}}});
    s.push_back({"nan into int", {}, {{"shape", {2}}, {"dtype", "i64"}, {"value", "nan"}}});
    s.push_back({"huge into f16", {}, {{"shape", {2}}, {"dtype", "f16"}, {"value", 1e6}}});
    s.push_back({"overflow into u8", {}, {{"shape", {2}}, {"dtype", "u8"}, {"value", 300.0}}});
    rows.push_back(ten_only(
        "full", "lambda shape, dtype, value: torch.full(shape, PYNUM(value), dtype=DT(dtype))",
        [](const auto&, const json& a) { return full(Shape(ints(a, "shape")), f64(a, "value"), dtype_arg(a)); }, s));
  }
  rows.push_back(ten_only(
      "scalar_tensor", "lambda value, dtype: torch.scalar_tensor(value, dtype=DT(dtype))",
      [](const auto&, const json& a) { return scalar_tensor(f64(a, "value"), dtype_arg(a)); },
      [] {
        std::vector<Sample> v;
        for (DType t : kAllDTypes)
          v.push_back({std::string("1.5 ") + short_name(t), {}, {{"value", 1.5}, {"dtype", short_name(t)}}});
        v.push_back({"-inf", {}, {{"value", "-inf"}, {"dtype", "f32"}}});
        v.push_back({"-0.0", {}, {{"value", -0.0}, {"dtype", "f64"}}});
        return v;
      }(),
      {{"signed_zero", true}}));
  rows.push_back(ten_only(
      "arange",
      "lambda start=None, end=None, step=None, dtype=None, n=None: torch.arange(n) if n is not None "
      "else torch.arange(start, end, step, dtype=DT(dtype))",
      [](const auto&, const json& a) {
        if (a.contains("n")) return arange(i64(a, "n"));
        return arange(f64(a, "start"), f64(a, "end"), f64(a, "step"), dtype_arg(a));
      },
      arange_samples()));
  rows.push_back(ten_only("empty_like", "lambda x: torch.empty_like(x)",
                          [](const auto& in, const json&) { return empty_like(in[0]); }, like_samples(),
                          {{"values", false}}));
  rows.push_back(ten_only(
      "zeros_like", "lambda x: torch.zeros_like(x)", [](const auto& in, const json&) { return zeros_like(in[0]); },
      like_samples()));
  rows.push_back(ten_only(
      "ones_like", "lambda x: torch.ones_like(x)", [](const auto& in, const json&) { return ones_like(in[0]); },
      like_samples()));
  rows.push_back(ten_only(
      "full_like", "lambda x, value: torch.full_like(x, value)",
      [](const auto& in, const json& a) { return full_like(in[0], f64(a, "value")); }, like_samples({{"value", 7.0}})));
  // Random tensors: with a Generator (args "seed") or the default one.
  const json unit = {{"values", false}, {"check", "lambda o, *x, **a: bool(((o[0] >= 0) & (o[0] < 1)).all())"}};
  const json finite = {{"values", false}, {"check", "lambda o, *x, **a: bool(o[0].isfinite().all())"}};
  auto gen_samples = [](json extra) {
    std::vector<Sample> v;
    for (DType t : kFloatDTypes) {
      json a = {{"shape", {50, 40}}, {"dtype", short_name(t)}, {"seed", 5}};
      for (auto& [k, x] : extra.items()) a[k] = x;
      v.push_back({std::string("gen ") + short_name(t), {}, a});
      a.erase("seed");
      v.push_back({std::string("default ") + short_name(t), {}, a});
    }
    for (const char* t : {"i64", "bool"}) {
      json a = {{"shape", {3}}, {"dtype", t}, {"seed", 1}};
      for (auto& [k, x] : extra.items()) a[k] = x;
      v.push_back({std::string("dtype ") + t, {}, a});
    }
    v.push_back({"empty", {}, {{"shape", {0, 3}}, {"dtype", "f32"}, {"seed", 1}}});
    return v;
  };
#define DDL_SWEEP_RANDOM(fn)                                                   \
  [](const auto&, const json& a) {                                             \
    if (!a.contains("seed")) return fn(Shape(ints(a, "shape")), dtype_arg(a)); \
    Generator g(i64(a, "seed"));                                               \
    return fn(Shape(ints(a, "shape")), g, dtype_arg(a));                       \
  }
  rows.push_back(ten_only("rand", with_dtype("torch.rand(shape, dtype=DT(dtype))"), DDL_SWEEP_RANDOM(rand),
                          gen_samples({}), unit));
  rows.push_back(ten_only("randn", with_dtype("torch.randn(shape, dtype=DT(dtype))"), DDL_SWEEP_RANDOM(randn),
                          gen_samples({}), finite));
  {
    std::vector<Sample> s;
    for (const char* t : {"i64", "i32", "u8", "f32", "f64"})
      s.push_back(
          {std::string("-3..7 ") + t,
           {},
           {{"low", t == std::string("u8") ? 0 : -3}, {"high", 7}, {"shape", {100}}, {"dtype", t}, {"seed", 3}}});
    s.push_back({"empty range", {}, {{"low", 3}, {"high", 3}, {"shape", {2}}, {"dtype", "i64"}, {"seed", 3}}});
    s.push_back({"default gen", {}, {{"low", 0}, {"high", 2}, {"shape", {2, 2}}, {"dtype", "i64"}}});
    rows.push_back(ten_only(
        "randint", "lambda low, high, shape, dtype, **k: torch.randint(low, high, shape, dtype=DT(dtype))",
        [](const auto&, const json& a) {
          if (!a.contains("seed")) return randint(i64(a, "low"), i64(a, "high"), Shape(ints(a, "shape")), dtype_arg(a));
          Generator g(i64(a, "seed"));
          return randint(i64(a, "low"), i64(a, "high"), Shape(ints(a, "shape")), g, dtype_arg(a));
        },
        s, {{"values", false}, {"check", "lambda o, low, high, **a: bool(((o[0] >= low) & (o[0] < high)).all())"}}));
  }
  {
    std::vector<Sample> s;
    for (int64_t n : {0, 1, 10, 100})
      s.push_back({"n=" + std::to_string(n), {}, {{"n", n}, {"dtype", "i64"}, {"seed", 4}}});
    s.push_back({"i32", {}, {{"n", 10}, {"dtype", "i32"}, {"seed", 4}}});
    s.push_back({"f32", {}, {{"n", 10}, {"dtype", "f32"}, {"seed", 4}}});
    s.push_back({"default gen", {}, {{"n", 10}, {"dtype", "i64"}}});
    s.push_back({"negative", {}, {{"n", -1}, {"dtype", "i64"}, {"seed", 4}}});
    rows.push_back(ten_only(
        "randperm", "lambda n, dtype, **k: torch.randperm(n, dtype=DT(dtype))",
        [](const auto&, const json& a) {
          if (!a.contains("seed")) return randperm(i64(a, "n"), dtype_arg(a));
          Generator g(i64(a, "seed"));
          return randperm(i64(a, "n"), g, dtype_arg(a));
        },
        s, {{"values", false}, {"check", "lambda o, n, **a: bool((o[0].sort()[0].long() == torch.arange(n)).all())"}}));
  }
  {
    std::vector<Sample> s;
    for (double p : {0.0, 0.3, 1.0}) add_all(s, gen_samples({}), {{"p", p}});
    s.push_back({"p > 1", {}, {{"shape", {3}}, {"dtype", "f32"}, {"seed", 1}, {"p", 1.5}}});
    s.push_back({"p < 0", {}, {{"shape", {3}}, {"dtype", "f32"}, {"seed", 1}, {"p", -0.5}}});
    rows.push_back(ten_only("bernoulli",
                            "lambda shape, dtype, p, **k: torch.bernoulli(torch.full(shape, p, dtype=DT(dtype)))",
                            [](const auto&, const json& a) {
                              Generator g(i64(a, "seed"));
                              return bernoulli(Shape(ints(a, "shape")), f64(a, "p"), g, dtype_arg(a));
                            },
                            s,
                            {{"values", false},
                             {"check",
                              "lambda o, p, **a: bool(((o[0] == 0) | (o[0] == 1)).all()) and (p not in (0, 1) or "
                              "bool((o[0] == p).all()))"}}));
  }
  auto like_gen = [&](const char* name, const std::string& py, bool normal, const json& meta) {
    std::vector<Sample> s = like_samples();
    for (Sample x : like_samples({{"seed", 9}})) {
      x.tag = "gen " + x.tag;
      s.push_back(x);
    }
    if (normal)
      rows.push_back(ten_only(
          name, py,
          [](const auto& in, const json& a) {
            if (!a.contains("seed")) return randn_like(in[0]);
            Generator g(i64(a, "seed"));
            return randn_like(in[0], g);
          },
          s, meta));
    else
      rows.push_back(ten_only(
          name, py,
          [](const auto& in, const json& a) {
            if (!a.contains("seed")) return rand_like(in[0]);
            Generator g(i64(a, "seed"));
            return rand_like(in[0], g);
          },
          s, meta));
  };
  like_gen("rand_like", "lambda x, **k: torch.rand_like(x)", false, unit);
  like_gen("randn_like", "lambda x, **k: torch.randn_like(x)", true, finite);
  {
    std::vector<Sample> s = like_samples({{"low", -2.0}, {"high", 3.0}});
    s.push_back({"low > high", {make(DType::Float32, {3}, 1)}, {{"low", 3.0}, {"high", -2.0}}});
    s.push_back({"equal bounds", {make(DType::Float32, {3}, 1)}, {{"low", 1.0}, {"high", 1.0}}});
    rows.push_back(ten_only(
        "uniform_", "lambda x, low, high: x.clone().uniform_(low, high)",
        [](const auto& in, const json& a) {
          Generator g(3);
          const Tensor x = in[0].clone();
          uniform_(x, f64(a, "low"), f64(a, "high"), g);
          return x;
        },
        s, {{"values", false}, {"check", "lambda o, x, low, high: bool(((o[0] >= low) & (o[0] <= high)).all())"}}));
  }
  {
    std::vector<Sample> s = like_samples({{"mean", 1.0}, {"std", 2.0}});
    s.push_back({"std 0", {make(DType::Float32, {3}, 1)}, {{"mean", 1.0}, {"std", 0.0}}});
    s.push_back({"negative std", {make(DType::Float32, {3}, 1)}, {{"mean", 1.0}, {"std", -1.0}}});
    rows.push_back(ten_only("normal_", "lambda x, mean, std: x.clone().normal_(mean, std)",
                            [](const auto& in, const json& a) {
                              Generator g(3);
                              const Tensor x = in[0].clone();
                              normal_(x, f64(a, "mean"), f64(a, "std"), g);
                              return x;
                            },
                            s,
                            {{"values", false},
                             {"check",
                              "lambda o, x, mean, std: bool(o[0].isfinite().all()) and (std != 0 or "
                              "bool((o[0] == mean).all()))"}}));
  }
  {
    std::vector<Sample> s;
    for (double p : {0.0, 1.0}) {
      add_all(s, unary_samples({-2, 2, false}, kFloatDTypes), {{"p", p}, {"training", true}});
    }
    add_all(s, unary_samples({-2, 2, false}, kFloatDTypes), {{"p", 0.5}, {"training", false}});
    s.push_back({"p out of range", {make(DType::Float32, {3}, 1)}, {{"p", 1.5}, {"training", true}}});
    s.push_back({"negative p", {make(DType::Float32, {3}, 1)}, {{"p", -0.1}, {"training", true}}});
    rows.push_back(var_only(
        "dropout", "lambda x, p, training: torch.nn.functional.dropout(x, p, training)",
        [](const auto& in, const json& a) {
          Generator g(11);
          return dropout(in[0], f64(a, "p"), flag(a, "training"), g);
        },
        {true}, s));
    std::vector<Sample> r;
    add_all(r, unary_samples({-2, 2, false}, {DType::Float32, DType::Float64}), {{"p", 0.25}, {"training", true}});
    Row random_dropout =
        var_only("dropout", "lambda x, p, training: torch.nn.functional.dropout(x, p, training)",
                 [](const auto& in, const json& a) {
                   Generator g(11);
                   return dropout(in[0], f64(a, "p"), flag(a, "training"), g);
                 },
                 {true}, r, false,
                 {{"values", false},
                  {"check",
                   "lambda o, x, p, training: bool(((o[0] == 0) | ((o[0] - x / (1 - p)).abs() <= 1e-6 * (1 + "
                   "x.abs()))).all())"}});
    rows.push_back(random_dropout);
  }
}

}  // namespace ddl::sweep
