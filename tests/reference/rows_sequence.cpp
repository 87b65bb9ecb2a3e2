// Rows: upsampling and recurrent layers (tensor/ops/upsample.h, autograd/ops/upsample.h, rnn.h). PyTorch's LSTM and
// GRU references run one direction of torch._VF.lstm / gru (compare.py's LSTM, GRU).
#include "sweep.h"

namespace ddl::sweep {
namespace {

std::vector<Sample> interpolate_samples() {
  std::vector<Sample> v;
  uint64_t s = 4600;
  auto f = [&](std::vector<int64_t> sh, DType t = DType::Float64) { return make(t, std::move(sh), s++); };
  for (const char* mode : {"nearest", "bilinear"}) {
    const std::string m = mode;
    for (DType t : kAllDTypes)
      v.push_back({m + " x2 " + short_name(t), {f({1, 2, 3, 4}, t)}, {{"mode", m}, {"scale", {2.0, 2.0}}}});
    v.push_back({m + " size up", {f({2, 1, 3, 4})}, {{"mode", m}, {"size", {5, 7}}}});
    v.push_back({m + " size down", {f({1, 2, 6, 5})}, {{"mode", m}, {"size", {4, 2}}}});
    v.push_back({m + " scale 1.5", {f({1, 1, 4, 4})}, {{"mode", m}, {"scale", {1.5, 0.75}}}});
    v.push_back({m + " transposed", {with_layout(f({1, 2, 3, 4}), "transposed")}, {{"mode", m}, {"size", {6, 5}}}});
    v.push_back({m + " both given", {f({1, 1, 3, 3})}, {{"mode", m}, {"size", {6, 6}}, {"scale", {2.0, 2.0}}}});
    v.push_back({m + " none given", {f({1, 1, 3, 3})}, {{"mode", m}}});
    v.push_back({m + " 3-d input", {f({2, 3, 3})}, {{"mode", m}, {"size", {4, 4}}}});
  }
  v.push_back({"bilinear align", {f({1, 2, 3, 4})}, {{"mode", "bilinear"}, {"size", {5, 7}}, {"align_corners", true}}});
  v.push_back(
      {"bilinear align to 1", {f({1, 1, 3, 4})}, {{"mode", "bilinear"}, {"size", {1, 1}}, {"align_corners", true}}});
  v.push_back({"nearest align", {f({1, 1, 3, 4})}, {{"mode", "nearest"}, {"size", {5, 7}}, {"align_corners", true}}});
  v.push_back({"bilinear special", {special(DType::Float64, {1, 1, 3, 4})}, {{"mode", "bilinear"}, {"size", {5, 6}}}});
  return v;
}

Upsample2dParams upsample_params(const json& a) {
  Upsample2dParams p;
  p.output_size = pair2(a, "size", 0);
  if (a.contains("scale")) p.scales = {a["scale"][0].get<double>(), a["scale"][1].get<double>()};
  p.mode = a["mode"] == "bilinear" ? InterpolateMode::Bilinear : InterpolateMode::Nearest;
  p.align_corners = flag(a, "align_corners");
  return p;
}

std::vector<Sample> rnn_samples(int gates) {
  std::vector<Sample> v;
  uint64_t s = 4700;
  auto f = [&](std::vector<int64_t> sh, DType t = DType::Float64) { return make(t, std::move(sh), s++, -0.5, 0.5); };
  const int64_t T = 3, B = 2, I = 4, H = 3;
  for (bool reverse : {false, true}) {
    for (DType t : {DType::Float32, DType::Float64}) {
      std::vector<Input> in = {f({T, B, I}, t), f({B, H}, t)};
      if (gates == 4) in.push_back(f({B, H}, t));
      for (auto sh : std::vector<std::vector<int64_t>>{{gates * H, I}, {gates * H, H}, {gates * H}, {gates * H}})
        in.push_back(f(sh, t));
      v.push_back({std::string(reverse ? "reverse " : "forward ") + short_name(t), in, {{"reverse", reverse}}});
    }
  }
  std::vector<Input> bad = {f({T, B, I}), f({B, H})};
  if (gates == 4) bad.push_back(f({B, H}));
  for (auto sh : std::vector<std::vector<int64_t>>{{gates * H, I + 1}, {gates * H, H}, {gates * H}, {gates * H}})
    bad.push_back(f(sh));
  v.push_back({"wrong w_ih", bad, {{"reverse", false}}});
  return v;
}

}  // namespace

void add_sequence_rows(std::vector<Row>& rows) {
  const std::vector<bool> d1 = {true};
  rows.push_back(var_only(
      "interpolate",
      "lambda x, mode, size=None, scale=None, align_corners=None: torch.nn.functional.interpolate(x, "
      "size, scale, mode, align_corners)",
      [](const auto& in, const json& a) {
        InterpolateOptions o;
        if (a.contains("size")) o.size = pair2(a, "size", 0);
        if (a.contains("scale"))
          o.scale_factor = std::array<double, 2>{a["scale"][0].get<double>(), a["scale"][1].get<double>()};
        o.mode = a["mode"] == "bilinear" ? InterpolateMode::Bilinear : InterpolateMode::Nearest;
        o.align_corners = flag(a, "align_corners");
        return interpolate(in[0], o);
      },
      d1, interpolate_samples(), false));
  {
    std::vector<Sample> s;
    for (const Sample& x : interpolate_samples())
      if (x.args.contains("size") && x.inputs[0].shape.size() == 4 && x.tag != "nearest align") s.push_back(x);
    rows.push_back(ten_only(
        "upsample2d",
        "lambda x, mode, size, scale=None, align_corners=False: torch.ops.aten.upsample_nearest2d(x, size) "
        "if mode == 'nearest' else torch.ops.aten.upsample_bilinear2d(x, size, align_corners)",
        [](const auto& in, const json& a) { return upsample2d(in[0], upsample_params(a)); }, s));
    std::vector<Sample> b;
    for (Sample x : s) {
      const auto& sh = x.inputs[0].shape;
      x.args["x_shape"] = sh;
      std::vector<int64_t> gs = {sh[0], sh[1], x.args["size"][0].get<int64_t>(), x.args["size"][1].get<int64_t>()};
      x.inputs = {make(DType::Float64, gs, 4690)};
      b.push_back(x);
    }
    rows.push_back(ten_only(
        "upsample2d_backward",
        "lambda g, mode, size, x_shape, scale=None, align_corners=False: "
        "torch.ops.aten.upsample_nearest2d_backward(g, size, x_shape) if mode == 'nearest' else "
        "torch.ops.aten.upsample_bilinear2d_backward(g, size, x_shape, align_corners)",
        [](const auto& in, const json& a) {
          return upsample2d_backward(in[0], Shape(ints(a, "x_shape")), upsample_params(a));
        },
        b));
  }
  rows.push_back(var_only(
      "lstm_layer",
      "lambda x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse: LSTM(x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse)",
      [](const auto& in, const json& a) {
        return lstm_layer(in[0], in[1], in[2], in[3], in[4], in[5], in[6], flag(a, "reverse"));
      },
      std::vector<bool>(7, true), rnn_samples(4)));
  rows.push_back(var_only(
      "gru_layer", "lambda x, h0, w_ih, w_hh, b_ih, b_hh, reverse: GRU(x, h0, w_ih, w_hh, b_ih, b_hh, reverse)",
      [](const auto& in, const json& a) {
        return gru_layer(in[0], in[1], in[2], in[3], in[4], in[5], flag(a, "reverse"));
      },
      std::vector<bool>(6, true), rnn_samples(3)));
}

}  // namespace ddl::sweep
