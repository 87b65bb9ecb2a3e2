// Rows: shape ops and joins (tensor/ops/shape_ops.h, join.h, autograd/ops/shape_ops.h, join.h, nn/functional.h).
#include "sweep.h"

namespace ddl::sweep {
namespace {

PadMode pad_mode(const json& a) {
  const std::string m = a.contains("mode") ? a["mode"].get<std::string>() : "constant";
  return m == "reflect" ? PadMode::Reflect : m == "replicate" ? PadMode::Replicate : PadMode::Constant;
}

std::vector<Sample> one_input(const std::vector<std::pair<std::string, json>>& cases,
                              std::vector<int64_t> shape = {2, 3, 4}) {
  std::vector<Sample> v;
  uint64_t s = 2000;
  for (const auto& [tag, a] : cases) {
    v.push_back({tag + " f32", {make(DType::Float32, shape, s++)}, a});
    v.push_back({tag + " f64 transposed", {with_layout(make(DType::Float64, shape, s++), "transposed")}, a});
  }
  for (DType t : kAllDTypes)
    v.push_back({std::string("first args ") + short_name(t), {make(t, shape, s++)}, cases[0].second});
  return v;
}

std::vector<Sample> list_samples(bool stack) {
  std::vector<Sample> v;
  uint64_t s = 2100;
  auto f = [&](std::vector<int64_t> sh, DType t = DType::Float64) { return make(t, std::move(sh), s++); };
  for (DType t : kAllDTypes)
    v.push_back({std::string("two ") + short_name(t), {f({2, 3}, t), f({2, 3}, t)}, {{"dim", 0}}});
  v.push_back({"dim1", {f({2, 3}), f({2, 3}), f({2, 3})}, {{"dim", 1}}});
  v.push_back({"dim-1", {f({2, 3}), f({2, 3})}, {{"dim", -1}}});
  v.push_back({"one", {f({2, 3})}, {{"dim", 0}}});
  v.push_back({"0-d", {f({}), f({})}, {{"dim", 0}}});
  v.push_back({"empty one", {f({0, 3}), f({2, 3})}, {{"dim", 0}}});
  v.push_back({"mixed dtypes", {f({2, 3}, DType::Float32), f({2, 3}, DType::Float64)}, {{"dim", 0}}});
  v.push_back({"mixed int float", {f({2, 3}, DType::Int64), f({2, 3}, DType::Float32)}, {{"dim", 0}}});
  v.push_back(
      {"non-contiguous", {with_layout(f({2, 3}), "transposed"), with_layout(f({2, 3}), "stepped")}, {{"dim", 1}}});
  v.push_back({"dim out of range", {f({2, 3}), f({2, 3})}, {{"dim", stack ? 3 : 2}}});
  v.push_back({"dim at end", {f({2, 3}), f({2, 3})}, {{"dim", 2}}});
  v.push_back({"none", {}, {{"dim", 0}}});
  if (!stack) {
    v.push_back({"sizes differ on dim", {f({2, 3}), f({4, 3})}, {{"dim", 0}}});
    v.push_back({"sizes differ off dim", {f({2, 3}), f({2, 4})}, {{"dim", 0}}});
    v.push_back({"legacy empty 1-d", {f({0}), f({2, 3})}, {{"dim", 0}}});
    v.push_back({"rank differs", {f({2, 3}), f({3})}, {{"dim", 0}}});
  } else {
    v.push_back({"shapes differ", {f({2, 3}), f({3, 2})}, {{"dim", 0}}});
  }
  return v;
}

std::vector<Sample> split_samples(const char* key) {
  std::vector<Sample> v;
  uint64_t s = 2200;
  auto f = [&](std::vector<int64_t> sh, DType t = DType::Float64) { return make(t, std::move(sh), s++); };
  const std::string k = key;
  if (k == "split_size" || k == "chunks") {
    for (int64_t n : {1, 2, 3, 5, 7}) v.push_back({k + " " + std::to_string(n), {f({5, 3})}, {{k, n}, {"dim", 0}}});
    v.push_back({"dim1", {f({2, 6})}, {{k, 4}, {"dim", 1}}});
    v.push_back({"dim-1", {f({2, 6})}, {{k, 3}, {"dim", -1}}});
    v.push_back({"zero", {f({4, 3})}, {{k, 0}, {"dim", 0}}});
    v.push_back({"empty dim", {f({0, 3})}, {{k, 2}, {"dim", 0}}});
    v.push_back({"0-d", {f({})}, {{k, 1}, {"dim", 0}}});
    v.push_back({"int", {f({5, 3}, DType::Int64)}, {{k, 2}, {"dim", 0}}});
    v.push_back({"bool", {f({5}, DType::Bool)}, {{k, 2}, {"dim", 0}}});
    v.push_back({"dim out of range", {f({4, 3})}, {{k, 2}, {"dim", 2}}});
    v.push_back({"transposed", {with_layout(f({4, 3}), "transposed")}, {{k, 2}, {"dim", 1}}});
  } else {
    v.push_back({"sizes", {f({6, 2})}, {{k, {1, 2, 3}}, {"dim", 0}}});
    v.push_back({"sizes with 0", {f({6, 2})}, {{k, {0, 6}}, {"dim", 0}}});
    v.push_back({"dim1", {f({2, 5})}, {{k, {4, 1}}, {"dim", 1}}});
    v.push_back({"dim-1 f32", {f({2, 5}, DType::Float32)}, {{k, {2, 3}}, {"dim", -1}}});
    v.push_back({"sum too small", {f({6, 2})}, {{k, {1, 2}}, {"dim", 0}}});
    v.push_back({"sum too big", {f({6, 2})}, {{k, {4, 4}}, {"dim", 0}}});
    v.push_back({"negative size", {f({6, 2})}, {{k, {7, -1}}, {"dim", 0}}});
    v.push_back({"int", {f({6}, DType::Int32)}, {{k, {3, 3}}, {"dim", 0}}});
    v.push_back({"int8", {f({6}, DType::Int8)}, {{k, {3, 3}}, {"dim", 0}}});
    v.push_back({"int16", {f({6}, DType::Int16)}, {{k, {3, 3}}, {"dim", 0}}});
  }
  return v;
}

std::vector<Sample> pad_samples() {
  std::vector<Sample> v;
  uint64_t s = 2300;
  auto f = [&](std::vector<int64_t> sh, DType t = DType::Float64) { return make(t, std::move(sh), s++); };
  for (const char* mode : {"constant", "reflect", "replicate"}) {
    const std::string m = mode;
    v.push_back({m + " last", {f({2, 3, 4})}, {{"pad", {1, 2}}, {"mode", m}, {"value", 0.0}}});
    v.push_back({m + " two dims", {f({1, 2, 3, 4})}, {{"pad", {1, 1, 2, 0}}, {"mode", m}, {"value", 0.0}}});
    v.push_back({m + " f32", {f({1, 2, 5}, DType::Float32)}, {{"pad", {2, 2}}, {"mode", m}, {"value", 0.0}}});
    v.push_back(
        {m + " transposed", {with_layout(f({2, 3, 4}), "transposed")}, {{"pad", {1, 0}}, {"mode", m}, {"value", 0.0}}});
    v.push_back({m + " too big", {f({1, 2, 3})}, {{"pad", {3, 3}}, {"mode", m}, {"value", 0.0}}});
    v.push_back({m + " negative", {f({1, 2, 5})}, {{"pad", {-1, 2}}, {"mode", m}, {"value", 0.0}}});
    v.push_back({m + " int", {f({1, 2, 4}, DType::Int64)}, {{"pad", {1, 1}}, {"mode", m}, {"value", 0.0}}});
    v.push_back({m + " 1-d", {f({4})}, {{"pad", {1, 1}}, {"mode", m}, {"value", 0.0}}});
  }
  v.push_back({"constant value", {f({2, 3})}, {{"pad", {1, 1, 1, 1}}, {"mode", "constant"}, {"value", -2.5}}});
  v.push_back({"constant 3 dims", {f({2, 3, 4})}, {{"pad", {1, 1, 1, 1, 1, 1}}, {"mode", "constant"}, {"value", 1.0}}});
  v.push_back({"constant odd length", {f({2, 3})}, {{"pad", {1}}, {"mode", "constant"}, {"value", 0.0}}});
  v.push_back({"constant too long", {f({3})}, {{"pad", {1, 1, 1, 1}}, {"mode", "constant"}, {"value", 0.0}}});
  v.push_back({"constant bool", {f({3}, DType::Bool)}, {{"pad", {1, 1}}, {"mode", "constant"}, {"value", 1.0}}});
  v.push_back({"constant 0-d", {f({})}, {{"pad", json::array()}, {"mode", "constant"}, {"value", 0.0}}});
  return v;
}

}  // namespace

void add_shape_rows(std::vector<Row>& rows) {
  const std::vector<bool> d1 = {true};
  rows.push_back(both(
      "repeat", "lambda x, sizes: x.repeat(*sizes)",
      [](const auto& in, const json& a) { return repeat(in[0], ints(a, "sizes")); }, d1,
      one_input({{"2,1,3", {{"sizes", {2, 1, 3}}}},
                 {"more dims", {{"sizes", {2, 1, 1, 2}}}},
                 {"zero", {{"sizes", {1, 0, 2}}}},
                 {"too few", {{"sizes", {2, 2}}}},
                 {"negative", {{"sizes", {1, -1, 1}}}}}),
      true));
  rows.push_back(both(
      "flip", "lambda x, dims: torch.flip(x, dims)",
      [](const auto& in, const json& a) { return flip(in[0], ints(a, "dims")); }, d1,
      one_input({{"last", {{"dims", {-1}}}},
                 {"two", {{"dims", {0, 2}}}},
                 {"none", {{"dims", json::array()}}},
                 {"repeated", {{"dims", {1, 1}}}},
                 {"out of range", {{"dims", {3}}}}}),
      true));
  rows.push_back(both(
      "pad", "lambda x, pad, mode, value: torch.nn.functional.pad(x, pad, mode, value if mode == 'constant' else None)",
      [](const auto& in, const json& a) { return pad(in[0], ints(a, "pad"), pad_mode(a), f64(a, "value")); }, d1,
      pad_samples(), true));
  rows.push_back(both(
      "cat", "lambda *xs, dim: torch.cat(xs, dim)",
      [](const auto& in, const json& a) { return cat(in, i64(a, "dim")); }, {true, true, true}, list_samples(false),
      true));
  rows.push_back(both(
      "stack", "lambda *xs, dim: torch.stack(xs, dim)",
      [](const auto& in, const json& a) { return stack(in, i64(a, "dim")); }, {true, true, true}, list_samples(true),
      true));
  rows.push_back(both(
      "split",
      "lambda x, dim, split_size=None, split_sizes=None: torch.split(x, split_size if split_sizes is None "
      "else split_sizes, dim)",
      [](const auto& in, const json& a) {
        if (a.contains("split_sizes")) return split(in[0], ints(a, "split_sizes"), i64(a, "dim"));
        return split(in[0], i64(a, "split_size"), i64(a, "dim"));
      },
      d1,
      [] {
        auto v = split_samples("split_size");
        for (auto& s : split_samples("split_sizes")) v.push_back(s);
        return v;
      }(),
      true));
  rows.push_back(ten_only(
      "split_with_sizes", "lambda x, split_sizes, dim: torch.split(x, split_sizes, dim)",
      [](const auto& in, const json& a) { return split_with_sizes(in[0], ints(a, "split_sizes"), i64(a, "dim")); },
      split_samples("split_sizes"), {{"aliases", {"split"}}}));  // the Variable overload is split(x, sizes)
  rows.push_back(both(
      "chunk", "lambda x, chunks, dim: torch.chunk(x, chunks, dim)",
      [](const auto& in, const json& a) { return chunk(in[0], i64(a, "chunks"), i64(a, "dim")); }, d1,
      split_samples("chunks"), true));
  rows.push_back(var_only(
      "flatten", "lambda x, start_dim, end_dim: torch.flatten(x, start_dim, end_dim)",
      [](const auto& in, const json& a) {
        return nn::functional::flatten(in[0], i64(a, "start_dim"), i64(a, "end_dim"));
      },
      d1,
      one_input({{"default", {{"start_dim", 1}, {"end_dim", -1}}},
                 {"all", {{"start_dim", 0}, {"end_dim", -1}}},
                 {"middle", {{"start_dim", 0}, {"end_dim", 1}}},
                 {"one dim", {{"start_dim", 2}, {"end_dim", 2}}},
                 {"reversed", {{"start_dim", 2}, {"end_dim", 0}}},
                 {"out of range", {{"start_dim", 1}, {"end_dim", 3}}}}),
      true));
}

}  // namespace ddl::sweep
