// The host-synchronisation and determinism fixes made before the first GPU run (docs/cuda.md,
// "What changed before the first GPU run"): uploads from pageable memory, cross-entropy and
// embedding backward do not wait for earlier GPU work, a bad target is raised at the next
// sync, random draws on the GPU equal the CPU's, max-pool backward equals the CPU bit for
// bit, record_stream holds memory until the other stream is done (the conv algorithm choice
// is tested in test_cuda_dnn.cpp). Skipped (exit 77) without a GPU.
//
// "Does not wait" is checked against long GPU work queued first: about 40 fp32 GEMMs of
// 4096^3 (tens of milliseconds on an H100); the call under test must return long before.
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstring>
#include <vector>

#include <ddl/ddl.h>
#include <ddl/tensor/core/devices.h>

using namespace ddl;

namespace {
const Device kGpu = Device::cuda(0);
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// Queues long GPU work on the current stream and returns at once (launches are asynchronous).
void queue_busy_work(const Tensor& a, int gemms = 40) {
  for (int i = 0; i < gemms; ++i) (void)matmul(a, a);
}

Tensor busy_operand() {
  Generator g(1);
  return rand({4096, 4096}, g, TensorOptions(DType::Float32, kGpu));
}

// The GPU work queued so far takes at least `min_ms` more after this point (the premise of
// the "does not wait" checks: without it they could pass vacuously).
void require_gpu_busy_for(Clock::time_point queued_at, double min_ms) {
  cuda::synchronize(0);
  REQUIRE(ms_since(queued_at) > min_ms);
}
}  // namespace

TEST_CASE("an upload from pageable memory does not wait for earlier GPU work", "[cuda][copy][hotpath]") {
  const Tensor a = busy_operand();
  cuda::synchronize(0);
  std::vector<float> host(1 << 20, 1.0f);
  const Tensor src = from_vector<float>(host, {1 << 20});
  (void)src.to(kGpu);  // the first upload of this size allocates its pinned staging block
  cuda::synchronize(0);
  const auto t0 = Clock::now();
  queue_busy_work(a);
  const Tensor dst = src.to(kGpu);
  const double upload_ms = ms_since(t0);
  // The source may be overwritten as soon as to() returns: the bytes were staged.
  std::memset(src.raw_data(), 0, src.nbytes());
  INFO("upload returned after " << upload_ms << " ms");
  require_gpu_busy_for(t0, 20.0);
  CHECK(upload_ms < 10.0);
  const auto got = to_vector<float>(dst);
  REQUIRE(got == host);
}

TEST_CASE("cross_entropy does not wait for the GPU; a bad target is raised at the next sync", "[cuda][loss][hotpath]") {
  Generator g(3);
  const Tensor logits = randn({64, 10}, g, TensorOptions(DType::Float32, kGpu));
  const Tensor good = randint(0, 10, {64}, g, TensorOptions(DType::Int64, kGpu));
  const Tensor a = busy_operand();
  (void)cross_entropy(logits, good);  // the first call maps the error record (cudaHostAlloc)
  cuda::synchronize(0);
  const auto t0 = Clock::now();
  queue_busy_work(a);
  const Tensor loss = cross_entropy(logits, good);
  const double call_ms = ms_since(t0);
  INFO("cross_entropy returned after " << call_ms << " ms");
  require_gpu_busy_for(t0, 20.0);
  CHECK(call_ms < 10.0);
  REQUIRE(std::isfinite(to_vector<float>(loss)[0]));

  // A bad target: no throw at the call, the error at the copy that reads the loss, once.
  const Tensor bad = from_vector<int64_t>({0, 1, 12, 3}, {4}).to(kGpu);
  Tensor bad_loss;
  REQUIRE_NOTHROW(bad_loss = cross_entropy(logits.narrow(0, 0, 4), bad));
  REQUIRE_THROWS_WITH(to_vector<float>(bad_loss),
                      Catch::Contains("cross_entropy") && Catch::Contains("target 12") && Catch::Contains("sample 2"));
  REQUIRE_NOTHROW(cuda::synchronize(0));  // raised once, then cleared
  // cuda::synchronize is a sync point too; nll_loss names itself.
  (void)nll_loss(log_softmax(logits.narrow(0, 0, 4), 1), from_vector<int64_t>({-7, 1, 2, 3}, {4}).to(kGpu));
  REQUIRE_THROWS_WITH(cuda::synchronize(0), Catch::Contains("nll_loss") && Catch::Contains("target -7"));
  // The device stays usable.
  REQUIRE(std::isfinite(to_vector<float>(cross_entropy(logits, good))[0]));
}

TEST_CASE("embedding backward does not read the indices back again", "[cuda][embedding][hotpath]") {
  Generator g(5);
  const Tensor w_cpu = randn({1000, 64}, g), idx_cpu = randint(0, 1000, {4096}, g);
  const Tensor idx = idx_cpu.to(kGpu);
  Variable w(w_cpu.to(kGpu), true);
  const Tensor a = busy_operand();
  sum(embedding(idx, w)).backward();             // the first call allocates its scratch
  const Variable loss = sum(embedding(idx, w));  // the forward checks the range (one read-back)
  w.zero_grad();
  cuda::synchronize(0);
  const auto t0 = Clock::now();
  queue_busy_work(a);
  loss.backward();
  const double call_ms = ms_since(t0);
  INFO("embedding backward returned after " << call_ms << " ms");
  require_gpu_busy_for(t0, 20.0);
  CHECK(call_ms < 10.0);
  Variable w_ref(w_cpu, true);
  sum(embedding(idx_cpu, w_ref)).backward();
  REQUIRE(to_vector<float>(w.grad()) == to_vector<float>(w_ref.grad()));  // counts of each row: exact
}

