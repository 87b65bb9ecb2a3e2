// ImageFolder and read_image: PNG/BMP files written with stb_image_write read
// back exactly, classes sorted by name, optional resize, and undecodable or
// missing images named in the error.
#include <stb_image_write.h>  // libstb holds the implementation

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>

#include "temp_dir.h"
#include <ddl/data/image_folder.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using namespace ddl::data;
using ddl::test::TempDir;

namespace {

// HWC RGB pixels of a w x h image, distinct per (seed, position).
std::vector<uint8_t> pixels(int w, int h, int seed) {
  std::vector<uint8_t> p(static_cast<size_t>(w * h * 3));
  for (size_t i = 0; i < p.size(); ++i) p[i] = static_cast<uint8_t>((i * 5 + static_cast<size_t>(seed) * 31) % 256);
  return p;
}

void write_png(const std::string& path, int w, int h, int seed) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  REQUIRE(stbi_write_png(path.c_str(), w, h, 3, pixels(w, h, seed).data(), w * 3) != 0);
}

void write_bmp(const std::string& path, int w, int h, int seed) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  REQUIRE(stbi_write_bmp(path.c_str(), w, h, 3, pixels(w, h, seed).data()) != 0);
}

// The CHW tensor read_image should return for pixels(w, h, seed).
std::vector<int> chw(int w, int h, int seed) {
  const auto p = pixels(w, h, seed);
  std::vector<int> out(p.size());
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < w * h; ++i) out[static_cast<size_t>(c * w * h + i)] = p[static_cast<size_t>(i * 3 + c)];
  return out;
}

}  // namespace

TEST_CASE("read_image decodes PNG and BMP to uint8 [C, H, W]", "[data][image]") {
  TempDir dir;
  write_png(dir / "a.png", 5, 3, 1);
  write_bmp(dir / "b.bmp", 4, 6, 2);
  const Tensor a = read_image(dir / "a.png");
  REQUIRE(a.shape() == Shape{3, 3, 5});
  REQUIRE(a.dtype() == DType::UInt8);
  REQUIRE(to_vector<int>(a) == chw(5, 3, 1));
  REQUIRE(to_vector<int>(read_image(dir / "b.bmp")) == chw(4, 6, 2));
  REQUIRE(read_image(dir / "a.png", 1).shape() == Shape{1, 3, 5});
  REQUIRE(read_image(dir / "a.png", 4).shape() == Shape{4, 3, 5});
}

TEST_CASE("ImageFolder lists classes sorted by name and reads every image", "[data][image]") {
  TempDir dir;
  write_png(dir / "zebra/1.png", 4, 4, 10);
  write_png(dir / "ant/b.png", 4, 4, 11);
  write_bmp(dir / "ant/a.bmp", 4, 4, 12);
  write_png(dir / "ant/nested/c.PNG", 4, 4, 13);  // sub-folders and upper-case extensions count
  write_png(dir / "moth/x.png", 4, 4, 14);
  test::write_bytes(dir / "moth/notes.txt", {1, 2, 3});  // not an image: ignored
  ImageFolder ds(dir.str());
  REQUIRE(ds.classes() == std::vector<std::string>{"ant", "moth", "zebra"});
  REQUIRE(ds.size() == 5);
  const std::vector<int> seeds = {12, 11, 13, 14, 10};  // sorted by path within a class
  const std::vector<int64_t> labels = {0, 0, 0, 1, 2};
  for (int i = 0; i < 5; ++i) {
    const Example ex = ds.get(i);
    REQUIRE(ex.target.item<int64_t>() == labels[i]);
    REQUIRE(to_vector<int>(ex.data) == chw(4, 4, seeds[i]));
  }
}

