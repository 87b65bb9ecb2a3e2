// MNIST/Fashion-MNIST IDX reading: generated plain and gzipped files read back
// exactly, corrupt files give errors naming file, offset and expectation, and
// the installed Fashion-MNIST (when present) has its known first labels and sums.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

#include "temp_dir.h"
#include <ddl/data/mnist.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using namespace ddl::data;
using ddl::test::TempDir;

namespace {

std::vector<uint8_t> idx_images(int n, int rows, int cols, uint32_t magic = 2051) {
  std::vector<uint8_t> b;
  test::append_be32(b, magic);
  test::append_be32(b, n);
  test::append_be32(b, rows);
  test::append_be32(b, cols);
  for (int i = 0; i < n * rows * cols; ++i) b.push_back(static_cast<uint8_t>(i * 13 + 1));
  return b;
}

std::vector<uint8_t> idx_labels(int n, uint32_t magic = 2049) {
  std::vector<uint8_t> b;
  test::append_be32(b, magic);
  test::append_be32(b, n);
  for (int i = 0; i < n; ++i) b.push_back(static_cast<uint8_t>((i * 3) % 10));
  return b;
}

void write_split(const TempDir& dir, const std::string& prefix, int n, bool gz) {
  auto write = gz ? test::write_gzip : test::write_bytes;
  const std::string ext = gz ? ".gz" : "";
  write(dir / (prefix + "-images-idx3-ubyte" + ext), idx_images(n, 28, 28));
  write(dir / (prefix + "-labels-idx1-ubyte" + ext), idx_labels(n));
}

}  // namespace

TEST_CASE("MNIST reads generated IDX files, plain and gzipped, exactly", "[data][mnist]") {
  for (bool gz : {false, true}) {
    TempDir dir;
    write_split(dir, "train", 7, gz);
    write_split(dir, "t10k", 3, gz);
    MNIST train(dir.str(), true), test(dir.str(), false);
    REQUIRE(train.size() == 7);
    REQUIRE(test.size() == 3);
    const Example ex = train.get(5);
    REQUIRE(ex.data.shape() == Shape{1, 28, 28});
    REQUIRE(ex.data.dtype() == DType::UInt8);
    REQUIRE(ex.target.dim() == 0);
    REQUIRE(ex.target.dtype() == DType::Int64);
    REQUIRE(ex.target.item<int64_t>() == 5);  // (5 * 3) % 10
    const auto pixels = to_vector<int>(ex.data);
    for (int k = 0; k < 784; ++k) REQUIRE(pixels[k] == static_cast<uint8_t>((5 * 784 + k) * 13 + 1));
    REQUIRE(to_vector<int64_t>(test.labels()) == std::vector<int64_t>{0, 3, 6});
  }
}

TEST_CASE("MNIST applies its transform in get()", "[data][mnist]") {
  TempDir dir;
  write_split(dir, "train", 2, false);
  FashionMNIST ds(dir.str(), true, ToTensor());
  const Example ex = ds.get(1);
  REQUIRE(ex.data.dtype() == DType::Float32);
  REQUIRE(ex.data.select(0, 0).select(0, 0).select(0, 0).item() == Approx(((784 * 13 + 1) % 256) / 255.0));
}

TEST_CASE("MNIST rejects missing, short, mislabelled and corrupt files", "[data][mnist][errors]") {
  TempDir dir;
  REQUIRE_THROWS_WITH(MNIST(dir.str()), Catch::Contains("train-images-idx3-ubyte") && Catch::Contains("cannot find"));

  const std::string images = dir / "train-images-idx3-ubyte", labels = dir / "train-labels-idx1-ubyte";
  test::write_bytes(labels, idx_labels(4));
  test::write_bytes(images, idx_images(4, 28, 28, 2049));
  REQUIRE_THROWS_WITH(MNIST(dir.str()), Catch::Contains(images) && Catch::Contains("bad magic number 2049") &&
                                            Catch::Contains("offset 0") && Catch::Contains("expected 2051"));

  auto truncated = idx_images(4, 28, 28);
  truncated.resize(truncated.size() - 100);
  test::write_bytes(images, truncated);
  REQUIRE_THROWS_WITH(MNIST(dir.str()), Catch::Contains(images) && Catch::Contains("truncated") &&
                                            Catch::Contains("record 3 at offset 2368"));

  test::write_bytes(images, {0, 0, 8});
  REQUIRE_THROWS_WITH(MNIST(dir.str()), Catch::Contains("3 bytes") && Catch::Contains("16-byte header"));

  auto extra = idx_images(4, 28, 28);
  extra.push_back(0);
  test::write_bytes(images, extra);
  REQUIRE_THROWS_WITH(MNIST(dir.str()), Catch::Contains("1 bytes after the 4 images"));

  test::write_bytes(images, idx_images(5, 28, 28));
  REQUIRE_THROWS_WITH(MNIST(dir.str()), Catch::Contains("holds 5 images") && Catch::Contains("holds 4 labels"));

  // A gzip stream cut in half.
  std::filesystem::remove(images);
  TempDir scratch;
  test::write_gzip(scratch / "full.gz", idx_images(4, 28, 28));
  std::ifstream in(scratch / "full.gz", std::ios::binary);
  std::vector<uint8_t> gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  gz.resize(gz.size() / 2);
  test::write_bytes(images + ".gz", gz);
  REQUIRE_THROWS_WITH(MNIST(dir.str()), Catch::Contains(images + ".gz") && Catch::Contains("gzip"));
}

