// JPEG through libjpeg-turbo (data/jpeg_decode.cpp): JPEGs written with stb_image_write
// read back close to their pixels in every channel count, and truncated, corrupted or
// oversized ones fail with a ddl::Error naming the file, before any pixel is decoded for a
// header that claims too much. Pixel-exact agreement with PIL is test_jpeg_pil.cpp.
#include <stb_image_write.h>  // libstb holds the implementation

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>

#include "temp_dir.h"
#include <ddl/data/image_folder.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using namespace ddl::data;
using ddl::test::TempDir;

namespace {

// HWC RGB pixels of a smooth w x h image (JPEG keeps smooth images nearly exactly).
std::vector<uint8_t> smooth(int w, int h) {
  std::vector<uint8_t> p(static_cast<size_t>(w * h * 3));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        p[static_cast<size_t>((y * w + x) * 3 + c)] = static_cast<uint8_t>(40 + x * 3 + y * 2 + c * 30);
  return p;
}

std::vector<uint8_t> jpeg_bytes(int w, int h, int quality) {
  std::vector<uint8_t> out;
  const auto append = [](void* ctx, void* data, int size) {
    auto* v = static_cast<std::vector<uint8_t>*>(ctx);
    v->insert(v->end(), static_cast<uint8_t*>(data), static_cast<uint8_t*>(data) + size);
  };
  REQUIRE(stbi_write_jpg_to_func(append, &out, w, h, 3, smooth(w, h).data(), quality) != 0);
  return out;
}

std::string write(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return path;
}

// Offset of the first marker FF <code> after the start-of-image marker.
size_t marker(const std::vector<uint8_t>& b, uint8_t code) {
  for (size_t i = 2; i + 1 < b.size(); ++i)
    if (b[i] == 0xFF && b[i + 1] == code) return i;
  FAIL("no marker FF " << int{code});
  return 0;
}

}  // namespace

TEST_CASE("read_image decodes a JPEG to uint8 [C, H, W] close to its pixels", "[data][image][jpeg]") {
  TempDir dir;
  const int w = 21, h = 13;
  const std::string path = write(dir / "a.jpg", jpeg_bytes(w, h, 100));
  const Tensor rgb = read_image(path, 3);
  REQUIRE(rgb.shape() == Shape{3, h, w});
  REQUIRE(rgb.dtype() == DType::UInt8);
  const auto src = smooth(w, h);
  const auto got = to_vector<int>(rgb);
  int worst = 0;
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < w * h; ++i)
      worst = std::max(worst, std::abs(got[static_cast<size_t>(c * w * h + i)] - src[static_cast<size_t>(i * 3 + c)]));
  CHECK(worst <= 3);  // quality 100 on a smooth ramp: a rounding error or two per value

  // 4 channels: the same RGB and an opaque alpha; 1 channel: the luma of that RGB.
  const auto rgba = to_vector<int>(read_image(path, 4));
  REQUIRE(rgba.size() == size_t{4} * w * h);
  CHECK(std::equal(got.begin(), got.end(), rgba.begin()));
  CHECK(std::all_of(rgba.begin() + 3 * w * h, rgba.end(), [](int a) { return a == 255; }));
  const auto grey = to_vector<int>(read_image(path, 1));
  REQUIRE(grey.size() == size_t{1} * w * h);
  for (int i = 0; i < w * h; ++i) {
    const double luma = 0.299 * got[i] + 0.587 * got[w * h + i] + 0.114 * got[2 * w * h + i];
    INFO("pixel " << i);
    CHECK(std::abs(grey[static_cast<size_t>(i)] - luma) <= 2.0);
  }
  const auto grey_alpha = to_vector<int>(read_image(path, 2));
  CHECK(std::equal(grey.begin(), grey.end(), grey_alpha.begin()));
  CHECK(std::all_of(grey_alpha.begin() + w * h, grey_alpha.end(), [](int a) { return a == 255; }));
}

TEST_CASE("ImageFolder reads a folder of JPEGs", "[data][image][jpeg]") {
  TempDir dir;
  write(dir / "cat/1.jpg", jpeg_bytes(8, 8, 90));
  write(dir / "dog/2.JPEG", jpeg_bytes(17, 9, 90));
  ImageFolder ds(dir.str());
  REQUIRE(ds.size() == 2);
  CHECK(ds.get(0).data.shape() == Shape{3, 8, 8});
  CHECK(ds.get(1).data.shape() == Shape{3, 9, 17});
  CHECK(ds.get(1).target.item<int64_t>() == 1);
}

