// int8 and int16 against PyTorch 1.13: names and sizes, promotion (torch.promote_types), wrap-around
// arithmetic, float-to-integer casts, sums in int64, checked scalars, sort, integer matmul and printing.
// Every expected value below is what torch gives for the same call (the reference sweep checks the
// rows in bulk; these pin the rules one by one).
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <sstream>

#include <ddl/ddl.h>

using namespace ddl;

namespace {

template <typename T>
Tensor vec(std::vector<T> v) {
  return from_vector<T>(v);
}

}  // namespace

TEST_CASE("int8 and int16: names, sizes and dtype_of", "[dtype][int8]") {
  CHECK(dtype_size(DType::Int8) == 1);
  CHECK(dtype_size(DType::Int16) == 2);
  CHECK(std::string(dtype_name(DType::Int8)) == "int8");
  CHECK(std::string(dtype_name(DType::Int16)) == "int16");
  CHECK(dtype_of<int8_t> == DType::Int8);
  CHECK(dtype_of<int16_t> == DType::Int16);
  CHECK(!is_floating(DType::Int8));
  CHECK(is_integral(DType::Int8));
  CHECK(is_integral(DType::Int16));
  CHECK(!is_integral(DType::Bool));
  CHECK(integral_range(DType::Int8) == std::pair<double, double>{-128.0, 127.0});
  CHECK(integral_range(DType::Int16) == std::pair<double, double>{-32768.0, 32767.0});
}

TEST_CASE("int8 and int16 promote as torch.promote_types", "[dtype][int8]") {
  // int8 with uint8: neither holds the other, so int16.
  CHECK(promote_types(DType::Int8, DType::UInt8) == DType::Int16);
  CHECK(promote_types(DType::UInt8, DType::Int8) == DType::Int16);
  CHECK(promote_types(DType::Int8, DType::Int16) == DType::Int16);
  CHECK(promote_types(DType::UInt8, DType::Int16) == DType::Int16);
  CHECK(promote_types(DType::Bool, DType::Int8) == DType::Int8);
  CHECK(promote_types(DType::Int8, DType::Float16) == DType::Float16);
  CHECK(promote_types(DType::Int16, DType::Int32) == DType::Int32);
  CHECK(promote_types(DType::Int16, DType::BFloat16) == DType::BFloat16);
  CHECK(promote_types(DType::Int8, DType::Int64) == DType::Int64);
  const Tensor x = vec<int8_t>({1, 2});
  CHECK(add(x, vec<uint8_t>({1, 1})).dtype() == DType::Int16);
  CHECK(add(x, scalar_tensor(1, DType::Int64)).dtype() == DType::Int8);  // a 0-d operand of the same category
  CHECK(add(x, 1.5).dtype() == DType::Float32);
}

TEST_CASE("int8 and int16 arithmetic wraps as PyTorch's", "[dtype][int8]") {
  const Tensor a = vec<int8_t>({100, 127, -128}), b = vec<int8_t>({100, 2, -1});
  CHECK(to_vector<int8_t>(add(a, b)) == std::vector<int8_t>{-56, -127, 127});
  CHECK(to_vector<int8_t>(mul(a, b)) == std::vector<int8_t>{16, -2, -128});
  CHECK(to_vector<int8_t>(sub(a, b)) == std::vector<int8_t>{0, 125, -127});
  CHECK(to_vector<int8_t>(neg(a)) == std::vector<int8_t>{-100, -127, -128});
  CHECK(to_vector<int8_t>(abs(a)) == std::vector<int8_t>{100, 127, -128});
  CHECK(to_vector<int16_t>(add(vec<int16_t>({30000, 32767, -32768}), vec<int16_t>({30000, 2, -1}))) ==
        std::vector<int16_t>{-5536, -32767, 32767});
  // Products of two int16 overflow int, the type they promote to in C++: computed unsigned.
  CHECK(to_vector<int16_t>(mul(vec<int16_t>({300, -300, 181}), vec<int16_t>({300, 300, 181}))) ==
        std::vector<int16_t>{24464, -24464, 32761});
  CHECK(to_vector<int16_t>(pow(vec<int16_t>({7, -3}), 5.0)) == std::vector<int16_t>{16807, -243});
  CHECK(to_vector<int8_t>(pow(vec<int8_t>({3}), 5.0)) == std::vector<int8_t>{-13});
  const Tensor m = from_vector<int16_t>({300, 300, 1, 2}, {2, 2});
  CHECK(to_vector<int16_t>(matmul(m, m)) == std::vector<int16_t>{24764, 25064, 302, 304});
}

