// StepTimer and DeviceMark on a GPU, set_current_device, and train_cifar --device cuda:
// a phase that queues long GPU work is long although the host queued it at once, and is
// read after one sync; the loss read only on shown steps sums to the same train loss as
// reading every step. Exits 77 (skipped) without a GPU: it cannot run on the CPU.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <climits>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "tests/common/skip.h"
#include <ddl/dist/init.h>
#include <ddl/report/step_timer.h>
#include <ddl/tensor/core/devices.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using report::Phase;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

void need_gpu() {
  if (!cuda::is_available()) DDL_SKIP("needs a GPU: ddl::cuda::device_count() is 0");
}

// Some 20 ms of GPU work (8 fp32 4096^3 products) queued in well under a millisecond.
Tensor queue_work(const Tensor& a) {
  Tensor c = a;
  for (int i = 0; i < 8; ++i) c = matmul(a, a);
  return c;
}

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

// build/apps/<name>, found from this test's own path (build/tests/report/...).
std::string app_path(const char* name) {
  char exe[PATH_MAX];
  const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0) return "";
  exe[len] = '\0';
  const auto p = std::filesystem::path(exe).parent_path() / ".." / ".." / "apps" / name;
  return std::filesystem::exists(p) ? p.string() : "";
}

// "epoch E: train loss L, train accuracy A%" -> L
double train_loss(const std::string& out, int epoch) {
  std::smatch m;
  const std::regex re("epoch " + std::to_string(epoch) + ": train loss ([0-9.]+)");
  REQUIRE(std::regex_search(out, m, re));
  return std::stod(m[1]);
}

}  // namespace

TEST_CASE("DeviceMark on a GPU: the time the GPU took, not the time to queue it", "[cuda]") {
  need_gpu();
  const Device gpu = Device::cuda(0);
  const Tensor a = randn({4096, 4096}).to(gpu);
  (void)queue_work(a).sum().item();  // warm-up: cuBLAS handle, workspace, allocator
  const auto h0 = Clock::now();
  const DeviceMark m0 = DeviceMark::record(gpu);
  const Tensor c = queue_work(a);
  const DeviceMark m1 = DeviceMark::record(gpu);
  const double queued = since(h0);
  (void)c.sum().item();  // the one sync
  const double host = since(h0);
  const double gpu_s = m0.seconds_until(m1);
  INFO("queued in " << queued << " s, GPU " << gpu_s << " s, host until the result " << host << " s");
  CHECK(gpu_s > queued);
  CHECK(gpu_s >= 0.5 * host);
  CHECK(gpu_s <= host + 1e-3);
  CHECK(m0.seconds_until(m0) == 0);
}

TEST_CASE("StepTimer(cuda): the GPU time lands in the phase that queued it, read after one sync", "[cuda]") {
  need_gpu();
  const Device gpu = Device::cuda(0);
  const Tensor a = randn({4096, 4096}).to(gpu);
  (void)queue_work(a).sum().item();
  report::StepTimer timer(gpu);
  timer.begin_epoch();
  for (int step = 0; step < 2; ++step) {
    timer.start(Phase::Data);
    timer.start(Phase::Forward);
    Tensor c = queue_work(a);
    timer.start(Phase::Backward);
    c = c * 2.0;
    timer.stop();
    timer.end_step();
    if (step == 1) (void)c.sum().item();  // the second step's sync covers both
  }
  CHECK(timer.pending() == 2);
  const std::vector<report::StepTimes> steps = timer.resolve();
  REQUIRE(steps.size() == 2);
  for (const report::StepTimes& s : steps) {
    CHECK(s.phase(Phase::Forward) > 0.002);
    CHECK(s.phase(Phase::Forward) > 5 * s.phase(Phase::Backward));
    CHECK(s.phase(Phase::Forward) >= 0.5 * s.total_s);
    CHECK(s.other_s() >= -1e-6);
  }
  CHECK(timer.end_epoch().steps == 2);
}

TEST_CASE("set_current_device makes a GPU the current one; the CPU changes nothing", "[cuda]") {
  need_gpu();
  set_current_device(Device::cuda(0));
  CHECK(current_device() == Device::cuda(0));
  set_current_device(Device::cpu());
  CHECK(current_device() == Device::cuda(0));
  CHECK_THROWS_AS(set_current_device(Device::cuda(cuda::device_count())), Error);
}

TEST_CASE("train_cifar --device cuda: GPU phase times, loss read only when shown", "[cuda][apps]") {
  need_gpu();
  const std::string exe = app_path("train_cifar");
  if (exe.empty()) DDL_SKIP("train_cifar is not built in this build folder (build/apps/train_cifar)");
  const std::string dir = std::filesystem::temp_directory_path() / ("ddl_step_timer_cuda_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string common =
      "'" + exe +
      "' --dataset synthetic --model mlp --train-samples 512 --test-samples 64 --batch-size 32 --epochs 2 "
      "--threads 1 --no-progress --seed 3 ";
  // Every step read (--metrics), only batches 0 and 15 read, and the CPU.
  auto [s_every, every] = run(common + "--device cuda --log-every 1 --metrics " + dir + "/m.jsonl");
  auto [s_shown, shown] = run(common + "--device cuda --log-every 100");
  auto [s_cpu, cpu] = run(common + "--device cpu --log-every 100");
  INFO(every << "\n----\n" << shown << "\n----\n" << cpu);
  REQUIRE(s_every == 0);
  REQUIRE(s_shown == 0);
  REQUIRE(s_cpu == 0);
  CHECK_THAT(shown, Catch::Contains("step times are GPU time"));
  CHECK_THAT(shown, Catch::Contains("epoch 2 batch   15:"));
  for (int e = 1; e <= 2; ++e) {
    CHECK(train_loss(shown, e) == Approx(train_loss(every, e)).epsilon(1e-3));
    CHECK(train_loss(shown, e) == Approx(train_loss(cpu, e)).epsilon(2e-2));
  }
  std::ifstream in(dir + "/m.jsonl");
  int steps = 0;
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j.value("event", "") != "step") continue;
    ++steps;
    double sum = 0;
    for (const char* k : {"data_s", "forward_s", "backward_s", "comm_wait_s", "optimizer_s"}) sum += j[k].get<double>();
    CHECK(j["forward_s"].get<double>() > 0);
    CHECK(j["backward_s"].get<double>() > 0);
    CHECK(sum <= j["total_s"].get<double>() + 1e-6);
  }
  CHECK(steps == 32);
  std::filesystem::remove_all(dir);

  // Two ranks on one GPU over NCCL, as ddlrun --share-gpu runs them.
  const std::string ddlrun = app_path("ddlrun");
  if (ddlrun.empty() || !dist::is_backend_available("nccl")) return;
  auto [s_two, two] = run("'" + ddlrun + "' --nproc 2 " + common + "--device cuda --share-gpu --backend auto");
  INFO(two);
  CHECK(s_two == 0);
  CHECK_THAT(two, Catch::Contains("comm wait is the GPU's wait"));
}
