// Rows: reductions, scans, softmax, sorting and matrix products (tensor/ops/reduce.h, scan.h, softmax.h, sort.h,
// linalg.h, einsum.h and their autograd/ops counterparts).
#include "sweep.h"

namespace ddl::sweep {
namespace {

#define DDL_SWEEP_REDUCE(op) [](const auto& in, const json& a) { return op(in[0], ints(a, "dim"), flag(a, "keepdim")); }
#define DDL_SWEEP_DIM(op) [](const auto& in, const json& a) { return op(in[0], i64(a, "dim")); }
#define DDL_SWEEP_DIM_KEEP(op) \
  [](const auto& in, const json& a) { return op(in[0], i64(a, "dim"), flag(a, "keepdim")); }

std::vector<Sample> var_samples() {
  std::vector<Sample> v;
  add_all(v, reduce_samples(kAllDTypes), {{"correction", 1}});
  std::vector<Sample> c0;
  for (const Sample& s : reduce_samples(kFloatDTypes, false))
    // not the empty ones: PyTorch 1.13's var backward fails on them ("invalid gradient ... got []")
    if ((s.tag.find("f64") != std::string::npos || s.tag.find("large") != std::string::npos) &&
        s.tag.find("empty") == std::string::npos)
      c0.push_back(s);
  add_all(v, c0, {{"correction", 0}});
  v.push_back({"single element correction 1",
               {make(DType::Float64, {1}, 1)},
               {{"dim", {0}}, {"keepdim", false}, {"correction", 1}}});
  v.push_back(
      {"correction 2", {make(DType::Float64, {3, 4}, 2)}, {{"dim", {1}}, {"keepdim", false}, {"correction", 2}}});
  return v;
}

std::vector<Sample> sum_to_samples() {
  std::vector<Sample> v;
  uint64_t s = 1300;
  for (DType t : kAllDTypes)
    v.push_back({std::string("rows ") + short_name(t), {make(t, {3, 4}, s++)}, {{"shape", {4}}}});
  v.push_back({"keep 1", {make(DType::Float64, {3, 4}, s++)}, {{"shape", {3, 1}}}});
  v.push_back({"to 0-d", {make(DType::Float64, {2, 3}, s++)}, {{"shape", json::array()}}});
  v.push_back({"same", {make(DType::Float32, {2, 3}, s++)}, {{"shape", {2, 3}}}});
  v.push_back({"leading", {make(DType::Float32, {2, 3, 4}, s++)}, {{"shape", {1, 3, 4}}}});
  v.push_back({"empty", {make(DType::Float32, {0, 3}, s++)}, {{"shape", {3}}}});
  v.push_back({"transposed", {with_layout(make(DType::Float64, {4, 3}, s++), "transposed")}, {{"shape", {1, 3}}}});
  v.push_back({"not broadcastable", {make(DType::Float32, {3, 4}, s++)}, {{"shape", {3}}}});
  return v;
}

std::vector<Sample> sort_samples(bool with_k, bool kth) {
  std::vector<Sample> v;
  uint64_t s = 1400;
  auto args = [&](int64_t dim, int64_t k, bool flag1, bool flag2) {
    json a = {{"dim", dim}};
    if (with_k) a["k"] = k;
    if (kth) {
      a["keepdim"] = flag1;
    } else {
      a[with_k ? "largest" : "descending"] = flag1;
      a[with_k ? "sorted" : "stable"] = flag2;
    }
    return a;
  };
  for (DType t : kAllDTypes)
    v.push_back({std::string("3x5 ") + short_name(t), {make(t, {3, 5}, s++)}, args(-1, 2, false, true)});
  for (DType t : {DType::Float32, DType::Float64}) {
    const std::string n = short_name(t);
    v.push_back({"flip flags " + n, {make(t, {3, 5}, s++)}, args(1, 3, true, true)});
    v.push_back({"dim0 " + n, {make(t, {4, 3}, s++)}, args(0, 1, false, true)});
    v.push_back({"3-d dim1 " + n, {make(t, {2, 4, 3}, s++)}, args(1, 4, true, true)});
    v.push_back({"0-d " + n, {make(t, {}, s++)}, args(0, 1, false, true)});
    v.push_back({"0-d dim-1 " + n, {make(t, {}, s++)}, args(-1, 1, true, true)});
    v.push_back({"transposed " + n, {with_layout(make(t, {5, 3}, s++), "transposed")}, args(-1, 2, false, true)});
    v.push_back({"stepped " + n, {with_layout(make(t, {3, 5}, s++), "stepped")}, args(-1, 2, true, true)});
    v.push_back({"special " + n, {special(t, {2, 8})}, args(1, 3, false, true)});
    v.push_back({"special flip " + n, {special(t, {2, 8})}, args(1, 3, true, true)});
    v.push_back({"dim out of range " + n, {make(t, {3, 5}, s++)}, args(2, 1, false, true)});
  }
  v.push_back({"ties stable", {of(DType::Float32, {8}, {2, 1, 2, 1, 0, 2, 1, 0})}, args(0, 3, false, true)});
  v.push_back({"ties stable flip", {of(DType::Float32, {8}, {2, 1, 2, 1, 0, 2, 1, 0})}, args(0, 3, true, true)});
  v.push_back({"empty other dim", {make(DType::Float32, {0, 3}, s++)}, args(1, 1, false, true)});
  if (with_k) {
    v.push_back({"k too big", {make(DType::Float32, {3, 4}, s++)}, args(1, 5, false, true)});
    v.push_back({"k zero", {make(DType::Float32, {3, 4}, s++)}, args(1, 0, false, true)});
    v.push_back({"k negative", {make(DType::Float32, {3, 4}, s++)}, args(1, -1, false, true)});
    v.push_back({"k all", {make(DType::Float64, {3, 4}, s++)}, args(1, 4, false, true)});
  }
  return v;
}

std::vector<Sample> matmul_samples() {
  std::vector<Sample> v;
  uint64_t s = 1500;
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {{{3, 4}, {4, 5}},
                                                                                     {{4}, {4}},
                                                                                     {{4}, {4, 3}},
                                                                                     {{3, 4}, {4}},
                                                                                     {{2, 3, 4}, {4, 5}},
                                                                                     {{2, 3, 4}, {2, 4, 5}},
                                                                                     {{2, 1, 3, 4}, {3, 4, 2}},
                                                                                     {{4}, {2, 4, 3}},
                                                                                     {{2, 3, 4}, {4}},
                                                                                     {{0, 4}, {4, 3}},
                                                                                     {{3, 0}, {0, 2}},
                                                                                     {{3, 4}, {5, 2}},
                                                                                     {{}, {3}},
                                                                                     {{2, 3, 4}, {3, 4, 5}}};
  for (auto [a, b] : shapes) {
    std::string tag;
    for (auto x : a) tag += std::to_string(x) + "x";
    tag += " @ ";
    for (auto x : b) tag += std::to_string(x) + "x";
    for (DType t : {DType::Float32, DType::Float64})
      v.push_back({tag + " " + short_name(t), {make(t, a, s++), make(t, b, s++)}});
  }
  for (DType t : {DType::Float16, DType::BFloat16, DType::Int64, DType::Int32, DType::UInt8, DType::Bool, DType::Int8,
                  DType::Int16})
    v.push_back({std::string("3x4 @ 4x5 ") + short_name(t), {make(t, {3, 4}, s++), make(t, {4, 5}, s++)}});
  v.push_back({"mixed f32 f64", {make(DType::Float32, {3, 4}, s++), make(DType::Float64, {4, 5}, s++)}});
  v.push_back({"transposed",
               {with_layout(make(DType::Float64, {3, 4}, s++), "transposed"),
                with_layout(make(DType::Float64, {4, 5}, s++), "stepped")}});
  v.push_back(
      {"expanded", {with_layout(make(DType::Float64, {3, 4}, s++), "expanded", 0), make(DType::Float64, {4, 2}, s++)}});
  v.push_back({"special", {special(DType::Float64, {3, 4}), make(DType::Float64, {4, 2}, s++)}});
  v.push_back({"large k f32", {make(DType::Float32, {8, 300}, s++), make(DType::Float32, {300, 9}, s++)}});
  return v;
}

std::vector<Sample> linear_samples() {
  std::vector<Sample> v;
  uint64_t s = 1600;
  for (DType t : kFloatDTypes)
    v.push_back({std::string("2-d ") + short_name(t), {make(t, {3, 4}, s++), make(t, {5, 4}, s++), make(t, {5}, s++)}});
  v.push_back(
      {"3-d",
       {make(DType::Float64, {2, 3, 4}, s++), make(DType::Float64, {5, 4}, s++), make(DType::Float64, {5}, s++)}});
  v.push_back(
      {"1-d", {make(DType::Float64, {4}, s++), make(DType::Float64, {5, 4}, s++), make(DType::Float64, {5}, s++)}});
  v.push_back({"no bias", {make(DType::Float64, {3, 4}, s++), make(DType::Float64, {5, 4}, s++)}, {{"no_bias", true}}});
  v.push_back({"empty batch",
               {make(DType::Float32, {0, 4}, s++), make(DType::Float32, {5, 4}, s++), make(DType::Float32, {5}, s++)}});
  v.push_back({"transposed weight",
               {make(DType::Float64, {3, 4}, s++), with_layout(make(DType::Float64, {5, 4}, s++), "transposed"),
                make(DType::Float64, {5}, s++)}});
  v.push_back({"bad bias",
               {make(DType::Float32, {3, 4}, s++), make(DType::Float32, {5, 4}, s++), make(DType::Float32, {4}, s++)}});
  v.push_back({"bad weight",
               {make(DType::Float32, {3, 4}, s++), make(DType::Float32, {5, 3}, s++), make(DType::Float32, {5}, s++)}});
  v.push_back(
      {"int", {make(DType::Int64, {3, 4}, s++), make(DType::Int64, {5, 4}, s++), make(DType::Int64, {5}, s++)}});
  return v;
}

std::vector<Sample> einsum_samples() {
  std::vector<Sample> v;
  uint64_t s = 1700;
  auto f = [&](std::vector<int64_t> sh, DType t = DType::Float64) { return make(t, std::move(sh), s++); };
  v.push_back({"matmul", {f({3, 4}), f({4, 5})}, {{"equation", "ij,jk->ik"}}});
  v.push_back({"matmul f32", {f({3, 4}, DType::Float32), f({4, 5}, DType::Float32)}, {{"equation", "ij,jk->ik"}}});
  v.push_back({"batched", {f({2, 3, 4}), f({2, 4, 5})}, {{"equation", "bij,bjk->bik"}}});
  v.push_back({"trace", {f({3, 3})}, {{"equation", "ii->"}}});
  v.push_back({"diag", {f({3, 3})}, {{"equation", "ii->i"}}});
  v.push_back({"transpose", {f({3, 4})}, {{"equation", "ij->ji"}}});
  v.push_back({"sum", {f({3, 4})}, {{"equation", "ij->"}}});
  v.push_back({"implicit", {f({3, 4}), f({4, 5})}, {{"equation", "ij,jk"}}});
  v.push_back({"outer", {f({3}), f({4})}, {{"equation", "i,j->ij"}}});
  v.push_back({"dot", {f({4}), f({4})}, {{"equation", "i,i->"}}});
  v.push_back({"ellipsis", {f({2, 3, 4}), f({4, 5})}, {{"equation", "...ij,jk->...ik"}}});
  v.push_back({"three operands", {f({2, 3}), f({3, 4}), f({4, 5})}, {{"equation", "ij,jk,kl->il"}}});
  v.push_back({"broadcast 1", {f({1, 3}), f({2, 3})}, {{"equation", "ij,ij->ij"}}});
  v.push_back({"spaces", {f({3, 4}), f({4, 5})}, {{"equation", "ij, jk -> ik"}}});
  v.push_back({"bad size", {f({3, 4}), f({5, 5})}, {{"equation", "ij,jk->ik"}}});
  v.push_back({"bad count", {f({3, 4})}, {{"equation", "ij,jk->ik"}}});
  v.push_back({"bad output", {f({3, 4})}, {{"equation", "ij->k"}}});
  v.push_back({"empty", {f({0, 4}), f({4, 5})}, {{"equation", "ij,jk->ik"}}});
  v.push_back({"mixed dtypes", {f({3, 4}, DType::Float32), f({4, 5})}, {{"equation", "ij,jk->ik"}}});
  v.push_back({"int", {f({3, 4}, DType::Int64), f({4, 5}, DType::Int64)}, {{"equation", "ij,jk->ik"}}});
  return v;
}

}  // namespace

void add_reduce_rows(std::vector<Row>& rows) {
  const std::vector<bool> d1 = {true};
  rows.push_back(both("sum", "lambda x, dim, keepdim: torch.sum(x, dim or None, keepdim=keepdim)",
                      DDL_SWEEP_REDUCE(sum), d1, reduce_samples(), true));
  rows.push_back(both("mean", "lambda x, dim, keepdim: torch.mean(x, dim or None, keepdim=keepdim)",
                      DDL_SWEEP_REDUCE(mean), d1, reduce_samples(), true));
  rows.push_back(both(
      "var", "lambda x, dim, keepdim, correction: torch.var(x, dim or None, correction=correction, keepdim=keepdim)",
      [](const auto& in, const json& a) {
        return var(in[0], ints(a, "dim"), i64(a, "correction"), flag(a, "keepdim"));
      },
      d1, var_samples(), true));
  rows.push_back(both("amax", "lambda x, dim, keepdim: torch.amax(x, dim, keepdim=keepdim)", DDL_SWEEP_REDUCE(amax), d1,
                      reduce_samples(), true));
  rows.push_back(both("amin", "lambda x, dim, keepdim: torch.amin(x, dim, keepdim=keepdim)", DDL_SWEEP_REDUCE(amin), d1,
                      reduce_samples(), true));
  rows.push_back(both("argmax", "lambda x, dim, keepdim: torch.argmax(x, dim, keepdim=keepdim)",
                      DDL_SWEEP_DIM_KEEP(argmax), {}, dim_samples(kAllDTypes, true)));
  rows.push_back(both("argmin", "lambda x, dim, keepdim: torch.argmin(x, dim, keepdim=keepdim)",
                      DDL_SWEEP_DIM_KEEP(argmin), {}, dim_samples(kAllDTypes, true)));
  rows.push_back(both("max_dim", "lambda x, dim, keepdim: torch.max(x, dim, keepdim=keepdim)",
                      DDL_SWEEP_DIM_KEEP(max_dim), d1, dim_samples(kAllDTypes, true, true, false), false,
                      {{"aliases", {"max"}}}));  // x.max(dim) in PyTorch's spelling
  rows.push_back(both("min_dim", "lambda x, dim, keepdim: torch.min(x, dim, keepdim=keepdim)",
                      DDL_SWEEP_DIM_KEEP(min_dim), d1, dim_samples(kAllDTypes, true, true, false), false,
                      {{"aliases", {"min"}}}));
  rows.push_back(both(
      "sum_to", "lambda x, shape: torch.ops.aten.sum_to_size(x, shape) if len(shape) else x.sum()",
      [](const auto& in, const json& a) { return sum_to(in[0], Shape(ints(a, "shape"))); }, d1, sum_to_samples(),
      true));
  rows.push_back(
      both("cumsum", "lambda x, dim: torch.cumsum(x, dim)", DDL_SWEEP_DIM(cumsum), d1, dim_samples(kAllDTypes, false)));
  rows.push_back(ten_only("cumprod", "lambda x, dim: torch.cumprod(x, dim)", DDL_SWEEP_DIM(cumprod),
                          dim_samples(kAllDTypes, false)));
  rows.push_back(ten_only("cumsum_backward",
                          "lambda g, dim: torch.flip(torch.cumsum(torch.flip(g, [dim]), dim), [dim])",
                          DDL_SWEEP_DIM(cumsum_backward), dim_samples(kFloatDTypes, false)));
  rows.push_back(both("softmax", "lambda x, dim: torch.softmax(x, dim)", DDL_SWEEP_DIM(softmax), d1,
                      dim_samples(kAllDTypes, false), true));
  rows.push_back(both("log_softmax", "lambda x, dim: torch.log_softmax(x, dim)", DDL_SWEEP_DIM(log_softmax), d1,
                      dim_samples(kAllDTypes, false), true));
  rows.push_back(both(
      "sort", "lambda x, dim, descending, stable: torch.sort(x, dim=dim, descending=descending, stable=stable)",
      [](const auto& in, const json& a) {
        return sort(in[0], i64(a, "dim"), flag(a, "descending"), flag(a, "stable"));
      },
      d1, sort_samples(false, false)));
  rows.push_back(both(
      "argsort", "lambda x, dim, descending, stable: torch.sort(x, dim=dim, descending=descending, stable=True)[1]",
      [](const auto& in, const json& a) { return argsort(in[0], i64(a, "dim"), flag(a, "descending"), true); }, {},
      sort_samples(false, false)));
  rows.push_back(both("topk", "lambda x, k, dim, largest, sorted: torch.topk(x, k, dim, largest, sorted)",
                      [](const auto& in, const json& a) {
                        return topk(in[0], i64(a, "k"), i64(a, "dim"), flag(a, "largest"), flag(a, "sorted"));
                      },
                      d1, sort_samples(true, false), false, {{"tie_indices", 1}}));
  rows.push_back(both(
      "kthvalue", "lambda x, k, dim, keepdim: torch.kthvalue(x, k, dim, keepdim)",
      [](const auto& in, const json& a) { return kthvalue(in[0], i64(a, "k"), i64(a, "dim"), flag(a, "keepdim")); }, d1,
      sort_samples(true, true), false, {{"tie_indices", 1}}));
  rows.push_back(both(
      "matmul", "lambda x, y: torch.matmul(x, y)", [](const auto& in, const json&) { return matmul(in[0], in[1]); },
      {true, true}, matmul_samples(), true));
  rows.push_back(both(
      "linear", "lambda x, w, b=None, no_bias=False: torch.nn.functional.linear(x, w, b)",
      [](const auto& in, const json& a) {
        using V = std::decay_t<decltype(in[0])>;
        return linear(in[0], in[1], flag(a, "no_bias") ? V() : in[2]);
      },
      {true, true, true}, linear_samples(), true));
  rows.push_back(both(
      "einsum", "lambda *xs, equation: torch.einsum(equation, *xs)",
      [](const auto& in, const json& a) { return einsum(a["equation"].get<std::string>(), in); }, {true, true, true},
      einsum_samples()));
}

}  // namespace ddl::sweep
