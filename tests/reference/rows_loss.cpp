// Rows: losses (tensor/ops/softmax.h, autograd/ops/loss.h) and the softmax/sort Tensor backward helpers.
#include <cmath>

#include "sweep.h"

namespace ddl::sweep {
namespace {

// Rows of log-probabilities along dim 1 of an [N, C, ...] input (log_softmax in doubles).
Input log_probs(Input in) {
  const int64_t n = in.shape[0], c = in.shape[1];
  int64_t inner = 1;
  for (size_t i = 2; i < in.shape.size(); ++i) inner *= in.shape[i];
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t k = 0; k < inner; ++k) {
      double m = -INFINITY, z = 0;
      for (int64_t j = 0; j < c; ++j) m = std::max(m, in.values[(b * c + j) * inner + k]);
      for (int64_t j = 0; j < c; ++j) z += std::exp(in.values[(b * c + j) * inner + k] - m);
      for (int64_t j = 0; j < c; ++j) in.values[(b * c + j) * inner + k] -= m + std::log(z);
    }
  }
  return in;
}

Input targets(std::vector<int64_t> shape, int64_t classes, uint64_t seed, bool with_ignored = false) {
  Input t = make(DType::Float64, std::move(shape), seed, 0, static_cast<double>(classes));
  t.dtype = DType::Int64;
  for (size_t i = 0; i < t.values.size(); ++i) {
    t.values[i] = std::floor(t.values[i]);
    if (with_ignored && i % 3 == 1) t.values[i] = -100;
  }
  return t;
}

// Classification inputs (logits or log-probabilities, targets, optional class weights) with every reduction.
std::vector<Sample> class_samples(bool log_prob, bool weights, bool smoothing) {
  std::vector<Sample> v;
  uint64_t s = 6000;
  auto x = [&](std::vector<int64_t> sh, DType t = DType::Float64) {
    Input in = make(DType::Float64, std::move(sh), s++, -3, 3);
    if (log_prob) in = log_probs(in);
    in.dtype = t;
    return in;
  };
  for (const char* r : {"mean", "sum", "none"}) {
    const std::string rs = r;
    const json a = {{"reduction", rs}};
    for (DType t : kFloatDTypes) v.push_back({rs + " 2-d " + short_name(t), {x({4, 5}, t), targets({4}, 5, s++)}, a});
    v.push_back({rs + " 4-d", {x({2, 3, 2, 2}), targets({2, 2, 2}, 3, s++)}, a});
    v.push_back({rs + " ignore_index", {x({6, 4}), targets({6}, 4, s++, true)}, a});
    if (weights)
      v.push_back(
          {rs + " weights", {x({6, 4}), targets({6}, 4, s++, true), make(DType::Float64, {4}, s++, 0.1, 2)}, a});
  }
  auto a = [](json extra) {
    json j = {{"reduction", "mean"}};
    for (auto& [k, val] : extra.items()) j[k] = val;
    return j;
  };
  v.push_back({"all ignored", {x({3, 4}), of(DType::Int64, {3}, {-100, -100, -100})}, a({})});
  v.push_back({"custom ignore_index", {x({4, 3}), of(DType::Int64, {4}, {0, 2, 1, 2})}, a({{"ignore_index", 2}})});
  v.push_back({"1-d input", {x({1, 5}), of(DType::Int64, {}, {3})}, a({})});
  v.back().inputs[0].shape = {5};
  v.push_back({"target out of range", {x({3, 4}), of(DType::Int64, {3}, {0, 4, 1})}, a({})});
  v.push_back({"negative target", {x({3, 4}), of(DType::Int64, {3}, {0, -1, 1})}, a({})});
  v.push_back({"int32 target", {x({3, 4}), of(DType::Int32, {3}, {0, 2, 1})}, a({})});
  v.push_back({"int8 target", {x({3, 4}), of(DType::Int8, {3}, {0, 2, 1})}, a({})});
  v.push_back({"int16 target", {x({3, 4}), of(DType::Int16, {3}, {0, 2, 1})}, a({})});
  v.push_back({"float target shape mismatch", {x({3, 4}), of(DType::Float64, {3}, {0, 2, 1})}, a({})});
  v.push_back({"wrong batch", {x({3, 4}), of(DType::Int64, {2}, {0, 1})}, a({})});
  v.push_back({"empty batch", {x({0, 4}), of(DType::Int64, {0}, {})}, a({})});
  v.push_back({"empty batch sum", {x({0, 4}), of(DType::Int64, {0}, {})}, a({{"reduction", "sum"}})});
  v.push_back({"special",
               {of(DType::Float64, {2, 3}, {INFINITY, 0, 1, -INFINITY, 0, 1}), of(DType::Int64, {2}, {0, 0})},
               a({})});
  if (weights) {
    v.push_back({"weights all ignored",
                 {x({2, 3}), of(DType::Int64, {2}, {-100, -100}), make(DType::Float64, {3}, s++, 0.1, 2)},
                 a({})});
    v.push_back({"weights wrong size",
                 {x({2, 3}), of(DType::Int64, {2}, {0, 1}), make(DType::Float64, {4}, s++, 0.1, 2)},
                 a({})});
  }
  if (smoothing) {
    for (double e : {0.1, 1.0}) {
      v.push_back({"smoothing " + std::to_string(e), {x({4, 5}), targets({4}, 5, s++)}, a({{"label_smoothing", e}})});
      v.push_back({"smoothing ignore " + std::to_string(e),
                   {x({6, 4}), targets({6}, 4, s++, true)},
                   a({{"label_smoothing", e}, {"reduction", "sum"}})});
    }
    v.push_back({"smoothing out of range", {x({4, 5}), targets({4}, 5, s++)}, a({{"label_smoothing", 1.5}})});
    Input probs = make(DType::Float64, {4, 5}, s++, 0, 1);
    v.push_back({"probability targets", {x({4, 5}), probs}, a({})});
  }
  return v;
}