TEST_CASE("MNIST headers that promise more than the file holds are errors, never crashes", "[data][mnist][errors]") {
  TempDir dir;
  const std::string images = dir / "train-images-idx3-ubyte", labels = dir / "train-labels-idx1-ubyte";
  test::write_bytes(labels, idx_labels(4));
  // Extents whose product passes 64 bits: 0xFFFFFFFF^3.
  std::vector<uint8_t> huge;
  for (uint32_t v : {2051u, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu}) test::append_be32(huge, v);
  huge.resize(huge.size() + 100, 7);
  test::write_bytes(images, huge);
  REQUIRE_THROWS_WITH(MNIST(dir.str()),
                      Catch::Contains(images) && Catch::Contains("truncated") && Catch::Contains("more than 2^64"));
  // A product that fits but is far beyond the file.
  std::vector<uint8_t> big;
  for (uint32_t v : {2051u, 100000u, 1000u, 1000u}) test::append_be32(big, v);
  test::write_bytes(images, big);
  REQUIRE_THROWS_WITH(MNIST(dir.str()), Catch::Contains(images) && Catch::Contains("100000x1000x1000"));
  // Images without pixels cannot feed a model.
  test::write_bytes(images, idx_images(4, 0, 0));
  REQUIRE_THROWS_WITH(MNIST(dir.str()), Catch::Contains(images) && Catch::Contains("0x0 pixels"));
  // Zero images of an absurd size: the size check passes (0 bytes promised, 0 present), but
  // the strides would overflow 64 bits (found by tests/fuzz/fuzz_idx).
  std::vector<uint8_t> none;
  for (uint32_t v : {2051u, 0u, 4294964992u, 3253207039u}) test::append_be32(none, v);
  test::write_bytes(images, none);
  REQUIRE_THROWS_WITH(read_idx_images(images), Catch::Contains(images) && Catch::Contains("4294964992x3253207039"));
}

TEST_CASE("MNIST labels outside the ten classes are errors naming file and record", "[data][mnist][errors]") {
  TempDir dir;
  const std::string labels = dir / "train-labels-idx1-ubyte";
  test::write_bytes(dir / "train-images-idx3-ubyte", idx_images(4, 28, 28));
  auto bad = idx_labels(4);
  bad[8 + 2] = 12;
  test::write_bytes(labels, bad);
  REQUIRE_THROWS_WITH(MNIST(dir.str()), Catch::Contains(labels) && Catch::Contains("label record 2 at offset 10") &&
                                            Catch::Contains("is 12") && Catch::Contains("below 10"));
}

TEST_CASE("a gzip bomb stops at the header's promise or the byte cap", "[data][mnist][errors]") {
  TempDir dir;
  const std::string images = dir / "train-images-idx3-ubyte.gz";
  test::write_bytes(dir / "train-labels-idx1-ubyte", idx_labels(1));
  // 64 MiB of zeros after a header that promises one image: compresses to ~64 KB.
  auto bomb = idx_images(1, 28, 28);
  bomb.resize(bomb.size() + (size_t{64} << 20), 0);
  test::write_gzip(images, bomb);
  REQUIRE(std::filesystem::file_size(images) < (size_t{1} << 20));
  REQUIRE_THROWS_WITH(MNIST(dir.str()),
                      Catch::Contains(images) && Catch::Contains("holds more than") && Catch::Contains("gzip bomb"));
  // The cap itself, configurable.
  test::write_gzip(images, idx_images(1, 28, 28));
  setenv("DDL_DATA_MAX_BYTES", "100", 1);
  REQUIRE_THROWS_WITH(MNIST(dir.str()), Catch::Contains("holds more than 100 bytes"));
  setenv("DDL_DATA_MAX_BYTES", "12x", 1);
  REQUIRE_THROWS_WITH(MNIST(dir.str()), Catch::Contains("DDL_DATA_MAX_BYTES='12x'"));
  unsetenv("DDL_DATA_MAX_BYTES");
  REQUIRE(MNIST(dir.str()).size() == 1);
}

TEST_CASE("a FIFO in place of an IDX file is refused at once, not read", "[data][mnist][errors]") {
  TempDir dir;
  test::write_bytes(dir / "train-labels-idx1-ubyte", idx_labels(1));
  const std::string fifo = dir / "train-images-idx3-ubyte";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  REQUIRE_THROWS_WITH(read_idx_images(fifo), Catch::Contains(fifo) && Catch::Contains("not a regular file"));
}
