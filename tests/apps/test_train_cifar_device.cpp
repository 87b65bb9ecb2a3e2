// train_cifar's device flags where no GPU is usable: --device cuda says there is no GPU,
// and --backend nccl and --share-gpu need --device cuda. train_cifar is found next to this test's build
// folder (build/apps/train_cifar); where it is not built, this program reports itself skipped.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <climits>
#include <cstdio>
#include <filesystem>

#include "tests/common/skip.h"
#include <ddl/tensor/core/devices.h>

using namespace ddl;

namespace {

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

TEST_CASE("train_cifar --device cuda without a GPU says so", "[dist][apps]") {
  const std::string exe = train_cifar_path();
  if (exe.empty()) DDL_SKIP("train_cifar is not built in this build folder (build/apps/train_cifar)");
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
  auto [share_status, share_out] = run("'" + exe + "' --share-gpu" + common);
  INFO(share_out);
  CHECK(share_status == 2);
  CHECK_THAT(share_out, Catch::Contains("--share-gpu needs --device cuda"));
}