TEST_CASE("int8 and int16 convolutions wrap as PyTorch's", "[dtype][int8][conv]") {
  const Tensor x = from_vector<int8_t>({100, -128, 3, 7, 127, -5, 2, 2, 2}, {1, 1, 3, 3});
  const Tensor w = from_vector<int8_t>({3, 1, -2, 5}, {1, 1, 2, 2});
  CHECK(to_vector<int8_t>(conv2d(x, w, Tensor())) == std::vector<int8_t>{25, 108, -102, 126});
  const Tensor x16 = mul(x.to(DType::Int16), scalar_tensor(200, DType::Int16));
  CHECK(to_vector<int16_t>(conv2d(x16, w.to(DType::Int16), Tensor())) ==
        std::vector<int16_t>{27528, -928, 30800, 10864});
}

TEST_CASE("floats convert to int8, int16 and uint8 through int64, as PyTorch on x86", "[dtype][int8]") {
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor f = from_vector<float>({-1.0f, 300.0f, std::nanf(""), static_cast<float>(inf), -1e20f, 1.5f});
  CHECK(to_vector<int8_t>(f.to(DType::Int8)) == std::vector<int8_t>{-1, 44, 0, 0, 0, 1});
  CHECK(to_vector<int16_t>(f.to(DType::Int16)) == std::vector<int16_t>{-1, 300, 0, 0, 0, 1});
  CHECK(to_vector<uint8_t>(f.to(DType::UInt8)) == std::vector<uint8_t>{255, 44, 0, 0, 0, 1});
  const Tensor d = from_vector<double>({-300.7, 200.0, -40000.7, 40000.0});
  CHECK(to_vector<int8_t>(d.to(DType::Int8)) == std::vector<int8_t>{-44, -56, -64, 64});
  CHECK(to_vector<int16_t>(d.to(DType::Int16)) == std::vector<int16_t>{-300, 200, 25536, -25536});
  CHECK(to_vector<int8_t>(vec<int16_t>({300, -129}).to(DType::Int8)) == std::vector<int8_t>{44, 127});
}

TEST_CASE("int8 and int16 sums and scans give int64; sort orders negatives", "[dtype][int8]") {
  const Tensor s = sum(vec<int8_t>({100, 100}));
  CHECK(s.dtype() == DType::Int64);
  CHECK(s.item<int64_t>() == 200);
  CHECK(sum(vec<int16_t>({32000, 32000})).item<int64_t>() == 64000);
  const Tensor c = cumsum(vec<int8_t>({3, -1, 2, -128, 127}), 0);
  CHECK(c.dtype() == DType::Int64);
  CHECK(to_vector<int64_t>(c) == std::vector<int64_t>{3, 2, 4, -124, 3});
  const auto r = sort(vec<int8_t>({3, -1, 2, -128, 127}));
  CHECK(to_vector<int8_t>(r.values) == std::vector<int8_t>{-128, -1, 2, 3, 127});
  CHECK(to_vector<int64_t>(r.indices) == std::vector<int64_t>{3, 1, 2, 0, 4});
  const auto r16 = sort(vec<int16_t>({300, -32768, 32767, -1}), -1, true);
  CHECK(to_vector<int16_t>(r16.values) == std::vector<int16_t>{32767, 300, -1, -32768});
}

TEST_CASE("scalars into int8 and int16 are checked as c10::checked_convert", "[dtype][int8][errors]") {
  CHECK(to_vector<int8_t>(full({2}, -128.0, DType::Int8)) == std::vector<int8_t>{-128, -128});
  CHECK(to_vector<int16_t>(full({1}, 32767.0, DType::Int16)) == std::vector<int16_t>{32767});
  CHECK_THROWS_WITH(full({2}, 128.0, DType::Int8), Catch::Contains("full") && Catch::Contains("int8"));
  CHECK_THROWS_WITH(full({2}, -255.0, DType::Int8), Catch::Contains("full"));  // only uint8 wraps from -255
  CHECK_THROWS_WITH(full({2}, -32769.0, DType::Int16), Catch::Contains("int16"));
  const Tensor x = vec<int8_t>({1, -2, 3});
  CHECK(to_vector<int8_t>(clamp(x, -128.0, 127.0)) == std::vector<int8_t>{1, -2, 3});
  CHECK_THROWS_WITH(clamp(x, std::optional<double>(-129.0), std::nullopt), Catch::Contains("clamp"));
  CHECK_THROWS_WITH(clamp(x, std::nullopt, std::optional<double>(128.0)), Catch::Contains("clamp"));
  CHECK(to_vector<int8_t>(add(x, 300.0)) == std::vector<int8_t>{45, 42, 47});  // a Python int wraps
}

TEST_CASE("int8 and int16 tensors print with their dtype", "[dtype][int8]") {
  std::ostringstream os;
  os << from_vector<int8_t>({1, -2, 3, 4}, {2, 2});
  CHECK(os.str().find("dtype=int8") != std::string::npos);
  CHECK(os.str().find("-2") != std::string::npos);
  std::ostringstream os16;
  os16 << vec<int16_t>({-32768});
  CHECK(os16.str().find("-32768") != std::string::npos);
  CHECK(os16.str().find("dtype=int16") != std::string::npos);
}
