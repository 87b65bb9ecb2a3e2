// float16 and bfloat16 in safetensors files: a file PyTorch 1.13 wrote (bytes pasted
// from tests/golden/safetensors_16bit.py) loads with each tensor's dtype and the values
// PyTorch gives them in float32; ddl's own save writes "F16" and "BF16" and loads back the
// same dtype and bits. F16 and BF16 are both 2-byte dtypes, so a swap of the two would
// pass every size check and silently reinterpret the bits.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "tests/common/scratch.h"
#include <ddl/ddl.h>

using namespace ddl;
using namespace ddl::nn;
namespace fs = std::filesystem;

namespace {

// 392 bytes, from tests/golden/safetensors_16bit.py (torch 1.13.0a0)
const char kTorchFile[] =
    "\x20\x01\x00\x00\x00\x00\x00\x00\x7b\x22\x68\x22\x3a\x7b\x22\x64\x74\x79\x70\x65\x22\x3a\x22\x46"
    "\x31\x36\x22\x2c\x22\x73\x68\x61\x70\x65\x22\x3a\x5b\x32\x2c\x34\x5d\x2c\x22\x64\x61\x74\x61\x5f"
    "\x6f\x66\x66\x73\x65\x74\x73\x22\x3a\x5b\x30\x2c\x31\x36\x5d\x7d\x2c\x22\x68\x5f\x66\x33\x32\x22"
    "\x3a\x7b\x22\x64\x74\x79\x70\x65\x22\x3a\x22\x46\x33\x32\x22\x2c\x22\x73\x68\x61\x70\x65\x22\x3a"
    "\x5b\x32\x2c\x34\x5d\x2c\x22\x64\x61\x74\x61\x5f\x6f\x66\x66\x73\x65\x74\x73\x22\x3a\x5b\x31\x36"
    "\x2c\x34\x38\x5d\x7d\x2c\x22\x62\x22\x3a\x7b\x22\x64\x74\x79\x70\x65\x22\x3a\x22\x42\x46\x31\x36"
    "\x22\x2c\x22\x73\x68\x61\x70\x65\x22\x3a\x5b\x32\x2c\x34\x5d\x2c\x22\x64\x61\x74\x61\x5f\x6f\x66"
    "\x66\x73\x65\x74\x73\x22\x3a\x5b\x34\x38\x2c\x36\x34\x5d\x7d\x2c\x22\x62\x5f\x66\x33\x32\x22\x3a"
    "\x7b\x22\x64\x74\x79\x70\x65\x22\x3a\x22\x46\x33\x32\x22\x2c\x22\x73\x68\x61\x70\x65\x22\x3a\x5b"
    "\x32\x2c\x34\x5d\x2c\x22\x64\x61\x74\x61\x5f\x6f\x66\x66\x73\x65\x74\x73\x22\x3a\x5b\x36\x34\x2c"
    "\x39\x36\x5d\x7d\x2c\x22\x5f\x5f\x6d\x65\x74\x61\x64\x61\x74\x61\x5f\x5f\x22\x3a\x7b\x22\x77\x72"
    "\x69\x74\x74\x65\x6e\x5f\x62\x79\x22\x3a\x22\x74\x6f\x72\x63\x68\x20\x31\x2e\x31\x33\x2e\x30\x61"
    "\x30\x22\x7d\x7d\x20\x20\x20\x20\x00\x3c\x00\xc1\xff\x7b\x00\x04\x01\x00\x66\x2e\x00\x80\x48\x42"
    "\x00\x00\x80\x3f\x00\x00\x20\xc0\x00\xe0\x7f\x47\x00\x00\x80\x38\x00\x00\x80\x33\x00\xc0\xcc\x3d"
    "\x00\x00\x00\x80\x00\x00\x49\x40\x80\x3f\x20\xc0\x7f\x7f\xa2\x0d\xcd\x3d\x00\x80\x49\x40\x7f\x43"
    "\x00\x00\x80\x3f\x00\x00\x20\xc0\x00\x00\x7f\x7f\x00\x00\xa2\x0d\x00\x00\xcd\x3d\x00\x00\x00\x80"
    "\x00\x00\x49\x40\x00\x00\x7f\x43";

std::string st16_path(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("ddl_st16_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return (dir / name).string();
}

const Tensor& find(const TensorFile& f, const std::string& name) {
  for (const auto& [n, t] : f.tensors)
    if (n == name) return t;
  FAIL("no tensor " << name);
  throw;
}

}  // namespace

TEST_CASE("safetensors: a float16/bfloat16 file written by PyTorch 1.13 loads with its dtypes and values",
          "[nn][checkpoint]") {
  const std::string path = st16_path("torch16.safetensors");
  {
    std::ofstream out(path, std::ios::binary);
    out.write(kTorchFile, sizeof kTorchFile - 1);
  }
  const TensorFile f = load_safetensors(path);
  REQUIRE(f.metadata.at("written_by").rfind("torch 1.13", 0) == 0);
  for (const auto& [name, dtype] : {std::pair{"h", DType::Float16}, std::pair{"b", DType::BFloat16}}) {
    INFO(name);
    const Tensor& t = find(f, name);
    const Tensor& as_f32 = find(f, std::string(name) + "_f32");  // PyTorch's own conversion
    CHECK(t.dtype() == dtype);
    CHECK(t.shape() == Shape{2, 4});
    CHECK(as_f32.dtype() == DType::Float32);
    CHECK(test::tensor_bits(t.to(DType::Float32)) == test::tensor_bits(as_f32));  // -0.0 and subnormals included
  }
  fs::remove_all(fs::path(path).parent_path());
}

TEST_CASE("safetensors: float16 and bfloat16 round trips keep the dtype and the bits", "[nn][checkpoint]") {
  const std::string path = st16_path("round.safetensors");
  Generator g(3);
  const Tensor h = randn({3, 5}, g).to(DType::Float16), b = (randn({4}, g) * 1e20).to(DType::BFloat16);
  save_safetensors(path, {{"h", h}, {"b", b}});
  std::ifstream in(path, std::ios::binary);
  const std::string bytes(std::istreambuf_iterator<char>(in), {});
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  const std::string header = bytes.substr(8, n);
  CHECK(header.find("\"h\":{\"data_offsets\":[0,30],\"dtype\":\"F16\"") != std::string::npos);
  CHECK(header.find("\"b\":{\"data_offsets\":[30,38],\"dtype\":\"BF16\"") != std::string::npos);
  CHECK(bytes.substr(8 + n) == test::tensor_bits(h) + test::tensor_bits(b));
  const TensorFile back = load_safetensors(path);
  CHECK(find(back, "h").dtype() == DType::Float16);
  CHECK(find(back, "b").dtype() == DType::BFloat16);
  CHECK(test::tensor_bits(find(back, "h")) == test::tensor_bits(h));
  CHECK(test::tensor_bits(find(back, "b")) == test::tensor_bits(b));
  fs::remove_all(fs::path(path).parent_path());
}
