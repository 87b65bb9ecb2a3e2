// The CUDA backend's foundation on a real GPU: copies between CPU and GPU, the caching
// allocator's statistics, streams and events, pinned memory and device-index errors.
// Skipped (exit 77) without a GPU; copies between GPUs are test_cuda_multi_gpu.
#include <catch2/catch.hpp>
#include <cstdint>
#include <sstream>
#include <vector>

#include <ddl/ddl.h>
#include <ddl/tensor/core/devices.h>

using namespace ddl;

namespace {
const Device kGpu = Device::cuda(0);

template <typename T>
std::vector<T> iota_values(int64_t n) {
  std::vector<T> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<T>((i * 7) % 101);
  return v;
}

template <typename T>
void check_round_trip(const Shape& shape) {
  const auto values = iota_values<T>(shape.numel());
  const Tensor h = from_vector<T>(values, shape);
  const Tensor d = h.to(kGpu);
  REQUIRE(d.device() == kGpu);
  REQUIRE(d.dtype() == h.dtype());
  REQUIRE(d.shape() == shape);
  const Tensor back = d.to(Device::cpu());
  REQUIRE(back.device().is_cpu());
  REQUIRE(to_vector<T>(back) == values);
  REQUIRE(to_vector<T>(d) == values);  // to_vector routes through the CPU itself
}
}  // namespace

TEST_CASE("CPU -> CUDA -> CPU round trips keep every dtype's values", "[cuda][copy]") {
  check_round_trip<float>({3, 5});
  check_round_trip<double>({7});
  check_round_trip<int64_t>({2, 3, 4});
  check_round_trip<int32_t>({1000});
  check_round_trip<uint8_t>({5, 5});
  check_round_trip<float>({3, 0});  // empty
  check_round_trip<float>({});      // scalar
  REQUIRE(full({2}, 2.5, TensorOptions(DType::Float32, kGpu)).to(Device::cpu()).item() == 2.5);
}

TEST_CASE("non-contiguous views and dtype changes cross devices correctly", "[cuda][copy]") {
  const Tensor h = from_vector<float>(iota_values<float>(24), {2, 3, 4});
  // A permuted CPU view goes up and comes back equal to its CPU contiguous copy.
  const Tensor hp = h.permute({2, 0, 1});
  REQUIRE(to_vector<float>(hp.to(kGpu)) == to_vector<float>(hp.contiguous()));
  // A strided CUDA view comes down.
  const Tensor d = h.to(kGpu);
  const Tensor ds = d.slice(2, 1, 4, 2);
  REQUIRE(to_vector<float>(ds) == to_vector<float>(h.slice(2, 1, 4, 2)));
  // copy_ from the CPU into a CUDA view, with a dtype change and broadcasting.
  const Tensor target = zeros({2, 3, 4}, TensorOptions(DType::Float32, kGpu));
  target.narrow(1, 1, 2).copy_(from_vector<double>({1.5, -2.0, 3.0, 4.25}, {4}));
  Tensor expect = zeros({2, 3, 4});
  expect.narrow(1, 1, 2).copy_(from_vector<double>({1.5, -2.0, 3.0, 4.25}, {4}));
  REQUIRE(to_vector<float>(target) == to_vector<float>(expect));
  // copy_ from CUDA into a transposed CPU view with another dtype.
  const Tensor out = zeros({4, 3}, DType::Float64);
  out.t().copy_(d.select(0, 1));
  REQUIRE(to_vector<double>(out) == to_vector<double>(h.select(0, 1).t().to(DType::Float64)));
  // Printing a CUDA tensor reads it through the CPU.
  std::ostringstream os;
  os << from_vector<float>({1, 2}).to(kGpu);
  REQUIRE(os.str() == "tensor([1.0000, 2.0000], dtype=float32, shape=[2], device=cuda:0)");
}

TEST_CASE("random tensors on CUDA equal the CPU ones for the same generator", "[cuda][random]") {
  Generator g1(42), g2(42);
  REQUIRE(to_vector<float>(randn({100}, g1, TensorOptions(DType::Float32, kGpu))) ==
          to_vector<float>(randn({100}, g2, DType::Float32)));
}

