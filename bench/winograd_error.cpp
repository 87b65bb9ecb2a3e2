// winograd-error: the float32 error of conv2d's algorithms (im2col, Winograd F(2x2, 3x3)
// and F(4x4, 3x3), forced with winograd::set_mode) against the same convolution in
// float64, for forward, input gradient and weight gradient on VGG layer shapes with
// N(0, 1) inputs and gradients and He-initialised weights (N(0, 2 / (9 C))). Prints
// the markdown table of docs/tensor.md ("Winograd accuracy"). Usage: winograd-error [batch]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <ddl/ddl.h>
#include <ddl/tensor/cpu/winograd.h>

namespace {

namespace wg = ddl::cpu::winograd;

struct Err {
  double abs, rel;  // max |got - want|, and that over max |want|
};

Err error_of(const ddl::Tensor& got, const ddl::Tensor& want) {
  const ddl::Tensor g = got.to(ddl::DType::Float64).contiguous(), e = want.contiguous();
  const double* gp = g.data<double>();
  const double* ep = e.data<double>();
  double scale = 0, worst = 0;
  for (int64_t i = 0; i < e.numel(); ++i) {
    scale = std::max(scale, std::abs(ep[i]));
    worst = std::max(worst, std::abs(gp[i] - ep[i]));
  }
  return {worst, worst / scale};
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t batch = argc > 1 ? std::atoll(argv[1]) : 8;
  struct Layer {
    int64_t C, K, H;
  };
  // VGG's 3x3 layers with >= 64 channels on CIFAR's maps (the first is VGG-13/16's).
  const Layer layers[] = {{64, 64, 32},  {64, 128, 16}, {128, 256, 8}, {256, 256, 8},
                          {256, 512, 4}, {512, 512, 4}, {512, 512, 2}};
  const wg::Mode modes[] = {wg::Mode::off, wg::Mode::f2, wg::Mode::f4};
  auto f64 = [](const ddl::Tensor& t) { return t.to(ddl::DType::Float64); };
  ddl::Conv2dParams p;
  p.padding = {1, 1};
  std::printf("batch %lld; each cell: max abs error / (that over max |float64 result|)\n\n", (long long)batch);
  std::printf("| layer (C->K @ map) | result | im2col | F(2x2, 3x3) | F(4x4, 3x3) |\n|---|---|---|---|---|\n");
  ddl::Generator gen(7);
  for (const Layer& l : layers) {
    const ddl::Tensor x = ddl::randn({batch, l.C, l.H, l.H}, gen);
    const ddl::Tensor w = ddl::mul(ddl::randn({l.K, l.C, 3, 3}, gen), std::sqrt(2.0 / double(9 * l.C)));
    const ddl::Tensor gy = ddl::randn({batch, l.K, l.H, l.H}, gen);
    const ddl::Tensor y64 = ddl::conv2d(f64(x), f64(w), ddl::Tensor(), p);
    const ddl::Tensor gx64 = ddl::conv2d_backward_input(f64(gy), f64(w), x.shape(), p);
    const ddl::Tensor gw64 = ddl::conv2d_backward_weight(f64(gy), f64(x), w.shape(), p);
    Err e[3][3];
    for (int m = 0; m < 3; ++m) {
      wg::set_mode(modes[m]);
      e[0][m] = error_of(ddl::conv2d(x, w, ddl::Tensor(), p), y64);
      e[1][m] = error_of(ddl::conv2d_backward_input(gy, w, x.shape(), p), gx64);
      e[2][m] = error_of(ddl::conv2d_backward_weight(gy, x, w.shape(), p), gw64);
    }
    const char* names[] = {"y", "dx", "dw"};
    for (int r = 0; r < 3; ++r) {
      std::printf("| %lld->%lld @ %lldx%lld | %s |", (long long)l.C, (long long)l.K, (long long)l.H, (long long)l.H,
                  names[r]);
      for (int m = 0; m < 3; ++m) std::printf(" %.1e / %.1e |", e[r][m].abs, e[r][m].rel);
      std::printf("\n");
    }
  }
  wg::set_mode(wg::Mode::automatic);
  return 0;
}