std::vector<Sample> pair_loss_samples(double lo, double hi, double ylo, double yhi) {
  std::vector<Sample> v;
  uint64_t s = 6200;
  auto f = [&](std::vector<int64_t> sh, DType t = DType::Float64, bool target = false) {
    return make(t, std::move(sh), s++, target ? ylo : lo, target ? yhi : hi);
  };
  for (const char* r : {"mean", "sum", "none"}) {
    const std::string rs = r;
    const json a = {{"reduction", rs}};
    for (DType t : kFloatDTypes) v.push_back({rs + " " + short_name(t), {f({3, 4}, t), f({3, 4}, t, true)}, a});
    v.push_back({rs + " 0-d", {f({}), f({}, DType::Float64, true)}, a});
    v.push_back({rs + " empty", {f({0, 3}), f({0, 3}, DType::Float64, true)}, a});
  }
  const json m = {{"reduction", "mean"}};
  v.push_back({"broadcast", {f({3, 4}), f({4}, DType::Float64, true)}, m});
  v.push_back({"mixed dtypes", {f({3, 4}, DType::Float32), f({3, 4}, DType::Float64, true)}, m});
  v.push_back({"int", {f({3, 4}, DType::Int64), f({3, 4}, DType::Int64, true)}, m});
  v.push_back({"transposed", {with_layout(f({4, 3}), "transposed"), f({4, 3}, DType::Float64, true)}, m});
  v.push_back({"shape mismatch", {f({3, 4}), f({3, 5}, DType::Float64, true)}, m});
  v.push_back({"large f32", {f({64}, DType::Float32), f({64}, DType::Float32, true)}, {{"reduction", "sum"}}});
  v.back().inputs[0].values.assign(64, 1e20);
  return v;
}

Reduction red(const json& a) { return reduction(a); }

}  // namespace

