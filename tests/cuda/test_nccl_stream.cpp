// The nccl group's host-side behaviour on one GPU (world 1, in this process; skipped with
// exit 77 without a GPU): Work::wait() makes the current stream wait instead of the host
// (Note [NCCL Work::wait]), barrier() blocks the host until the GPU is done, the auto
// group's barrier waits for NCCL work too, and the watchdog does not burn a core while an
// operation is pending (Note [NCCL stream ordering]). Two-process cases are test_nccl_ranks.
#include <sys/resource.h>
#include <time.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include <ddl/ddl.h>
#include <ddl/dist/dist.h>
#include <ddl/dist/process_group_auto.h>
#include <ddl/tensor/core/devices.h>

using namespace ddl;
using namespace ddl::dist;

namespace {
const Device kGpu = Device::cuda(0);
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

InitOptions quick() {
  InitOptions o;
  o.timeout = Millis(60000);
  return o;
}

// Warmed up: the first GEMM of a process creates the cuBLAS handle and its workspace,
// loads the kernel and allocates the output, which would fall inside a timed wait.
Tensor busy_operand() {
  Generator g(1);
  Tensor a = rand({4096, 4096}, g, TensorOptions(DType::Float32, kGpu));
  (void)matmul(a, a);
  cuda::synchronize(0);
  return a;
}

// Long GPU work on the current stream (tens of ms on an H100); returns at once.
void queue_busy_work(const Tensor& a, int gemms = 40) {
  for (int i = 0; i < gemms; ++i) (void)matmul(a, a);
}

double process_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}
}  // namespace

TEST_CASE("nccl Work::wait orders the current stream and returns without waiting for the GPU",
          "[cuda][nccl][hotpath]") {
  auto pg = new_group("nccl", std::make_shared<HashStore>(), 0, 1, quick());
  const Tensor a = busy_operand();
  Tensor t = full(Shape{1 << 16}, 3.0, TensorOptions(DType::Float32, kGpu));
  pg->all_reduce(t);  // creates the communicator outside the timed part
  cuda::synchronize(0);
  const auto t0 = Clock::now();
  queue_busy_work(a);
  auto work = pg->all_reduce_async(t);
  work->wait();
  const double wait_ms = ms_since(t0);
  t.mul_(2.0);  // queued behind the all-reduce by the wait
  const bool done_right_after = work->is_completed();
  cuda::synchronize(0);
  const double gpu_ms = ms_since(t0);
  INFO("wait returned after " << wait_ms << " ms; the GPU finished after " << gpu_ms << " ms");
  REQUIRE(gpu_ms > 20.0);
  CHECK(wait_ms < 10.0);
  CHECK(!done_right_after);
  REQUIRE(to_vector<float>(t)[12345] == 6.0f);  // world 1: the sum is the tensor itself
}

TEST_CASE("nccl barrier blocks the host until the earlier GPU work is done", "[cuda][nccl][hotpath]") {
  auto pg = new_group("nccl", std::make_shared<HashStore>(), 0, 1, quick());
  const Tensor a = busy_operand();
  pg->barrier();
  cuda::synchronize(0);
  const auto t0 = Clock::now();
  queue_busy_work(a);
  Tensor t = ones(Shape{16}, TensorOptions(DType::Float32, kGpu));
  auto work = pg->all_reduce_async(t);
  pg->barrier();
  INFO("barrier returned after " << ms_since(t0) << " ms");
  REQUIRE(work->is_completed());
}

TEST_CASE("auto group: barrier waits for NCCL work as well as gloo's", "[cuda][nccl][hotpath]") {
  auto pg = new_group("auto", std::make_shared<HashStore>(), 0, 1, quick());
  const Tensor a = busy_operand();
  Tensor t = ones(Shape{16}, TensorOptions(DType::Float32, kGpu));
  pg->all_reduce(t);
  cuda::synchronize(0);
  queue_busy_work(a);
  auto work = pg->all_reduce_async(t);
  pg->barrier();
  REQUIRE(work->is_completed());  // a gloo-only barrier would return while the GEMMs run
  Tensor cpu = ones(Shape{4});
  pg->all_reduce(cpu);
  REQUIRE(to_vector<float>(cpu)[0] == 1.0f);
}

TEST_CASE("the nccl watchdog sleeps while an operation is pending", "[cuda][nccl][hotpath]") {
  auto pg = new_group("nccl", std::make_shared<HashStore>(), 0, 1, quick());
  const Tensor a = busy_operand();
  Tensor t = ones(Shape{16}, TensorOptions(DType::Float32, kGpu));
  pg->all_reduce(t);
  cuda::synchronize(0);
  queue_busy_work(a, 200);  // a few hundred ms of GPU work
  auto work = pg->all_reduce_async(t);
  const double cpu0 = process_cpu_ms();
  const auto t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // this thread idles; the watchdog polls
  const double cpu_ms = process_cpu_ms() - cpu0, wall_ms = ms_since(t0);
  const bool still_pending = !work->is_completed();
  cuda::synchronize(0);
  INFO("process CPU time " << cpu_ms << " ms over " << wall_ms << " ms of wall time");
  REQUIRE(still_pending);         // the premise: the watchdog had something to poll throughout
  CHECK(cpu_ms < 0.1 * wall_ms);  // a 50 us poll loop used a large part of a core
  work->wait();
}
