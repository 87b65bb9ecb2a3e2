// Adaptive average / max pooling and upsample2d (interpolate: nearest, bilinear
// with align_corners false and true) on CUDA against the CPU, forward and
// backward, float32 and float64: non-dividing, growing and shrinking sizes, 3-D
// unbatched and strided inputs, 1x1 outputs, empty batches, ties and NaNs, rows
// of 5000. The CUDA kernels do the CPU's arithmetic in the CPU's order (gathered
// backward, explicit fma), so every comparison is exact: same bits, NaN for NaN.
// Runs only with a GPU (tests/cuda/cuda_main.cpp exits 77 otherwise).
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <vector>

#include "tests/common/gradcheck.h"
#include <ddl/autograd/functions.h>
#include <ddl/nn/layers.h>
#include <ddl/nn/pool_layers.h>
#include <ddl/tensor/ops.h>

using namespace ddl;

namespace {

const Device kCuda = Device::cuda();
const DType kFloat[] = {DType::Float32, DType::Float64};

// Same shape, dtype and values; NaN where the CPU has NaN (payloads may differ),
// and the sign of zeros too.
void require_same(const Tensor& on_gpu, const Tensor& on_cpu) {
  REQUIRE(on_gpu.device() == kCuda);
  const Tensor g = on_gpu.to(Device::cpu());
  REQUIRE(g.shape() == on_cpu.shape());
  REQUIRE(g.dtype() == on_cpu.dtype());
  if (g.dtype() == DType::Int64) {
    REQUIRE(to_vector<int64_t>(g) == to_vector<int64_t>(on_cpu));
    return;
  }
  const std::vector<double> a = to_vector<double>(g), b = to_vector<double>(on_cpu);
  auto same = [](double x, double y) {
    return std::isnan(y) ? std::isnan(x) : x == y && std::signbit(x) == std::signbit(y);
  };
  size_t bad = 0;
  while (bad < a.size() && same(a[bad], b[bad])) ++bad;
  INFO("first mismatch at element " << bad << " of " << a.size() << ": cuda " << (bad < a.size() ? a[bad] : 0.0)
                                    << ", cpu " << (bad < a.size() ? b[bad] : 0.0));
  REQUIRE(bad == a.size());
}

using VFn = std::function<Variable(const Variable&)>;
using View = std::function<Tensor(const Tensor&)>;
Tensor as_is(const Tensor& t) { return t; }

// f on a CPU leaf (view(base)) and on the same view of a CUDA copy of base; one
// cotangent backpropagated through both; outputs and input gradients compared.
void require_same_graph(const VFn& f, const Tensor& base, const View& view = as_is, uint64_t seed = 99) {
  const Tensor xc = view(base), xg = view(base.to(kCuda));
  REQUIRE(xg.strides() == xc.strides());
  INFO("input " << xc.shape() << " " << xc.dtype() << (xc.is_contiguous() ? "" : " (strided)"));
  const Variable vc(xc, true), vg(xg, true);
  const Variable yc = f(vc), yg = f(vg);
  {
    INFO("output");
    require_same(yg.data(), yc.data());
  }
  const Tensor cot = test::random_double(yc.shape(), seed).to(yc.dtype());
  yc.backward(cot);
  yg.backward(cot.to(kCuda));
  INFO("input gradient");
  require_same(vg.grad(), vc.grad());
}

Tensor rnd(const Shape& s, uint64_t seed, DType dt) { return test::random_double(s, seed).to(dt); }

// Values in {-1, 0, 1, 2}: many ties inside every window.
Tensor ties(const Shape& s, uint64_t seed, DType dt) {
  std::vector<double> v = to_vector<double>(test::random_double(s, seed, -1.49, 2.49));
  for (double& e : v) e = std::round(e);
  return from_vector<double>(v, s).to(dt);
}

// Random values with a NaN at every 7th position (some windows hold two).
Tensor with_nans(const Shape& s, uint64_t seed, DType dt) {
  std::vector<double> v = to_vector<double>(test::random_double(s, seed));
  for (size_t i = 3; i < v.size(); i += 7) v[i] = NAN;
  return from_vector<double>(v, s).to(dt);
}

struct AdaptiveCase {
  Shape x;
  std::array<int64_t, 2> out;
};

// Non-dividing, growing, shrinking, identity, 1x1 and 1-pixel cases; many planes;
// rows of 5000 (several blocks); a 3-D unbatched input.
const std::vector<AdaptiveCase> kAdaptive = {
    {{2, 3, 7, 5}, {3, 4}}, {{1, 2, 3, 4}, {5, 7}},    {{2, 2, 6, 6}, {6, 6}},      {{2, 3, 9, 11}, {1, 1}},
    {{1, 2, 1, 1}, {3, 2}}, {{8, 16, 33, 47}, {7, 9}}, {{1, 2, 3, 5000}, {2, 777}}, {{2, 3, 70, 90}, {13, 17}},
    {{3, 10, 13}, {4, 6}},  {{3, 5, 4}, {7, 3}},
};

InterpolateOptions sized(std::array<int64_t, 2> size, InterpolateMode mode, bool align_corners = false) {
  InterpolateOptions o;
  o.size = size;
  o.mode = mode;
  o.align_corners = align_corners;
  return o;
}

InterpolateOptions scaled(std::array<double, 2> scale, InterpolateMode mode, bool align_corners = false) {
  InterpolateOptions o;
  o.scale_factor = scale;
  o.mode = mode;
  o.align_corners = align_corners;
  return o;
}

struct Mode {
  InterpolateMode mode;
  bool align_corners;
};
const Mode kModes[] = {
    {InterpolateMode::Nearest, false}, {InterpolateMode::Bilinear, false}, {InterpolateMode::Bilinear, true}};

struct ResizeCase {
  Shape x;
  std::array<int64_t, 2> size;
};

// Up in one dim and down in the other, exactly 2x (nearest's i / 2 rule),
// identity (in == out), from and to one pixel, shrinking, rows of 5000.
const std::vector<ResizeCase> kResize = {
    {{2, 3, 5, 7}, {9, 4}},       {{1, 2, 4, 4}, {8, 8}},       {{2, 2, 6, 5}, {6, 5}},
    {{1, 1, 1, 1}, {3, 5}},       {{1, 3, 8, 9}, {1, 1}},       {{2, 3, 11, 10}, {4, 3}},
    {{1, 2, 2, 2500}, {3, 5000}}, {{1, 2, 300, 400}, {37, 53}}, {{4, 8, 17, 23}, {40, 41}},
};

}  // namespace