void add_loss_rows(std::vector<Row>& rows) {
  const char* ce_py =
      "lambda x, t, w=None, reduction='mean', ignore_index=-100, label_smoothing=0.0: "
      "torch.nn.functional.cross_entropy(x, t, w, ignore_index=ignore_index, reduction=reduction, "
      "label_smoothing=label_smoothing)";
  auto ce_opts = [](const json& a) {
    CrossEntropyOptions o;
    o.reduction = reduction(a);
    o.ignore_index = i64(a, "ignore_index", -100);
    o.label_smoothing = f64(a, "label_smoothing", 0.0);
    return o;
  };
  rows.push_back(both(
      "cross_entropy", ce_py,
      [ce_opts](const auto& in, const json& a) {
        if constexpr (std::is_same_v<std::decay_t<decltype(in[0])>, Variable>) {
          if (in.size() > 2) return cross_entropy(in[0], in_t(in[1]), in_t(in[2]), ce_opts(a));
        }
        if (in.size() > 2) throw Skip{};  // no Tensor overload with class weights
        return cross_entropy(in[0], in_t(in[1]), ce_opts(a));
      },
      {true}, class_samples(false, true, true), true));
  const char* nll_py =
      "lambda x, t, w=None, reduction='mean', ignore_index=-100: "
      "torch.nn.functional.nll_loss(x, t, w, ignore_index=ignore_index, reduction=reduction)";
  {
    // Two rows: ddl claims double backward for nll_loss with class weights only (docs/autograd.md).
    std::vector<Sample> plain, weighted;
    for (const Sample& x : class_samples(true, true, false)) (x.inputs.size() > 2 ? weighted : plain).push_back(x);
    rows.push_back(both(
        "nll_loss", nll_py,
        [](const auto& in, const json& a) {
          return nll_loss(in[0], in_t(in[1]), red(a), i64(a, "ignore_index", -100));
        },
        {true}, plain));
    rows.push_back(var_only(
        "nll_loss", nll_py,
        [](const auto& in, const json& a) {
          return nll_loss(in[0], in_t(in[1]), in_t(in[2]), red(a), i64(a, "ignore_index", -100));
        },
        {true}, weighted, true));
  }
  {
    std::vector<Sample> s = class_samples(true, false, true);
    rows.push_back(ten_only(
        "nll_loss_forward",
        "lambda x, t, reduction='mean', ignore_index=-100, label_smoothing=0.0: "
        "torch.nn.functional.cross_entropy(x, t, ignore_index=ignore_index, reduction=reduction, "
        "label_smoothing=label_smoothing)",
        [ce_opts](const auto& in, const json& a) { return nll_loss_forward(in[0], in[1], ce_opts(a)); }, s));
    std::vector<Sample> b;
    for (bool through : {false, true}) {
      for (Sample x : s) {
        if (!through && x.args.contains("label_smoothing")) continue;
        if (x.inputs[0].dtype != DType::Float64 && x.inputs[0].dtype != DType::Float32) continue;
        // "through" takes log_probs = log_softmax(z), never +-inf or NaN; the torch form re-normalises its input.
        if (through && x.tag.find("special") != std::string::npos) continue;
        const std::string r = x.args["reduction"];
        std::vector<int64_t> gs = r == "none" ? x.inputs[1].shape : std::vector<int64_t>{};
        x.inputs.insert(x.inputs.begin(), make(x.inputs[0].dtype, gs, 6400, 0.5, 1.5));
        x.args["through"] = through;
        x.tag = (through ? "through " : "") + x.tag;
        b.push_back(x);
      }
    }
    rows.push_back(ten_only(
        "nll_loss_backward",
        "lambda g, x, t, through, reduction='mean', ignore_index=-100, label_smoothing=0.0: "
        "NLLB(g, x, t, through, reduction, ignore_index, label_smoothing)",
        [ce_opts](const auto& in, const json& a) {
          return nll_loss_backward(in[0], in[1], in[2], ce_opts(a), flag(a, "through"));
        },
        b));
  }
  const std::vector<bool> d2 = {true, true};
  rows.push_back(var_only(
      "mse_loss", "lambda a, b, reduction: torch.nn.functional.mse_loss(a, b, reduction=reduction)",
      [](const auto& in, const json& a) { return mse_loss(in[0], in[1], red(a)); }, d2, pair_loss_samples(-2, 2, -2, 2),
      true));
  rows.push_back(var_only(
      "l1_loss", "lambda a, b, reduction: torch.nn.functional.l1_loss(a, b, reduction=reduction)",
      [](const auto& in, const json& a) { return l1_loss(in[0], in[1], red(a)); }, d2, pair_loss_samples(-2, 2, -2, 2),
      true));
  {
    std::vector<Sample> s = pair_loss_samples(-2, 2, -2, 2);
    add_all(s, pair_loss_samples(-2, 2, -2, 2), {{"beta", 0.5}});
    s.push_back({"beta 0",
                 {make(DType::Float64, {5}, 1), make(DType::Float64, {5}, 2)},
                 {{"reduction", "mean"}, {"beta", 0.0}}});
    s.push_back({"beta negative",
                 {make(DType::Float64, {5}, 1), make(DType::Float64, {5}, 2)},
                 {{"reduction", "mean"}, {"beta", -1.0}}});
    rows.push_back(var_only(
        "smooth_l1_loss",
        "lambda a, b, reduction, beta=1.0: torch.nn.functional.smooth_l1_loss(a, b, reduction=reduction, beta=beta)",
        [](const auto& in, const json& a) { return smooth_l1_loss(in[0], in[1], red(a), f64(a, "beta", 1.0)); }, d2, s,
        true));
  }
  {
    std::vector<Sample> s = pair_loss_samples(-2, 2, -2, 2);
    add_all(s, pair_loss_samples(-2, 2, -2, 2), {{"delta", 0.5}});
    s.push_back({"delta 0",
                 {make(DType::Float64, {5}, 1), make(DType::Float64, {5}, 2)},
                 {{"reduction", "mean"}, {"delta", 0.0}}});
    rows.push_back(var_only(
        "huber_loss",
        "lambda a, b, reduction, delta=1.0: torch.nn.functional.huber_loss(a, b, reduction=reduction, delta=delta)",
        [](const auto& in, const json& a) { return huber_loss(in[0], in[1], red(a), f64(a, "delta", 1.0)); }, d2, s,
        true));
  }
  {
    std::vector<Sample> s = pair_loss_samples(0.05, 0.95, 0, 1);
    s.push_back({"weight",
                 {make(DType::Float64, {3, 4}, 1, 0.05, 0.95), make(DType::Float64, {3, 4}, 2, 0, 1),
                  make(DType::Float64, {4}, 3, 0, 2)},
                 {{"reduction", "mean"}}});
    s.push_back({"x at 0 and 1",
                 {of(DType::Float64, {4}, {0, 1, 0, 1}), of(DType::Float64, {4}, {0, 1, 1, 0})},
                 {{"reduction", "none"}}});
    s.push_back({"x out of range",
                 {of(DType::Float64, {2}, {1.5, 0.5}), of(DType::Float64, {2}, {1, 0})},
                 {{"reduction", "mean"}}});
    rows.push_back(var_only(
        "binary_cross_entropy",
        "lambda x, y, w=None, reduction='mean': torch.nn.functional.binary_cross_entropy(x, y, w, reduction=reduction)",
        [](const auto& in, const json& a) {
          return binary_cross_entropy(in[0], in[1], in.size() > 2 ? in_t(in[2]) : Tensor(), red(a));
        },
        d2, s, true));
  }
  {
    std::vector<Sample> s = pair_loss_samples(-4, 4, 0, 1);
    s.push_back(
        {"weight",
         {make(DType::Float64, {3, 4}, 1), make(DType::Float64, {3, 4}, 2, 0, 1), make(DType::Float64, {4}, 3, 0, 2)},
         {{"reduction", "mean"}}});
    s.push_back({"pos_weight",
                 {make(DType::Float64, {3, 4}, 4), make(DType::Float64, {3, 4}, 5, 0, 1),
                  make(DType::Float64, {4}, 6, 1, 1), make(DType::Float64, {4}, 7, 0.5, 3)},
                 {{"reduction", "sum"}}});
    s.back().inputs[2].values.assign(4, 1.0);
    s.push_back({"large logits",
                 {of(DType::Float32, {4}, {100, -100, 1e4, -1e4}), of(DType::Float32, {4}, {0, 1, 1, 0})},
                 {{"reduction", "none"}}});
    rows.push_back(var_only(
        "binary_cross_entropy_with_logits",
        "lambda z, y, w=None, pw=None, reduction='mean': torch.nn.functional.binary_cross_entropy_with_logits(z, y, "
        "w, reduction=reduction, pos_weight=pw)",
        [](const auto& in, const json& a) {
          return binary_cross_entropy_with_logits(in[0], in[1], in.size() > 2 ? in_t(in[2]) : Tensor(),
                                                  in.size() > 3 ? in_t(in[3]) : Tensor(), red(a));
        },
        d2, s, true));
  }
  {
    std::vector<Sample> s;
    uint64_t seed = 6500;
    for (const char* r : {"mean", "sum", "none", "batchmean"}) {
      for (bool lt : {false, true}) {
        Input x = log_probs(make(DType::Float64, {3, 4}, seed++, -2, 2));
        Input y = log_probs(make(DType::Float64, {3, 4}, seed++, -2, 2));
        if (!lt)
          for (double& v : y.values) v = std::exp(v);
        s.push_back({std::string(r) + (lt ? " log_target" : ""), {x, y}, {{"reduction", r}, {"log_target", lt}}});
      }
    }
    s.push_back({"zero target",
                 {log_probs(make(DType::Float64, {2, 3}, seed++)), of(DType::Float64, {2, 3}, {0, 0.5, 0.5, 1, 0, 0})},
                 {{"reduction", "sum"}, {"log_target", false}}});
    s.push_back({"f32",
                 {log_probs(make(DType::Float64, {2, 3}, seed++)), make(DType::Float64, {2, 3}, seed++, 0, 1)},
                 {{"reduction", "mean"}, {"log_target", false}}});
    s.back().inputs[0].dtype = s.back().inputs[1].dtype = DType::Float32;
    rows.push_back(var_only(
        "kl_div",
        "lambda x, y, reduction, log_target: torch.nn.functional.kl_div(x, y, reduction=reduction, "
        "log_target=log_target)",
        [](const auto& in, const json& a) {
          const std::string r = a["reduction"];
          const KLDivReduction k = r == "none"        ? KLDivReduction::None
                                   : r == "sum"       ? KLDivReduction::Sum
                                   : r == "batchmean" ? KLDivReduction::BatchMean
                                                      : KLDivReduction::Mean;
          return kl_div(in[0], in[1], k, flag(a, "log_target"));
        },
        d2, s, true));
  }
}

}  // namespace ddl::sweep
