// Storage, dtypes, devices, factories and copies.
#include <catch2/catch.hpp>

#include <ddl/ddl.h>

using namespace ddl;

TEST_CASE("empty tensors are 64-byte aligned and contiguous", "[tensor]") {
  for (int64_t n : {1, 3, 17, 1000, 100000}) {
    Tensor t = empty({n});
    REQUIRE(reinterpret_cast<uintptr_t>(t.raw_data()) % 64 == 0);
    REQUIRE(t.is_contiguous());
    REQUIRE(t.numel() == n);
  }
}

TEST_CASE("factories fill known values", "[tensor]") {
  REQUIRE(to_vector<float>(zeros({2, 2})) == std::vector<float>{0, 0, 0, 0});
  REQUIRE(to_vector<float>(ones({3})) == std::vector<float>{1, 1, 1});
  REQUIRE(to_vector<double>(full({2}, 2.5, DType::Float64)) == std::vector<double>{2.5, 2.5});
  REQUIRE(to_vector<int64_t>(arange(5)) == std::vector<int64_t>{0, 1, 2, 3, 4});
  REQUIRE(to_vector<float>(arange(1.0, 2.0, 0.25)) == std::vector<float>{1, 1.25, 1.5, 1.75});
  REQUIRE(arange(0.0, 1.0, 0.1).numel() == 10);
  REQUIRE(scalar_tensor(3).dim() == 0);
  REQUIRE(scalar_tensor(3).item() == 3.0);
}

TEST_CASE("from_vector and to_vector round trip every dtype", "[tensor]") {
  REQUIRE(to_vector<int64_t>(from_vector<int64_t>({1, -2, 3})) == std::vector<int64_t>{1, -2, 3});
  REQUIRE(to_vector<uint8_t>(from_vector<uint8_t>({0, 255})) == std::vector<uint8_t>{0, 255});
  Tensor t = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  REQUIRE(t.shape() == Shape{2, 3});
  REQUIRE(t.dtype() == DType::Float32);
  REQUIRE_THROWS_WITH(from_vector<float>({1, 2, 3}, {2, 2}), Catch::Contains("do not fill shape [2, 2]"));
}

TEST_CASE("from_blob views caller memory and calls the deleter", "[tensor]") {
  std::vector<float> buf = {1, 2, 3, 4};
  bool deleted = false;
  {
    Tensor t = from_blob(buf.data(), {2, 2}, DType::Float32, [&](void*) { deleted = true; });
    t.mul_(2.0);
    REQUIRE_FALSE(deleted);
  }
  REQUIRE(deleted);
  REQUIRE(buf == std::vector<float>{2, 4, 6, 8});
}

TEST_CASE("dtype conversion and promotion", "[tensor]") {
  Tensor i = from_vector<int64_t>({1, 2, 3});
  Tensor f = i.to(DType::Float32);
  REQUIRE(f.dtype() == DType::Float32);
  REQUIRE(to_vector<float>(f) == std::vector<float>{1, 2, 3});
  REQUIRE(add(i, f).dtype() == DType::Float32);
  REQUIRE(add(f, f.to(DType::Float64)).dtype() == DType::Float64);
  REQUIRE(to_vector<uint8_t>(from_vector<float>({0.0f, 1.9f, 255.0f}).to(DType::UInt8)) ==
          std::vector<uint8_t>{0, 1, 255});
  REQUIRE(promote_types(DType::UInt8, DType::Int64) == DType::Int64);
  REQUIRE(dtype_size(DType::BFloat16) == 2);
}

TEST_CASE("clone copies, views share", "[tensor]") {
  Tensor a = arange(0.0, 6.0, 1.0).reshape({2, 3});
  Tensor v = a.view({3, 2});
  Tensor c = a.clone();
  REQUIRE(v.shares_storage(a));
  REQUIRE_FALSE(c.shares_storage(a));
  a.fill_(7);
  REQUIRE(to_vector<float>(v)[5] == 7);
  REQUIRE(to_vector<float>(c)[5] == 5);
}

TEST_CASE("copy_ broadcasts and converts", "[tensor]") {
  Tensor dst = zeros({2, 3}, DType::Float64);
  dst.copy_(from_vector<int64_t>({1, 2, 3}));
  REQUIRE(to_vector<double>(dst) == std::vector<double>{1, 2, 3, 1, 2, 3});
  // Into a non-contiguous destination.
  Tensor base = zeros({3, 2});
  base.t().copy_(from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}));
  REQUIRE(to_vector<float>(base) == std::vector<float>{1, 4, 2, 5, 3, 6});
}

TEST_CASE("devices: CPU works, CUDA is reported unavailable here", "[tensor][device]") {
  REQUIRE(Device::parse("cpu") == Device::cpu());
  REQUIRE(Device::parse("cuda:1") == Device::cuda(1));
  REQUIRE_THROWS_WITH(Device::parse("tpu"), Catch::Contains("cannot parse 'tpu'"));
  REQUIRE(zeros({2}).device().is_cpu());
  if (!cuda::is_available()) {
    REQUIRE(cuda::device_count() == 0);
    REQUIRE_THROWS_AS(zeros({2}, Device::cuda(0)), Error);
    REQUIRE_THROWS_WITH(zeros({2}, Device::cuda(0)), Catch::Contains("cuda:0"));
  }
}

TEST_CASE("the CPU allocator reuses freed large blocks", "[tensor][allocator]") {
  const MemoryStats before = cpu::memory_stats();
  void* first = nullptr;
  {
    Tensor t = empty({1 << 20});
    first = t.raw_data();
    REQUIRE(cpu::memory_stats().allocated_bytes >= before.allocated_bytes + (4 << 20));
  }
  Tensor again = empty({1 << 20});
  REQUIRE(again.raw_data() == first);
  REQUIRE(cpu::memory_stats().peak_allocated_bytes >= (4 << 20));
}

TEST_CASE("set_num_threads validates and round-trips", "[tensor][threads]") {
  const int n = get_num_threads();
  set_num_threads(1);
  REQUIRE(get_num_threads() == 1);
  set_num_threads(n);
  REQUIRE_THROWS_WITH(set_num_threads(0), Catch::Contains("n >= 1"));
}