TEST_CASE("random draws on the GPU equal the CPU's for the same generator", "[cuda][random][hotpath]") {
  for (const DType dt : {DType::Float32, DType::Float64}) {
    INFO("dtype " << dt);
    Generator gc(123), gg(123);
    gc.set_offset(5), gg.set_offset(5);
    const TensorOptions cpu(dt), gpu(dt, kGpu);
    // Bit for bit: uniform, bernoulli, uniform_ (integer arithmetic and one fma).
    REQUIRE(to_vector<double>(rand({1000}, gg, gpu).to(Device::cpu())) == to_vector<double>(rand({1000}, gc, cpu)));
    REQUIRE(to_vector<double>(bernoulli({1000}, 0.25, gg, gpu).to(Device::cpu())) ==
            to_vector<double>(bernoulli({1000}, 0.25, gc, cpu)));
    Tensor uc = empty({777}, cpu), ug = empty({777}, gpu);
    uniform_(uc, -3.0, 5.0, gc);
    uniform_(ug, -3.0, 5.0, gg);
    REQUIRE(to_vector<double>(ug.to(Device::cpu())) == to_vector<double>(uc));
    // randn: log and cos come from glibc on the CPU and libdevice on the GPU (a few ulp).
    const auto zc = to_vector<double>(randn({4096}, gc, cpu));
    const auto zg = to_vector<double>(randn({4096}, gg, gpu).to(Device::cpu()));
    const double rel = dt == DType::Float64 ? 1e-14 : 2.5e-7;
    for (size_t i = 0; i < zc.size(); ++i) REQUIRE(std::abs(zg[i] - zc[i]) <= rel * (std::abs(zc[i]) + 1e-30) * 4);
    REQUIRE(gc.offset() == gg.offset());
  }
  Generator gc(9), gg(9);
  REQUIRE(to_vector<int64_t>(randint(-50, 50, {999}, gg, TensorOptions(DType::Int64, kGpu)).to(Device::cpu())) ==
          to_vector<int64_t>(randint(-50, 50, {999}, gc)));
  // Dropout masks come from bernoulli on the tensor's device: the same mask on both.
  Generator dc(4), dg(4);
  const Tensor x = ones({8, 33});
  const Variable yc = dropout(Variable(x), 0.4, true, dc), yg = dropout(Variable(x.to(kGpu)), 0.4, true, dg);
  REQUIRE(to_vector<float>(yg.data().to(Device::cpu())) == to_vector<float>(yc.data()));
}

TEST_CASE("max-pool backward with overlapping windows equals the CPU in every run", "[cuda][pool][hotpath]") {
  Generator g(8);
  for (const auto& [k, st] : std::vector<std::pair<int64_t, int64_t>>{{3, 1}, {3, 2}, {5, 2}}) {
    Pool2dParams p;
    p.kernel = {k, k}, p.stride = {st, st}, p.padding = {k / 2, k / 2};
    // Few distinct values: many ties, so one input is the argmax of several windows.
    const Tensor x = randint(0, 4, {4, 8, 17, 19}, g, DType::Float32);
    const auto [y, idx] = max_pool2d_with_indices(x, p);
    const Tensor gy = randn(y.shape(), g);
    const auto want = to_vector<float>(max_pool2d_backward(gy, idx, x.shape()));
    const Tensor gy_gpu = gy.to(kGpu), idx_gpu = idx.to(kGpu);
    for (int run = 0; run < 3; ++run)
      REQUIRE(to_vector<float>(max_pool2d_backward(gy_gpu, idx_gpu, x.shape()).to(Device::cpu())) == want);
  }
}

TEST_CASE("record_stream: freed memory is reused only after the other stream's work", "[cuda][allocator][hotpath]") {
  cuda::empty_cache();
  const Tensor a = busy_operand();
  const int64_t n = 3 << 20;  // 12 MiB: a segment of its own, no tail to hand out
  Tensor x = zeros({n}, TensorOptions(DType::Float32, kGpu));
  cuda::synchronize(0);
  void* const block = x.raw_data();
  const cuda::Stream side = cuda::Stream::create(0);
  {
    cuda::StreamGuard guard(side);
    queue_busy_work(a, 20);
    x.add_(1.0);  // x is used on `side`, long after this point
  }
  cuda::record_stream(x, side);
  x = Tensor();  // freed while `side` still has work on it
  const Tensor other = empty({n}, TensorOptions(DType::Float32, kGpu));
  REQUIRE(other.raw_data() != block);  // not handed out while `side` may still write it
  side.synchronize();
  const Tensor again = empty({n}, TensorOptions(DType::Float32, kGpu));
  REQUIRE(again.raw_data() == block);  // reusable once that work is done
}
