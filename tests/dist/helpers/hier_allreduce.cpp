// ddlrun test helper for the hierarchical all-reduce (DDL_HIERARCHICAL, docs/dist.md):
// joins the job, all-reduces NUMEL integer-valued floats (rank r holds (r+1)·(i mod 5 - 2)),
// checks every element against the closed form, and prints the group it ran on, the
// median time of ITERS all-reduces, and the bytes this host's interfaces sent during one
// all-reduce (rank with LOCAL_RANK 0; /proc/net/dev of its network namespace, lo excluded).
//   usage: ddl_helper_hier_allreduce NUMEL ITERS
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <ddl/dist/dist.h>
#include <ddl/dist/hier/hierarchical_group.h>
#include <ddl/tensor/core/factory.h>

namespace {
// Bytes sent by every interface but lo.
long long tx_bytes() {
  std::ifstream f("/proc/net/dev");
  std::string line;
  long long total = 0;
  while (std::getline(f, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    name.erase(0, name.find_first_not_of(' '));
    if (name == "lo") continue;
    std::istringstream in(line.substr(colon + 1));
    long long v[9] = {};
    for (auto& x : v) in >> x;
    total += v[8];  // fields: rx bytes packets errs drop fifo frame compressed multicast, then tx bytes
  }
  return total;
}
}  // namespace

int main(int argc, char** argv) {
  using namespace ddl;
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s NUMEL ITERS\n", argv[0]);
    return 2;
  }
  const int64_t numel = std::atoll(argv[1]);
  const int iters = std::atoi(argv[2]);
  auto group = dist::init_process_group("gloo");
  const auto* hier = dynamic_cast<const dist::ProcessGroupHierarchical*>(group.get());
  const int rank = group->rank(), world = group->size();
  const char* lr = std::getenv("LOCAL_RANK");
  const bool reports = lr && std::string(lr) == "0";
  if (rank == 0) std::printf("group: %s\n", hier ? hier->describe().c_str() : "flat");
  std::vector<float> mine(static_cast<size_t>(numel));
  for (int64_t i = 0; i < numel; ++i) mine[i] = static_cast<float>((rank + 1) * (i % 5 - 2));
  const Tensor t = zeros({numel});
  std::vector<double> ms;
  long long sent = 0;
  for (int it = 0; it <= iters; ++it) {  // iteration 0: warm-up, and the one whose bytes are counted
    t.copy_(from_vector(mine));
    group->barrier();
    const long long before = tx_bytes();
    const auto start = std::chrono::steady_clock::now();
    group->all_reduce(t);
    if (it > 0)
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    group->barrier();
    if (it == 1) sent = tx_bytes() - before;
    const float* p = t.data<float>();
    const float k = world * (world + 1) / 2.0f;
    for (int64_t i = 0; i < numel; ++i)
      if (p[i] != k * static_cast<float>(i % 5 - 2)) {
        std::printf("sum wrong at %ld: %f\n", static_cast<long>(i), p[i]);
        return 1;
      }
  }
  std::sort(ms.begin(), ms.end());
  const Tensor slowest = from_vector(std::vector<double>{ms.empty() ? 0.0 : ms[ms.size() / 2]});
  group->all_reduce(slowest, dist::ReduceOp::Max);
  if (rank == 0) std::printf("sum ok; median %.1f ms\n", slowest.item<double>());
  if (reports) std::printf("host_tx_bytes %lld\n", sent);
  dist::destroy_process_group();
  return 0;
}
