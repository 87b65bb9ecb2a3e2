// Rows: convolutions and their Tensor-level backward helpers (tensor/ops/conv.h, conv_transpose.h,
// autograd/ops/conv.h). PyTorch's helpers are torch.nn.grad.conv2d_input / conv2d_weight and autograd.
#include "sweep.h"

namespace ddl::sweep {
namespace {

std::array<int64_t, 2> two(const json& a, const char* k, int64_t d) {
  if (!a.contains(k)) return {d, d};
  return {a[k][0].get<int64_t>(), a[k][1].get<int64_t>()};
}

Conv2dParams conv_params(const json& a) {
  Conv2dParams p;
  p.stride = two(a, "stride", 1);
  p.padding = two(a, "padding", 0);
  p.dilation = two(a, "dilation", 1);
  p.groups = i64(a, "groups", 1);
  return p;
}

struct ConvCase {
  std::string tag;
  std::vector<int64_t> x, w;
  json args;
};

std::vector<ConvCase> conv_cases(bool transpose) {
  // w: [K, C/groups, R, S] for conv2d, [C, K/groups, R, S] for conv_transpose2d
  std::vector<ConvCase> c = {
      {"3x3", {2, 3, 6, 6}, {4, 3, 3, 3}, json::object()},
      {"1x1", {1, 4, 5, 5}, {2, 4, 1, 1}, json::object()},
      {"stride 2 pad 1", {1, 2, 7, 7}, {3, 2, 3, 3}, {{"stride", {2, 2}}, {"padding", {1, 1}}}},
      {"rect", {1, 2, 6, 8}, {3, 2, 2, 3}, {{"stride", {1, 2}}, {"padding", {0, 1}}}},
      {"dilation", {1, 2, 8, 8}, {2, 2, 3, 3}, {{"dilation", {2, 2}}, {"padding", {2, 2}}}},
      {"groups", {2, 4, 5, 5}, {6, 2, 3, 3}, {{"groups", 2}}},
      {"depthwise", {1, 3, 5, 5}, {3, 1, 3, 3}, {{"groups", 3}, {"padding", {1, 1}}}},
      {"large 3x3 winograd", {2, 16, 12, 12}, {16, 16, 3, 3}, {{"padding", {1, 1}}}},
      {"kernel bigger than input", {1, 1, 2, 2}, {1, 1, 3, 3}, json::object()},
      {"channels mismatch", {1, 3, 5, 5}, {2, 2, 3, 3}, json::object()},
      {"groups not dividing", {1, 4, 5, 5}, {3, 2, 3, 3}, {{"groups", 2}}},
      {"zero stride", {1, 1, 5, 5}, {1, 1, 3, 3}, {{"stride", {0, 0}}}},
      {"negative padding", {1, 1, 5, 5}, {1, 1, 3, 3}, {{"padding", {-1, -1}}}},
      {"empty batch", {0, 2, 5, 5}, {3, 2, 3, 3}, json::object()},
      {"3-d input", {2, 5, 5}, {3, 2, 3, 3}, json::object()},
  };
  if (transpose) {
    for (auto& x : c) {
      if (x.tag == "channels mismatch") continue;
      std::swap(x.w[0], x.w[1]);  // [C, K/groups, R, S]
    }
    c[5].w = {4, 3, 3, 3};  // C=4, K/groups=3, groups=2
    c[6].w = {3, 1, 3, 3};
    c.push_back({"output padding", {1, 2, 4, 4}, {2, 3, 3, 3}, {{"stride", {2, 2}}, {"output_padding", {1, 1}}}});
    c.push_back(
        {"output padding too big", {1, 2, 4, 4}, {2, 3, 3, 3}, {{"stride", {2, 2}}, {"output_padding", {2, 2}}}});
  }
  return c;
}

std::vector<Sample> conv_samples(bool transpose) {
  std::vector<Sample> v;
  uint64_t s = 5000;
  for (const ConvCase& c : conv_cases(transpose)) {
    const int64_t k = transpose ? c.w[1] * i64(c.args, "groups", 1) : c.w[0];
    for (DType t : {DType::Float32, DType::Float64}) {
      v.push_back({c.tag + " " + short_name(t), {make(t, c.x, s++), make(t, c.w, s++), make(t, {k}, s++)}, c.args});
    }
    if (c.tag == "3x3") {
      Sample nb{"no bias", {make(DType::Float64, c.x, s++), make(DType::Float64, c.w, s++)}, c.args};
      v.push_back(nb);
      for (DType t : {DType::Float16, DType::BFloat16, DType::Int64})
        v.push_back({c.tag + " " + short_name(t), {make(t, c.x, s++), make(t, c.w, s++), make(t, {k}, s++)}, c.args});
      v.push_back({"mixed dtypes",
                   {make(DType::Float32, c.x, s++), make(DType::Float64, c.w, s++), make(DType::Float64, {k}, s++)},
                   c.args});
      v.push_back({"transposed input",
                   {with_layout(make(DType::Float64, c.x, s++), "transposed"), make(DType::Float64, c.w, s++),
                    make(DType::Float64, {k}, s++)},
                   c.args});
      v.push_back(
          {"special", {special(DType::Float64, {1, 3, 2, 2}), make(DType::Float64, {4, 3, 1, 1}, s++)}, c.args});
      v.push_back({"bad bias",
                   {make(DType::Float64, c.x, s++), make(DType::Float64, c.w, s++), make(DType::Float64, {k + 1}, s++)},
                   c.args});
    }
  }
  return v;
}

std::vector<Sample> conv1d_samples() {
  std::vector<Sample> v;
  uint64_t s = 5200;
  auto f = [&](std::vector<int64_t> sh, DType t = DType::Float64) { return make(t, std::move(sh), s++); };
  for (DType t : {DType::Float32, DType::Float64})
    v.push_back({std::string("k3 ") + short_name(t),
                 {f({2, 3, 9}, t), f({4, 3, 3}, t), f({4}, t)},
                 {{"stride", 1}, {"padding", 0}, {"dilation", 1}, {"groups", 1}}});
  v.push_back({"stride pad dilation",
               {f({1, 2, 11}), f({3, 2, 3}), f({3})},
               {{"stride", 2}, {"padding", 2}, {"dilation", 2}, {"groups", 1}}});
  v.push_back({"groups",
               {f({1, 4, 7}), f({6, 2, 3}), f({6})},
               {{"stride", 1}, {"padding", 1}, {"dilation", 1}, {"groups", 2}}});
  v.push_back({"unbatched",
               {f({3, 9}), f({4, 3, 3}), f({4})},
               {{"stride", 1}, {"padding", 0}, {"dilation", 1}, {"groups", 1}}});
  v.push_back(
      {"no bias", {f({2, 3, 9}), f({4, 3, 3})}, {{"stride", 1}, {"padding", 0}, {"dilation", 1}, {"groups", 1}}});
  v.push_back({"too short",
               {f({1, 3, 2}), f({4, 3, 3}), f({4})},
               {{"stride", 1}, {"padding", 0}, {"dilation", 1}, {"groups", 1}}});
  return v;
}

// The shapes of a convolution's output, for the backward helpers' gradient inputs.
int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  return (in + 2 * p - d * (k - 1) - 1) / s + 1;
}

std::vector<Sample> conv_backward_samples(bool transpose, bool weight) {
  std::vector<Sample> v;
  uint64_t s = 5300;
  for (const ConvCase& c : conv_cases(transpose)) {
    if (c.x.size() != 4 || c.tag.find("mismatch") != std::string::npos ||
        c.tag.find("not dividing") != std::string::npos || c.tag.find("zero stride") != std::string::npos ||
        c.tag.find("negative") != std::string::npos || c.tag.find("bigger") != std::string::npos ||
        c.args.contains("output_padding"))
      continue;
    const Conv2dParams p = conv_params(c.args);
    std::vector<int64_t> g;
    if (!transpose) {
      g = {c.x[0], c.w[0], out_size(c.x[2], c.w[2], p.stride[0], p.padding[0], p.dilation[0]),
           out_size(c.x[3], c.w[3], p.stride[1], p.padding[1], p.dilation[1])};
    } else {
      auto o = [&](int64_t in, int64_t k, int i) {
        return (in - 1) * p.stride[i] - 2 * p.padding[i] + p.dilation[i] * (k - 1) + 1;
      };
      g = {c.x[0], c.w[1] * p.groups, o(c.x[2], c.w[2], 0), o(c.x[3], c.w[3], 1)};
    }
    for (DType t : {DType::Float32, DType::Float64}) {
      json a = c.args;
      Sample smp{c.tag + " " + short_name(t), {make(t, g, s++)}, a};
      if (weight) {
        smp.inputs.push_back(make(t, c.x, s++));  // x
        smp.args["w_shape"] = c.w;
      } else {
        smp.inputs.push_back(make(t, c.w, s++));  // w
        smp.args["x_shape"] = c.x;
      }
      v.push_back(smp);
    }
  }
  return v;
}

const char* kConvArgs = "stride=[1, 1], padding=[0, 0], dilation=[1, 1], groups=1";

}  // namespace

