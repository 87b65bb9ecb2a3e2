// Rows: the LibTorch spellings (docs/libtorch.md): eye, tensor() from literals, operator[] with an integer
// or an index tensor, and the in-place ops on a Variable, recorded in the graph (their gradients against
// PyTorch's), alone, through operator[] assignment and through a view.
#include "sweep.h"

namespace ddl::sweep {
namespace {

DType dtype_or(const json& a, DType d) {
  if (!a.contains("dtype")) return d;
  for (DType t : kAllDTypes)
    if (a["dtype"].get<std::string>() == short_name(t)) return t;
  return d;
}

// The literal of each "case" (PyTorch gets the same list as args "data").
Tensor literal(const json& a) {
  const std::string c = a["case"].get<std::string>();
  const TensorOptions o = a.contains("dtype") ? TensorOptions(dtype_or(a, DType::Float32)) : TensorOptions();
  if (c == "int 2x2") return ddl::tensor({{1, 2}, {3, 4}}, o);
  if (c == "float") return ddl::tensor({1.5, -2.25, 7.75}, o);
  if (c == "bool") return ddl::tensor({{true, false}, {false, true}}, o);
  if (c == "scalar") return ddl::tensor(3, o);
  if (c == "empty") return ddl::tensor({}, o);
  if (c == "3-d") return ddl::tensor({{{1.0}, {2.0}}, {{3.0}, {4.0}}}, o);
  if (c == "ragged") return ddl::tensor({{1, 2}, {3}}, o);
  return ddl::tensor({{1, 2, 3}, {4, 5}}, o);  // "ragged last"
}

std::vector<Sample> literal_samples() {
  std::vector<Sample> v;
  const std::vector<std::pair<std::string, json>> cases = {{"int 2x2", {{1, 2}, {3, 4}}},
                                                           {"float", {1.5, -2.25, 7.75}},
                                                           {"bool", {{true, false}, {false, true}}},
                                                           {"scalar", 3},
                                                           {"empty", json::array()},
                                                           {"3-d", {{{1.0}, {2.0}}, {{3.0}, {4.0}}}},
                                                           {"ragged", {{1, 2}, {3}}},
                                                           {"ragged last", {{1, 2, 3}, {4, 5}}}};
  for (const auto& [tag, data] : cases) v.push_back({tag, {}, {{"case", tag}, {"data", data}}});
  for (const char* dt : {"f64", "f16", "i32", "u8", "bool"})
    v.push_back(
        {std::string("int 2x2 as ") + dt, {}, {{"case", "int 2x2"}, {"data", {{1, 2}, {3, 4}}}, {"dtype", dt}}});
  v.push_back({"float as i64", {}, {{"case", "float"}, {"data", {1.5, -2.25, 7.75}}, {"dtype", "i64"}}});
  return v;
}

std::vector<Sample> eye_samples() {
  std::vector<Sample> v;
  v.push_back({"3", {}, {{"n", 3}}});
  v.push_back({"2x3", {}, {{"n", 2}, {"m", 3}}});
  v.push_back({"4x1 f64", {}, {{"n", 4}, {"m", 1}, {"dtype", "f64"}}});
  v.push_back({"0", {}, {{"n", 0}}});
  v.push_back({"3x0", {}, {{"n", 3}, {"m", 0}}});
  for (DType t : kAllDTypes) v.push_back({std::string("2 ") + short_name(t), {}, {{"n", 2}, {"dtype", short_name(t)}}});
  v.push_back({"negative n", {}, {{"n", -1}}});
  v.push_back({"negative m", {}, {{"n", 2}, {"m", -2}}});
  return v;
}

std::vector<Sample> select_samples() {
  std::vector<Sample> v;
  uint64_t s = 7100;
  for (DType t : kAllDTypes) v.push_back({std::string("2x3 ") + short_name(t), {make(t, {2, 3}, s++)}, {{"i", 1}}});
  v.push_back({"negative f64", {make(DType::Float64, {4, 2}, s++)}, {{"i", -1}}});
  v.push_back({"3-d transposed", {with_layout(make(DType::Float64, {2, 3, 4}, s++), "transposed")}, {{"i", 0}}});
  v.push_back({"out of range", {make(DType::Float32, {2, 3}, s++)}, {{"i", 2}}});
  v.push_back({"0-d", {make(DType::Float32, {}, s++)}, {{"i", 0}}});
  return v;
}

std::vector<Sample> index_tensor_samples() {
  std::vector<Sample> v;
  uint64_t s = 7200;
  v.push_back({"int64 list", {make(DType::Float64, {3, 2}, s++), of(DType::Int64, {3}, {2, 0, 2})}});
  v.push_back({"0-d int64", {make(DType::Float64, {3, 2}, s++), of(DType::Int64, {}, {1})}});
  v.push_back({"0-d int32 negative", {make(DType::Float32, {3, 2}, s++), of(DType::Int32, {}, {-1})}});
  v.push_back({"bool mask", {make(DType::Float64, {3, 2}, s++), of(DType::Bool, {3}, {1, 0, 1})}});
  v.push_back({"2-d int64", {make(DType::Float64, {4}, s++), of(DType::Int64, {2, 2}, {3, 0, 1, 1})}});
  v.push_back({"out of range", {make(DType::Float64, {3}, s++), of(DType::Int64, {}, {3})}});
  return v;
}

// Two float operands: same shape, broadcast, 0-d other, special values.
std::vector<Sample> inplace_var_samples(bool specials = true) {
  std::vector<Sample> v;
  uint64_t s = 7300;
  for (DType t : {DType::Float32, DType::Float64})
    v.push_back({std::string("3x4 ") + short_name(t), {make(t, {3, 4}, s++), make(t, {3, 4}, s++, 0.5, 2.0)}});
  v.push_back({"broadcast f64", {make(DType::Float64, {3, 4}, s++), make(DType::Float64, {4}, s++, 0.5, 2.0)}});
  v.push_back({"0-d other f64", {make(DType::Float64, {2, 3}, s++), make(DType::Float64, {}, s++, 0.5, 2.0)}});
  v.push_back({"mixed f32 f64", {make(DType::Float32, {3}, s++), make(DType::Float64, {3}, s++, 0.5, 2.0)}});
  v.push_back(
      {"transposed f64",
       {with_layout(make(DType::Float64, {3, 4}, s++), "transposed"), make(DType::Float64, {3, 4}, s++, 0.5, 2.0)}});
  v.push_back({"into smaller f64", {make(DType::Float64, {4}, s++), make(DType::Float64, {3, 4}, s++)}});
  if (specials) v.push_back({"special f64", {special(DType::Float64), special(DType::Float64, {16}, 3)}});
  return v;
}

std::vector<Sample> unary_inplace_samples(json args) {
  std::vector<Sample> v;
  uint64_t s = 7400;
  for (DType t : {DType::Float32, DType::Float64})
    v.push_back({std::string("3x4 ") + short_name(t), {make(t, {3, 4}, s++)}, args});
  v.push_back({"0-d f64", {make(DType::Float64, {}, s++)}, args});
  v.push_back({"special f64", {special(DType::Float64)}, args});
  return v;
}

}  // namespace

void add_spelling_rows(std::vector<Row>& rows) {
  rows.push_back(ten_only(
      "eye", "lambda n, m=None, dtype='f32': torch.eye(n, n if m is None else m, dtype=DT(dtype))",
      [](const auto&, const json& a) {
        return eye(i64(a, "n"), a.contains("m") ? i64(a, "m") : i64(a, "n"), dtype_or(a, DType::Float32));
      },
      eye_samples()));
  rows.push_back(ten_only(
      "tensor", "lambda data, case, dtype=None: torch.tensor(data, dtype=None if dtype is None else DT(dtype))",
      [](const auto&, const json& a) { return literal(a); }, literal_samples()));
  // operator[]: t[i] (select, a view) and t[idx] with an index tensor; differentiable on Variable.
  rows.push_back(both("operator[]", "lambda x, i: x[i]",
                      [](const auto& in, const json& a) { return in[0][i64(a, "i")]; }, {true}, select_samples(), true,
                      {{"aliases", {"select"}}}));
  rows.push_back(both("operator[] tensor", "lambda x, idx: x[idx]",
                      [](const auto& in, const json&) { return in[0][in_t(in[1])]; }, {true, false},
                      index_tensor_samples(), true, {{"aliases", {"index", "select"}}}));
  // In-place ops on a Variable: the values and the gradients through x * 1 (a non-leaf), as PyTorch's.
  using Vs = std::vector<Variable>;
  rows.push_back(var_only("Variable.add_", "lambda x, y: (x * 1).add_(y, alpha=0.5)",
                          [](const Vs& in, const json&) { return Variable((in[0] * 1.0).add_(in[1], 0.5)); },
                          {true, true}, inplace_var_samples(), false, {{"aliases", {"add_"}}}));
  rows.push_back(var_only("Variable.sub_", "lambda x, y: (x * 1).sub_(y)",
                          [](const Vs& in, const json&) { return Variable((in[0] * 1.0).sub_(in[1])); }, {true, true},
                          inplace_var_samples(), false, {{"aliases", {"sub_"}}}));
  rows.push_back(var_only("Variable.mul_", "lambda x, y: (x * 1).mul_(y)",
                          [](const Vs& in, const json&) { return Variable((in[0] * 1.0).mul_(in[1])); }, {true, true},
                          inplace_var_samples(), false, {{"aliases", {"mul_"}}}));
  rows.push_back(var_only("Variable.div_", "lambda x, y: (x * 1).div_(y)",
                          [](const Vs& in, const json&) { return Variable((in[0] * 1.0).div_(in[1])); }, {true, true},
                          inplace_var_samples(), false, {{"aliases", {"div_"}}}));
  rows.push_back(var_only("Variable.copy_", "lambda x, y: (x * 1).copy_(y)",
                          [](const Vs& in, const json&) { return Variable((in[0] * 1.0).copy_(in[1])); }, {true, true},
                          inplace_var_samples(), false, {{"aliases", {"copy_"}}}));
  rows.push_back(var_only(
      "Variable.scalar_ops_", "lambda x: (x * 1).add_(2.0).sub_(0.5).mul_(3.0).div_(4.0)",
      [](const Vs& in, const json&) { return Variable((in[0] * 1.0).add_(2.0).sub_(0.5).mul_(3.0).div_(4.0)); }, {true},
      unary_inplace_samples(json::object()), false, {{"aliases", {"add_"}}}));
  rows.push_back(
      var_only("Variable.clamp_", "lambda x, lo, hi: (x * 1).clamp_(lo, hi)",
               [](const Vs& in, const json& a) { return Variable((in[0] * 1.0).clamp_(f64(a, "lo"), f64(a, "hi"))); },
               {true}, unary_inplace_samples({{"lo", -0.5}, {"hi", 0.75}}), false, {{"aliases", {"clamp_"}}}));
  rows.push_back(
      var_only("Variable.fill_", "lambda x, value: (x * 2).fill_(value) + x",
               [](const Vs& in, const json& a) { return Variable((in[0] * 2.0).fill_(f64(a, "value")) + in[0]); },
               {true}, unary_inplace_samples({{"value", 1.25}}), false, {{"aliases", {"fill_"}}}));
  // Writes through views: operator[] assignment and an in-place op on a slice (PyTorch's CopySlices).
  rows.push_back(var_only(
      "Variable.operator[]=", "lambda x, y: (lambda z: (z.__setitem__(1, y), z)[1])(x * 1)",
      [](const Vs& in, const json&) {
        Variable z = in[0] * 1.0;
        z[1] = in[1];
        return z;
      },
      {true, true},
      [] {
        std::vector<Sample> v;
        uint64_t s = 7500;
        v.push_back({"row f64", {make(DType::Float64, {3, 4}, s++), make(DType::Float64, {4}, s++)}});
        v.push_back({"broadcast f32", {make(DType::Float32, {3, 4}, s++), make(DType::Float32, {1}, s++)}});
        v.push_back({"mixed", {make(DType::Float32, {2, 2}, s++), make(DType::Float64, {2}, s++)}});
        v.push_back({"wrong shape", {make(DType::Float64, {3, 4}, s++), make(DType::Float64, {3}, s++)}});
        return v;
      }(),
      false, {{"aliases", {"copy_", "select"}}}));
  rows.push_back(var_only(
      "Variable.view_mul_", "lambda x, y: (lambda z: (z[:, 1:3][0].mul_(y), z * z)[1])(x * 1)",
      [](const Vs& in, const json&) {
        Variable z = in[0] * 1.0;
        z.slice(1, 1, 3)[0].mul_(in[1]);
        return z * z;
      },
      {true, true},
      [] {
        std::vector<Sample> v;
        uint64_t s = 7600;
        v.push_back({"3x4 f64", {make(DType::Float64, {3, 4}, s++), make(DType::Float64, {2}, s++)}});
        v.push_back({"0-d other f32", {make(DType::Float32, {2, 3}, s++), make(DType::Float32, {}, s++)}});
        return v;
      }(),
      false, {{"aliases", {"mul_", "slice", "select"}}}));
  // A view taken before its base is written gets the base's new history (AsStridedBackward).
  rows.push_back(var_only(
      "Variable.stale_view", "lambda x, y: (lambda z: (lambda w: (z[0].mul_(y), w * w)[1])(z.t()))(x * 1)",
      [](const Vs& in, const json&) {
        Variable z = in[0] * 1.0;
        Variable w = z.t();
        z[0].mul_(in[1]);
        return w * w;
      },
      {true, true},
      [] {
        std::vector<Sample> v;
        uint64_t s = 7700;
        v.push_back({"3x4 f64", {make(DType::Float64, {3, 4}, s++), make(DType::Float64, {4}, s++)}});
        v.push_back({"2x3 f32", {make(DType::Float32, {2, 3}, s++), make(DType::Float32, {3}, s++)}});
        return v;
      }(),
      false, {{"aliases", {"mul_", "t", "select"}}}));
}

}  // namespace ddl::sweep