TEST_CASE("memory_stats follow allocations, frees and empty_cache", "[cuda][allocator]") {
  cuda::synchronize();
  cuda::empty_cache();
  const MemoryStats s0 = cuda::memory_stats(0);
  REQUIRE(s0.allocated_bytes >= 0);
  {
    const Tensor a = empty({1000}, TensorOptions(DType::Float32, kGpu));  // 4000 B -> 4096 B
    const MemoryStats s1 = cuda::memory_stats(0);
    REQUIRE(s1.allocated_bytes == s0.allocated_bytes + 4096);
    REQUIRE(s1.reserved_bytes >= s0.reserved_bytes);
    REQUIRE(s1.peak_allocated_bytes >= s1.allocated_bytes);
    const Tensor big = empty({3 << 20}, TensorOptions(DType::Float32, kGpu));  // 12 MiB: own segment
    REQUIRE(cuda::memory_stats(0).reserved_bytes >= s1.reserved_bytes + (12 << 20));
  }
  const MemoryStats s2 = cuda::memory_stats(0);
  REQUIRE(s2.allocated_bytes == s0.allocated_bytes);
  REQUIRE(s2.reserved_bytes > s0.reserved_bytes);  // cached for reuse
  // Same size, same stream: the cached block comes back.
  void* first = nullptr;
  { first = empty({4096}, TensorOptions(DType::Float32, kGpu)).raw_data(); }
  { REQUIRE(empty({4096}, TensorOptions(DType::Float32, kGpu)).raw_data() == first); }
  cuda::empty_cache();
  REQUIRE(cuda::memory_stats(0).reserved_bytes == s0.reserved_bytes);
}

TEST_CASE("streams: guards set and restore the current stream; events order work", "[cuda][stream]") {
  const cuda::Stream def = cuda::current_stream(0);
  REQUIRE(def.handle() == nullptr);
  const cuda::Stream s = cuda::Stream::create(0);
  REQUIRE(s.handle() != nullptr);
  REQUIRE(s.device() == 0);
  {
    cuda::StreamGuard g(s);
    REQUIRE(cuda::current_stream(0) == s);
  }
  REQUIRE(cuda::current_stream(0) == def);

  // x is made on the default stream, filled on s, read back on the default stream:
  // two events make each stream wait for the other.
  const Tensor x = zeros({1 << 22}, TensorOptions(DType::Float32, kGpu));
  cuda::Event made, filled, start, stop;
  made.record(def);
  made.block(s);
  {
    cuda::StreamGuard g(s);
    start.record(s);
    x.fill_(3.0);
    x.mul_(2.0);
    stop.record(s);
  }
  filled.record(s);
  filled.block(def);
  const std::vector<float> v = to_vector<float>(x);
  REQUIRE(v.front() == 6.0f);
  REQUIRE(v.back() == 6.0f);
  stop.synchronize();
  REQUIRE(start.elapsed_ms(stop) >= 0.0f);
  s.synchronize();
  cuda::synchronize(0);
}

