// Rows: N-d convolution and pooling (autograd/ops/conv_nd.h, pool_nd.h): conv3d, conv_transpose1d/3d,
// max/avg/adaptive pooling in 1-D and 3-D, lp_pool1d/2d and max_unpool1d/2d/3d, against torch.nn.functional.
#include <array>
#include <limits>

#include "sweep.h"

namespace ddl::sweep {
namespace {

template <size_t N>
std::array<int64_t, N> arr(const json& a, const char* k, int64_t d) {
  std::array<int64_t, N> r;
  r.fill(d);
  if (!a.contains(k)) return r;
  if (a[k].is_number()) {
    r.fill(a[k].get<int64_t>());
    return r;
  }
  for (size_t i = 0; i < N; ++i) r[i] = a[k][i].get<int64_t>();
  return r;
}
int64_t one(const json& a, const char* k, int64_t d) { return arr<1>(a, k, d)[0]; }

std::optional<std::vector<int64_t>> out_size(const json& a) {
  if (!a.contains("output_size")) return std::nullopt;
  return a["output_size"].get<std::vector<int64_t>>();
}

// NaN at two positions of every three, so most windows hold several.
Input nans(const std::vector<int64_t>& shape) {
  Input in = make(DType::Float64, shape, 7777);
  for (size_t i = 0; i < in.values.size(); ++i)
    if (i % 3 != 0) in.values[i] = std::numeric_limits<double>::quiet_NaN();
  return in;
}

// Fixed-window pooling samples over n = 1 or 3 spatial dims.
std::vector<Sample> pool_samples(int n, bool max) {
  std::vector<Sample> v;
  uint64_t s = n == 1 ? 7000 : 7100;
  auto sh = [&](std::vector<int64_t> lead, int64_t e) {
    for (int i = 0; i < n; ++i) lead.push_back(e + i);
    return lead;
  };
  auto f = [&](std::vector<int64_t> shape, DType t = DType::Float64) { return make(t, std::move(shape), s++); };
  auto k = [&](int64_t a, int64_t b) { return n == 1 ? json(a) : json({b, a, a}); };
  for (DType t : {DType::Float32, DType::Float64, DType::Float16, DType::Int64})
    v.push_back({std::string("k2 ") + short_name(t), {f(sh({2, 3}, 4), t)}, {{"kernel", 2}}});
  v.push_back({"k3 s2 p1", {f(sh({1, 2}, 5))}, {{"kernel", 3}, {"stride", 2}, {"padding", 1}}});
  v.push_back({"rect", {f(sh({1, 2}, 5))}, {{"kernel", k(2, 1)}, {"stride", k(1, 2)}, {"padding", k(1, 0)}}});
  v.push_back({"ceil", {f(sh({1, 1}, 5))}, {{"kernel", 2}, {"ceil_mode", true}}});
  v.push_back({"ceil pad", {f(sh({1, 1}, 6))}, {{"kernel", 3}, {"stride", 2}, {"padding", 1}, {"ceil_mode", true}}});
  v.push_back({"unbatched", {f(sh({2}, 4))}, {{"kernel", 2}}});
  v.push_back({"overlapping f32", {f(sh({2, 2}, 4), DType::Float32)}, {{"kernel", 3}, {"stride", 1}}});
  v.push_back({"transposed", {with_layout(f(sh({1, 2}, 4)), "transposed")}, {{"kernel", 2}}});
  {
    // Pairs of equal maxima in overlapping windows: 1, 1, 2, 2, 1, 1, 2, 2, ...
    const std::vector<int64_t> ts = sh({1, 1}, 3);
    std::vector<double> vals(static_cast<size_t>(Shape(ts).numel()));
    for (size_t i = 0; i < vals.size(); ++i) vals[i] = 1.0 + static_cast<double>((i / 2) % 2);
    v.push_back({"ties", {of(DType::Float64, ts, vals)}, {{"kernel", 2}, {"stride", 1}}});
  }
  v.push_back({"special",
               {special(DType::Float64, n == 1 ? std::vector<int64_t>{1, 2, 8} : std::vector<int64_t>{1, 1, 2, 2, 4})},
               {{"kernel", k(2, 1)}, {"stride", 1}}});
  v.push_back({"several NaNs", {nans(sh({1, 2}, 4))}, {{"kernel", 3}, {"stride", 1}, {"padding", 1}}});
  v.push_back({"empty batch", {f(sh({0, 2}, 4))}, {{"kernel", 2}}});
  v.push_back({"kernel bigger than input", {f(sh({1, 1}, 2))}, {{"kernel", 5}}});
  v.push_back({"padding too big", {f(sh({1, 1}, 6))}, {{"kernel", 2}, {"padding", 2}}});
  v.push_back({"negative stride", {f(sh({1, 1}, 6))}, {{"kernel", 2}, {"stride", -1}}});
  v.push_back({"zero stride", {f(sh({1, 1}, 6))}, {{"kernel", 2}, {"stride", 0}}});
  v.push_back({"too few dims", {f(sh({}, 4))}, {{"kernel", 2}}});
  v.push_back({"too many dims", {f(sh({1, 1, 1}, 4))}, {{"kernel", 2}}});
  v.push_back({"empty channels", {f(sh({1, 0}, 4))}, {{"kernel", 2}}});
  if (max) {
    v.push_back({"dilation", {f(sh({1, 2}, 5))}, {{"kernel", 2}, {"stride", 1}, {"dilation", 2}}});
    v.push_back({"dilation pad", {f(sh({1, 1}, 6))}, {{"kernel", 3}, {"stride", 2}, {"padding", 1}, {"dilation", 2}}});
  } else {
    v.push_back({"exclude pad",
                 {f(sh({1, 2}, 5))},
                 {{"kernel", 3}, {"stride", 2}, {"padding", 1}, {"count_include_pad", false}}});
    v.push_back({"ceil exclude pad",
                 {f(sh({1, 1}, 6))},
                 {{"kernel", 3}, {"stride", 2}, {"padding", 1}, {"ceil_mode", true}, {"count_include_pad", false}}});
  }
  return v;
}

std::vector<Sample> adaptive_samples(int n, bool max) {
  std::vector<Sample> v;
  uint64_t s = n == 1 ? 7200 : 7300;
  auto sh = [&](std::vector<int64_t> lead, int64_t e) {
    for (int i = 0; i < n; ++i) lead.push_back(e + i);
    return lead;
  };
  auto f = [&](std::vector<int64_t> shape, DType t = DType::Float64) { return make(t, std::move(shape), s++); };
  auto o = [&](int64_t a) { return n == 1 ? json(a) : json({a, a + 1, a + 2}); };
  for (DType t : {DType::Float32, DType::Float64, DType::Float16, DType::Int64})
    v.push_back({std::string("uneven ") + short_name(t), {f(sh({2, 2}, 5), t)}, {{"out", o(2)}}});
  v.push_back({"to 1", {f(sh({2, 3}, 4))}, {{"out", 1}}});
  v.push_back({"identity", {f(sh({1, 2}, 3))}, {{"out", n == 1 ? json(3) : json({3, 4, 5})}}});
  v.push_back({"upsample", {f(sh({1, 1}, 2))}, {{"out", o(4)}}});
  v.push_back({"unbatched", {f(sh({2}, 5))}, {{"out", o(2)}}});
  v.push_back({"transposed f32", {with_layout(f(sh({1, 2}, 5), DType::Float32), "transposed")}, {{"out", o(2)}}});
  v.push_back({"special",
               {special(DType::Float64, n == 1 ? std::vector<int64_t>{2, 8} : std::vector<int64_t>{1, 2, 2, 4})},
               {{"out", n == 1 ? json(3) : json({1, 2, 2})}}});
  v.push_back({"several NaNs", {nans(sh({1, 2}, 5))}, {{"out", o(2)}}});
  v.push_back({"zero output", {f(sh({1, 1}, 4))}, {{"out", n == 1 ? json(0) : json({0, 2, 2})}}});
  v.push_back({"negative output", {f(sh({1, 1}, 4))}, {{"out", n == 1 ? json(-1) : json({2, -1, 2})}}});
  v.push_back({"too few dims", {f(sh({}, 4))}, {{"out", o(2)}}});
  v.push_back({"too many dims", {f(sh({1, 1, 1}, 4))}, {{"out", o(2)}}});
  if (max) v.push_back({"empty input", {f(sh({1, 1}, 0))}, {{"out", o(2)}}});
  return v;
}

std::vector<Sample> lp_samples(int n) {
  std::vector<Sample> v;
  uint64_t s = n == 1 ? 7400 : 7450;
  auto sh = [&](std::vector<int64_t> lead, int64_t e) {
    for (int i = 0; i < n; ++i) lead.push_back(e + i);
    return lead;
  };
  // Positive inputs: a fractional power of a negative number is NaN in both.
  auto f = [&](std::vector<int64_t> shape, DType t = DType::Float64) {
    return make(t, std::move(shape), s++, 0.1, 2.0);
  };
  for (DType t : {DType::Float32, DType::Float64})
    v.push_back({std::string("p2 k2 ") + short_name(t), {f(sh({2, 3}, 4), t)}, {{"p", 2.0}, {"kernel", 2}}});
  v.push_back({"p1", {f(sh({1, 2}, 5))}, {{"p", 1.0}, {"kernel", 2}, {"stride", 1}}});
  v.push_back({"p3 ceil", {f(sh({1, 2}, 5))}, {{"p", 3.0}, {"kernel", 2}, {"ceil_mode", true}}});
  v.push_back({"p1.5 k3 s2", {f(sh({1, 1}, 7))}, {{"p", 1.5}, {"kernel", 3}, {"stride", 2}}});
  v.push_back({"signed p2", {make(DType::Float64, sh({1, 2}, 4), s++)}, {{"p", 2.0}, {"kernel", 2}}});
  v.push_back({"unbatched", {f(sh({2}, 4))}, {{"p", 2.0}, {"kernel", 2}}});
  v.push_back({"kernel bigger than input", {f(sh({1, 1}, 2))}, {{"p", 2.0}, {"kernel", 5}}});
  v.push_back({"too many dims", {f(sh({1, 1, 1}, 4))}, {{"p", 2.0}, {"kernel", 2}}});
  return v;
}

// Max-unpooling samples: x and int64 indices within each output volume (kernel 2, stride 2).
std::vector<Sample> unpool_samples(int n) {
  std::vector<Sample> v;
  uint64_t s = 7500 + 10 * n;
  auto sh = [&](std::vector<int64_t> lead, int64_t e) {
    for (int i = 0; i < n; ++i) lead.push_back(e);
    return lead;
  };
  // The index of window w's element (w + 1) % 2^n within a [2 in]^n output: a valid max_pool*d result.
  auto idx = [&](std::vector<int64_t> shape, int64_t in, int64_t shift = 0) {
    int64_t lead = 1, vol = 1;
    for (size_t i = 0; i + n < shape.size(); ++i) lead *= shape[i];
    for (int i = 0; i < n; ++i) vol *= in;
    std::vector<double> vals;
    for (int64_t b = 0; b < lead; ++b)
      for (int64_t w = 0; w < vol; ++w) {
        int64_t flat = 0, r = w;
        std::vector<int64_t> c(n);
        for (int i = n - 1; i >= 0; --i) c[i] = r % in, r /= in;
        for (int i = 0; i < n; ++i) flat = flat * (2 * in + shift) + 2 * c[i] + ((w + 1 + i) % 2);
        vals.push_back(static_cast<double>(flat));
      }
    return of(DType::Int64, shape, vals);
  };
  auto f = [&](std::vector<int64_t> shape, DType t = DType::Float64) { return make(t, std::move(shape), s++); };
  for (DType t : {DType::Float32, DType::Float64})
    v.push_back({std::string("k2 ") + short_name(t), {f(sh({2, 2}, 3), t), idx(sh({2, 2}, 3), 3)}, {{"kernel", 2}}});
  v.push_back({"unbatched", {f(sh({2}, 3)), idx(sh({2}, 3), 3)}, {{"kernel", 2}}});
  json big = json::array();
  for (int i = 0; i < n; ++i) big.push_back(7);
  v.push_back({"output_size", {f(sh({1, 2}, 3)), idx(sh({1, 2}, 3), 3, 1)}, {{"kernel", 2}, {"output_size", big}}});
  json full = json::array({1, 2});
  for (int i = 0; i < n; ++i) full.push_back(7);
  v.push_back(
      {"output_size with N, C", {f(sh({1, 2}, 3)), idx(sh({1, 2}, 3), 3, 1)}, {{"kernel", 2}, {"output_size", full}}});
  json bad = json::array();
  for (int i = 0; i < n; ++i) bad.push_back(9);
  v.push_back(
      {"output_size too big", {f(sh({1, 2}, 3)), idx(sh({1, 2}, 3), 3)}, {{"kernel", 2}, {"output_size", bad}}});
  v.push_back({"output_size wrong length",
               {f(sh({1, 2}, 3)), idx(sh({1, 2}, 3), 3)},
               {{"kernel", 2}, {"output_size", json::array({6, 6, 6, 6, 6, 6, 6}).get<std::vector<int64_t>>()}}});
  Input out_of_range = idx(sh({1, 1}, 2), 2);
  out_of_range.values.back() = 1000;
  v.push_back({"index out of range", {f(sh({1, 1}, 2)), out_of_range}, {{"kernel", 2}}});
  v.push_back({"indices shape", {f(sh({1, 2}, 3)), idx(sh({1, 1}, 3), 3)}, {{"kernel", 2}}});
  Input i32 = idx(sh({1, 1}, 3), 3);
  i32.dtype = DType::Int32;
  v.push_back({"int32 indices", {f(sh({1, 1}, 3)), i32}, {{"kernel", 2}}});
  v.push_back({"too many dims", {f(sh({1, 1, 1}, 2)), idx(sh({1, 1, 1}, 2), 2)}, {{"kernel", 2}}});
  return v;
}

struct ConvCase {
  std::string tag;
  std::vector<int64_t> x, w;
  json args;
};

// conv3d (transpose false) or conv_transpose3d cases; w is [K, C/g, ...] for conv3d, [C, K/g, ...] transposed.
std::vector<ConvCase> conv_cases(int n, bool transpose) {
  auto sp = [&](std::vector<int64_t> lead, std::vector<int64_t> s3) {
    for (int i = 3 - n; i < 3; ++i) lead.push_back(s3[i]);
    return lead;
  };
  auto a3 = [&](std::vector<int64_t> a) { return n == 1 ? json(a[2]) : json(a); };
  std::vector<ConvCase> c = {
      {"k3", sp({2, 3}, {4, 5, 6}), sp({4, 3}, {3, 3, 3}), json::object()},
      {"1x1", sp({1, 4}, {3, 3, 3}), sp({2, 4}, {1, 1, 1}), json::object()},
      {"stride pad",
       sp({1, 2}, {5, 6, 5}),
       sp({3, 2}, {3, 2, 3}),
       {{"stride", a3({2, 1, 2})}, {"padding", a3({1, 0, 1})}}},
      {"dilation",
       sp({1, 2}, {6, 5, 7}),
       sp({2, 2}, {2, 3, 2}),
       {{"dilation", a3({2, 1, 3})}, {"padding", a3({1, 1, 2})}}},
      {"groups", sp({2, 4}, {3, 4, 4}), sp({6, 2}, {2, 2, 2}), {{"groups", 2}}},
      {"unbatched", sp({2}, {4, 4, 4}), sp({3, 2}, {2, 2, 2}), json::object()},
      {"empty batch", sp({0, 2}, {4, 4, 4}), sp({3, 2}, {2, 2, 2}), json::object()},
      {"channels mismatch", sp({1, 3}, {4, 4, 4}), sp({2, 2}, {2, 2, 2}), json::object()},
      {"groups not dividing", sp({1, 4}, {4, 4, 4}), sp({3, 2}, {2, 2, 2}), {{"groups", 2}}},
      {"zero stride", sp({1, 1}, {4, 4, 4}), sp({1, 1}, {2, 2, 2}), {{"stride", 0}}},
      {"negative padding", sp({1, 1}, {4, 4, 4}), sp({1, 1}, {2, 2, 2}), {{"padding", -1}}},
      {"wrong input rank", sp({}, {4, 4, 4}), sp({1, 1}, {2, 2, 2}), json::object()},
      {"wrong weight rank", sp({1, 1}, {4, 4, 4}), sp({1}, {2, 2, 2}), json::object()},
  };
  if (!transpose) {
    c.push_back({"kernel bigger than input", sp({1, 1}, {2, 2, 2}), sp({1, 1}, {3, 3, 3}), json::object()});
    return c;
  }
  for (auto& x : c) {
    if (x.tag == "channels mismatch" || x.w.size() < 2) continue;
    std::swap(x.w[0], x.w[1]);
  }
  c[4].w = sp({4, 3}, {2, 2, 2});  // C = 4, K/groups = 3, groups = 2
  c.push_back({"output padding",
               sp({1, 2}, {3, 3, 3}),
               sp({2, 3}, {3, 3, 3}),
               {{"stride", 2}, {"output_padding", a3({1, 0, 1})}}});
  c.push_back(
      {"output padding too big", sp({1, 2}, {3, 3, 3}), sp({2, 3}, {3, 3, 3}), {{"stride", 2}, {"output_padding", 2}}});
  c.push_back({"output too small", sp({1, 1}, {1, 1, 1}), sp({1, 1}, {2, 2, 2}), {{"padding", 1}}});
  return c;
}

std::vector<Sample> conv_samples(int n, bool transpose) {
  std::vector<Sample> v;
  uint64_t s = 7600 + 100 * n + (transpose ? 50 : 0);
  for (const ConvCase& c : conv_cases(n, transpose)) {
    const int64_t g = i64(c.args, "groups", 1);
    const int64_t k = c.w.size() < 2 ? 1 : transpose ? c.w[1] * g : c.w[0];
    for (DType t : {DType::Float32, DType::Float64})
      v.push_back({c.tag + " " + short_name(t), {make(t, c.x, s++), make(t, c.w, s++), make(t, {k}, s++)}, c.args});
    if (c.tag == "k3") {
      v.push_back({"no bias", {make(DType::Float64, c.x, s++), make(DType::Float64, c.w, s++)}, c.args});
      v.push_back({"int64",
                   {make(DType::Int64, c.x, s++), make(DType::Int64, c.w, s++), make(DType::Int64, {k}, s++)},
                   c.args});
      v.push_back({"mixed dtypes",
                   {make(DType::Float32, c.x, s++), make(DType::Float64, c.w, s++), make(DType::Float64, {k}, s++)},
                   c.args});
      v.push_back({"bad bias",
                   {make(DType::Float64, c.x, s++), make(DType::Float64, c.w, s++), make(DType::Float64, {k + 1}, s++)},
                   c.args});
    }
  }
  return v;
}

#define DDL_ARGS1 "kernel, stride=None, padding=0"
#define DDL_F "torch.nn.functional."

}  // namespace

void add_pool_nd_rows(std::vector<Row>& rows) {
  const std::vector<bool> d1 = {true}, d3 = {true, true, true};
  // max pooling, values and indices (the indices come back as a second output)
  for (int n : {1, 3}) {
    const std::string nd = std::to_string(n) + "d";
    const std::string torch = "lambda x, " DDL_ARGS1 ", dilation=1, ceil_mode=False: " DDL_F "max_pool" + nd +
                              "(x, kernel, stride or kernel, padding, dilation, ceil_mode";
    rows.push_back(var_only(
        "max_pool" + nd, torch + ")",
        [n](const auto& in, const json& a) {
          if (n == 1)
            return max_pool1d(in[0], one(a, "kernel", 1), one(a, "stride", 0), one(a, "padding", 0),
                              one(a, "dilation", 1), flag(a, "ceil_mode"));
          return max_pool3d(in[0], arr<3>(a, "kernel", 1), arr<3>(a, "stride", 0), arr<3>(a, "padding", 0),
                            arr<3>(a, "dilation", 1), flag(a, "ceil_mode"));
        },
        d1, pool_samples(n, true), true));
    rows.push_back(var_only(
        "max_pool" + nd + "_with_indices", torch + ", True)",
        [n](const auto& in, const json& a) {
          if (n == 1)
            return max_pool1d_with_indices(in[0], one(a, "kernel", 1), one(a, "stride", 0), one(a, "padding", 0),
                                           one(a, "dilation", 1), flag(a, "ceil_mode"));
          return max_pool3d_with_indices(in[0], arr<3>(a, "kernel", 1), arr<3>(a, "stride", 0), arr<3>(a, "padding", 0),
                                         arr<3>(a, "dilation", 1), flag(a, "ceil_mode"));
        },
        d1, pool_samples(n, true), true));
    rows.push_back(var_only(
        "avg_pool" + nd,
        "lambda x, " DDL_ARGS1 ", ceil_mode=False, count_include_pad=True: " DDL_F "avg_pool" + nd +
            "(x, kernel, stride or kernel, padding, ceil_mode, count_include_pad)",
        [n](const auto& in, const json& a) {
          if (n == 1)
            return avg_pool1d(in[0], one(a, "kernel", 1), one(a, "stride", 0), one(a, "padding", 0),
                              flag(a, "ceil_mode"), flag(a, "count_include_pad", true));
          return avg_pool3d(in[0], arr<3>(a, "kernel", 1), arr<3>(a, "stride", 0), arr<3>(a, "padding", 0),
                            flag(a, "ceil_mode"), flag(a, "count_include_pad", true));
        },
        d1, pool_samples(n, false), true));
    rows.push_back(var_only(
        "adaptive_avg_pool" + nd, "lambda x, out: " DDL_F "adaptive_avg_pool" + nd + "(x, out)",
        [n](const auto& in, const json& a) {
          return n == 1 ? adaptive_avg_pool1d(in[0], one(a, "out", 1))
                        : adaptive_avg_pool3d(in[0], arr<3>(a, "out", 1));
        },
        d1, adaptive_samples(n, false), true));
    rows.push_back(var_only(
        "adaptive_max_pool" + nd, "lambda x, out: " DDL_F "adaptive_max_pool" + nd + "(x, out)",
        [n](const auto& in, const json& a) {
          return n == 1 ? adaptive_max_pool1d(in[0], one(a, "out", 1))
                        : adaptive_max_pool3d(in[0], arr<3>(a, "out", 1));
        },
        d1, adaptive_samples(n, true), true));
    rows.push_back(var_only(
        "adaptive_max_pool" + nd + "_with_indices", "lambda x, out: " DDL_F "adaptive_max_pool" + nd + "(x, out, True)",
        [n](const auto& in, const json& a) {
          return n == 1 ? adaptive_max_pool1d_with_indices(in[0], one(a, "out", 1))
                        : adaptive_max_pool3d_with_indices(in[0], arr<3>(a, "out", 1));
        },
        d1, adaptive_samples(n, true), true));
  }
  for (int n : {1, 2}) {
    const std::string nd = std::to_string(n) + "d";
    rows.push_back(var_only(
        "lp_pool" + nd,
        "lambda x, p, kernel, stride=None, ceil_mode=False: " DDL_F "lp_pool" + nd +
            "(x, p, kernel, stride, ceil_mode)",
        [n](const auto& in, const json& a) {
          if (n == 1)
            return lp_pool1d(in[0], f64(a, "p"), one(a, "kernel", 1), one(a, "stride", 0), flag(a, "ceil_mode"));
          return lp_pool2d(in[0], f64(a, "p"), arr<2>(a, "kernel", 1), arr<2>(a, "stride", 0), flag(a, "ceil_mode"));
        },
        d1, lp_samples(n), true));
  }
  for (int n : {1, 2, 3}) {
    const std::string nd = std::to_string(n) + "d";
    rows.push_back(var_only(
        "max_unpool" + nd,
        "lambda x, idx, " DDL_ARGS1 ", output_size=None: " DDL_F "max_unpool" + nd +
            "(x, idx, kernel, stride, padding, output_size)",
        [n](const auto& in, const json& a) {
          const Tensor idx = in_t(in[1]);
          if (n == 1)
            return max_unpool1d(in[0], idx, one(a, "kernel", 1), one(a, "stride", 0), one(a, "padding", 0),
                                out_size(a));
          if (n == 2)
            return max_unpool2d(in[0], idx, arr<2>(a, "kernel", 1), arr<2>(a, "stride", 0), arr<2>(a, "padding", 0),
                                out_size(a));
          return max_unpool3d(in[0], idx, arr<3>(a, "kernel", 1), arr<3>(a, "stride", 0), arr<3>(a, "padding", 0),
                              out_size(a));
        },
        {true, false}, unpool_samples(n), true));
  }
  rows.push_back(var_only(
      "conv3d",
      "lambda x, w, b=None, stride=1, padding=0, dilation=1, groups=1: " DDL_F
      "conv3d(x, w, b, stride, padding, dilation, groups)",
      [](const auto& in, const json& a) {
        using V = std::decay_t<decltype(in[0])>;
        return conv3d(in[0], in[1], in.size() > 2 ? in[2] : V(), arr<3>(a, "stride", 1), arr<3>(a, "padding", 0),
                      arr<3>(a, "dilation", 1), i64(a, "groups", 1));
      },
      d3, conv_samples(3, false), true));
  for (int n : {1, 3}) {
    const std::string nd = std::to_string(n) + "d";
    rows.push_back(var_only(
        "conv_transpose" + nd,
        "lambda x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1: " DDL_F "conv_transpose" +
            nd + "(x, w, b, stride, padding, output_padding, groups, dilation)",
        [n](const auto& in, const json& a) {
          using V = std::decay_t<decltype(in[0])>;
          const V b = in.size() > 2 ? in[2] : V();
          if (n == 1)
            return conv_transpose1d(in[0], in[1], b, one(a, "stride", 1), one(a, "padding", 0),
                                    one(a, "output_padding", 0), i64(a, "groups", 1), one(a, "dilation", 1));
          return conv_transpose3d(in[0], in[1], b, arr<3>(a, "stride", 1), arr<3>(a, "padding", 0),
                                  arr<3>(a, "output_padding", 0), i64(a, "groups", 1), arr<3>(a, "dilation", 1));
        },
        d3, conv_samples(n, true), true));
  }
}

}  // namespace ddl::sweep
