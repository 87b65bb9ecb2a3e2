// sgemm throughput through ddl::matmul's kernel (tensor/cpu/sgemm.h) at
// 1024^3 and at the im2col products of VGG-11's CIFAR layers, batch 64:
// C[K, N*P*Q] = W[K, C*R*S] x cols[C*R*S, N*P*Q].
#include <cstdio>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include <ddl/ddl.h>
#include <ddl/tensor/cpu/cpu_level.h>
#include <ddl/tensor/cpu/sgemm.h>

int gemm_bench_main(int argc, char** argv) {
  const int threads = ddl::bench::threads_arg(argc, argv, ddl::get_num_threads());
  ddl::set_num_threads(threads);
  struct Shape3 {
    const char* name;
    int64_t M, N, K;
  };
  const std::vector<Shape3> shapes = {
      {"1024^3", 1024, 1024, 1024},          {"conv1 3->64@32", 64, 65536, 27},
      {"conv2 64->128@16", 128, 16384, 576}, {"conv3 128->256@8", 256, 4096, 1152},
      {"conv4 256->256@8", 256, 4096, 2304}, {"conv5 256->512@4", 512, 1024, 2304},
      {"conv6 512->512@4", 512, 1024, 4608}, {"conv7 512->512@2", 512, 256, 4608},
  };
  ddl::Generator gen(0);
  std::string json = "{\"bench\":\"sgemm\",\"cpu_level\":\"" +
                     std::string(ddl::cpu::cpu_level_name(ddl::cpu::cpu_level())) +
                     "\",\"threads\":" + std::to_string(threads) + ",\"shapes\":[";
  double total_flops = 0, total_secs = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const auto& s = shapes[i];
    const ddl::Tensor a = ddl::randn({s.M, s.K}, gen), b = ddl::randn({s.K, s.N}, gen);
    ddl::Tensor c = ddl::empty({s.M, s.N});
    const double secs = ddl::bench::median_seconds(5, [&] {
      ddl::cpu::sgemm(false, false, s.M, s.N, s.K, 1.0f, a.data<float>(), s.K, b.data<float>(), s.N, 0.0f,
                      c.data<float>(), s.N);
    });
    const double flops = 2.0 * static_cast<double>(s.M * s.N * s.K);
    if (i > 0) total_flops += flops, total_secs += secs;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s{\"name\":\"%s\",\"M\":%ld,\"N\":%ld,\"K\":%ld,\"ms\":%.3f,\"gflops\":%.1f}",
                  i ? "," : "", s.name, static_cast<long>(s.M), static_cast<long>(s.N), static_cast<long>(s.K),
                  secs * 1e3, flops / secs / 1e9);
    json += buf;
  }
  char tail[96];
  std::snprintf(tail, sizeof tail, "],\"vgg_total_gflops\":%.1f}", total_flops / total_secs / 1e9);
  std::printf("%s%s\n", json.c_str(), tail);
  return 0;
}
