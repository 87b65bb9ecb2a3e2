// int8 and int16 in safetensors files: the format's dtype names "I8" and "I16" (its README's list:
// BOOL, U8, I8, I16, F16, BF16, I32, F32, F64, I64) load as DType::Int8 and DType::Int16 with their
// two's-complement bytes, and ddl's own save writes those names. I16 and F16/BF16 are all 2-byte
// dtypes, so a wrong name would pass every size check and silently reinterpret the bits.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>

#include <ddl/ddl.h>

using namespace ddl;
using namespace ddl::nn;
namespace fs = std::filesystem;

namespace {

std::string stint_path(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("ddl_stint_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return (dir / name).string();
}

const Tensor& tensor_named(const TensorFile& f, const std::string& name) {
  for (const auto& [n, t] : f.tensors)
    if (n == name) return t;
  FAIL("no tensor " << name);
  throw;
}

// An 8-byte little-endian header length, the JSON header, then the raw little-endian bytes.
std::string safetensors_bytes(const std::string& header, const std::string& data) {
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((header.size() >> (8 * i)) & 0xFF));
  return out + header + data;
}

}  // namespace

TEST_CASE("safetensors: I8 and I16 tensors load as int8 and int16", "[nn][checkpoint]") {
  const std::string header =
      R"({"a":{"dtype":"I8","shape":[3],"data_offsets":[0,3]},"b":{"dtype":"I16","shape":[2],"data_offsets":[3,7]}})";
  // a = [-128, 127, -1]; b = [-32768, 300] (0x8000, 0x012C little-endian)
  const std::string data("\x80\x7f\xff\x00\x80\x2c\x01", 7);
  const std::string path = stint_path("ints.safetensors");
  std::ofstream(path, std::ios::binary) << safetensors_bytes(header, data);
  const TensorFile f = load_safetensors(path);
  const Tensor& a = tensor_named(f, "a");
  const Tensor& b = tensor_named(f, "b");
  REQUIRE(a.dtype() == DType::Int8);
  REQUIRE(b.dtype() == DType::Int16);
  CHECK(to_vector<int8_t>(a) == std::vector<int8_t>{-128, 127, -1});
  CHECK(to_vector<int16_t>(b) == std::vector<int16_t>{-32768, 300});
  fs::remove_all(fs::path(path).parent_path());
}

TEST_CASE("safetensors: int8 and int16 round trips write I8 and I16", "[nn][checkpoint]") {
  const std::string path = stint_path("round.safetensors");
  const Tensor a = from_vector<int8_t>({-128, 0, 127, -5}, {2, 2});
  const Tensor b = from_vector<int16_t>({-32768, 32767, 7});
  save_safetensors(path, {{"a", a}, {"b", b}});
  std::ifstream in(path, std::ios::binary);
  const std::string bytes(std::istreambuf_iterator<char>(in), {});
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  const std::string header = bytes.substr(8, n);
  CHECK(header.find("\"a\":{\"data_offsets\":[0,4],\"dtype\":\"I8\"") != std::string::npos);
  CHECK(header.find("\"b\":{\"data_offsets\":[4,10],\"dtype\":\"I16\"") != std::string::npos);
  const TensorFile back = load_safetensors(path);
  CHECK(tensor_named(back, "a").dtype() == DType::Int8);
  CHECK(tensor_named(back, "b").dtype() == DType::Int16);
  CHECK(to_vector<int8_t>(tensor_named(back, "a")) == std::vector<int8_t>{-128, 0, 127, -5});
  CHECK(to_vector<int16_t>(tensor_named(back, "b")) == std::vector<int16_t>{-32768, 32767, 7});
  fs::remove_all(fs::path(path).parent_path());
}