TEST_CASE("cuda adaptive_avg_pool2d matches the CPU bit for bit", "[cuda][adaptive_pool]") {
  for (DType dt : kFloat) {
    uint64_t seed = 1;
    for (const AdaptiveCase& c : kAdaptive) {
      INFO("output size " << c.out[0] << "x" << c.out[1]);
      require_same_graph([&](const Variable& x) { return adaptive_avg_pool2d(x, c.out); }, rnd(c.x, seed++, dt));
    }
    // Strided inputs: a transposed plane and a channel slice.
    require_same_graph(
        [](const Variable& x) {
          return adaptive_avg_pool2d(x, {4, 5});
        },
        rnd({2, 3, 9, 11}, 40, dt), [](const Tensor& t) { return t.transpose(2, 3); });
    require_same_graph(
        [](const Variable& x) {
          return adaptive_avg_pool2d(x, {3, 3});
        },
        rnd({2, 6, 8, 7}, 41, dt), [](const Tensor& t) { return t.narrow(1, 1, 3); });
    // The module: 2 divides 8 x 6 (its avg_pool2d path), 3 does not (this kernel).
    for (int64_t out : {2, 3}) {
      nn::AdaptiveAvgPool2d m(out);
      require_same_graph([&](const Variable& x) { return m(x); }, rnd({2, 3, 8, 6}, 42 + out, dt));
    }
    // NaNs propagate to the same outputs and gradients.
    require_same_graph(
        [](const Variable& x) {
          return adaptive_avg_pool2d(x, {3, 4});
        },
        with_nans({2, 2, 7, 9}, 50, dt));
  }
}

