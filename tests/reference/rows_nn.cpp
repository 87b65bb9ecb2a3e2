// Rows: pooling and normalization (tensor/ops/pool.h, adaptive_pool.h, norm.h, autograd/ops/pool.h, norm.h,
// layer_norm.h).
#include "sweep.h"

namespace ddl::sweep {
namespace {

Pool2dParams pool_params(const json& a) {
  Pool2dParams p;
  p.kernel = pair2(a, "kernel", 2);
  p.stride = a.contains("stride") ? pair2(a, "stride", 2) : p.kernel;
  p.padding = pair2(a, "padding", 0);
  p.dilation = pair2(a, "dilation", 1);
  p.ceil_mode = flag(a, "ceil_mode");
  p.count_include_pad = flag(a, "count_include_pad", true);
  return p;
}

std::vector<Sample> pool_samples(bool dilation) {
  std::vector<Sample> v;
  uint64_t s = 4000;
  auto f = [&](std::vector<int64_t> sh, DType t = DType::Float64) { return make(t, std::move(sh), s++); };
  for (DType t : kAllDTypes)
    v.push_back({std::string("2x2 ") + short_name(t), {f({2, 3, 6, 6}, t)}, {{"kernel", {2}}}});
  v.push_back({"3x3 stride 2 pad 1", {f({1, 2, 7, 7})}, {{"kernel", {3}}, {"stride", {2}}, {"padding", {1}}}});
  v.push_back({"rect", {f({1, 2, 6, 8})}, {{"kernel", {2, 3}}, {"stride", {1, 2}}, {"padding", {1, 0}}}});
  v.push_back({"ceil", {f({1, 1, 7, 7})}, {{"kernel", {2}}, {"ceil_mode", true}}});
  v.push_back(
      {"ceil pad", {f({1, 1, 6, 6})}, {{"kernel", {3}}, {"stride", {2}}, {"padding", {1}}, {"ceil_mode", true}}});
  v.push_back({"unbatched", {f({2, 6, 6})}, {{"kernel", {2}}}});
  v.push_back({"f32 overlapping", {f({2, 2, 5, 5}, DType::Float32)}, {{"kernel", {3}}, {"stride", {1}}}});
  v.push_back({"transposed", {with_layout(f({1, 2, 6, 6}), "transposed")}, {{"kernel", {2}}}});
  v.push_back({"special", {special(DType::Float64, {1, 1, 3, 4})}, {{"kernel", {2}}, {"stride", {1}}}});
  v.push_back({"ties", {of(DType::Float64, {1, 1, 2, 4}, {1, 1, 2, 2, 1, 1, 2, 2})}, {{"kernel", {2}}}});
  v.push_back({"kernel bigger than input", {f({1, 1, 2, 2})}, {{"kernel", {3}}}});
  v.push_back({"padding too big", {f({1, 1, 6, 6})}, {{"kernel", {2}}, {"padding", {2}}}});
  v.push_back({"zero stride", {f({1, 1, 6, 6})}, {{"kernel", {2}}, {"stride", {0}}}});
  v.push_back({"empty batch", {f({0, 2, 4, 4})}, {{"kernel", {2}}}});
  v.push_back({"2-d input", {f({6, 6})}, {{"kernel", {2}}}});
  if (dilation) {
    v.push_back({"dilation 2", {f({1, 2, 7, 7})}, {{"kernel", {2}}, {"stride", {1}}, {"dilation", {2}}}});
    v.push_back(
        {"dilation pad", {f({1, 1, 8, 8})}, {{"kernel", {3}}, {"stride", {2}}, {"padding", {1}}, {"dilation", {2}}}});
  } else {
    v.push_back({"exclude pad",
                 {f({1, 2, 7, 7})},
                 {{"kernel", {3}}, {"stride", {2}}, {"padding", {1}}, {"count_include_pad", false}}});
    v.push_back(
        {"ceil exclude pad",
         {f({1, 1, 6, 6})},
         {{"kernel", {3}}, {"stride", {2}}, {"padding", {1}}, {"ceil_mode", true}, {"count_include_pad", false}}});
  }
  return v;
}

const char* kMaxPoolTorch =
    "lambda x, kernel, stride=None, padding=[0], dilation=[1], ceil_mode=False, simple=False: "
    "torch.nn.functional.max_pool2d(x, kernel, stride or kernel, padding, dilation, ceil_mode)";
const char* kAvgPoolTorch =
    "lambda x, kernel, stride=None, padding=[0], ceil_mode=False, count_include_pad=True, simple=False: "
    "torch.nn.functional.avg_pool2d(x, kernel, stride or kernel, padding, ceil_mode, count_include_pad)";

std::vector<Sample> simple_pool(std::vector<Sample> v) {
  uint64_t s = 4100;
  v.push_back({"int kernel", {make(DType::Float64, {1, 2, 6, 6}, s++)}, {{"kernel", {3}}, {"simple", true}}});
  v.push_back({"int kernel stride",
               {make(DType::Float64, {1, 2, 6, 6}, s++)},
               {{"kernel", {2}}, {"stride", {1}}, {"simple", true}}});
  return v;
}

std::vector<Sample> adaptive_samples() {
  std::vector<Sample> v;
  uint64_t s = 4200;
  auto f = [&](std::vector<int64_t> sh, DType t = DType::Float64) { return make(t, std::move(sh), s++); };
  for (DType t : kAllDTypes)
    v.push_back({std::string("6x6->3x3 ") + short_name(t), {f({2, 2, 6, 6}, t)}, {{"out", {3, 3}}}});
  v.push_back({"uneven", {f({1, 2, 7, 5})}, {{"out", {3, 2}}}});
  v.push_back({"to 1x1", {f({2, 3, 4, 4})}, {{"out", {1, 1}}}});
  v.push_back({"upsample", {f({1, 1, 2, 3})}, {{"out", {5, 4}}}});
  v.push_back({"unbatched", {f({2, 5, 5})}, {{"out", {2, 2}}}});
  v.push_back({"transposed f32", {with_layout(f({1, 2, 6, 6}, DType::Float32), "transposed")}, {{"out", {4, 3}}}});
  v.push_back({"special", {special(DType::Float64, {1, 1, 3, 4})}, {{"out", {2, 2}}}});
  v.push_back({"zero output", {f({1, 1, 4, 4})}, {{"out", {0, 2}}}});
  v.push_back({"empty input", {f({1, 1, 0, 4})}, {{"out", {2, 2}}}});
  v.push_back({"2-d input", {f({4, 4})}, {{"out", {2, 2}}}});
  return v;
}

std::vector<Sample> batch_norm_samples() {
  std::vector<Sample> v;
  uint64_t s = 4300;
  auto f = [&](std::vector<int64_t> sh, DType t = DType::Float64, double lo = -2, double hi = 2) {
    return make(t, std::move(sh), s++, lo, hi);
  };
  for (bool training : {true, false}) {
    const std::string tr = training ? "train " : "eval ";
    const json a = {{"training", training}, {"momentum", 0.1}, {"eps", 1e-5}};
    for (DType t : {DType::Float32, DType::Float64}) {
      const std::string n = short_name(t);
      v.push_back({tr + "4-d " + n, {f({4, 3, 2, 2}, t), f({3}, t), f({3}, t), f({3}, t), f({3}, t, 0.5, 2)}, a});
      v.push_back({tr + "2-d " + n, {f({5, 3}, t), f({3}, t), f({3}, t), f({3}, t), f({3}, t, 0.5, 2)}, a});
    }
    v.push_back({tr + "3-d", {f({2, 3, 4}), f({3}), f({3}), f({3}), f({3}, DType::Float64, 0.5, 2)}, a});
    v.push_back({tr + "f16 input",
                 {f({4, 3, 2, 2}, DType::Float16), f({3}, DType::Float32), f({3}, DType::Float32),
                  f({3}, DType::Float32), f({3}, DType::Float32, 0.5, 2)},
                 a});
    v.push_back({tr + "bf16 all",
                 {f({4, 3, 2, 2}, DType::BFloat16), f({3}, DType::BFloat16), f({3}, DType::BFloat16),
                  f({3}, DType::BFloat16), f({3}, DType::BFloat16, 0.5, 2)},
                 a});
    v.push_back({tr + "transposed",
                 {with_layout(f({4, 3, 2, 2}), "transposed"), f({3}), f({3}), f({3}), f({3}, DType::Float64, 0.5, 2)},
                 a});
    v.push_back({tr + "large mean f32",
                 {f({4, 3, 2, 2}, DType::Float32, 1000, 1001), f({3}, DType::Float32), f({3}, DType::Float32),
                  f({3}, DType::Float32), f({3}, DType::Float32, 0.5, 2)},
                 a});
    v.push_back({tr + "wrong channels", {f({4, 3, 2, 2}), f({2}), f({2}), f({2}), f({2}, DType::Float64, 0.5, 2)}, a});
    v.push_back({tr + "1-d input", {f({3}), f({3}), f({3}), f({3}), f({3}, DType::Float64, 0.5, 2)}, a});
    v.push_back({tr + "int", {f({4, 3}, DType::Int64), f({3}), f({3}), f({3}), f({3}, DType::Float64, 0.5, 2)}, a});
  }
  v.push_back({"train one value per channel",
               {f({1, 3}), f({3}), f({3}), f({3}), f({3}, DType::Float64, 0.5, 2)},
               {{"training", true}, {"momentum", 0.1}, {"eps", 1e-5}}});
  v.push_back({"train momentum 1 eps 0.1",
               {f({4, 3}), f({3}), f({3}), f({3}), f({3}, DType::Float64, 0.5, 2)},
               {{"training", true}, {"momentum", 1.0}, {"eps", 0.1}}});
  v.push_back(
      {"train no affine", {f({4, 3})}, {{"training", true}, {"momentum", 0.1}, {"eps", 1e-5}, {"no_affine", true}}});
  return v;
}

std::vector<Sample> layer_norm_samples() {
  std::vector<Sample> v;
  uint64_t s = 4400;
  auto f = [&](std::vector<int64_t> sh, DType t = DType::Float64, double lo = -2, double hi = 2) {
    return make(t, std::move(sh), s++, lo, hi);
  };
  for (DType t : kFloatDTypes)
    v.push_back(
        {std::string("last ") + short_name(t), {f({3, 5}, t), f({5}, t), f({5}, t)}, {{"shape", {5}}, {"eps", 1e-5}}});
  v.push_back({"two dims", {f({2, 3, 4}), f({3, 4}), f({3, 4})}, {{"shape", {3, 4}}, {"eps", 1e-5}}});
  v.push_back({"no affine", {f({2, 3, 4})}, {{"shape", {4}}, {"eps", 1e-5}}});
  v.push_back({"eps 0.1", {f({2, 4}), f({4}), f({4})}, {{"shape", {4}}, {"eps", 0.1}}});
  v.push_back({"constant rows",
               {of(DType::Float64, {2, 3}, {1, 1, 1, 2, 2, 2}), f({3}), f({3})},
               {{"shape", {3}}, {"eps", 1e-5}}});
  v.push_back({"large mean f32",
               {f({2, 64}, DType::Float32, 1e4, 1e4 + 1), f({64}, DType::Float32), f({64}, DType::Float32)},
               {{"shape", {64}}, {"eps", 1e-5}}});
  v.push_back({"transposed", {with_layout(f({4, 3}), "transposed"), f({3}), f({3})}, {{"shape", {3}}, {"eps", 1e-5}}});
  v.push_back({"wrong shape", {f({2, 3, 4}), f({3}), f({3})}, {{"shape", {3}}, {"eps", 1e-5}}});
  v.push_back({"empty batch", {f({0, 4}), f({4}), f({4})}, {{"shape", {4}}, {"eps", 1e-5}}});
  return v;
}

std::vector<Sample> group_norm_samples() {
  std::vector<Sample> v;
  uint64_t s = 4500;
  auto f = [&](std::vector<int64_t> sh, DType t = DType::Float64) { return make(t, std::move(sh), s++); };
  for (DType t : kFloatDTypes)
    v.push_back({std::string("4-d ") + short_name(t),
                 {f({2, 6, 2, 2}, t), f({6}, t), f({6}, t)},
                 {{"groups", 3}, {"eps", 1e-5}}});
  v.push_back({"3-d", {f({2, 4, 5}), f({4}), f({4})}, {{"groups", 2}, {"eps", 1e-5}}});
  v.push_back({"2-d", {f({3, 4}), f({4}), f({4})}, {{"groups", 4}, {"eps", 1e-5}}});
  v.push_back({"one group", {f({2, 4, 3}), f({4}), f({4})}, {{"groups", 1}, {"eps", 1e-5}}});
  v.push_back({"no affine", {f({2, 4, 3})}, {{"groups", 2}, {"eps", 1e-5}}});
  v.push_back({"not divisible", {f({2, 6, 3}), f({6}), f({6})}, {{"groups", 4}, {"eps", 1e-5}}});
  v.push_back(
      {"transposed", {with_layout(f({2, 4, 3}), "transposed"), f({4}), f({4})}, {{"groups", 2}, {"eps", 1e-5}}});
  return v;
}

}  // namespace

void add_nn_rows(std::vector<Row>& rows) {
  const std::vector<bool> d1 = {true};
  rows.push_back(both(
      "max_pool2d", kMaxPoolTorch,
      [](const auto& in, const json& a) {
        using V = std::decay_t<decltype(in[0])>;
        if (flag(a, "simple")) {  // the (kernel, stride) overload: Variable only
          if constexpr (!std::is_same_v<V, Variable>) {
            throw Skip{};
          } else {
            const int64_t st = a.contains("stride") ? a["stride"][0].get<int64_t>() : 0;
            return V(max_pool2d(in[0], a["kernel"][0].get<int64_t>(), st));
          }
        }
        return V(max_pool2d(in[0], pool_params(a)));
      },
      d1, simple_pool(pool_samples(true)), true));
  rows.push_back(ten_only(
      "max_pool2d_with_indices",
      "lambda x, kernel, stride=None, padding=[0], dilation=[1], ceil_mode=False: "
      "torch.nn.functional.max_pool2d(x, kernel, stride or kernel, padding, dilation, ceil_mode, True)",
      [](const auto& in, const json& a) { return max_pool2d_with_indices(in[0], pool_params(a)); },
      pool_samples(true)));
  rows.push_back(both(
      "avg_pool2d", kAvgPoolTorch,
      [](const auto& in, const json& a) {
        using V = std::decay_t<decltype(in[0])>;
        if (flag(a, "simple")) {  // the (kernel, stride) overload: Variable only
          if constexpr (!std::is_same_v<V, Variable>) {
            throw Skip{};
          } else {
            const int64_t st = a.contains("stride") ? a["stride"][0].get<int64_t>() : 0;
            return V(avg_pool2d(in[0], a["kernel"][0].get<int64_t>(), st));
          }
        }
        return V(avg_pool2d(in[0], pool_params(a)));
      },
      d1, simple_pool(pool_samples(false)), true));
  rows.push_back(both(
      "adaptive_avg_pool2d", "lambda x, out: torch.nn.functional.adaptive_avg_pool2d(x, out)",
      [](const auto& in, const json& a) { return adaptive_avg_pool2d(in[0], pair2(a, "out", 1)); }, d1,
      adaptive_samples(), true));
  rows.push_back(both(
      "adaptive_max_pool2d", "lambda x, out: torch.nn.functional.adaptive_max_pool2d(x, out)",
      [](const auto& in, const json& a) {
        const auto r = adaptive_max_pool2d(in[0], pair2(a, "out", 1));
        if constexpr (std::is_same_v<decltype(r), const Variable>)
          return outs(r);
        else
          return outs(r.first);  // its indices: the ten_only row below
      },
      d1, adaptive_samples(), true));
  rows.push_back(ten_only(
      "adaptive_max_pool2d", "lambda x, out: torch.nn.functional.adaptive_max_pool2d(x, out, True)",
      [](const auto& in, const json& a) { return adaptive_max_pool2d(in[0], pair2(a, "out", 1)); },
      adaptive_samples()));  // the Tensor overload returns the indices too
  rows.push_back(var_only(
      "adaptive_max_pool2d_with_indices", "lambda x, out: torch.nn.functional.adaptive_max_pool2d(x, out, True)",
      [](const auto& in, const json& a) { return adaptive_max_pool2d_with_indices(in[0], pair2(a, "out", 1)); }, d1,
      adaptive_samples(), true));
  // batch_norm: the Variable overload returns y (and we return the updated running statistics); the Tensor
  // overload returns y, save_mean and save_invstd, as aten's native_batch_norm does.
  rows.push_back(var_only(
      "batch_norm",
      "lambda x, w=None, b=None, rm=None, rv=None, training=True, momentum=0.1, eps=1e-5, no_affine=False: "
      "(torch.nn.functional.batch_norm(x, rm, rv, w, b, training, momentum, eps), rm, rv)",
      [](const auto& in, const json& a) {
        using V = std::decay_t<decltype(in[0])>;
        const bool aff = !flag(a, "no_affine");
        const Tensor rm = aff ? in_t(in[3]) : Tensor(), rv = aff ? in_t(in[4]) : Tensor();
        const V y = batch_norm(in[0], aff ? in[1] : V(), aff ? in[2] : V(), rm, rv, flag(a, "training"),
                               f64(a, "momentum"), f64(a, "eps"));
        if (!aff) return Outs{y, V(), V()};
        return Outs{y, Variable(rm), Variable(rv)};
      },
      {true, true, true}, batch_norm_samples(), true));
  rows.push_back(ten_only(
      "batch_norm",
      "lambda x, w=None, b=None, rm=None, rv=None, training=True, momentum=0.1, eps=1e-5, no_affine=False: "
      "NBN(x, w, b, rm, rv, training, momentum, eps)",
      [](const auto& in, const json& a) {
        const bool aff = !flag(a, "no_affine");
        return batch_norm(in[0], aff ? in[1] : Tensor(), aff ? in[2] : Tensor(), aff ? in[3] : Tensor(),
                          aff ? in[4] : Tensor(), flag(a, "training"), f64(a, "momentum"), f64(a, "eps"));
      },
      batch_norm_samples()));
  rows.push_back(var_only(
      "layer_norm",
      "lambda x, w=None, b=None, shape=None, eps=1e-5: torch.nn.functional.layer_norm(x, shape, w, b, eps)",
      [](const auto& in, const json& a) {
        using V = std::decay_t<decltype(in[0])>;
        return layer_norm(in[0], Shape(ints(a, "shape")), in.size() > 1 ? in[1] : V(), in.size() > 2 ? in[2] : V(),
                          f64(a, "eps"));
      },
      {true, true, true}, layer_norm_samples(), true));
  rows.push_back(var_only(
      "group_norm",
      "lambda x, w=None, b=None, groups=1, eps=1e-5: torch.nn.functional.group_norm(x, groups, w, b, eps)",
      [](const auto& in, const json& a) {
        using V = std::decay_t<decltype(in[0])>;
        return group_norm(in[0], i64(a, "groups"), in.size() > 1 ? in[1] : V(), in.size() > 2 ? in[2] : V(),
                          f64(a, "eps"));
      },
      {true, true, true}, group_norm_samples(), true));
  {
    std::vector<Sample> s;
    for (const Sample& x : layer_norm_samples()) {
      if (x.inputs.size() != 3) continue;
      Sample y = x;
      y.inputs.resize(1);
      y.args = {{"k", static_cast<int64_t>(x.args["shape"].size())}, {"eps", x.args["eps"]}};
      s.push_back(y);
    }
    s.push_back({"k too big", {make(DType::Float64, {2, 3}, 4490)}, {{"k", 3}, {"eps", 1e-5}}});
    s.push_back({"k zero", {make(DType::Float64, {2, 3}, 4491)}, {{"k", 0}, {"eps", 1e-5}}});
    rows.push_back(var_only(
        "normalize_trailing", "lambda x, k, eps: torch.nn.functional.layer_norm(x, LAST_DIMS(x, k), None, None, eps)",
        [](const auto& in, const json& a) { return normalize_trailing(in[0], i64(a, "k"), f64(a, "eps")); }, d1, s,
        true));
  }
}

}  // namespace ddl::sweep