TEST_CASE("a truncated JPEG is an error naming the file, not a grey-padded image", "[data][image][jpeg][errors]") {
  TempDir dir;
  const auto whole = jpeg_bytes(32, 32, 90);
  // Cut inside the entropy-coded data (libjpeg alone would pad the rest with grey and warn).
  const size_t sos = marker(whole, 0xDA);
  std::vector<uint8_t> cut(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(sos + (whole.size() - sos) / 2));
  const std::string path = write(dir / "cut.jpg", cut);
  REQUIRE_THROWS_WITH(read_image(path), Catch::Contains(path) && Catch::Contains("cannot decode JPEG") &&
                                            Catch::Contains("Premature end"));
  // Cut inside the header: libjpeg runs out of data before the image starts.
  const std::string head = write(dir / "head.jpg", std::vector<uint8_t>(whole.begin(), whole.begin() + 40));
  REQUIRE_THROWS_WITH(read_image(head), Catch::Contains(head) && Catch::Contains("cannot decode JPEG"));
}

TEST_CASE("a corrupted JPEG is an error naming the file", "[data][image][jpeg][errors]") {
  TempDir dir;
  const auto good = jpeg_bytes(16, 16, 90);
  // SOF0: FF C0, length (2), precision (1): 8-bit is all baseline allows.
  auto precision = good;
  precision[marker(good, 0xC0) + 4] = 7;
  const std::string p1 = write(dir / "precision.jpg", precision);
  REQUIRE_THROWS_WITH(read_image(p1), Catch::Contains(p1) && Catch::Contains("precision 7"));
  // DHT: FF C4, length (2), class/id (1), then 16 code counts that must sum to at most 256.
  auto huffman = good;
  const size_t dht = marker(good, 0xC4);
  for (size_t i = 0; i < 16; ++i) huffman[dht + 5 + i] = 0xFF;
  const std::string p2 = write(dir / "huffman.jpg", huffman);
  REQUIRE_THROWS_WITH(read_image(p2), Catch::Contains(p2) && Catch::Contains("cannot decode JPEG"));
  // A start-of-image marker followed by anything else.
  const std::string p3 = write(dir / "garbage.jpg", {0xFF, 0xD8, 'n', 'o', 't', ' ', 'a', ' ', 'J', 'P', 'E', 'G'});
  REQUIRE_THROWS_WITH(read_image(p3), Catch::Contains(p3) && Catch::Contains("12 bytes"));
}

TEST_CASE("a JPEG whose header claims more than max_pixels is refused before decoding", "[data][image][jpeg][errors]") {
  TempDir dir;
  const auto small = jpeg_bytes(100, 60, 90);
  const std::string path = write(dir / "a.jpg", small);
  REQUIRE(read_image(path, 3, 6000).shape() == Shape{3, 60, 100});
  REQUIRE_THROWS_WITH(read_image(path, 3, 5999),
                      Catch::Contains(path) && Catch::Contains("100x60") && Catch::Contains("5999"));
  // A 2 KB file whose frame header says 60000 x 60000 (10.8 GB of RGB): refused at once.
  auto huge = small;
  const size_t sof = marker(small, 0xC0);
  huge[sof + 5] = 60000 >> 8, huge[sof + 6] = 60000 & 0xFF;  // height
  huge[sof + 7] = 60000 >> 8, huge[sof + 8] = 60000 & 0xFF;  // width
  const std::string big = write(dir / "huge.jpg", huge);
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE_THROWS_WITH(read_image(big),
                      Catch::Contains(big) && Catch::Contains("60000x60000") && Catch::Contains("max_pixels"));
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1));
}

// Found by fuzz_image: stb takes 0xFF fill bytes before SOI as a JPEG and built Huffman
// tables out of bounds even in stbi_info; such files now go to libjpeg, which refuses them.
TEST_CASE("0xFF fill bytes before a JPEG's SOI are refused by libjpeg, never parsed by stb", "[data][image][jpeg]") {
  TempDir dir;
  std::vector<uint8_t> filled(4, 0xFF);
  const auto whole = jpeg_bytes(8, 8, 90);
  filled.insert(filled.end(), whole.begin() + 1, whole.end());  // FF FF FF FF D8 ...
  const std::string path = write(dir / "filled.jpg", filled);
  REQUIRE_THROWS_WITH(read_image(path), Catch::Contains(path) && Catch::Contains("cannot decode JPEG"));
}