TEST_CASE("cuda adaptive_max_pool2d matches the CPU: values, indices, gradients", "[cuda][adaptive_pool]") {
  for (DType dt : kFloat) {
    uint64_t seed = 100;
    std::vector<Tensor> inputs;
    for (const AdaptiveCase& c : kAdaptive) inputs.push_back(rnd(c.x, seed++, dt));
    for (size_t k = 0; k < kAdaptive.size(); ++k) {
      const AdaptiveCase& c = kAdaptive[k];
      INFO("case " << k << ", output size " << c.out[0] << "x" << c.out[1]);
      // Ties: the first maximum in row-major window order; NaN: the last NaN of the window.
      for (const Tensor& x : {inputs[k], ties(c.x, seed++, dt), with_nans(c.x, seed++, dt)}) {
        const auto [yc, ic] = adaptive_max_pool2d(x, c.out);
        const auto [yg, ig] = adaptive_max_pool2d(x.to(kCuda), c.out);
        require_same(yg, yc);
        require_same(ig, ic);
        // The gradient goes through max_pool2d_backward at the saved indices (overlapping windows share inputs).
        require_same_graph([&](const Variable& v) { return adaptive_max_pool2d(v, c.out); }, x);
      }
    }
    require_same_graph(
        [](const Variable& x) {
          return adaptive_max_pool2d(x, {4, 5});
        },
        rnd({2, 3, 9, 11}, 140, dt), [](const Tensor& t) { return t.transpose(2, 3); });
    nn::AdaptiveMaxPool2d m(nn::Size2(3, 2));
    require_same_graph([&](const Variable& x) { return m(x); }, ties({2, 3, 10, 7}, 141, dt));
  }
}

TEST_CASE("cuda interpolate matches the CPU bit for bit", "[cuda][upsample]") {
  for (DType dt : kFloat) {
    for (const Mode& m : kModes) {
      INFO((m.mode == InterpolateMode::Nearest ? "nearest" : "bilinear") << (m.align_corners ? ", align_corners" : ""));
      uint64_t seed = 200;
      for (const ResizeCase& c : kResize) {
        INFO("size " << c.size[0] << "x" << c.size[1]);
        require_same_graph([&](const Variable& x) { return interpolate(x, sized(c.size, m.mode, m.align_corners)); },
                           rnd(c.x, seed++, dt));
      }
      // From scale factors (PyTorch uses 1 / scale, not in / out, for the source coordinates).
      for (std::array<double, 2> s : {std::array<double, 2>{1.7, 0.6}, {2.0, 3.0}, {0.5, 1.0}, {2.5, 0.35}}) {
        INFO("scale " << s[0] << ", " << s[1]);
        require_same_graph([&](const Variable& x) { return interpolate(x, scaled(s, m.mode, m.align_corners)); },
                           rnd({2, 3, 10, 13}, seed++, dt));
      }
      // Strided input, NaNs, and the module.
      require_same_graph(
          [&](const Variable& x) {
            return interpolate(x, sized({7, 12}, m.mode, m.align_corners));
          },
          rnd({2, 3, 9, 5}, seed++, dt), [](const Tensor& t) { return t.transpose(2, 3); });
      require_same_graph(
          [&](const Variable& x) {
            return interpolate(x, sized({11, 6}, m.mode, m.align_corners));
          },
          with_nans({1, 2, 5, 8}, seed++, dt));
      nn::Upsample up = nn::Upsample::by_scale(2.0, m.mode, m.align_corners);
      require_same_graph([&](const Variable& x) { return up(x); }, rnd({2, 4, 6, 3}, seed++, dt));
    }
  }
}

TEST_CASE("cuda upsample2d on 3-D input and empty batches", "[cuda][upsample][adaptive_pool]") {
  for (DType dt : kFloat) {
    for (const Mode& m : kModes) {
      Upsample2dParams p;
      p.output_size = {7, 4};
      p.mode = m.mode;
      p.align_corners = m.align_corners;
      const Tensor x = rnd({3, 5, 6}, 300, dt), gy = rnd({3, 7, 4}, 301, dt);
      require_same(upsample2d(x.to(kCuda), p), upsample2d(x, p));
      require_same(upsample2d_backward(gy.to(kCuda), x.shape(), p), upsample2d_backward(gy, x.shape(), p));
      const Tensor e = rnd({0, 3, 5, 6}, 302, dt), ge = rnd({0, 3, 7, 4}, 303, dt);
      require_same(upsample2d(e.to(kCuda), p), upsample2d(e, p));
      require_same(upsample2d_backward(ge.to(kCuda), e.shape(), p), upsample2d_backward(ge, e.shape(), p));
    }
    const Tensor e = rnd({2, 0, 5, 6}, 304, dt), ge = rnd({2, 0, 3, 2}, 305, dt);
    require_same(adaptive_avg_pool2d(e.to(kCuda), {3, 2}), adaptive_avg_pool2d(e, {3, 2}));
    require_same(adaptive_avg_pool2d_backward(ge.to(kCuda), e.shape()), adaptive_avg_pool2d_backward(ge, e.shape()));
    require_same(adaptive_max_pool2d(e.to(kCuda), {3, 2}).first, adaptive_max_pool2d(e, {3, 2}).first);
  }
}
