// Copies between two GPUs (peer copies, a strided source, a dtype change on the destination).
// Its own executable so that a machine with fewer than two GPUs reports it skipped (its main
// exits 77, cuda_main.cpp), never passed.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "ddl.h"
#include "tensor/devices.h"

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
