// `ddl-bench conv`: times conv2d forward, backward-input and backward-weight
// (float32, CPU) at the VGG-11 CIFAR layer shapes, batch 64, and prints one
// JSON line. Median of --reps runs after one warm-up. FLOPs of a forward are
// 2 N K P Q C R S; forward + both backward products count 3x that.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include <ddl/tensor/cpu/cpu_level.h>
#include <ddl/tensor/ops.h>

namespace {

struct Layer {
  int64_t C, K, H;
};

// VGG-11 on 32x32 inputs: every conv is 3x3, stride 1, padding 1.
const Layer kVggLayers[] = {{3, 64, 32},   {64, 128, 16}, {128, 256, 8}, {256, 256, 8},
                            {256, 512, 4}, {512, 512, 4}, {512, 512, 2}};

template <typename Fn>
double median_ms(int reps, const Fn& fn) {
  return ddl::bench::median_seconds(reps, fn) * 1e3;
}

}  // namespace

int conv_bench_main(int argc, char** argv) {
  int threads = ddl::get_num_threads(), reps = 7;
  int64_t batch = 64;
  for (int i = 1; i + 1 < argc; ++i) {
    if (!std::strcmp(argv[i], "--threads"))
      threads = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--reps"))
      reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--batch"))
      batch = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--clock"))
      ++i;
  }
  ddl::set_num_threads(std::max(threads, 1));
  ddl::Generator gen(42);
  ddl::Conv2dParams p;
  p.padding = {1, 1};

  std::string layers;
  double total_flops = 0, total_ms = 0;
  for (const Layer& l : kVggLayers) {
    const ddl::Tensor x = ddl::randn({batch, l.C, l.H, l.H}, gen);
    const ddl::Tensor w = ddl::mul(ddl::randn({l.K, l.C, 3, 3}, gen), 0.05);
    const ddl::Tensor b = ddl::zeros({l.K});
    const ddl::Tensor gy = ddl::randn({batch, l.K, l.H, l.H}, gen);
    const double fwd = median_ms(reps, [&] { ddl::conv2d(x, w, b, p); });
    const double bwd_in = median_ms(reps, [&] { ddl::conv2d_backward_input(gy, w, x.shape(), p); });
    const double bwd_w = median_ms(reps, [&] {
      ddl::conv2d_backward_weight(gy, x, w.shape(), p);
      ddl::conv2d_backward_bias(gy);
    });
    const double flops = 2.0 * double(batch * l.K * l.H * l.H * l.C * 9) * 3.0;
    const double ms = fwd + bwd_in + bwd_w;
    total_flops += flops, total_ms += ms;
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "%s{\"shape\":\"%lldx%lld@%lld\",\"fwd_ms\":%.3f,\"bwd_ms\":%.3f,\"bwd_input_ms\":%.3f,"
                  "\"bwd_weight_ms\":%.3f,\"gflops\":%.1f}",
                  layers.empty() ? "" : ",", (long long)l.C, (long long)l.K, (long long)l.H, fwd, bwd_in + bwd_w,
                  bwd_in, bwd_w, flops / ms * 1e-6);
    layers += buf;
  }
  std::printf(
      "{\"bench\":\"conv2d\",\"cpu_level\":\"%s\",\"threads\":%d,\"batch\":%lld,\"layers\":[%s],\"total_gflops\":%.1f,"
      "\"total_ms\":%.3f}\n",
      ddl::cpu::cpu_level_name(ddl::cpu::cpu_level()), ddl::get_num_threads(), (long long)batch, layers.c_str(),
      total_flops / total_ms * 1e-6, total_ms);
  return 0;
}
