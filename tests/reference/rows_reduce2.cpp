// Rows: prod, std, logsumexp, norm, all, any, equal (tensor/reduce_more.h and autograd/ops/reduce_more.h).
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
}

}  // namespace ddl::sweep
