// Shapes whose element or byte count overflows int64 are errors naming the op and
// the shape (PyTorch: "Storage size calculation overflowed", "numel: integer
// multiplication overflow"), never a wrapped count: zeros({2^32, 2^32}) once
// computed 0 elements and returned a tensor over an empty buffer.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>

#include <ddl/ddl.h>
#include <ddl/tensor/core/checked_shape.h>

using namespace ddl;

namespace {
constexpr int64_t k31 = int64_t{1} << 31, k32 = int64_t{1} << 32;
}  // namespace

TEST_CASE("numel is checked left to right, as PyTorch's", "[overflow][shape]") {
  REQUIRE(Shape{k31, k31}.numel() == int64_t{1} << 62);
  REQUIRE_THROWS_WITH((Shape{k32, k32}.numel()), Catch::Contains("overflow"));
  REQUIRE_THROWS_WITH((Shape{k32, k32, 0}.numel()), Catch::Contains("[4294967296, 4294967296, 0]"));
  REQUIRE_THROWS_WITH(checked_nbytes({k31, k31}, 4, "zeros"), Catch::Contains("zeros") && Catch::Contains("overflow"));
  REQUIRE(checked_nbytes({k31, k31}, 1, "zeros") == int64_t{1} << 62);
}

TEST_CASE("factories refuse shapes whose bytes overflow, naming the factory", "[overflow][factory]") {
  // 2^62 float32 elements are 2^64 bytes.
  REQUIRE_THROWS_WITH(zeros({k31, k31}), Catch::Contains("zeros: ") && Catch::Contains("[2147483648, 2147483648]"));
  REQUIRE_THROWS_WITH(ones({k31, k31}), Catch::Contains("ones: "));
  REQUIRE_THROWS_WITH(full({k31, k31}, 1.0), Catch::Contains("full: "));
  REQUIRE_THROWS_WITH(empty({k32, k32}), Catch::Contains("empty: "));
  REQUIRE_THROWS_WITH(empty({k32, k32, 0}), Catch::Contains("empty: "));
  REQUIRE_THROWS_WITH(from_blob(nullptr, {k32, k32, 0}, DType::Float32), Catch::Contains("from_blob: "));
  REQUIRE_THROWS_WITH(arange(0.0, 1e30), Catch::Contains("arange"));
}

TEST_CASE("views: expand and reshape check the count, repeat the bytes", "[overflow][views]") {
  const Tensor one = zeros({1, 1});
  // A 2^62-element view of one element is fine (no memory), as in PyTorch.
  REQUIRE(one.expand({k31, k31}).numel() == int64_t{1} << 62);
  REQUIRE_THROWS_WITH(one.expand({k32, k32}), Catch::Contains("expand: "));
  // A pinned copy of a 2^62-element view needs 2^64 bytes (nbytes() wrapped to 0 and the copy overran).
  REQUIRE_THROWS_WITH(one.expand({k31, k31}).pin_memory(), Catch::Contains("pin_memory: "));
  REQUIRE_THROWS_WITH(one.expand({1, -2}), Catch::Contains("expand: invalid extent -2"));  // was "Tensor: ..."
  REQUIRE_THROWS_WITH(one.expand({-1, 1, 1}), Catch::Contains("expand: invalid extent -1"));
  REQUIRE(one.expand({-1, 3}).shape() == Shape{1, 3});
  REQUIRE_THROWS_WITH(zeros({1, 1, 0}).expand({k32, k32, 0}), Catch::Contains("expand: "));
  REQUIRE_THROWS_WITH(zeros({0}).reshape({k32, k32, 0}), Catch::Contains("reshape: "));
  REQUIRE_THROWS_WITH(zeros({4}).view({k32, k32, -1}), Catch::Contains("view: "));
  REQUIRE(zeros({0}).reshape({k31, k31, 0}).shape() == Shape{k31, k31, 0});
  // An empty tensor may have extents whose product overflows past a 0; its strides wrap, as PyTorch's.
  REQUIRE(zeros({0, k32, k32}).strides() == Shape{0, k32, 1});
  REQUIRE_THROWS_WITH(zeros({0, k32, k32}).flatten(1), Catch::Contains("flatten: "));
  REQUIRE_THROWS_WITH(repeat(zeros({2, 2}), {k31, k31}), Catch::Contains("repeat: "));
  REQUIRE_THROWS_WITH(repeat(zeros({1}), {k32, k32}), Catch::Contains("repeat: "));
  REQUIRE_THROWS_WITH(zeros({1}).as_strided({k32, k32}, {0, 0}, 0), Catch::Contains("as_strided: "));
  // A slice step near 2^63 takes one element (end - start + step - 1 overflowed to a negative extent).
  const Tensor ten = arange(0.0, 10.0, 1.0, DType::Float32);
  REQUIRE(to_vector<float>(ten.slice(0, 1, 10, int64_t{1} << 62)) == std::vector<float>{1});
  REQUIRE(to_vector<float>(ten.slice(0, 0, 10, INT64_MAX)) == std::vector<float>{0});
  REQUIRE(ten.slice(0, 3, 3, INT64_MAX).numel() == 0);
  REQUIRE_THROWS_WITH(ten.narrow(0, 1, INT64_MAX), Catch::Contains("narrow: "));  // start + length wrapped negative
  REQUIRE_THROWS_WITH(zeros({2}).as_strided({2, 2}, {int64_t{1} << 62, int64_t{1} << 62}, 0),
                      Catch::Contains("exceeds the storage"));
}

