// Rows: the public Tensor-level backward helpers of softmax, sort and pooling, and batch_norm_backward.
// PyTorch's counterparts are its aten backward ops, or autograd on the forward op.
#include <cmath>

#include "sweep.h"

namespace ddl::sweep {
namespace {

// softmax(x) (or log_softmax) along the last dim of a 2-d input, in doubles.
Input softmax_of(Input in, bool log) {
  const int64_t n = in.shape[0], c = in.shape[1];
  for (int64_t i = 0; i < n; ++i) {
    double m = -INFINITY, z = 0;
    for (int64_t j = 0; j < c; ++j) m = std::max(m, in.values[i * c + j]);
    for (int64_t j = 0; j < c; ++j) z += std::exp(in.values[i * c + j] - m);
    for (int64_t j = 0; j < c; ++j) {
      const double l = in.values[i * c + j] - m - std::log(z);
      in.values[i * c + j] = log ? l : std::exp(l);
    }
  }
  return in;
}

std::vector<Sample> softmax_backward_samples(bool log) {
  std::vector<Sample> v;
  uint64_t s = 7000;
  for (DType t : kFloatDTypes) {
    Input y = softmax_of(make(DType::Float64, {3, 5}, s++), log);
    y.dtype = t;
    v.push_back({std::string("dim1 ") + short_name(t), {make(t, {3, 5}, s++), y}, {{"dim", 1}}});
  }
  Input y = softmax_of(make(DType::Float64, {3, 5}, s++), log);
  v.push_back({"dim-1", {make(DType::Float64, {3, 5}, s++), y}, {{"dim", -1}}});
  v.push_back({"transposed grad", {with_layout(make(DType::Float64, {3, 5}, s++), "transposed"), y}, {{"dim", 1}}});
  v.push_back({"shape mismatch", {make(DType::Float64, {3, 4}, s++), y}, {{"dim", 1}}});
  v.push_back({"dim out of range", {make(DType::Float64, {3, 5}, s++), y}, {{"dim", 2}}});
  return v;
}

// max-pool indices that lie in their 2x2 windows (stride 2) of an [N, C, H, W] input.
Input window_indices(int64_t n, int64_t c, int64_t h, int64_t w, uint64_t seed) {
  Input r = make(DType::Float64, {n, c, h / 2, w / 2}, seed, 0, 4);
  r.dtype = DType::Int64;
  for (size_t k = 0; k < r.values.size(); ++k) {
    const int64_t q = static_cast<int64_t>(r.values[k]);
    const int64_t pos = k % ((h / 2) * (w / 2)), i = pos / (w / 2), j = pos % (w / 2);
    r.values[k] = static_cast<double>((2 * i + q / 2) * w + 2 * j + q % 2);
  }
  return r;
}

}  // namespace

void add_backward_rows(std::vector<Row>& rows) {
  rows.push_back(ten_only(
      "softmax_backward", "lambda g, y, dim: torch._softmax_backward_data(g, y, dim, y.dtype)",
      [](const auto& in, const json& a) { return softmax_backward(in[0], in[1], i64(a, "dim")); },
      softmax_backward_samples(false)));
  rows.push_back(ten_only(
      "log_softmax_backward", "lambda g, y, dim: torch._log_softmax_backward_data(g, y, dim, y.dtype)",
      [](const auto& in, const json& a) { return log_softmax_backward(in[0], in[1], i64(a, "dim")); },
      softmax_backward_samples(true)));
  {
    // sort_backward(grad, indices, dim, input_shape): scatter grad back to the sorted positions.
    std::vector<Sample> s;
    const std::vector<double> perm = {2, 0, 1, 3, 1, 3, 0, 2, 0, 1, 2, 3};
    for (DType t : kFloatDTypes)
      s.push_back({std::string("3x4 ") + short_name(t),
                   {make(t, {3, 4}, 7100), of(DType::Int64, {3, 4}, perm)},
                   {{"dim", 1}, {"shape", {3, 4}}}});
    s.push_back({"topk 3x2",
                 {make(DType::Float64, {3, 2}, 7101), of(DType::Int64, {3, 2}, {3, 0, 1, 2, 0, 3})},
                 {{"dim", -1}, {"shape", {3, 4}}}});
    s.push_back({"dim0",
                 {make(DType::Float64, {2, 3}, 7102), of(DType::Int64, {2, 3}, {1, 0, 1, 0, 1, 0})},
                 {{"dim", 0}, {"shape", {2, 3}}}});
    rows.push_back(ten_only(
        "sort_backward", "lambda g, i, dim, shape: torch.zeros(shape, dtype=g.dtype).scatter(dim, i, g)",
        [](const auto& in, const json& a) {
          return sort_backward(in[0], in[1], i64(a, "dim"), Shape(ints(a, "shape")));
        },
        s));
  }
  {
    std::vector<Sample> s;
    for (DType t : kFloatDTypes)
      s.push_back({std::string("2x2 ") + short_name(t),
                   {make(t, {2, 3, 2, 3}, 7200), window_indices(2, 3, 4, 6, 7201)},
                   {{"x_shape", {2, 3, 4, 6}}}});
    s.push_back({"with params",
                 {make(DType::Float64, {1, 2, 3, 3}, 7202), window_indices(1, 2, 6, 6, 7203)},
                 {{"x_shape", {1, 2, 6, 6}}, {"params", true}}});
    s.push_back({"shared input",
                 {make(DType::Float64, {1, 1, 1, 2}, 7204), of(DType::Int64, {1, 1, 1, 2}, {1, 1})},
                 {{"x_shape", {1, 1, 2, 2}}}});
    s.push_back({"unbatched",
                 {make(DType::Float64, {2, 2, 2}, 7205), of(DType::Int64, {2, 2, 2}, {0, 3, 9, 14, 5, 2, 8, 15})},
                 {{"x_shape", {2, 4, 4}}}});
    rows.push_back(ten_only(
        "max_pool2d_backward",
        "lambda g, i, x_shape, params=False: torch.zeros(x_shape, dtype=g.dtype).flatten(-2)"
        ".scatter_add(-1, i.flatten(-2), g.flatten(-2)).view(x_shape)",
        [](const auto& in, const json& a) {
          if (!flag(a, "params")) return max_pool2d_backward(in[0], in[1], Shape(ints(a, "x_shape")));
          return max_pool2d_backward(in[0], in[1], Shape(ints(a, "x_shape")), Pool2dParams{});
        },
        s));
  }
  {
    std::vector<Sample> s;
    struct C {
      std::string tag;
      std::vector<int64_t> g, x;
      json a;
    };
    for (const C& c : std::vector<C>{
             {"2x2", {2, 3, 2, 3}, {2, 3, 4, 6}, {{"kernel", {2, 2}}, {"stride", {2, 2}}, {"padding", {0, 0}}}},
             {"3x3 s2 p1", {1, 2, 4, 4}, {1, 2, 7, 7}, {{"kernel", {3, 3}}, {"stride", {2, 2}}, {"padding", {1, 1}}}},
             {"exclude pad",
              {1, 2, 4, 4},
              {1, 2, 7, 7},
              {{"kernel", {3, 3}}, {"stride", {2, 2}}, {"padding", {1, 1}}, {"count_include_pad", false}}},
             {"ceil",
              {1, 1, 4, 4},
              {1, 1, 7, 7},
              {{"kernel", {2, 2}}, {"stride", {2, 2}}, {"padding", {0, 0}}, {"ceil_mode", true}}},
         }) {
      json a = c.a;
      a["x_shape"] = c.x;
      for (DType t : {DType::Float32, DType::Float64})
        s.push_back({c.tag + " " + short_name(t), {make(t, c.g, 7300)}, a});
    }
    rows.push_back(ten_only(
        "avg_pool2d_backward",
        "lambda g, x_shape, kernel, stride, padding, ceil_mode=False, count_include_pad=True: "
        "torch.ops.aten.avg_pool2d_backward(g, torch.zeros(x_shape, dtype=g.dtype), kernel, stride, "
        "padding, ceil_mode, count_include_pad, None)",
        [](const auto& in, const json& a) {
          Pool2dParams p;
          p.kernel = {a["kernel"][0].get<int64_t>(), a["kernel"][1].get<int64_t>()};
          p.stride = {a["stride"][0].get<int64_t>(), a["stride"][1].get<int64_t>()};
          p.padding = {a["padding"][0].get<int64_t>(), a["padding"][1].get<int64_t>()};
          p.ceil_mode = flag(a, "ceil_mode");
          p.count_include_pad = flag(a, "count_include_pad", true);
          return avg_pool2d_backward(in[0], Shape(ints(a, "x_shape")), p);
        },
        s));
  }
  {
    std::vector<Sample> s;
    for (DType t : {DType::Float32, DType::Float64}) {
      s.push_back({std::string("6->3 ") + short_name(t), {make(t, {2, 2, 3, 3}, 7400)}, {{"x_shape", {2, 2, 6, 6}}}});
      s.push_back({std::string("uneven ") + short_name(t), {make(t, {1, 2, 3, 2}, 7401)}, {{"x_shape", {1, 2, 7, 5}}}});
    }
    s.push_back({"upsample", {make(DType::Float64, {1, 1, 5, 4}, 7402)}, {{"x_shape", {1, 1, 2, 3}}}});
    rows.push_back(ten_only(
        "adaptive_avg_pool2d_backward",
        "lambda g, x_shape: torch.ops.aten._adaptive_avg_pool2d_backward(g, torch.zeros(x_shape, "
        "dtype=g.dtype))",
        [](const auto& in, const json& a) { return adaptive_avg_pool2d_backward(in[0], Shape(ints(a, "x_shape"))); },
        s));
  }
  {
    // batch_norm_backward(grad_y, x, weight, save_mean, save_invstd, use_batch_stats, eps, needs)
    std::vector<Sample> s;
    uint64_t seed = 7500;
    for (bool train : {true, false}) {
      for (DType t : {DType::Float32, DType::Float64}) {
        const std::vector<int64_t> xs = {4, 3, 2, 2};
        Input x = make(t, xs, seed++);
        // save_mean / save_invstd: the batch statistics (train) or any running ones (eval).
        std::vector<double> mean(3, 0), var(3, 0);
        for (int64_t c = 0; c < 3; ++c) {
          double sum = 0, sq = 0;
          int64_t n = 0;
          for (int64_t b = 0; b < 4; ++b)
            for (int64_t k = 0; k < 4; ++k) {
              const double v = x.values[(b * 3 + c) * 4 + k];
              sum += v, sq += v * v, ++n;
            }
          mean[c] = train ? sum / n : 0.1 * c;
          var[c] = train ? sq / n - mean[c] * mean[c] : 1.0 + c;
        }
        std::vector<double> invstd(3);
        for (int c = 0; c < 3; ++c) invstd[c] = 1.0 / std::sqrt(var[c] + 1e-5);
        s.push_back({std::string(train ? "train " : "eval ") + short_name(t),
                     {make(t, xs, seed++), x, make(t, {3}, seed++), of(t, {3}, mean), of(t, {3}, invstd)},
                     {{"train", train}, {"eps", 1e-5}}});
      }
    }
    rows.push_back(ten_only(
        "batch_norm_backward", "lambda g, x, w, m, s, train, eps: BNB(g, x, w, m, s, train, eps)",
        [](const auto& in, const json& a) {
          const BatchNormGrads r = batch_norm_backward(in[0], in[1], in[2], in[3], in[4], flag(a, "train"),
                                                       f64(a, "eps"), {true, true, true});
          return std::vector<Tensor>{r.grad_input, r.grad_weight, r.grad_bias};
        },
        s));
  }
}

}  // namespace ddl::sweep
