// Rows for the margin, embedding and likelihood losses (autograd/ops/margin_loss.h): every reduction, float32
// and float64, broadcasting where PyTorch's formula broadcasts, each option, and the shapes and targets both
// sides refuse. Samples are built here; ties and kinks are avoided by drawing values away from them.
#include <cmath>

#include "sweep.h"

namespace ddl::sweep {

namespace {

const std::vector<std::string> kReductions = {"mean", "sum", "none"};

json with(json a, const json& extra) {
  for (auto& [k, v] : extra.items()) a[k] = v;
  return a;
}

Input signs(std::vector<int64_t> shape, uint64_t seed, bool zeros = false) {
  Input t = make(DType::Float64, std::move(shape), seed, 0, 1);
  for (size_t i = 0; i < t.values.size(); ++i) t.values[i] = zeros && i % 5 == 2 ? 0.0 : t.values[i] < 0.5 ? -1.0 : 1.0;
  return t;
}

Input as(Input in, DType t) {
  in.dtype = t;
  return in;
}

Input classes(std::vector<int64_t> shape, int64_t c, uint64_t seed) {
  Input t = make(DType::Float64, std::move(shape), seed, 0, static_cast<double>(c));
  t.dtype = DType::Int64;
  for (double& v : t.values) v = std::floor(v);
  return t;
}

// `n` inputs of one shape and dtype per reduction, plus float32.
std::vector<Sample> basic(int n, std::vector<int64_t> shape, uint64_t& s, const json& extra = json::object()) {
  std::vector<Sample> v;
  for (const std::string& r : kReductions)
    for (DType t : {DType::Float64, DType::Float32}) {
      Sample x{r + " " + short_name(t), {}, with({{"reduction", r}}, extra)};
      for (int i = 0; i < n; ++i) x.inputs.push_back(make(t, shape, s++));
      v.push_back(x);
    }
  return v;
}

// Log-probabilities over the last dim (log_softmax of random values), as ctc_loss expects.
Input log_softmax_last(std::vector<int64_t> shape, uint64_t seed, DType t = DType::Float64) {
  Input in = make(DType::Float64, std::move(shape), seed, -2, 2);
  const size_t c = static_cast<size_t>(in.shape.back());
  for (size_t i = 0; i < in.values.size(); i += c) {
    double m = -INFINITY, z = 0;
    for (size_t j = 0; j < c; ++j) m = std::max(m, in.values[i + j]);
    for (size_t j = 0; j < c; ++j) z += std::exp(in.values[i + j] - m);
    for (size_t j = 0; j < c; ++j) in.values[i + j] -= m + std::log(z);
  }
  in.dtype = t;
  return in;
}

void add_ctc_rows(std::vector<Row>& rows) {
  uint64_t s = 9900;
  std::vector<Sample> v;
  const Input padded = of(DType::Int64, {3, 3}, {1, 2, 2, 3, 3, 0, 1, 0, 0});
  const json lens = {{"input_lengths", {6, 5, 4}}, {"target_lengths", {3, 2, 1}}};
  for (const std::string& r : kReductions)
    for (DType t : {DType::Float64, DType::Float32})
      v.push_back({r + " padded " + short_name(t),
                   {log_softmax_last({6, 3, 4}, s++, t), padded},
                   with(lens, {{"reduction", r}})});
  v.push_back({"concatenated",
               {log_softmax_last({6, 3, 4}, s++), of(DType::Int64, {6}, {1, 2, 2, 3, 3, 1})},
               with(lens, {{"reduction", "none"}})});
  v.push_back({"unbatched",
               {log_softmax_last({5, 4}, s++), of(DType::Int64, {2}, {1, 3})},
               {{"input_lengths", {5}}, {"target_lengths", {2}}, {"reduction", "sum"}}});
  v.push_back({"blank last",
               {log_softmax_last({6, 2, 4}, s++), of(DType::Int64, {2, 2}, {0, 1, 2, 2})},
               {{"input_lengths", {6, 6}}, {"target_lengths", {2, 2}}, {"blank", 3}, {"reduction", "mean"}}});
  v.push_back({"empty target",
               {log_softmax_last({4, 2, 3}, s++), of(DType::Int64, {2, 1}, {1, 2})},
               {{"input_lengths", {4, 3}}, {"target_lengths", {0, 1}}, {"reduction", "mean"}}});
  for (bool zi : {false, true})
    v.push_back(
        {std::string("impossible") + (zi ? " zero_infinity" : ""),
         {log_softmax_last({4, 2, 3}, s++), of(DType::Int64, {2, 3}, {1, 1, 1, 1, 2, 0})},
         {{"input_lengths", {4, 4}}, {"target_lengths", {3, 2}}, {"zero_infinity", zi}, {"reduction", "none"}}});
  v.push_back({"input_lengths past T",
               {log_softmax_last({4, 1, 3}, s++), of(DType::Int64, {1, 1}, {1})},
               {{"input_lengths", {5}}, {"target_lengths", {1}}}});
  v.push_back({"target_lengths past S",
               {log_softmax_last({4, 1, 3}, s++), of(DType::Int64, {1, 1}, {1})},
               {{"input_lengths", {4}}, {"target_lengths", {2}}}});
  v.push_back({"blank out of range",
               {log_softmax_last({4, 1, 3}, s++), of(DType::Int64, {1, 1}, {1})},
               {{"input_lengths", {4}}, {"target_lengths", {1}}, {"blank", 3}}});
  v.push_back({"lengths count",
               {log_softmax_last({4, 2, 3}, s++), of(DType::Int64, {2, 1}, {1, 2})},
               {{"input_lengths", {4, 4, 4}}, {"target_lengths", {1, 1}}}});
  rows.push_back(var_only(
      "ctc_loss",
      "lambda lp, t, input_lengths, target_lengths, reduction='mean', blank=0, zero_infinity=False: "
      "torch.nn.functional.ctc_loss(lp, t, input_lengths, target_lengths, blank=blank, reduction=reduction, "
      "zero_infinity=zero_infinity)",
      [](const auto& in, const json& a) {
        return ctc_loss(in[0], in_t(in[1]), ints(a, "input_lengths"), ints(a, "target_lengths"), i64(a, "blank"),
                        reduction(a), flag(a, "zero_infinity"));
      },
      {true, false}, v));
}

}  // namespace

void add_loss2_rows(std::vector<Row>& rows) {
  add_ctc_rows(rows);
  uint64_t s = 9000;
  const json m = {{"reduction", "mean"}};
  {
    std::vector<Sample> v;
    for (const std::string& r : kReductions)
      for (DType t : {DType::Float64, DType::Float32})
        v.push_back({r + " " + short_name(t),
                     {make(t, {3, 4}, s++), make(t, {3, 4}, s++), as(signs({3, 4}, s++), t)},
                     {{"reduction", r}, {"margin", 0.5}}});
    v.push_back({"broadcast",
                 {make(DType::Float64, {3, 4}, s++), make(DType::Float64, {1, 4}, s++), signs({3, 1}, s++)},
                 with(m, {{"margin", 0.0}})});
    v.push_back({"0-d", {make(DType::Float64, {}, s++), make(DType::Float64, {}, s++), signs({}, s++)}, m});
    v.push_back({"empty",
                 {make(DType::Float64, {0}, s++), make(DType::Float64, {0}, s++), signs({0}, s++)},
                 with(m, {{"reduction", "sum"}})});
    v.push_back(
        {"dims differ", {make(DType::Float64, {3, 4}, s++), make(DType::Float64, {4}, s++), signs({3, 4}, s++)}, m});
    rows.push_back(var_only(
        "margin_ranking_loss",
        "lambda a, b, y, reduction, margin=0.0: torch.nn.functional.margin_ranking_loss(a, b, y, margin=margin, "
        "reduction=reduction)",
        [](const auto& in, const json& a) {
          return margin_ranking_loss(in[0], in[1], in[2], f64(a, "margin"), reduction(a));
        },
        {true, true, true}, v, true));
  }
  {
    std::vector<Sample> v;
    for (const std::string& r : kReductions)
      for (DType t : {DType::Float64, DType::Float32})
        v.push_back(
            {r + " " + short_name(t), {make(t, {3, 5}, s++), as(signs({3, 5}, s++, true), t)}, {{"reduction", r}}});
    v.push_back({"margin 0.5", {make(DType::Float64, {3, 5}, s++), signs({3, 5}, s++)}, with(m, {{"margin", 0.5}})});
    v.push_back({"broadcast target", {make(DType::Float64, {3, 5}, s++), signs({5}, s++)}, m});
    v.push_back({"0-d", {make(DType::Float64, {}, s++), signs({}, s++)}, m});
    rows.push_back(var_only(
        "hinge_embedding_loss",
        "lambda x, y, reduction, margin=1.0: torch.nn.functional.hinge_embedding_loss(x, y, margin=margin, "
        "reduction=reduction)",
        [](const auto& in, const json& a) {
          return hinge_embedding_loss(in[0], in_t(in[1]), f64(a, "margin", 1.0), reduction(a));
        },
        {true, false}, v, true));
  }
  {
    std::vector<Sample> v;
    for (const std::string& r : kReductions)
      for (DType t : {DType::Float64, DType::Float32})
        v.push_back({r + " " + short_name(t), {make(t, {3, 4}, s++), as(signs({3, 4}, s++), t)}, {{"reduction", r}}});
    v.push_back({"large", {of(DType::Float32, {4}, {100, -100, 1e4, -30}), of(DType::Float32, {4}, {1, 1, -1, 1})}, m});
    v.push_back({"0-d", {make(DType::Float64, {}, s++), signs({}, s++)}, m});
    v.push_back({"soft target", {make(DType::Float64, {3, 4}, s++), make(DType::Float64, {3, 4}, s++)}, m});
    rows.push_back(var_only(
        "soft_margin_loss", "lambda x, y, reduction: torch.nn.functional.soft_margin_loss(x, y, reduction=reduction)",
        [](const auto& in, const json& a) { return soft_margin_loss(in[0], in_t(in[1]), reduction(a)); }, {true, false},
        v, true));
  }
  {
    std::vector<Sample> v;
    auto bits = [&](std::vector<int64_t> sh) {
      Input t = make(DType::Float64, std::move(sh), s++, 0, 1);
      for (double& x : t.values) x = x < 0.5 ? 0 : 1;
      return t;
    };
    for (const std::string& r : kReductions)
      for (DType t : {DType::Float64, DType::Float32})
        v.push_back({r + " " + short_name(t), {make(t, {3, 4}, s++), as(bits({3, 4}), t)}, {{"reduction", r}}});
    v.push_back(
        {"weight", {make(DType::Float64, {3, 4}, s++), bits({3, 4}), make(DType::Float64, {4}, s++, 0.1, 2)}, m});
    v.push_back({"weight none",
                 {make(DType::Float64, {3, 4}, s++), bits({3, 4}), make(DType::Float64, {4}, s++, 0.1, 2)},
                 {{"reduction", "none"}}});
    v.push_back({"1-d", {make(DType::Float64, {5}, s++), bits({5})}, {{"reduction", "none"}}});
    v.push_back({"large", {of(DType::Float64, {4}, {50, -50, 800, -800}), of(DType::Float64, {4}, {0, 1, 1, 0})}, m});
    v.push_back({"0-d", {make(DType::Float64, {}, s++), bits({})}, m});
    rows.push_back(var_only(
        "multilabel_soft_margin_loss",
        "lambda x, y, w=None, reduction='mean': torch.nn.functional.multilabel_soft_margin_loss(x, y, w, "
        "reduction=reduction)",
        [](const auto& in, const json& a) {
          return multilabel_soft_margin_loss(in[0], in[1], in.size() > 2 ? in_t(in[2]) : Tensor(), reduction(a));
        },
        {true, true}, v, true));
  }
  {
    std::vector<Sample> v;
    for (const std::string& r : kReductions)
      for (DType t : {DType::Float64, DType::Float32})
        for (int p : {1, 2})
          v.push_back({r + " p" + std::to_string(p) + " " + short_name(t),
                       {make(t, {4, 5}, s++), classes({4}, 5, s++)},
                       {{"reduction", r}, {"p", p}}});
    v.push_back({"margin 0.3", {make(DType::Float64, {4, 5}, s++), classes({4}, 5, s++)}, with(m, {{"margin", 0.3}})});
    v.push_back({"weight",
                 {make(DType::Float64, {4, 5}, s++), classes({4}, 5, s++), make(DType::Float64, {5}, s++, 0.1, 2)},
                 with(m, {{"p", 2}})});
    v.push_back({"1-d", {make(DType::Float64, {5}, s++), of(DType::Int64, {}, {3})}, m});
    v.push_back({"0-d", {make(DType::Float64, {}, s++), of(DType::Int64, {}, {0})}, m});
    v.push_back({"target out of range", {make(DType::Float64, {3, 4}, s++), of(DType::Int64, {3}, {0, 4, 1})}, m});
    v.push_back({"negative target", {make(DType::Float64, {3, 4}, s++), of(DType::Int64, {3}, {0, -1, 1})}, m});
    v.push_back({"wrong batch", {make(DType::Float64, {3, 4}, s++), of(DType::Int64, {2}, {0, 1})}, m});
    v.push_back({"int32 target", {make(DType::Float64, {3, 4}, s++), of(DType::Int32, {3}, {0, 1, 1})}, m});
    v.push_back({"int8 target", {make(DType::Float64, {3, 4}, s++), of(DType::Int8, {3}, {0, 1, 1})}, m});
    v.push_back({"int16 target", {make(DType::Float64, {3, 4}, s++), of(DType::Int16, {3}, {0, 1, 1})}, m});
    v.push_back({"no classes", {make(DType::Float64, {3, 0}, s++), of(DType::Int64, {3}, {0, 0, 0})}, m});
    v.push_back({"p 3", {make(DType::Float64, {3, 4}, s++), classes({3}, 4, s++)}, with(m, {{"p", 3}})});
    rows.push_back(var_only(
        "multi_margin_loss",
        "lambda x, y, w=None, reduction='mean', p=1, margin=1.0: torch.nn.functional.multi_margin_loss(x, y, p=p, "
        "margin=margin, weight=w, reduction=reduction)",
        [](const auto& in, const json& a) {
          return multi_margin_loss(in[0], in_t(in[1]), i64(a, "p", 1), f64(a, "margin", 1.0),
                                   in.size() > 2 ? in_t(in[2]) : Tensor(), reduction(a));
        },
        {true, false}, v));
  }
  {
    std::vector<Sample> v;
    const std::vector<double> t34 = {0, 2, -1, 1, 3, -1, 0, 0, 1, 0, 3, 2};
    for (const std::string& r : kReductions)
      for (DType t : {DType::Float64, DType::Float32})
        v.push_back(
            {r + " " + short_name(t), {make(t, {3, 4}, s++), of(DType::Int64, {3, 4}, t34)}, {{"reduction", r}}});
    v.push_back({"1-d", {make(DType::Float64, {4}, s++), of(DType::Int64, {4}, {3, 0, -1, 1})}, m});
    v.push_back({"all targets", {make(DType::Float64, {2, 3}, s++), of(DType::Int64, {2, 3}, {0, 1, 2, 2, 1, 0})}, m});
    v.push_back({"no targets", {make(DType::Float64, {2, 3}, s++), of(DType::Int64, {2, 3}, {-1, 1, 2, -1, 0, 0})}, m});
    v.push_back({"0-d", {make(DType::Float64, {}, s++), of(DType::Int64, {}, {0})}, m});
    v.push_back(
        {"target out of range", {make(DType::Float64, {2, 3}, s++), of(DType::Int64, {2, 3}, {0, 3, -1, 0, 0, 0})}, m});
    v.push_back(
        {"target below -1", {make(DType::Float64, {2, 3}, s++), of(DType::Int64, {2, 3}, {-2, 0, 0, 0, 0, 0})}, m});
    v.push_back({"target shape", {make(DType::Float64, {2, 3}, s++), of(DType::Int64, {1, 3}, {0, 1, -1})}, m});
    rows.push_back(var_only(
        "multilabel_margin_loss",
        "lambda x, y, reduction: torch.nn.functional.multilabel_margin_loss(x, y, reduction=reduction)",
        [](const auto& in, const json& a) { return multilabel_margin_loss(in[0], in_t(in[1]), reduction(a)); },
        {true, false}, v));
  }
  {
    std::vector<Sample> v;
    for (const std::string& r : kReductions)
      for (DType t : {DType::Float64, DType::Float32})
        v.push_back({r + " " + short_name(t),
                     {make(t, {5, 4}, s++), make(t, {5, 4}, s++), as(signs({5}, s++, true), t)},
                     {{"reduction", r}, {"margin", 0.2}}});
    v.push_back({"1-d",
                 {make(DType::Float64, {4}, s++), make(DType::Float64, {4}, s++), of(DType::Float64, {}, {-1})},
                 with(m, {{"margin", -0.5}})});
    v.push_back({"zero vector",
                 {of(DType::Float64, {2, 2}, {0, 0, 1, 2}), make(DType::Float64, {2, 2}, s++), signs({2}, s++)},
                 m});
    v.push_back(
        {"int target",
         {make(DType::Float64, {3, 4}, s++), make(DType::Float64, {3, 4}, s++), of(DType::Int64, {3}, {1, -1, 1})},
         m});
    v.push_back(
        {"broadcast rows", {make(DType::Float64, {3, 4}, s++), make(DType::Float64, {1, 4}, s++), signs({3}, s++)}, m});
    v.push_back(
        {"2-d target", {make(DType::Float64, {3, 4}, s++), make(DType::Float64, {3, 4}, s++), signs({3, 1}, s++)}, m});
    v.push_back({"0-d target 2-d inputs",
                 {make(DType::Float64, {3, 4}, s++), make(DType::Float64, {3, 4}, s++), signs({}, s++)},
                 m});
    v.push_back({"1-d target 1-d inputs",
                 {make(DType::Float64, {4}, s++), make(DType::Float64, {4}, s++), signs({3}, s++)},
                 m});
    rows.push_back(var_only(
        "cosine_embedding_loss",
        "lambda a, b, y, reduction, margin=0.0: torch.nn.functional.cosine_embedding_loss(a, b, y, margin=margin, "
        "reduction=reduction)",
        [](const auto& in, const json& a) {
          return cosine_embedding_loss(in[0], in[1], in_t(in[2]), f64(a, "margin"), reduction(a));
        },
        {true, true, false}, v, true));
  }
  {
    std::vector<Sample> v = basic(3, {4, 5}, s);
    for (const json& o : {json{{"p", 1.0}}, json{{"p", 3.0}}, json{{"p", "inf"}}, json{{"p", 1.5}, {"swap", true}},
                          json{{"swap", true}, {"margin", 2.0}}, json{{"eps", 0.1}, {"margin", 0.5}}}) {
      Sample x{"options " + o.dump(), {}, with(m, o)};
      for (int i = 0; i < 3; ++i) x.inputs.push_back(make(DType::Float64, {4, 5}, s++));
      v.push_back(x);
    }
    v.push_back(
        {"1-d", {make(DType::Float64, {5}, s++), make(DType::Float64, {5}, s++), make(DType::Float64, {5}, s++)}, m});
    v.push_back({"3-d",
                 {make(DType::Float64, {2, 3, 4}, s++), make(DType::Float64, {2, 3, 4}, s++),
                  make(DType::Float64, {2, 3, 4}, s++)},
                 {{"reduction", "none"}}});
    v.push_back(
        {"broadcast",
         {make(DType::Float64, {3, 4}, s++), make(DType::Float64, {1, 4}, s++), make(DType::Float64, {3, 4}, s++)},
         m});
    v.push_back({"dims differ",
                 {make(DType::Float64, {3, 4}, s++), make(DType::Float64, {3, 4}, s++), make(DType::Float64, {4}, s++)},
                 m});
    rows.push_back(var_only(
        "triplet_margin_loss",
        "lambda a, p_, n, reduction, margin=1.0, p=2.0, eps=1e-6, swap=False: "
        "torch.nn.functional.triplet_margin_loss(a, p_, n, margin=margin, p=p, eps=eps, swap=swap, "
        "reduction=reduction)",
        [](const auto& in, const json& a) {
          return triplet_margin_loss(in[0], in[1], in[2], f64(a, "margin", 1.0), f64(a, "p", 2.0), f64(a, "eps", 1e-6),
                                     flag(a, "swap"), reduction(a));
        },
        {true, true, true}, v, true));
  }
  {
    std::vector<Sample> v;
    auto counts = [&](std::vector<int64_t> sh) {
      Input t = make(DType::Float64, std::move(sh), s++, 0, 5);
      for (size_t i = 0; i < t.values.size(); ++i) t.values[i] = i % 4 == 0 ? std::floor(t.values[i]) : t.values[i];
      t.values[0] = 0;
      if (t.values.size() > 1) t.values[1] = 1;
      return t;
    };
    for (const std::string& r : kReductions)
      for (bool log_input : {true, false})
        for (bool full : {false, true}) {
          const double lo = log_input ? -2 : 0.1;
          v.push_back({r + (log_input ? " log" : " linear") + (full ? " full" : ""),
                       {make(DType::Float64, {3, 4}, s++, lo, 2), counts({3, 4})},
                       {{"reduction", r}, {"log_input", log_input}, {"full", full}}});
        }
    v.push_back({"f32", {make(DType::Float32, {3, 4}, s++), as(counts({3, 4}), DType::Float32)}, m});
    v.push_back(
        {"eps", {make(DType::Float64, {5}, s++, 0, 1), counts({5})}, with(m, {{"log_input", false}, {"eps", 0.5}})});
    v.push_back({"zero rate",
                 {of(DType::Float64, {3}, {0, 0, 1}), of(DType::Float64, {3}, {0, 2, 3})},
                 with(m, {{"log_input", false}})});
    v.push_back({"broadcast", {make(DType::Float64, {3, 4}, s++), counts({4})}, m});
    rows.push_back(var_only(
        "poisson_nll_loss",
        "lambda x, y, reduction, log_input=True, full=False, eps=1e-8: torch.nn.functional.poisson_nll_loss(x, y, "
        "log_input=log_input, full=full, eps=eps, reduction=reduction)",
        [](const auto& in, const json& a) {
          return poisson_nll_loss(in[0], in[1], flag(a, "log_input", true), flag(a, "full"), f64(a, "eps", 1e-8),
                                  reduction(a));
        },
        {true, true}, v, true));
  }
  {
    std::vector<Sample> v;
    for (const std::string& r : kReductions)
      for (DType t : {DType::Float64, DType::Float32})
        for (bool full : {false, true})
          v.push_back({r + " " + short_name(t) + (full ? " full" : ""),
                       {make(t, {3, 4}, s++), make(t, {3, 4}, s++), make(t, {3, 4}, s++, 0.1, 2)},
                       {{"reduction", r}, {"full", full}}});
    v.push_back(
        {"var per sample",
         {make(DType::Float64, {3, 4}, s++), make(DType::Float64, {3, 4}, s++), make(DType::Float64, {3}, s++, 0.1, 2)},
         m});
    v.push_back({"var [N, 1]",
                 {make(DType::Float64, {3, 4}, s++), make(DType::Float64, {3, 4}, s++),
                  make(DType::Float64, {3, 1}, s++, 0.1, 2)},
                 m});
    v.push_back({"var below eps",
                 {make(DType::Float64, {4}, s++), make(DType::Float64, {4}, s++),
                  of(DType::Float64, {4}, {0, 1e-9, 0.5, 1e-3})},
                 with(m, {{"eps", 1e-4}})});
    v.push_back(
        {"broadcast target",
         {make(DType::Float64, {3, 4}, s++), make(DType::Float64, {4}, s++), make(DType::Float64, {3, 4}, s++, 0.1, 2)},
         m});
    v.push_back(
        {"var wrong shape",
         {make(DType::Float64, {3, 4}, s++), make(DType::Float64, {3, 4}, s++), make(DType::Float64, {4}, s++, 0.1, 2)},
         m});
    v.push_back(
        {"var negative",
         {make(DType::Float64, {3}, s++), make(DType::Float64, {3}, s++), of(DType::Float64, {3}, {1, -0.5, 2})},
         m});
    rows.push_back(var_only(
        "gaussian_nll_loss",
        "lambda x, y, var, reduction, full=False, eps=1e-6: torch.nn.functional.gaussian_nll_loss(x, y, var, "
        "full=full, eps=eps, reduction=reduction)",
        [](const auto& in, const json& a) {
          return gaussian_nll_loss(in[0], in[1], in[2], flag(a, "full"), f64(a, "eps", 1e-6), reduction(a));
        },
        {true, true, true}, v, true));
  }
}

}  // namespace ddl::sweep
