// Rows: prod, std, logsumexp, norm, all, any, equal (tensor/ops/reduce_more.h, autograd/ops/reduce_more.h),
// roll and tile (tensor/ops/roll_tile.h), linspace and logspace (tensor/core/factory.h).
#include "sweep.h"

namespace ddl::sweep {
namespace {

// Products with zeros in them: PyTorch's gradient takes another path for one zero, two zeros in a
// row, and (over every element) more than one zero.
std::vector<Sample> prod_zero_samples(bool with_dim) {
  std::vector<Sample> v;
  const json a = with_dim ? json{{"dim", 1}, {"keepdim", false}} : json::object();
  v.push_back({"one zero", {of(DType::Float64, {2, 3}, {1.5, 0, -2, 3, 0.5, 2})}, a});
  v.push_back({"two zeros", {of(DType::Float64, {2, 3}, {0, 1.5, 0, 3, -0.5, 2})}, a});
  v.push_back({"zeros f32", {of(DType::Float32, {2, 3}, {0, 1.5, 2, 3, 0, 2})}, a});
  v.push_back({"no zero", {of(DType::Float64, {2, 3}, {1.5, -1, 2, 3, 0.5, 2})}, a});
  v.push_back({"int overflow", {of(DType::Int64, {2, 3}, {1 << 30, 1 << 30, 1 << 20, 3, 4, 5})}, a});
  return v;
}

std::vector<Sample> std_samples() {
  std::vector<Sample> v;
  add_all(v, reduce_samples(kAllDTypes), {{"correction", 1}});
  std::vector<Sample> c0;
  for (const Sample& s : reduce_samples({DType::Float64}, false))
    if (s.tag.find("empty") == std::string::npos) c0.push_back(s);  // as var's row: 1.13's backward fails there
  add_all(v, c0, {{"correction", 0}});
  v.push_back({"constant row",
               {of(DType::Float64, {2, 3}, {1, 1, 1, 2, 3, 4})},
               {{"dim", {1}}, {"keepdim", false}, {"correction", 1}}});
  return v;
}

std::vector<Sample> logsumexp_samples() {
  std::vector<Sample> v = reduce_samples();
  const double inf = std::numeric_limits<double>::infinity();
  v.push_back(
      {"rows of inf", {of(DType::Float64, {3, 2}, {inf, 1, -inf, -inf, -inf, 2})}, {{"dim", {1}}, {"keepdim", false}}});
  v.push_back({"big f32", {of(DType::Float32, {2, 2}, {1000, 999, -1000, -1001})}, {{"dim", {1}}, {"keepdim", true}}});
  return v;
}

std::vector<Sample> norm_samples() {
  std::vector<Sample> v;
  add_all(v, reduce_samples(), {{"p", 2.0}});
  std::vector<Sample> f;
  for (const Sample& s : reduce_samples({DType::Float32, DType::Float64}))
    if (s.tag.find("f64") != std::string::npos || s.tag.find("special") != std::string::npos) f.push_back(s);
  for (double p : {1.0, 0.0, 3.0, 0.5, 1.5, -1.0}) add_all(v, f, {{"p", p}});
  add_all(v, f, {{"p", "inf"}});
  add_all(v, f, {{"p", "-inf"}});
  const std::vector<double> z = {0, 2, -3, 0, 0, 0, 1, -1};
  for (json p : {json(2.0), json(1.0), json(0.5), json(1.5), json(3.0), json("inf")})
    v.push_back({"zeros p=" + p.dump(), {of(DType::Float64, {2, 4}, z)}, {{"dim", {1}}, {"keepdim", false}, {"p", p}}});
  v.push_back({"ties inf",
               {of(DType::Float64, {2, 3}, {1, -3, 3, 2, 2, -2})},
               {{"dim", {1}}, {"keepdim", false}, {"p", "inf"}}});
  return v;
}

std::vector<Sample> all_any_samples() {
  std::vector<Sample> v = unary_samples();
  add_all(v, dim_samples(kAllDTypes, true));
  v.push_back({"zeros and nan", {of(DType::Float32, {2, 3}, {1, 0, 2, NAN, 1, 1})}, {{"dim", 1}, {"keepdim", false}}});
  v.push_back({"all zero row", {of(DType::Int64, {2, 3}, {0, 0, 0, 1, 0, 1})}, {{"dim", 1}, {"keepdim", true}}});
  return v;
}

std::vector<Sample> equal_samples() {
  std::vector<Sample> v = binary_samples();
  v.push_back({"same f32", {of(DType::Float32, {2, 2}, {1, 2, 3, 4}), of(DType::Float32, {2, 2}, {1, 2, 3, 4})}});
  v.push_back({"f32 i64", {of(DType::Float32, {2}, {1, 2}), of(DType::Int64, {2}, {1, 2})}});
  v.push_back({"nan", {of(DType::Float64, {2}, {1, NAN}), of(DType::Float64, {2}, {1, NAN})}});
  v.push_back({"shapes differ", {of(DType::Float32, {1}, {1}), of(DType::Float32, {2}, {1, 1})}});
  v.push_back({"both empty", {make(DType::Float32, {0, 3}, 1), make(DType::Float32, {0, 3}, 2)}});
  return v;
}

std::vector<Sample> roll_samples() {
  std::vector<Sample> v;
  uint64_t s = 2100;
  auto a = [](std::vector<int64_t> shifts, std::vector<int64_t> dims) {
    return json{{"shifts", shifts}, {"dims", dims}};
  };
  for (DType t : kAllDTypes) v.push_back({std::string("2-d ") + short_name(t), {make(t, {3, 4}, s++)}, a({1}, {1})});
  v.push_back({"flat", {make(DType::Float64, {2, 3}, s++)}, a({2}, {})});
  v.push_back({"two dims", {make(DType::Float64, {2, 3}, s++)}, a({1, -1}, {0, 1})});
  v.push_back({"same dim twice", {make(DType::Float64, {2, 5}, s++)}, a({1, 2}, {1, 1})});
  v.push_back({"negative", {make(DType::Float32, {5}, s++)}, a({-2}, {0})});
  v.push_back({"past the size", {make(DType::Float32, {5}, s++)}, a({12}, {-1})});
  v.push_back({"zero shift", {make(DType::Float32, {5}, s++)}, a({0}, {0})});
  v.push_back({"empty", {make(DType::Float32, {0, 3}, s++)}, a({1}, {0})});
  v.push_back({"0-d flat", {make(DType::Float32, {}, s++)}, a({1}, {})});
  v.push_back({"0-d dim", {make(DType::Float32, {}, s++)}, a({1}, {0})});
  v.push_back({"transposed", {with_layout(make(DType::Float64, {4, 3}, s++), "transposed")}, a({1}, {0})});
  v.push_back({"stepped", {with_layout(make(DType::Float64, {3, 5}, s++), "stepped")}, a({-1}, {1})});
  v.push_back({"special", {special(DType::Float64, {16})}, a({3}, {0})});
  v.push_back({"misaligned", {make(DType::Float32, {2, 3}, s++)}, a({1, 2}, {0})});
  v.push_back({"dim out of range", {make(DType::Float32, {2, 3}, s++)}, a({1}, {2})});
  return v;
}

std::vector<Sample> tile_samples() {
  std::vector<Sample> v;
  uint64_t s = 2200;
  auto a = [](std::vector<int64_t> reps) { return json{{"reps", reps}}; };
  for (DType t : kAllDTypes) v.push_back({std::string("2-d ") + short_name(t), {make(t, {2, 3}, s++)}, a({2, 1})});
  v.push_back({"fewer reps", {make(DType::Float64, {2, 3}, s++)}, a({2})});
  v.push_back({"more reps", {make(DType::Float64, {3}, s++)}, a({2, 2})});
  v.push_back({"no reps", {make(DType::Float64, {2, 3}, s++)}, a({})});
  v.push_back({"zero rep", {make(DType::Float64, {2, 3}, s++)}, a({0, 2})});
  v.push_back({"0-d", {make(DType::Float64, {}, s++)}, a({3})});
  v.push_back({"empty", {make(DType::Float32, {0, 3}, s++)}, a({2, 2})});
  v.push_back({"transposed", {with_layout(make(DType::Float64, {4, 3}, s++), "transposed")}, a({1, 2})});
  v.push_back({"negative", {make(DType::Float32, {2, 3}, s++)}, a({-1})});
  return v;
}

std::vector<Sample> space_samples(bool log) {
  std::vector<Sample> v;
  auto a = [log](double start, double end, int64_t steps, const char* dt, double base = 10.0) {
    json j = {{"start", start}, {"end", end}, {"steps", steps}, {"dtype", dt}};
    if (log) j["base"] = base;
    return j;
  };
  v.push_back({"0..1", {}, a(0, 1, 5, "f32")});
  v.push_back({"f64", {}, a(-1, 2, 7, "f64")});
  v.push_back({"descending", {}, a(3, -1, 6, "f64")});
  v.push_back({"one step", {}, a(2, 5, 1, "f32")});
  v.push_back({"no steps", {}, a(2, 5, 0, "f32")});
  v.push_back({"negative steps", {}, a(0, 1, -1, "f32")});
  v.push_back({"many", {}, a(-3, 3, 101, "f32")});
  v.push_back({"int64", {}, a(0, 10, 5, "i64")});
  v.push_back({"int64 uneven", {}, a(0, 10, 4, "i64")});
  v.push_back({"int32 negative", {}, a(-7, 3, 6, "i32")});
  v.push_back({"f16", {}, a(0, 2, 9, "f16")});
  v.push_back({"bf16", {}, a(0, 2, 9, "bf16")});
  if (log) {
    v.push_back({"base 2", {}, a(0, 4, 5, "f32", 2.0)});
    v.push_back({"base e f64", {}, a(-1, 1, 5, "f64", 2.718281828459045)});
    v.push_back({"base 0.5", {}, a(0, 3, 4, "f64", 0.5)});
  }
  return v;
}

DType dtype_of_arg(const json& a) {
  const std::string n = a.contains("dtype") ? a["dtype"].get<std::string>() : "f32";
  for (DType t : kAllDTypes)
    if (n == short_name(t)) return t;
  return DType::Float32;
}

}  // namespace

void add_reduce2_rows(std::vector<Row>& rows) {
  const std::vector<bool> d1 = {true};
  {
    std::vector<Sample> s = unary_samples();
    add_all(s, prod_zero_samples(false));
    rows.push_back(both(
        "prod", "lambda x, dim=None, keepdim=False: torch.prod(x) if dim is None else torch.prod(x, dim, keepdim)",
        [](const auto& in, const json& a) {
          return a.contains("dim") ? prod(in[0], i64(a, "dim"), flag(a, "keepdim")) : prod(in[0]);
        },
        d1,
        [&] {
          add_all(s, dim_samples(kAllDTypes, true));
          add_all(s, prod_zero_samples(true));
          return s;
        }(),
        true));
  }
  rows.push_back(both(
      "std", "lambda x, dim, keepdim, correction: torch.std(x, dim or None, correction=correction, keepdim=keepdim)",
      [](const auto& in, const json& a) {
        return ddl::std(in[0], ints(a, "dim"), i64(a, "correction"), flag(a, "keepdim"));
      },
      d1, std_samples(), true));
  rows.push_back(both(
      "logsumexp", "lambda x, dim, keepdim: torch.logsumexp(x, tuple(dim) if dim else tuple(range(x.dim())), keepdim)",
      [](const auto& in, const json& a) { return logsumexp(in[0], ints(a, "dim"), flag(a, "keepdim")); }, d1,
      logsumexp_samples(), true));
  rows.push_back(both(
      "norm", "lambda x, dim, keepdim, p: torch.linalg.vector_norm(x, p, dim or None, keepdim)",
      [](const auto& in, const json& a) { return norm(in[0], f64(a, "p", 2.0), ints(a, "dim"), flag(a, "keepdim")); },
      d1, norm_samples(), true, {{"aliases", {"linalg.vector_norm"}}}));
  for (const char* op : {"all", "any"}) {
    const bool is_all = std::string(op) == "all";
    rows.push_back(both(
        op,
        std::string("lambda x, dim=None, keepdim=False: torch.") + op + "(x) if dim is None else torch." + op +
            "(x, dim, keepdim)",
        [is_all](const auto& in, const json& a) {
          if (!a.contains("dim")) return is_all ? all(in[0]) : any(in[0]);
          return is_all ? all(in[0], i64(a, "dim"), flag(a, "keepdim")) : any(in[0], i64(a, "dim"), flag(a, "keepdim"));
        },
        {}, all_any_samples()));
  }
  rows.push_back(both(
      "equal", "lambda x, y: torch.equal(x, y)", [](const auto& in, const json&) { return equal(in[0], in[1]); }, {},
      equal_samples()));
  rows.push_back(both(
      "roll", "lambda x, shifts, dims: torch.roll(x, shifts, dims)",
      [](const auto& in, const json& a) { return roll(in[0], ints(a, "shifts"), ints(a, "dims")); }, d1, roll_samples(),
      true));
  rows.push_back(both(
      "tile", "lambda x, reps: torch.tile(x, reps)",
      [](const auto& in, const json& a) { return tile(in[0], ints(a, "reps")); }, d1, tile_samples(), true));
  rows.push_back(ten_only(
      "linspace", "lambda start, end, steps, dtype: torch.linspace(start, end, steps, dtype=DT(dtype))",
      [](const auto&, const json& a) {
        return linspace(f64(a, "start"), f64(a, "end"), i64(a, "steps"), dtype_of_arg(a));
      },
      space_samples(false)));
  rows.push_back(ten_only(
      "logspace", "lambda start, end, steps, dtype, base: torch.logspace(start, end, steps, base, dtype=DT(dtype))",
      [](const auto&, const json& a) {
        return logspace(f64(a, "start"), f64(a, "end"), i64(a, "steps"), f64(a, "base"), dtype_of_arg(a));
      },
      space_samples(true)));
}

}  // namespace ddl::sweep
