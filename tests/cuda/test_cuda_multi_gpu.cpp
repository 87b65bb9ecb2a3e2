// Copies between two GPUs (peer copies, a strided source, a dtype change on the destination);
// loader workers pinning with the caller's current GPU.
// Its own executable so that a machine with fewer than two GPUs reports it skipped (its main
// exits 77, cuda_main.cpp), never passed.
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include <ddl/ddl.h>
#include <ddl/tensor/core/devices.h>

using namespace ddl;

namespace {
std::vector<float> iota_values(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>((i * 7) % 101);
  return v;
}
}  // namespace

TEST_CASE("copies between two GPUs", "[cuda][copy][multi_gpu]") {
  REQUIRE(cuda::device_count() >= 2);
  const Tensor h = from_vector<float>(iota_values(1000), {10, 100});
  const Tensor d0 = h.to(Device::cuda(0));
  const Tensor d1 = d0.to(Device::cuda(1));
  REQUIRE(d1.device() == Device::cuda(1));
  REQUIRE(to_vector<float>(d1) == to_vector<float>(h));
  const Tensor t1 = d0.t().to(Device::cuda(1));  // non-contiguous source
  REQUIRE(to_vector<float>(t1) == to_vector<float>(h.t().contiguous()));
  const Tensor d64 = zeros({10, 100}, TensorOptions(DType::Float64, Device::cuda(1)));
  d64.copy_(d0);  // dtype change on the destination
  REQUIRE(to_vector<double>(d64) == to_vector<double>(h.to(DType::Float64)));
  const Tensor back = d1.to(Device::cuda(0));  // and back the other way
  REQUIRE(to_vector<float>(back) == to_vector<float>(h));
}

TEST_CASE("loader workers pin batches with the caller's current GPU", "[cuda][data][multi_gpu]") {
  REQUIRE(cuda::device_count() >= 2);
  struct Restore {
    ~Restore() { set_current_device(Device::cuda(0)); }  // also when a REQUIRE below fails
  } restore;
  set_current_device(Device::cuda(1));  // a rank that trains on cuda:1
  std::mutex mu;
  std::vector<Device> seen;
  data::DataLoaderOptions o;
  o.batch_size(4);
  o.workers(2);
  o.pin_memory(true);
  o.collate_fn([&](const std::vector<data::Example>& examples) {
    const std::lock_guard<std::mutex> lock(mu);
    seen.push_back(current_device());
    return data::collate(examples);
  });
  const data::DataLoader loader(std::make_shared<data::TensorDataset>(arange(0, 32, 1, DType::Float32).reshape({16, 2}),
                                                                      zeros({16}, DType::Int64)),
                                o);
  int64_t batches = 0;
  for (const data::Batch& b : loader) {
    REQUIRE(b.data.is_pinned());
    ++batches;
  }
  REQUIRE(batches == 4);
  REQUIRE(seen.size() == 4);
  for (const Device& d : seen) REQUIRE(d == Device::cuda(1));
}