TEST_CASE("pinned memory: async uploads, reuse and the DataLoader option", "[cuda][pinned]") {
  const Tensor h = from_vector<float>(iota_values<float>(1 << 16), {1 << 16});
  REQUIRE_FALSE(h.is_pinned());
  const Tensor p = h.pin_memory();
  REQUIRE(p.is_pinned());
  REQUIRE(p.device().is_cpu());
  REQUIRE(p.pin_memory().shares_storage(p));  // already pinned: no copy
  REQUIRE(to_vector<float>(p) == to_vector<float>(h));
  // Upload from pinned memory is asynchronous but ordered on the stream before the read.
  const Tensor d = p.to(kGpu);
  REQUIRE(to_vector<float>(d) == to_vector<float>(h));
  // Download into a pinned buffer (always waits for the data).
  const Tensor back = empty({1 << 16}).pin_memory();
  back.copy_(d);
  REQUIRE(to_vector<float>(back) == to_vector<float>(h));
  // A non-contiguous pinned view still uploads correctly.
  const Tensor p2 = from_vector<float>(iota_values<float>(12), {3, 4}).pin_memory();
  REQUIRE(to_vector<float>(p2.t().to(kGpu)) == to_vector<float>(p2.t().contiguous()));
  REQUIRE_THROWS_WITH(d.pin_memory(), Catch::Contains("only CPU tensors"));

  data::DataLoaderOptions opts;
  opts.batch_size(4);
  opts.workers(2);
  opts.pin_memory(true);
  auto ds = std::make_shared<data::TensorDataset>(from_vector<float>(iota_values<float>(30), {10, 3}),
                                                  from_vector<int64_t>(iota_values<int64_t>(10), {10}));
  int64_t batches = 0;
  for (const data::Batch& b : data::DataLoader(ds, opts)) {
    REQUIRE(b.data.is_pinned());
    REQUIRE(b.target.is_pinned());
    REQUIRE(to_vector<float>(b.data.to(kGpu)) == to_vector<float>(b.data));
    ++batches;
  }
  REQUIRE(batches == 3);
}

TEST_CASE("pinned memory: a freed block is not reused while its upload is in flight", "[cuda][pinned]") {
  constexpr int64_t n = 1 << 24;  // 64 MiB: the upload takes a while
  const std::vector<float> values = iota_values<float>(n);
  {
    Tensor a = empty({n}).pin_memory(), b = empty({n}).pin_memory();
  }  // two cached blocks: no slow cudaHostAlloc below
  const Tensor busy0 = full({2048, 2048}, 1e-3, TensorOptions(DType::Float32, kGpu));
  Tensor d;
  {
    const Tensor p = from_vector<float>(values, {n}).pin_memory();
    // Keep the stream busy so the upload is still queued when the host moves on.
    Tensor busy = busy0;
    for (int i = 0; i < 8; ++i) busy = matmul(busy, busy);
    d = p.to(kGpu);  // asynchronous, ordered after the matmuls
  }                  // p dropped: its block must wait for the upload's event
  const Tensor q = empty({n}).pin_memory();
  q.fill_(-1.0);  // would corrupt the upload if q reused p's block too early
  REQUIRE(to_vector<float>(d) == values);
  REQUIRE(to_vector<float>(q) == std::vector<float>(size_t(n), -1.0f));

  // A long-lived pinned buffer uploaded many times (each upload records an event,
  // finished ones are dropped) keeps working, and every copy holds its own values.
  const Tensor staging = empty({4096}).pin_memory();
  std::vector<Tensor> uploads;
  for (int step = 0; step < 200; ++step) {
    cuda::synchronize(0);  // the previous upload has read staging before it is refilled
    staging.fill_(static_cast<double>(step));
    uploads.push_back(staging.to(kGpu));
  }
  for (int step = 0; step < 200; step += 37)
    REQUIRE(to_vector<float>(uploads[size_t(step)]) == std::vector<float>(4096, static_cast<float>(step)));
}

TEST_CASE("bad device indices give clear errors", "[cuda][errors]") {
  const int n = cuda::device_count();
  REQUIRE(n >= 1);
  REQUIRE(cuda::is_available());
  REQUIRE_THROWS_WITH(empty({2}, TensorOptions(DType::Float32, Device::cuda(n))), Catch::Contains("does not exist"));
  REQUIRE_THROWS_WITH(ones({2}).to(Device::cuda(n + 3)), Catch::Contains("does not exist"));
  REQUIRE_THROWS_WITH(cuda::Stream::create(n), Catch::Contains("does not exist"));
  REQUIRE_THROWS_WITH(cuda::memory_stats(-1), Catch::Contains("does not exist"));
  REQUIRE_THROWS_WITH(cuda::synchronize(n), Catch::Contains("does not exist"));
  cuda::Event never;
  REQUIRE_THROWS_WITH(never.elapsed_ms(never), Catch::Contains("recorded"));
}
