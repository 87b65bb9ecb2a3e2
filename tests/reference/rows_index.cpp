// Rows: indexing, gather/scatter, masks and embedding (tensor/ops/indexing.h, autograd/ops/indexing.h, embedding.h).
// An index list travels as args "spec": [{"int": i} | {"slice": [start, stop, step]} | "none" | "ellipsis" |
// {"tensor": k}], k naming an input; compare.py's IDX builds the same tuple for PyTorch.
#include "sweep.h"

namespace ddl::sweep {
namespace {

template <typename In>
std::vector<TensorIndex> index_list(const In& in, const json& spec) {
  std::vector<TensorIndex> idx;
  auto opt = [](const json& j) {
    return j.is_null() ? std::optional<int64_t>() : std::optional<int64_t>(j.get<int64_t>());
  };
  for (const json& e : spec) {
    if (e.is_string()) {
      if (e == "none")
        idx.emplace_back(None);
      else
        idx.emplace_back(Ellipsis);
    } else if (e.contains("int")) {
      idx.emplace_back(e["int"].get<int64_t>());
    } else if (e.contains("slice")) {
      idx.emplace_back(Slice(opt(e["slice"][0]), opt(e["slice"][1]), opt(e["slice"][2])));
    } else {
      idx.emplace_back(in_t(in[e["tensor"].get<size_t>()]));
    }
  }
  return idx;
}

json sl(json a, json b, json c) { return {{"slice", {a, b, c}}}; }

std::vector<Sample> index_samples(bool put) {
  std::vector<Sample> v;
  uint64_t s = 2400;
  const int64_t k = put ? 2 : 1;  // first index tensor's input position (put: x, values, then indices)
  auto x = [&](DType t = DType::Float64) { return make(t, {4, 5, 3}, s++); };
  auto ix = [&](std::vector<int64_t> sh, std::vector<double> vals) {
    return of(DType::Int64, std::move(sh), std::move(vals));
  };
  // (tag, index inputs, spec, shape of the result the values must broadcast to)
  struct C {
    std::string tag;
    std::vector<Input> idx;
    json spec;
    std::vector<int64_t> out;
  };
  std::vector<C> cs = {
      {"int", {}, json::array({json{{"int", 1}}}), {5, 3}},
      {"negative int", {}, json::array({json{{"int", -1}}, json{{"int", 2}}}), {3}},
      {"slice", {}, json::array({sl(1, 3, nullptr)}), {2, 5, 3}},
      {"slice step", {}, json::array({sl(nullptr, nullptr, 2), sl(1, nullptr, 2)}), {2, 2, 3}},
      {"slice negative bounds", {}, json::array({sl(-3, -1, nullptr)}), {2, 5, 3}},
      {"slice past end", {}, json::array({sl(2, 100, nullptr)}), {2, 5, 3}},
      {"none", {}, json::array({"none", json{{"int", 0}}}), {1, 5, 3}},
      {"ellipsis", {}, json::array({"ellipsis", json{{"int", 1}}}), {4, 5}},
      {"int64 tensor", {ix({3}, {0, 2, 2})}, json::array({json{{"tensor", k}}}), {3, 5, 3}},
      {"negative tensor", {ix({2}, {-1, 0})}, json::array({json{{"tensor", k}}}), {2, 5, 3}},
      {"2-d tensor",
       {ix({2, 2}, {0, 1, 3, 2})},
       json::array({sl(nullptr, nullptr, nullptr), json{{"tensor", k}}}),
       {4, 2, 2, 3}},
      {"two tensors",
       {ix({2}, {0, 3}), ix({2}, {1, 4})},
       json::array({json{{"tensor", k}}, json{{"tensor", k + 1}}}),
       {2, 3}},
      {"separated tensors",
       {ix({2}, {0, 3}), ix({2}, {1, 2})},
       json::array({json{{"tensor", k}}, sl(nullptr, nullptr, nullptr), json{{"tensor", k + 1}}}),
       {2, 5}},
      {"bool mask", {of(DType::Bool, {4}, {1, 0, 1, 1})}, json::array({json{{"tensor", k}}}), {3, 5, 3}},
      {"bool mask 2-d",
       {of(DType::Bool, {4, 5}, std::vector<double>(20, 0.0))},
       json::array({json{{"tensor", k}}}),
       {0, 3}},
      {"int out of range", {}, json::array({json{{"int", 4}}}), {5, 3}},
      {"tensor out of range", {ix({2}, {0, 9})}, json::array({json{{"tensor", k}}}), {2, 5, 3}},
      {"too many", {}, json::array({json{{"int", 0}}, json{{"int", 0}}, json{{"int", 0}}, json{{"int", 0}}}), {}},
      {"two ellipses", {}, json::array({"ellipsis", "ellipsis"}), {4, 5, 3}},
      {"float index", {of(DType::Float32, {2}, {0, 1})}, json::array({json{{"tensor", k}}}), {2, 5, 3}},
      {"empty tensor", {ix({0}, {})}, json::array({json{{"tensor", k}}}), {0, 5, 3}},
  };
  for (const C& c : cs) {
    Sample smp{c.tag, {x()}, {{"spec", c.spec}}};
    if (put) smp.inputs.push_back(make(DType::Float64, c.out, s++));
    for (const Input& i : c.idx) smp.inputs.push_back(i);
    if (put && c.tag == "two tensors") {
      Sample acc = smp;
      acc.tag = "accumulate duplicates";
      acc.inputs[2] = ix({3}, {0, 0, 3});
      acc.inputs[3] = ix({3}, {1, 1, 4});
      acc.inputs[1] = make(DType::Float64, {3, 3}, s++);
      acc.args["accumulate"] = true;
      v.push_back(acc);
    }
    v.push_back(std::move(smp));
  }
  for (DType t : kAllDTypes) {
    Sample smp{std::string("dtype ") + short_name(t), {x(t)}, {{"spec", json::array({json{{"tensor", k}}})}}};
    if (put) smp.inputs.push_back(make(t, {2, 5, 3}, s++));
    smp.inputs.push_back(ix({2}, {3, 0}));
    v.push_back(std::move(smp));
  }
  if (put) {
    v.push_back({"broadcast values",
                 {x(), make(DType::Float64, {3}, s++), ix({2}, {1, 2})},
                 {{"spec", json::array({json{{"tensor", 2}}})}}});
    v.push_back({"0-d values",
                 {x(), make(DType::Float64, {}, s++), ix({2}, {1, 2})},
                 {{"spec", json::array({json{{"tensor", 2}}})}}});
    v.push_back({"bad values",
                 {x(), make(DType::Float64, {4}, s++), ix({2}, {1, 2})},
                 {{"spec", json::array({json{{"tensor", 2}}})}}});
    v.push_back({"mixed dtype values",
                 {x(), make(DType::Float32, {2, 5, 3}, s++), ix({2}, {1, 2})},
                 {{"spec", json::array({json{{"tensor", 2}}})}}});
  }
  return v;
}

std::vector<Sample> dim_index_samples(bool source, bool scatter) {
  // x, index (1-D for index_select/index_add, same rank for gather/scatter), source
  std::vector<Sample> v;
  uint64_t s = 2500;
  auto f = [&](std::vector<int64_t> sh, DType t = DType::Float64) { return make(t, std::move(sh), s++); };
  auto ix = [&](std::vector<int64_t> sh, std::vector<double> vals) {
    return of(DType::Int64, std::move(sh), std::move(vals));
  };
  auto add = [&](std::string tag, Input x, int64_t dim, Input idx, std::vector<int64_t> src_shape) {
    Sample smp{std::move(tag), {std::move(x), std::move(idx)}, {{"dim", dim}}};
    if (source) smp.inputs.push_back(make(smp.inputs[0].dtype, std::move(src_shape), s++));
    v.push_back(std::move(smp));
  };
  if (!scatter) {  // index_select / index_add: a 1-D index
    for (DType t : kAllDTypes) add(std::string("dim0 ") + short_name(t), f({4, 3}, t), 0, ix({3}, {3, 0, 3}), {3, 3});
    add("dim1", f({4, 3}), 1, ix({2}, {2, 0}), {4, 2});
    add("dim-1", f({2, 4, 3}), -1, ix({4}, {0, 0, 1, 2}), {2, 4, 4});
    add("0-d self", f({}), 0, ix({1}, {0}), {1});
    add("0-d index", f({4, 3}), 0, ix({}, {2}), {3});
    add("empty index", f({4, 3}), 0, ix({0}, {}), {0, 3});
    add("int32 index", f({4, 3}), 0, of(DType::Int32, {2}, {1, 2}), {2, 3});
    add("out of range", f({4, 3}), 0, ix({2}, {1, 4}), {2, 3});
    add("negative index", f({4, 3}), 0, ix({2}, {-1, 0}), {2, 3});
    add("dim out of range", f({4, 3}), 2, ix({2}, {1, 0}), {4, 2});
    add("float index", f({4, 3}), 0, of(DType::Float32, {2}, {1, 0}), {2, 3});
    add("2-d index", f({4, 3}), 0, ix({1, 2}, {1, 0}), {2, 3});
    add("transposed", with_layout(f({4, 3}), "transposed"), 1, ix({2}, {2, 1}), {4, 2});
  } else {  // gather / scatter: index of the same rank
    for (DType t : kAllDTypes)
      add(std::string("dim1 ") + short_name(t), f({3, 4}, t), 1, ix({3, 2}, {0, 3, 1, 1, 2, 0}), {3, 2});
    add("dim0", f({3, 4}), 0, ix({2, 4}, {0, 1, 2, 0, 2, 2, 1, 0}), {2, 4});
    add("dim-1 smaller", f({3, 4}), -1, ix({2, 2}, {3, 2, 0, 1}), {2, 2});
    add("duplicates", f({3, 4}), 1, ix({3, 3}, {0, 0, 0, 1, 1, 2, 3, 3, 3}), {3, 3});
    add("0-d", f({}), 0, ix({}, {0}), {});
    add("empty index", f({3, 4}), 1, ix({3, 0}, {}), {3, 0});
    add("out of range", f({3, 4}), 1, ix({1, 1}, {4}), {1, 1});
    add("negative index", f({3, 4}), 1, ix({1, 1}, {-1}), {1, 1});
    add("rank differs", f({3, 4}), 1, ix({3}, {0, 1, 2}), {3});
    add("index too big", f({3, 4}), 1, ix({4, 1}, {0, 1, 2, 3}), {4, 1});
    add("dim out of range", f({3, 4}), 2, ix({1, 1}, {0}), {1, 1});
    add("int32 index", f({3, 4}), 1, of(DType::Int32, {1, 2}, {1, 0}), {1, 2});
    add("transposed", with_layout(f({4, 3}), "transposed"), 0, ix({2, 3}, {3, 2, 1, 0, 0, 0}), {2, 3});
  }
  if (source) {
    Sample m = v[0];
    m.tag = "mixed source dtype";
    m.inputs[2].dtype = DType::Float32;
    v.push_back(m);
  }
  return v;
}

std::vector<Sample> mask_samples() {
  std::vector<Sample> v;
  uint64_t s = 2600;
  for (DType t : kAllDTypes)
    v.push_back({std::string("3x4 ") + short_name(t),
                 {make(t, {3, 4}, s++), make(DType::Bool, {3, 4}, s++)},
                 {{"value", 1.0}}});
  v.push_back({"broadcast mask", {make(DType::Float64, {3, 4}, s++), make(DType::Bool, {4}, s++)}, {{"value", -2.5}}});
  v.push_back({"0-d mask", {make(DType::Float64, {3, 4}, s++), of(DType::Bool, {}, {1})}, {{"value", 0.5}}});
  v.push_back({"mask bigger", {make(DType::Float64, {4}, s++), make(DType::Bool, {3, 4}, s++)}, {{"value", 0.5}}});
  v.push_back({"uint8 mask", {make(DType::Float64, {3, 4}, s++), make(DType::UInt8, {3, 4}, s++)}, {{"value", 0.5}}});
  v.push_back({"float mask", {make(DType::Float64, {3, 4}, s++), make(DType::Float32, {3, 4}, s++)}, {{"value", 0.5}}});
  v.push_back({"inf value", {make(DType::Float32, {3, 4}, s++), make(DType::Bool, {3, 4}, s++)}, {{"value", "-inf"}}});
  v.push_back(
      {"fraction into int", {make(DType::Int64, {3, 4}, s++), make(DType::Bool, {3, 4}, s++)}, {{"value", 2.5}}});
  v.push_back({"transposed",
               {with_layout(make(DType::Float64, {4, 3}, s++), "transposed"), make(DType::Bool, {4, 3}, s++)},
               {{"value", 3.0}}});
  v.push_back({"empty", {make(DType::Float64, {0, 4}, s++), make(DType::Bool, {0, 4}, s++)}, {{"value", 3.0}}});
  return v;
}

std::vector<Sample> embedding_samples() {
  std::vector<Sample> v;
  uint64_t s = 2700;
  auto ix = [&](std::vector<int64_t> sh, std::vector<double> vals) {
    return of(DType::Int64, std::move(sh), std::move(vals));
  };
  for (DType t : kFloatDTypes)
    v.push_back({std::string("2-d ") + short_name(t), {ix({2, 3}, {0, 4, 2, 2, 1, 0}), make(t, {5, 3}, s++)}});
  v.push_back({"1-d", {ix({4}, {1, 1, 1, 0}), make(DType::Float64, {5, 3}, s++)}});
  v.push_back({"0-d", {ix({}, {3}), make(DType::Float64, {5, 3}, s++)}});
  v.push_back({"padding_idx", {ix({4}, {1, 2, 1, 0}), make(DType::Float64, {5, 3}, s++)}, {{"padding_idx", 1}}});
  v.push_back(
      {"negative padding_idx", {ix({4}, {4, 2, 1, 4}), make(DType::Float64, {5, 3}, s++)}, {{"padding_idx", -1}}});
  v.push_back({"out of range", {ix({2}, {1, 5}), make(DType::Float64, {5, 3}, s++)}});
  v.push_back({"negative index", {ix({2}, {-1, 0}), make(DType::Float64, {5, 3}, s++)}});
  v.push_back({"int32 indices", {of(DType::Int32, {2}, {1, 0}), make(DType::Float64, {5, 3}, s++)}});
  v.push_back({"int8 indices", {of(DType::Int8, {2}, {1, 0}), make(DType::Float64, {5, 3}, s++)}});
  v.push_back({"int16 indices", {of(DType::Int16, {2}, {1, 0}), make(DType::Float64, {5, 3}, s++)}});
  v.push_back({"float indices", {of(DType::Float32, {2}, {1, 0}), make(DType::Float64, {5, 3}, s++)}});
  v.push_back({"empty", {ix({0}, {}), make(DType::Float64, {5, 3}, s++)}});
  v.push_back({"1-d weight", {ix({2}, {0, 1}), make(DType::Float64, {5}, s++)}});
  v.push_back({"transposed weight", {ix({2}, {0, 1}), with_layout(make(DType::Float64, {5, 3}, s++), "transposed")}});
  return v;
}

}  // namespace

void add_index_rows(std::vector<Row>& rows) {
  rows.push_back(both(
      "index", "lambda x, *t, spec: x[IDX(spec, (x,) + t)]",
      [](const auto& in, const json& a) { return index(in[0], index_list(in, a["spec"])); }, {true},
      index_samples(false), true));
  const char* put_torch =
      "lambda x, values, *t, spec, accumulate=False: PUT(x, IDX(spec, (x, values) + t), values, accumulate)";
  rows.push_back(both(
      "index_put", put_torch,
      [](const auto& in, const json& a) {
        return index_put(in[0], index_list(in, a["spec"]), in[1], flag(a, "accumulate"));
      },
      {true, true}, index_samples(true), true));
  rows.push_back(ten_only(
      "index_put_",
      "lambda x, values, *t, spec, accumulate=False, value=None: PUT(x, IDX(spec, (x, values) + t), "
      "values if value is None else value, accumulate)",
      [](const auto& in, const json& a) {
        const Tensor x = in[0].clone();
        if (a.contains("value")) {  // the overload taking a double
          index_put_(x, index_list(in, a["spec"]), f64(a, "value"));
        } else {
          index_put_(x, index_list(in, a["spec"]), in[1], flag(a, "accumulate"));
        }
        return x;
      },
      [] {
        std::vector<Sample> s = index_samples(true);
        for (Sample x : index_samples(true)) {
          if (x.args.contains("accumulate") || x.inputs.size() < 2) continue;
          x.tag = "value " + x.tag;
          x.args["value"] = -2.5;
          x.inputs[1] = of(DType::Float64, {}, {0});  // unused by ddl; PyTorch gets the value
          s.push_back(x);
        }
        return s;
      }()));
  rows.push_back(both(
      "index_select", "lambda x, i, dim: torch.index_select(x, dim, i)",
      [](const auto& in, const json& a) { return index_select(in[0], i64(a, "dim"), in_t(in[1])); }, {true},
      dim_index_samples(false, false), true));
  rows.push_back(both(
      "index_add", "lambda x, i, src, dim: torch.index_add(x, dim, i, src)",
      [](const auto& in, const json& a) { return index_add(in[0], i64(a, "dim"), in_t(in[1]), in[2]); },
      {true, false, true}, dim_index_samples(true, false), true));
  rows.push_back(both(
      "gather", "lambda x, i, dim: torch.gather(x, dim, i)",
      [](const auto& in, const json& a) { return gather(in[0], i64(a, "dim"), in_t(in[1])); }, {true},
      dim_index_samples(false, true), true));
  {
    std::vector<Sample> s = dim_index_samples(true, true);
    for (Sample x : dim_index_samples(false, true)) {
      x.tag = "value " + x.tag;
      x.args["value"] = -1.5;
      s.push_back(x);
    }
    const char* py =
        "lambda x, i, src=None, dim=0, value=None: torch.scatter(x, dim, i, src if value is None else value)";
    rows.push_back(both("scatter", py,
                        [](const auto& in, const json& a) {
                          if (a.contains("value")) return scatter(in[0], i64(a, "dim"), in_t(in[1]), f64(a, "value"));
                          return scatter(in[0], i64(a, "dim"), in_t(in[1]), in[2]);
                        },
                        {true, false, true}, s, true, {{"duplicates_ambiguous", true}}));
    rows.push_back(ten_only("scatter_",
                            "lambda x, i, src=None, dim=0, value=None: x.clone().scatter_(dim, i, src if value is None "
                            "else value)",
                            [](const auto& in, const json& a) {
                              const Tensor x = in[0].clone();
                              if (a.contains("value"))
                                scatter_(x, i64(a, "dim"), in[1], f64(a, "value"));
                              else
                                scatter_(x, i64(a, "dim"), in[1], in[2]);
                              return x;
                            },
                            s, {{"duplicates_ambiguous", true}}));
  }
  rows.push_back(both(
      "scatter_add", "lambda x, i, src, dim: torch.scatter_add(x, dim, i, src)",
      [](const auto& in, const json& a) { return scatter_add(in[0], i64(a, "dim"), in_t(in[1]), in[2]); },
      {true, false, true}, dim_index_samples(true, true), true));
  rows.push_back(ten_only(
      "scatter_add_", "lambda x, i, src, dim: x.clone().scatter_add_(dim, i, src)",
      [](const auto& in, const json& a) {
        const Tensor x = in[0].clone();
        scatter_add_(x, i64(a, "dim"), in[1], in[2]);
        return x;
      },
      dim_index_samples(true, true)));
  rows.push_back(both(
      "masked_fill", "lambda x, m, value: torch.masked_fill(x, m, value)",
      [](const auto& in, const json& a) { return masked_fill(in[0], in_t(in[1]), f64(a, "value")); }, {true},
      mask_samples(), true));
  rows.push_back(ten_only(
      "masked_fill_", "lambda x, m, value: x.clone().masked_fill_(m, value)",
      [](const auto& in, const json& a) {
        const Tensor x = in[0].clone();
        masked_fill_(x, in[1], f64(a, "value"));
        return x;
      },
      mask_samples()));
  {
    std::vector<Sample> s = unary_samples({-1, 1, false});
    s.push_back({"zeros", {of(DType::Float32, {2, 3}, {0, 1, 0, -0.0, 2, 0})}});
    s.push_back({"nan counts", {of(DType::Float64, {3}, {NAN, 0, 1})}});
    rows.push_back(ten_only(
        "nonzero", "lambda x: torch.nonzero(x)", [](const auto& in, const json&) { return nonzero(in[0]); }, s));
  }
  rows.push_back(var_only(
      "embedding", "lambda i, w, padding_idx=None: torch.nn.functional.embedding(i, w, padding_idx)",
      [](const auto& in, const json& a) {
        std::optional<int64_t> p;
        if (a.contains("padding_idx")) p = i64(a, "padding_idx");
        return embedding(in_t(in[0]), in[1], p);
      },
      {false, true}, embedding_samples(), true));
}

}  // namespace ddl::sweep
