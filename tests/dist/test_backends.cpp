// Backend selection where no GPU is usable (these machines): "nccl" fails at once with a
// message naming CUDA and gloo, "auto" is plain gloo, ProcessGroupAuto sends each call to
// the backend of its tensors' device, and train_cifar --device cuda says there is no GPU.
// The GPU side of the nccl backend is tested in tests/cuda/test_nccl.cpp.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <climits>
#include <cstdio>
#include <filesystem>

#include "ddl.h"
#include "dist/dist.h"
#include "dist/process_group_auto.h"
#include "tensor/devices.h"

using namespace ddl;
using namespace ddl::dist;

namespace {

InitOptions world_of_one() {
  InitOptions o;
  o.store = std::make_shared<HashStore>();
  o.rank = 0;
  o.world_size = 1;
  return o;
}

// Runs a command line through the shell; returns its exit status and output (both streams).
std::pair<int, std::string> run(const std::string& cmd) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// build/apps/train_cifar, found from this test's own path (build/tests/dist/...).
std::string train_cifar_path() {
  char exe[PATH_MAX];
  const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0) return "";
  exe[len] = '\0';
  const auto p = std::filesystem::path(exe).parent_path() / ".." / ".." / "apps" / "train_cifar";
  return std::filesystem::exists(p) ? p.string() : "";
}

}  // namespace

TEST_CASE("nccl without a GPU fails at once, naming CUDA and gloo", "[dist]") {
  if (cuda::is_available()) {
    WARN("not applicable: this machine has a GPU (tests/cuda/test_nccl.cpp covers it)");
    return;
  }
  CHECK(!is_backend_available("nccl"));
  CHECK(is_backend_available("gloo"));
  CHECK(is_backend_available("auto"));
  // (Catch's combined matchers hold their parts by pointer: spell them out at each use.)
  REQUIRE_THROWS_WITH(init_process_group("nccl", world_of_one()),
                      Catch::Contains("nccl") && Catch::Contains("CUDA") && Catch::Contains("gloo"));
  REQUIRE(!is_initialized());
  REQUIRE_THROWS_WITH(new_group("nccl", std::make_shared<HashStore>(), 0, 1),
                      Catch::Contains("nccl") && Catch::Contains("CUDA") && Catch::Contains("gloo"));
  REQUIRE_THROWS_WITH(new_group("mpi", std::make_shared<HashStore>(), 0, 1), Catch::Contains("unknown backend 'mpi'"));
}

TEST_CASE("auto follows the tensors' device: plain gloo without a GPU", "[dist]") {
  if (cuda::is_available()) return;  // there it is gloo+nccl (tests/cuda/test_nccl.cpp)
  auto pg = init_process_group("auto", world_of_one());
  REQUIRE(pg->backend() == "gloo");
  Tensor t = full(Shape{3}, 2.0);
  default_group().all_reduce(t);
  REQUIRE(t.data<float>()[0] == 2.0f);
  destroy_process_group();
}

TEST_CASE("ProcessGroupAuto sends CPU tensors to its CPU group and adds the counters", "[dist]") {
  // Two gloo groups stand in for gloo and nccl: every call here has CPU tensors.
  auto cpu = new_group("gloo", std::make_shared<HashStore>(), 0, 1);
  auto other = new_group("gloo", std::make_shared<HashStore>(), 0, 1);
  ProcessGroupAuto pg(cpu, other);
  REQUIRE(pg.backend() == "gloo+gloo");
  REQUIRE((pg.rank() == 0 && pg.size() == 1));
  Tensor t = full(Shape{4}, 3.0), out = zeros(Shape{4});
  pg.all_reduce(t, ReduceOp::Max);
  pg.broadcast(t, 0);
  pg.all_gather(out, t);
  pg.gather(out, t, 0);
  pg.barrier();
  REQUIRE(to_vector<float>(out) == std::vector<float>{3, 3, 3, 3});
  REQUIRE(cpu->stats()[OpKind::AllReduce].calls == 1);
  REQUIRE(cpu->stats()[OpKind::Gather].calls == 1);
  REQUIRE(other->stats()[OpKind::AllReduce].calls == 0);
  other->all_reduce(t);  // counted once, through the sum
  REQUIRE(pg.stats()[OpKind::AllReduce].calls == 2);
  pg.reset_stats();
  REQUIRE(pg.stats()[OpKind::AllReduce].calls == 0);
  REQUIRE(!pg.is_broken());
  REQUIRE_THROWS_WITH(ProcessGroupAuto(cpu, nullptr), Catch::Contains("ProcessGroupAuto"));
}

TEST_CASE("train_cifar --device cuda without a GPU says so", "[dist][apps]") {
  const std::string exe = train_cifar_path();
  if (exe.empty()) {
    WARN("train_cifar is not built next to this test; skipped");
    return;
  }
  const std::string common = " --dataset synthetic --train-samples 8 --test-samples 8 --epochs 1 --no-progress";
  if (!cuda::is_available()) {
    auto [status, out] = run("'" + exe + "' --device cuda" + common);
    INFO(out);
    CHECK(status == 1);
    CHECK_THAT(out, Catch::Contains("--device cuda: no GPU available"));
  }
  auto [status, out] = run("'" + exe + "' --device cpu --backend nccl" + common);
  INFO(out);
  CHECK(status == 2);
  CHECK_THAT(out, Catch::Contains("--backend nccl needs --device cuda"));
}
