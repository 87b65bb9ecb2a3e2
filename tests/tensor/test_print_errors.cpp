// Printing tensors, and the messages ddl::Error carries for bad input.
#include <catch2/catch.hpp>
#include <sstream>

#include <ddl/ddl.h>

using namespace ddl;

namespace {
std::string str(const Tensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}
}  // namespace

TEST_CASE("tensors print like PyTorch", "[print]") {
  REQUIRE(str(from_vector<float>({1, 2.5f, -3, 4}, {2, 2})) ==
          "tensor([[ 1.0000,  2.5000],\n        [-3.0000,  4.0000]], dtype=float32, shape=[2, 2])");
  REQUIRE(str(from_vector<int64_t>({1, 20})) == "tensor([ 1, 20], dtype=int64, shape=[2])");
  REQUIRE(str(scalar_tensor(0.5)) == "tensor(0.5000, dtype=float32, shape=[])");
  REQUIRE(str(gt(from_vector<float>({1, 2}), 1.5)) == "tensor([False,  True], dtype=bool, shape=[2])");
  REQUIRE(str(Tensor()) == "tensor(undefined)");
}

TEST_CASE("large tensors are elided in the middle", "[print]") {
  const std::string s = str(arange(0.0, 2000.0, 1.0));
  REQUIRE(s.find("...") != std::string::npos);
  REQUIRE(s.find("1999.0000") != std::string::npos);
  REQUIRE(s.find("1000.0000") == std::string::npos);
  REQUIRE(s.find("shape=[2000]") != std::string::npos);
  const std::string m = str(zeros({100, 100}));
  REQUIRE(std::count(m.begin(), m.end(), '\n') == 6);  // 3 rows, "...", 3 rows
}

TEST_CASE("errors name the op and the operands", "[errors]") {
  REQUIRE_THROWS_WITH(matmul(zeros({64, 512}), zeros({256, 10})), "matmul: cannot multiply [64, 512] by [256, 10]");
  REQUIRE_THROWS_WITH(mul(zeros({2, 3}), zeros({4})), Catch::Contains("mul: shapes [2, 3] and [4]"));
  REQUIRE_THROWS_WITH(zeros({2}).data<double>(), Catch::Contains("tensor is float32, asked for float64"));
  REQUIRE_THROWS_WITH(zeros({2, 2}).item(),
                      Catch::Contains("item: expected a tensor with one element, got shape [2, 2]"));
  REQUIRE_THROWS_WITH(Tensor().device(), Catch::Contains("undefined"));
  REQUIRE_THROWS_WITH(zeros({2, 3}).transpose(0, 2), Catch::Contains("transpose: dimension 2 out of range"));
  REQUIRE_THROWS_AS(zeros({-1}), Error);
}