void add_conv_rows(std::vector<Row>& rows) {
  const std::vector<bool> d3 = {true, true, true};
  rows.push_back(both(
      "conv2d",
      std::string("lambda x, w, b=None, ") + kConvArgs +
          ": torch.nn.functional.conv2d(x, w, b, stride, padding, dilation, groups)",
      [](const auto& in, const json& a) {
        using V = std::decay_t<decltype(in[0])>;
        return conv2d(in[0], in[1], in.size() > 2 ? in[2] : V(), conv_params(a));
      },
      d3, conv_samples(false), true));
  rows.push_back(var_only(
      "conv1d",
      "lambda x, w, b=None, stride=1, padding=0, dilation=1, groups=1: "
      "torch.nn.functional.conv1d(x, w, b, stride, padding, dilation, groups)",
      [](const auto& in, const json& a) {
        using V = std::decay_t<decltype(in[0])>;
        return conv1d(in[0], in[1], in.size() > 2 ? in[2] : V(), i64(a, "stride"), i64(a, "padding"),
                      i64(a, "dilation"), i64(a, "groups"));
      },
      d3, conv1d_samples(), true));
  rows.push_back(both(
      "conv_transpose2d",
      std::string("lambda x, w, b=None, output_padding=[0, 0], ") + kConvArgs +
          ": torch.nn.functional.conv_transpose2d(x, w, b, stride, padding, output_padding, groups, dilation)",
      [](const auto& in, const json& a) {
        using V = std::decay_t<decltype(in[0])>;
        return conv_transpose2d(in[0], in[1], in.size() > 2 ? in[2] : V(), conv_params(a), two(a, "output_padding", 0));
      },
      d3, conv_samples(true), true));
  rows.push_back(ten_only(
      "conv2d_backward_input",
      std::string("lambda g, w, x_shape, ") + kConvArgs +
          ": torch.nn.grad.conv2d_input(x_shape, w, g, stride, padding, dilation, groups)",
      [](const auto& in, const json& a) {
        return conv2d_backward_input(in[0], in[1], Shape(ints(a, "x_shape")), conv_params(a));
      },
      conv_backward_samples(false, false)));
  rows.push_back(ten_only(
      "conv2d_backward_weight",
      std::string("lambda g, x, w_shape, ") + kConvArgs +
          ": torch.nn.grad.conv2d_weight(x, w_shape, g, stride, padding, dilation, groups)",
      [](const auto& in, const json& a) {
        return conv2d_backward_weight(in[0], in[1], Shape(ints(a, "w_shape")), conv_params(a));
      },
      conv_backward_samples(false, true)));
  {
    std::vector<Sample> s;
    uint64_t seed = 5400;
    for (DType t : kFloatDTypes) s.push_back({std::string("4-d ") + short_name(t), {make(t, {2, 3, 4, 5}, seed++)}});
    s.push_back({"3-d", {make(DType::Float64, {3, 4, 5}, seed++)}});
    s.push_back({"empty batch", {make(DType::Float64, {0, 3, 2, 2}, seed++)}});
    rows.push_back(ten_only(
        "conv2d_backward_bias", "lambda g: g.sum([0, 2, 3]) if g.dim() == 4 else g.sum([1, 2])",
        [](const auto& in, const json&) { return conv2d_backward_bias(in[0]); }, s));
  }
  rows.push_back(ten_only(
      "conv_transpose2d_backward_input",
      std::string("lambda g, w, x_shape, ") + kConvArgs +
          ": torch.nn.functional.conv2d(g, w, None, stride, padding, dilation, groups)",
      [](const auto& in, const json& a) {
        return conv_transpose2d_backward_input(in[0], in[1], Shape(ints(a, "x_shape")), conv_params(a));
      },
      conv_backward_samples(true, false)));
  {
    // conv_transpose2d_backward_weight(x, grad_y, ...): inputs in ddl's order.
    std::vector<Sample> s = conv_backward_samples(true, true);
    for (Sample& x : s) std::swap(x.inputs[0], x.inputs[1]);
    rows.push_back(ten_only(
        "conv_transpose2d_backward_weight",
        std::string("lambda x, g, w_shape, ") + kConvArgs +
            ": torch.autograd.grad(torch.nn.functional.conv_transpose2d(x, W := torch.zeros(w_shape, "
            "dtype=x.dtype, requires_grad=True), None, stride, padding, 0, groups, dilation), W, g)[0]",
        [](const auto& in, const json& a) {
          return conv_transpose2d_backward_weight(in[0], in[1], Shape(ints(a, "w_shape")), conv_params(a), {0, 0});
        },
        s));
  }
}

}  // namespace ddl::sweep