TEST_CASE("ImageFolder resizes before the transform when asked", "[data][image]") {
  TempDir dir;
  write_png(dir / "a/big.png", 9, 7, 1);
  write_png(dir / "b/small.png", 2, 3, 2);
  ImageFolderOptions opts;
  opts.resize_height = 8;
  opts.resize_width = 8;
  opts.channels = 1;
  ImageFolder ds(dir.str(), ToTensor(), opts);
  for (int i = 0; i < 2; ++i) {
    const Example ex = ds.get(i);
    REQUIRE(ex.data.shape() == Shape{1, 8, 8});
    REQUIRE(ex.data.dtype() == DType::Float32);
  }
}

TEST_CASE("ImageFolder errors name the folder or the file", "[data][image][errors]") {
  TempDir dir;
  REQUIRE_THROWS_WITH(ImageFolder(dir / "nowhere"), Catch::Contains("nowhere") && Catch::Contains("not a directory"));
  REQUIRE_THROWS_WITH(ImageFolder(dir.str()), Catch::Contains("no class sub-folders"));
  std::filesystem::create_directories(dir / "empty");
  REQUIRE_THROWS_WITH(ImageFolder(dir.str()), Catch::Contains(dir / "empty") && Catch::Contains("no image files"));
  write_png(dir / "empty/ok.png", 2, 2, 0);
  test::write_bytes(dir / "empty/broken.png", {0x89, 'P', 'N', 'G', 1, 2, 3, 4, 5});
  ImageFolder ds(dir.str());
  REQUIRE(ds.size() == 2);
  REQUIRE_THROWS_WITH(ds.get(0), Catch::Contains(dir / "empty/broken.png") && Catch::Contains("cannot decode") &&
                                     Catch::Contains("9 bytes"));
  REQUIRE(ds.get(1).data.shape() == Shape{3, 2, 2});
  std::filesystem::remove(dir / "empty/ok.png");
  REQUIRE_THROWS_WITH(ds.get(1), Catch::Contains(dir / "empty/ok.png") && Catch::Contains("no such file"));
  REQUIRE_THROWS_WITH(ds.get(2), Catch::Contains("index 2 out of range"));
}

TEST_CASE("a test split numbers its classes by the training split's names", "[data][image]") {
  TempDir dir;
  for (const char* c : {"train/cat", "train/dog", "train/frog", "test/cat", "test/frog"}) {
    std::filesystem::create_directories(dir / c);
    write_png(dir / (std::string(c) + "/x.png"), 2, 2, 0);
  }
  ImageFolder train(dir / "train");
  ImageFolderOptions o;
  o.classes = train.classes();
  ImageFolder test(dir / "test", {}, o);
  REQUIRE(test.classes() == std::vector<std::string>{"cat", "dog", "frog"});
  REQUIRE(test.size() == 2);
  REQUIRE(test.get(1).target.item<int64_t>() == 2);  // frog stays frog, not "dog"
  // Without the list the folder numbers itself (frog would be 1): the reason for the option.
  REQUIRE(ImageFolder(dir / "test").get(1).target.item<int64_t>() == 1);
  std::filesystem::create_directories(dir / "test/horse");
  write_png(dir / "test/horse/x.png", 2, 2, 0);
  REQUIRE_THROWS_WITH(ImageFolder(dir / "test", {}, o),
                      Catch::Contains(dir / "test/horse") && Catch::Contains("not one of the 3 classes"));
}

TEST_CASE("an image larger than max_pixels is refused before decoding", "[data][image][errors]") {
  TempDir dir;
  write_png(dir / "big.png", 100, 60, 0);
  REQUIRE(read_image(dir / "big.png", 3, 6000).shape() == Shape{3, 60, 100});
  REQUIRE_THROWS_WITH(read_image(dir / "big.png", 3, 5999),
                      Catch::Contains(dir / "big.png") && Catch::Contains("100x60") && Catch::Contains("5999"));
}

