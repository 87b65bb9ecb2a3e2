// The installed Fashion-MNIST (Debian's dataset-fashion-mnist) read by ddl's IDX reader:
// known first labels and pixel sums. Its own executable, so a machine without the
// package reports it skipped (exit 77), not passed.
#include <catch2/catch.hpp>
#include <filesystem>

#include "tests/common/skip.h"
#include <ddl/data/mnist.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using namespace ddl::data;

TEST_CASE("the installed Fashion-MNIST has its known labels and pixel sums", "[data][mnist][fashion]") {
  const std::string root = "/usr/share/datasets/fashion-mnist";
  if (!std::filesystem::exists(root + "/train-images-idx3-ubyte.gz"))
    DDL_SKIP("Fashion-MNIST is not installed at " << root << " (Debian's dataset-fashion-mnist; scripts/setup.sh)");
  // Values from Python on the raw files: im = gzip.open(path).read(); labels lb[8:28];
  // image i's sum sum(im[16 + 784 * i : 16 + 784 * (i + 1)]); totals sum(im[16:]), sum(lb[8:]).
  const FashionMNIST test(root, false);
  REQUIRE(test.size() == 10000);
  REQUIRE(test.images().shape() == Shape{10000, 28, 28});
  REQUIRE(to_vector<int64_t>(test.labels().narrow(0, 0, 20)) ==
          std::vector<int64_t>{9, 2, 1, 1, 6, 1, 4, 6, 5, 7, 4, 5, 7, 3, 4, 1, 2, 4, 8, 0});
  const std::vector<double> sums = {33456, 100994, 51520, 35377, 62655};
  for (int i = 0; i < 5; ++i) REQUIRE(sum(test.images().select(0, i).to(DType::Float64)).item() == sums[i]);
  REQUIRE(sum(test.images().to(DType::Float64)).item() == 573469082.0);
  REQUIRE(sum(test.labels()).item() == 45000.0);

  const FashionMNIST train(root, true);
  REQUIRE(train.size() == 60000);
  REQUIRE(to_vector<int64_t>(train.labels().narrow(0, 0, 20)) ==
          std::vector<int64_t>{9, 0, 0, 3, 0, 2, 7, 2, 5, 5, 0, 9, 5, 5, 7, 9, 1, 0, 6, 4});
  REQUIRE(sum(train.images().select(0, 0).to(DType::Float64)).item() == 76247.0);
  REQUIRE(sum(train.images().to(DType::Float64)).item() == 3431114169.0);
}
