// optim-step-bench: one optimizer step over VGG-11-BN's parameters (9.2 M floats in 34
// tensors), the multi-tensor path (optim/multi_tensor.cpp) against the per-tensor one,
// for SGD (momentum 0.9, weight decay 5e-4, as train_cifar) and Adam; median ms.
//   optim-step-bench [--threads N] [--reps R]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "bench/bench_util.h"
#include <ddl/ddl.h>

using namespace ddl;

namespace {
double time_steps(optim::Optimizer& opt, int reps) {
  std::vector<double> t;
  for (int r = 0; r < reps + 2; ++r) {  // the first two make the state
    const double t0 = bench::now_seconds();
    opt.step();
    if (r >= 2) t.push_back(bench::now_seconds() - t0);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2] * 1e3;
}
}  // namespace

int main(int argc, char** argv) {
  bench::clock_arg(argc, argv);
  const int threads = bench::threads_arg(argc, argv, 1);
  set_num_threads(threads);
  int reps = 15;
  for (int i = 1; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
  auto model = nn::make_model("vgg11_bn", 10, 3, 32);
  std::vector<Variable> params = model->parameters();
  Generator gen(3);
  int64_t numel = 0;
  for (Variable& p : params) p.set_grad(mul(randn(p.shape(), gen), 1e-3)), numel += p.numel();
  const std::vector<std::pair<const char*, std::function<std::unique_ptr<optim::Optimizer>(bool)>>> opts{
      {"sgd",
       [&](bool multi) {
         return std::make_unique<optim::SGD>(
             params, optim::SGDOptions(0.01).momentum(0.9).weight_decay(5e-4).multi_tensor(multi));
       }},
      {"adam",
       [&](bool multi) { return std::make_unique<optim::Adam>(params, optim::AdamOptions(1e-3).multi_tensor(multi)); }},
  };
  for (const auto& [name, make] : opts) {
    // Alternate the paths, three rounds, to spread the machine's noise over both.
    std::vector<double> multi, single;
    for (int round = 0; round < 3; ++round) {
      auto a = make(true), b = make(false);
      multi.push_back(time_steps(*a, reps)), single.push_back(time_steps(*b, reps));
    }
    std::sort(multi.begin(), multi.end()), std::sort(single.begin(), single.end());
    std::printf(
        "{\"bench\":\"optim-step\",\"optimizer\":\"%s\",\"params\":%zu,\"numel\":%lld,\"threads\":%d,"
        "\"multi_tensor_ms\":%.2f,\"per_tensor_ms\":%.2f}\n",
        name, params.size(), static_cast<long long>(numel), threads, multi[1], single[1]);
  }
}