TEST_CASE("a 16-bit PNM, or one with numbers stb cannot hold, is refused before stb reads it",
          "[data][image][errors]") {
  TempDir dir;
  // A fuzzer's find: P6, 2x2, maxval 702 (16-bit samples); stb 2.27 overreads converting it.
  const std::string header = "P6\n2 2\n702\n";
  std::vector<uint8_t> ppm(header.begin(), header.end());
  ppm.insert(ppm.end(), 2 * 2 * 3 * 2, 0x7f);
  test::write_bytes(dir / "deep.ppm", ppm);
  REQUIRE_THROWS_WITH(read_image(dir / "deep.ppm"), Catch::Contains(dir / "deep.ppm") && Catch::Contains("16-bit PNM"));
  // A width of 40 digits: stb would overflow an int reading it (undefined behaviour).
  std::vector<uint8_t> wide = {'P', '6', ' ', '#', ' ', 'c', '\n'};
  wide.insert(wide.end(), 40, '3');
  for (char c : std::string(" 2 255\n")) wide.push_back(static_cast<uint8_t>(c));
  test::write_bytes(dir / "wide.ppm", wide);
  REQUIRE_THROWS_WITH(read_image(dir / "wide.ppm"), Catch::Contains("width has 40 digits"));
  // An ordinary 8-bit PPM with a comment still decodes.
  const std::string ok = "P6\n# made by hand\n2 1\n255\n";
  std::vector<uint8_t> small(ok.begin(), ok.end());
  small.insert(small.end(), 2 * 3, 200);
  test::write_bytes(dir / "ok.ppm", small);
  REQUIRE(read_image(dir / "ok.ppm").shape() == Shape{3, 1, 2});
}

TEST_CASE("a PNG chunk longer than the file is refused before stb reads it", "[data][image][errors]") {
  TempDir dir;
  write_png(dir / "ok.png", 4, 3, 1);
  std::ifstream in(dir / "ok.png", std::ios::binary);
  std::vector<uint8_t> png((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(read_image(dir / "ok.png").shape() == Shape{3, 3, 4});
  const std::string idat = "IDAT";
  const auto at = std::search(png.begin(), png.end(), idat.begin(), idat.end()) - png.begin();
  REQUIRE(at > 12);
  for (int k = 0; k < 4; ++k) png[static_cast<size_t>(at - 4 + k)] = k == 0 ? 0x80 : 0;  // 2^31: negative in an int
  test::write_bytes(dir / "bad.png", png);
  REQUIRE_THROWS_WITH(read_image(dir / "bad.png"),
                      Catch::Contains(dir / "bad.png") && Catch::Contains("claims 2147483648 bytes"));
}

TEST_CASE("a PNG with empty IDAT chunks decodes to the same pixels (stb never sees them)", "[data][image]") {
  TempDir dir;
  write_png(dir / "ok.png", 4, 3, 7);
  std::ifstream in(dir / "ok.png", std::ios::binary);
  std::vector<uint8_t> png((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string idat = "IDAT";
  const auto at = std::search(png.begin(), png.end(), idat.begin(), idat.end()) - png.begin() - 4;
  REQUIRE(at > 8);
  // An empty IDAT chunk (length 0, its CRC over the type alone) before the data and after it;
  // stb 2.27 would memcpy 0 bytes into its still-null buffer for the first (found by fuzz_image).
  const std::vector<uint8_t> empty_idat = {0, 0, 0, 0, 'I', 'D', 'A', 'T', 0x35, 0xAF, 0x06, 0x1E};
  png.insert(png.begin() + at, empty_idat.begin(), empty_idat.end());
  const std::string iend = "IEND";
  const auto end_at = std::search(png.begin(), png.end(), iend.begin(), iend.end()) - png.begin() - 4;
  png.insert(png.begin() + end_at, empty_idat.begin(), empty_idat.end());
  test::write_bytes(dir / "empty_idat.png", png);
  REQUIRE(to_vector<int>(read_image(dir / "empty_idat.png")) == chw(4, 3, 7));
}
