// bn-relu-bench: batch norm + ReLU, fused (detail::batch_norm_relu) against the pair
// relu(batch_norm(x)), forward + backward in training mode on VGG-11-BN's activation
// shapes at batch 64; prints the median ms of each per shape and their totals.
//   bn-relu-bench [--threads N] [--reps R]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

#include "bench/bench_util.h"
#include <ddl/autograd/ops/norm_relu.h>
#include <ddl/ddl.h>

using namespace ddl;

namespace {
double time_one(const Shape& shape, bool fused, int reps) {
  Generator gen(1);
  const Tensor x0 = randn(shape, gen), cot = randn(shape, gen);
  const int64_t c = shape[1];
  Variable w(ones({c}), true), b(zeros({c}), true);
  Tensor rm = zeros({c}), rv = ones({c});
  std::vector<double> t;
  for (int r = 0; r < reps + 1; ++r) {
    Variable x(x0, true);
    const double t0 = bench::now_seconds();
    Variable y = fused ? detail::batch_norm_relu(x, w, b, rm, rv, true) : relu(batch_norm(x, w, b, rm, rv, true));
    y.backward(cot);
    if (r) t.push_back(bench::now_seconds() - t0);  // the first run warms the allocator
    w.zero_grad(), b.zero_grad();
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2] * 1e3;
}
}  // namespace

int main(int argc, char** argv) {
  bench::clock_arg(argc, argv);
  set_num_threads(bench::threads_arg(argc, argv, 1));
  int reps = 9;
  for (int i = 1; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
  const std::vector<Shape> shapes{{64, 64, 32, 32}, {64, 128, 16, 16}, {64, 256, 8, 8}, {64, 256, 8, 8},
                                  {64, 512, 4, 4},  {64, 512, 4, 4},   {64, 512, 2, 2}, {64, 512, 2, 2}};
  double tf = 0, tu = 0;
  for (const Shape& s : shapes) {
    const double f = time_one(s, true, reps), u = time_one(s, false, reps);
    tf += f, tu += u;
    std::ostringstream name;
    name << s;
    std::printf("%-18s fused %7.2f ms  pair %7.2f ms\n", name.str().c_str(), f, u);
  }
  std::printf("{\"bench\":\"bn-relu\",\"fused_ms\":%.2f,\"pair_ms\":%.2f}\n", tf, tu);
}
