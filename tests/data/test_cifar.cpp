// CIFAR-10/100 binary reading: generated batches read back exactly (labels,
// channel planes), the cifar-10-batches-bin sub-folder is found, and truncated,
// missing or out-of-range files give errors naming the file and record.
#include <catch2/catch.hpp>

#include "temp_dir.h"
#include <ddl/data/cifar.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using namespace ddl::data;
using ddl::test::TempDir;

namespace {

// n records; record r of file f: labels (r + f) % limit..., pixel k = (r * 7 + k + f) % 256.
std::vector<uint8_t> records(int n, int f, int label_bytes) {
  std::vector<uint8_t> b;
  for (int r = 0; r < n; ++r) {
    if (label_bytes == 2) b.push_back(static_cast<uint8_t>((r + f) % 20));
    b.push_back(static_cast<uint8_t>((r + f) % 10));
    for (int k = 0; k < 3072; ++k) b.push_back(static_cast<uint8_t>((r * 7 + k + f) % 256));
  }
  return b;
}

void write_cifar10(const std::string& dir, int per_file) {
  for (int f = 1; f <= 5; ++f)
    test::write_bytes(dir + "/data_batch_" + std::to_string(f) + ".bin", records(per_file, f, 1));
  test::write_bytes(dir + "/test_batch.bin", records(per_file, 0, 1));
}

}  // namespace

TEST_CASE("CIFAR-10 reads generated batches exactly", "[data][cifar]") {
  TempDir dir;
  write_cifar10(dir / "cifar-10-batches-bin", 3);  // found in the sub-folder
  CIFAR10 train(dir.str(), true), test(dir.str(), false);
  REQUIRE(train.size() == 15);
  REQUIRE(test.size() == 3);
  // Example 7 is record 1 of data_batch_3.
  const Example ex = train.get(7);
  REQUIRE(ex.data.shape() == Shape{3, 32, 32});
  REQUIRE(ex.data.dtype() == DType::UInt8);
  REQUIRE(ex.target.item<int64_t>() == 4);
  const auto px = to_vector<int>(ex.data);
  for (int k = 0; k < 3072; ++k) REQUIRE(px[k] == (7 + k + 3) % 256);
  // Plane order: red, green, blue; row-major 32x32 inside each.
  REQUIRE(ex.data.select(0, 1).select(0, 2).select(0, 5).item<int>() == (7 + 1024 + 2 * 32 + 5 + 3) % 256);
  REQUIRE(to_vector<int64_t>(test.labels()) == std::vector<int64_t>{0, 1, 2});
}

TEST_CASE("CIFAR-100 reads fine and coarse labels", "[data][cifar]") {
  TempDir dir;
  test::write_bytes(dir / "cifar-100-binary/train.bin", records(25, 0, 2));
  test::write_bytes(dir / "cifar-100-binary/test.bin", records(4, 1, 2));
  CIFAR100 fine(dir.str(), true), coarse(dir.str(), false, {}, CIFAR100::Label::Coarse);
  REQUIRE(fine.size() == 25);
  REQUIRE(fine.get(21).target.item<int64_t>() == 1);   // 21 % 10
  REQUIRE(coarse.get(3).target.item<int64_t>() == 4);  // (3 + 1) % 20
  REQUIRE(to_vector<int64_t>(coarse.fine_labels()) == std::vector<int64_t>{1, 2, 3, 4});
  REQUIRE(to_vector<int>(fine.get(2).data.flatten().narrow(0, 0, 3)) == std::vector<int>{14, 15, 16});
}

TEST_CASE("CIFAR rejects missing, truncated and out-of-range files", "[data][cifar][errors]") {
  TempDir dir;
  REQUIRE_THROWS_WITH(CIFAR10(dir.str()), Catch::Contains("CIFAR-10") && Catch::Contains("data_batch_1.bin") &&
                                              Catch::Contains("no such file"));
  write_cifar10(dir.str(), 2);
  auto cut = records(4, 2, 1);
  cut.resize(cut.size() - 10);
  test::write_bytes(dir / "data_batch_2.bin", cut);
  REQUIRE_THROWS_WITH(CIFAR10(dir.str()), Catch::Contains(dir / "data_batch_2.bin") &&
                                              Catch::Contains("record 3 at offset 9219") &&
                                              Catch::Contains("3063 of 3073 bytes"));
  auto bad = records(2, 0, 1);
  bad[3073] = 10;  // record 1's label
  test::write_bytes(dir / "test_batch.bin", bad);
  REQUIRE_THROWS_WITH(CIFAR10(dir.str(), false), Catch::Contains("record 1 at offset 3073") &&
                                                     Catch::Contains("label 10") && Catch::Contains("below 10"));
  test::write_bytes(dir / "test_batch.bin", {});
  REQUIRE_THROWS_WITH(CIFAR10(dir.str(), false), Catch::Contains("is empty"));
  test::write_bytes(dir / "test.bin", records(1, 0, 1));  // CIFAR-10 records are not CIFAR-100's
  REQUIRE_THROWS_WITH(CIFAR100(dir.str(), false), Catch::Contains("CIFAR-100") && Catch::Contains("3074-byte"));
}