TEST_CASE("broadcast matmul and pad name themselves when the result overflows", "[overflow][matmul]") {
  const Tensor a = zeros({1, 1, 1, 1}).expand({k31, 1, 1, 1});
  const Tensor b = zeros({1, 1, 1, 1}).expand({1, k31, 1, 1});
  REQUIRE_THROWS_WITH(matmul(a, b), Catch::Contains("matmul: ") && Catch::Contains("[2147483648, 2147483648, 1, 1]"));
  REQUIRE_THROWS_WITH(matmul(zeros({1, 1, 1, 1}).expand({k31, k31, 1, 1}), zeros({1, 1})), Catch::Contains("matmul: "));
  REQUIRE_THROWS_WITH(pad(zeros({1}), {INT64_MAX, 1}), Catch::Contains("pad: "));
}

TEST_CASE("a safetensors header declaring an overflowing shape is refused", "[overflow][safetensors]") {
  const std::string path = "shape_overflow_test.safetensors";
  // [2^32, 2^32] F32 wraps to 0 elements; with data_offsets [0, 0] it once loaded as a tensor over 0 bytes.
  for (const std::string shape : {"[4294967296,4294967296]", "[4611686018427387904,4]", "[9223372036854775808]"}) {
    std::string header = R"({"w":{"dtype":"F32","shape":)" + shape + R"(,"data_offsets":[0,0]}})";
    header.append((8 - header.size() % 8) % 8, ' ');
    std::ofstream out(path, std::ios::binary);
    const uint64_t n = header.size();
    for (int i = 0; i < 8; ++i) out.put(static_cast<char>(n >> (8 * i)));
    out << header;
    out.close();
    INFO(shape);
    REQUIRE_THROWS_WITH(nn::load_safetensors(path), Catch::Contains("load_safetensors") && Catch::Contains("'w'"));
  }
  std::remove(path.c_str());
}

TEST_CASE("bounds at the int64 limits are errors or valid views, never undefined behaviour", "[overflow][shape]") {
  // Run under UBSan (the sanitizer build) this catches signed overflow in bound arithmetic:
  // each call must throw a ddl::Error or return a tensor, whatever the numbers.
  constexpr int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  const Tensor t = arange(int64_t{12}).reshape({3, 4});
  const std::vector<int64_t> extremes{lo, lo + 1, -k32, -5, -1, 0, 1, 5, k32, hi - 1, hi};
  int64_t returned = 0, refused = 0;
  auto probe = [&](const std::function<Tensor()>& f) {
    try {
      const Tensor r = f();
      if (r.numel() > 0) REQUIRE(std::isfinite(r.sum().item()));  // a real view: every element readable
      ++returned;
    } catch (const Error&) {
      ++refused;
    }
  };
  for (int64_t a : extremes) {
    probe([&] { return t.select(1, a); });
    probe([&] { return t.narrow(1, a, 1); });
    probe([&] { return t.narrow(1, 0, a); });
    probe([&] { return t.transpose(a, 0); });
    probe([&] { return t.unsqueeze(a); });
    probe([&] { return t.flatten(a, -1); });
    probe([&] { return split(t, a, 1).front(); });
    probe([&] { return chunk(t, a, 1).front(); });
    probe([&] { return t.topk(a, 1).values; });
    probe([&] { return flip(t, {a}); });
    for (int64_t b : extremes) {
      probe([&] { return t.slice(1, a, b); });
      probe([&] { return t.slice(1, a, b, std::max<int64_t>(b, 1)); });
      probe([&] { return t.narrow(1, a, b); });
      if (static_cast<__int128>(4) + a + b > 64) continue;  // a real allocation: not this test's business
      for (PadMode mode : {PadMode::Constant, PadMode::Reflect, PadMode::Replicate})
        probe([&] { return pad(t.to(DType::Float32), {a, b}, mode); });
    }
  }
  REQUIRE(returned > 0);
  REQUIRE(refused > 0);
}
