// Rows: the Tensor and Variable methods that are ops of their own, with no free function to forward to (views,
// copies, in-place arithmetic; coverage.py's METHOD_ROWS maps each method to its row here).
#include "sweep.h"

namespace ddl::sweep {
namespace {

// Each case as float32 and as a transposed float64 (views of a non-contiguous input), then the first case in
// every dtype.
std::vector<Sample> method_samples(const std::vector<std::pair<std::string, json>>& cases,
                                   std::vector<int64_t> shape = {2, 3, 4}) {
  std::vector<Sample> v;
  uint64_t s = 2600;
  for (const auto& [tag, a] : cases) {
    v.push_back({tag + " f32", {make(DType::Float32, shape, s++)}, a});
    v.push_back({tag + " f64 transposed", {with_layout(make(DType::Float64, shape, s++), "transposed")}, a});
  }
  for (DType t : kAllDTypes)
    v.push_back({std::string("first args ") + short_name(t), {make(t, shape, s++)}, cases[0].second});
  v.push_back({"0-d f64", {make(DType::Float64, {}, s++)}, cases[0].second});
  return v;
}

// Two operands of one dtype for the in-place arithmetic (the left one cloned first, on both sides).
std::vector<Sample> inplace_samples() {
  std::vector<Sample> v;
  uint64_t s = 2700;
  for (DType t : {DType::Float32, DType::Float64, DType::Int64})
    v.push_back({std::string("3x4 ") + short_name(t), {make(t, {3, 4}, s++), make(t, {3, 4}, s++)}});
  v.push_back({"broadcast f64", {make(DType::Float64, {3, 4}, s++), make(DType::Float64, {4}, s++)}});
  v.push_back({"into smaller f64", {make(DType::Float64, {4}, s++), make(DType::Float64, {3, 4}, s++)}});
  return v;
}

// A dtype named by its short name in args["dtype"] (compare.py's DT maps the same names).
DType dtype_named(const json& a) {
  for (DType t : kAllDTypes)
    if (a["dtype"].get<std::string>() == short_name(t)) return t;
  return DType::Float32;
}

}  // namespace

void add_method_rows(std::vector<Row>& rows) {
  const std::vector<bool> d1 = {true};
  rows.push_back(both(
      "view", "lambda x, shape: x.view(shape)",
      [](const auto& in, const json& a) { return in[0].view(Shape(ints(a, "shape"))); }, d1,
      method_samples({{"flat", {{"shape", {-1}}}},
                      {"split last", {{"shape", {2, 3, 2, 2}}}},
                      {"infer", {{"shape", {6, -1}}}},
                      {"two -1", {{"shape", {-1, -1}}}},
                      {"wrong count", {{"shape", {5, 5}}}}}),
      true));
  rows.push_back(both(
      "reshape", "lambda x, shape: x.reshape(shape)",
      [](const auto& in, const json& a) { return in[0].reshape(Shape(ints(a, "shape"))); }, d1,
      method_samples({{"flat", {{"shape", {-1}}}},
                      {"merge", {{"shape", {6, 4}}}},
                      {"infer", {{"shape", {4, -1}}}},
                      {"two -1", {{"shape", {-1, -1}}}},
                      {"wrong count", {{"shape", {5, 5}}}}}),
      true));
  rows.push_back(
      both("x.flatten", "lambda x, start_dim, end_dim: x.flatten(start_dim, end_dim)",
           [](const auto& in, const json& a) { return in[0].flatten(i64(a, "start_dim"), i64(a, "end_dim")); }, d1,
           method_samples({{"all", {{"start_dim", 0}, {"end_dim", -1}}},
                           {"middle", {{"start_dim", 1}, {"end_dim", 2}}},
                           {"reversed", {{"start_dim", 2}, {"end_dim", 0}}},
                           {"out of range", {{"start_dim", 1}, {"end_dim", 3}}}}),
           true, {{"aliases", {"flatten"}}}));
  rows.push_back(both(
      "permute", "lambda x, dims: x.permute(dims)",
      [](const auto& in, const json& a) { return in[0].permute(ints(a, "dims")); }, d1,
      method_samples({{"cycle", {{"dims", {2, 0, 1}}}},
                      {"negative", {{"dims", {-1, 0, 1}}}},
                      {"repeated", {{"dims", {0, 0, 1}}}},
                      {"too few", {{"dims", {1, 0}}}}}),
      true));
  rows.push_back(both(
      "transpose", "lambda x, d0, d1: x.transpose(d0, d1)",
      [](const auto& in, const json& a) { return in[0].transpose(i64(a, "d0"), i64(a, "d1")); }, d1,
      method_samples({{"0 2", {{"d0", 0}, {"d1", 2}}},
                      {"negative", {{"d0", -1}, {"d1", 1}}},
                      {"same", {{"d0", 1}, {"d1", 1}}},
                      {"out of range", {{"d0", 0}, {"d1", 3}}}}),
      true));
  rows.push_back(both(
      "t", "lambda x: x.t()", [](const auto& in, const json&) { return in[0].t(); }, d1,
      [] {
        std::vector<Sample> v;
        for (const auto& sh : std::vector<std::vector<int64_t>>{{}, {4}, {3, 4}, {2, 3, 4}})
          v.push_back({std::to_string(sh.size()) + "-d f64", {make(DType::Float64, sh, 2650 + sh.size())}});
        v.push_back({"transposed f32", {with_layout(make(DType::Float32, {3, 4}, 2660), "transposed")}});
        return v;
      }(),
      true));
  rows.push_back(both(
      "narrow", "lambda x, dim, start, length: x.narrow(dim, start, length)",
      [](const auto& in, const json& a) { return in[0].narrow(i64(a, "dim"), i64(a, "start"), i64(a, "length")); }, d1,
      method_samples({{"middle", {{"dim", 2}, {"start", 1}, {"length", 2}}},
                      {"negative start", {{"dim", 1}, {"start", -2}, {"length", 2}}},
                      {"empty", {{"dim", 0}, {"start", 1}, {"length", 0}}},
                      {"too long", {{"dim", 1}, {"start", 2}, {"length", 2}}},
                      {"negative length", {{"dim", 1}, {"start", 0}, {"length", -1}}}}),
      true));
  rows.push_back(both(
      "select", "lambda x, dim, index: x.select(dim, index)",
      [](const auto& in, const json& a) { return in[0].select(i64(a, "dim"), i64(a, "index")); }, d1,
      method_samples({{"middle", {{"dim", 1}, {"index", 1}}},
                      {"negative", {{"dim", -1}, {"index", -1}}},
                      {"out of range", {{"dim", 0}, {"index", 2}}}}),
      true));
  rows.push_back(both(
      "slice", "lambda x, dim, start, end, step: torch.ops.aten.slice(x, dim, start, end, step)",
      [](const auto& in, const json& a) {
        return in[0].slice(i64(a, "dim"), i64(a, "start"), i64(a, "end"), i64(a, "step"));
      },
      d1,
      method_samples({{"step 2", {{"dim", 2}, {"start", 0}, {"end", 4}, {"step", 2}}},
                      {"negative", {{"dim", 1}, {"start", -2}, {"end", -1}, {"step", 1}}},
                      {"clamped", {{"dim", 2}, {"start", 1}, {"end", 100}, {"step", 3}}},
                      {"empty", {{"dim", 0}, {"start", 2}, {"end", 1}, {"step", 1}}},
                      {"zero step", {{"dim", 0}, {"start", 0}, {"end", 2}, {"step", 0}}}}),
      true));
  rows.push_back(both(
      "expand", "lambda x, shape: x.expand(shape)",
      [](const auto& in, const json& a) { return in[0].expand(Shape(ints(a, "shape"))); }, d1,
      method_samples({{"new dim", {{"shape", {5, 2, 3, 4}}}},
                      {"keep", {{"shape", {-1, 3, 4}}}},
                      {"grow non-1", {{"shape", {4, 3, 4}}}},
                      {"too few", {{"shape", {3, 4}}}}}),
      true));
  rows.push_back(both(
      "squeeze", "lambda x, dim=None: x.squeeze() if dim is None else x.squeeze(dim)",
      [](const auto& in, const json& a) { return a.contains("dim") ? in[0].squeeze(i64(a, "dim")) : in[0].squeeze(); },
      d1,
      method_samples({{"all", json::object()},
                      {"size-1 dim", {{"dim", 1}}},
                      {"other dim", {{"dim", 0}}},
                      {"out of range", {{"dim", 3}}}},
                     {2, 1, 3}),
      true));
  rows.push_back(both(
      "unsqueeze", "lambda x, dim: x.unsqueeze(dim)",
      [](const auto& in, const json& a) { return in[0].unsqueeze(i64(a, "dim")); }, d1,
      method_samples({{"front", {{"dim", 0}}},
                      {"end", {{"dim", 3}}},
                      {"negative", {{"dim", -1}}},
                      {"out of range", {{"dim", 4}}}}),
      true));
  rows.push_back(both(
      "contiguous", "lambda x: x.contiguous()", [](const auto& in, const json&) { return in[0].contiguous(); }, d1,
      method_samples({{"plain", json::object()}}), true));
  rows.push_back(ten_only(
      "clone", "lambda x: x.clone()", [](const auto& in, const json&) { return in[0].clone(); },
      method_samples({{"plain", json::object()}})));
  // In-place arithmetic on a clone: the result is the updated clone.
  rows.push_back(ten_only(
      "add_", "lambda x, y: x.clone().add_(y)",
      [](const auto& in, const json&) { return Tensor(in[0].clone().add_(in[1])); }, inplace_samples()));
  rows.push_back(ten_only(
      "sub_", "lambda x, y: x.clone().sub_(y)",
      [](const auto& in, const json&) { return Tensor(in[0].clone().sub_(in[1])); }, inplace_samples()));
  rows.push_back(ten_only(
      "mul_", "lambda x, y: x.clone().mul_(y)",
      [](const auto& in, const json&) { return Tensor(in[0].clone().mul_(in[1])); }, inplace_samples()));
  rows.push_back(ten_only(
      "div_", "lambda x, y: x.clone().div_(y)",
      [](const auto& in, const json&) { return Tensor(in[0].clone().div_(in[1])); }, inplace_samples()));
  rows.push_back(ten_only(
      "copy_", "lambda x, y: x.clone().copy_(y)",
      [](const auto& in, const json&) { return Tensor(in[0].clone().copy_(in[1])); }, inplace_samples()));
  rows.push_back(ten_only(
      "zero_", "lambda x: x.clone().zero_()", [](const auto& in, const json&) { return Tensor(in[0].clone().zero_()); },
      method_samples({{"all", json::object()}})));
  rows.push_back(ten_only(
      "fill_", "lambda x, value: x.clone().fill_(PYNUM(value))",
      [](const auto& in, const json& a) { return Tensor(in[0].clone().fill_(f64(a, "value"))); },
      // -1 wraps into uint8, 300 and NaN fit no integer dtype, 1e6 no 16-bit float: PyTorch raises.
      method_samples({{"2", {{"value", 2.0}}},
                      {"-0.0", {{"value", -0.0}}},
                      {"-1", {{"value", -1.0}}},
                      {"300", {{"value", 300.0}}},
                      {"1e6", {{"value", 1e6}}},
                      {"nan", {{"value", "nan"}}}})));
  rows.push_back(ten_only(
      "clamp_", "lambda x, lo, hi: x.clone().clamp_(PYNUM(lo), PYNUM(hi))",
      [](const auto& in, const json& a) {
        return Tensor(in[0].clone().clamp_(a["lo"].get<double>(), a["hi"].get<double>()));
      },
      method_samples({{"-1 1", {{"lo", -1.0}, {"hi", 1.0}}}, {"lo above hi", {{"lo", 1.0}, {"hi", -1.0}}}})));
  rows.push_back(ten_only(
      "as_strided", "lambda x, shape, strides, offset: x.as_strided(shape, strides, offset)",
      [](const auto& in, const json& a) {
        return in[0].as_strided(Shape(ints(a, "shape")), Strides(ints(a, "strides")), a["offset"].get<int64_t>());
      },
      method_samples({{"2x2", {{"shape", {2, 2}}, {"strides", {1, 2}}, {"offset", 1}}},
                      {"past the end", {{"shape", {10, 10}}, {"strides", {10, 1}}, {"offset", 0}}}})));
  rows.push_back(ten_only(
      "to", "lambda x, dtype: x.to(DT(dtype))", [](const auto& in, const json& a) { return in[0].to(dtype_named(a)); },
      method_samples({{"f64", {{"dtype", "f64"}}},
                      {"i64", {{"dtype", "i64"}}},
                      {"bf16", {{"dtype", "bf16"}}},
                      {"bool", {{"dtype", "bool"}}}})));
  // The largest and smallest element, 0-d; ties (and NaNs) share the gradient.
  rows.push_back(both(
      "max", "lambda x: x.max()", [](const auto& in, const json&) { return in[0].max(); }, d1, unary_samples()));
  rows.push_back(both(
      "min", "lambda x: x.min()", [](const auto& in, const json&) { return in[0].min(); }, d1, unary_samples()));
}

}  // namespace ddl::sweep
