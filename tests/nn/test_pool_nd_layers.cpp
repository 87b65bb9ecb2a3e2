// The N-d convolution and pooling layers (nn/conv3d_layers.h, nn/pool_nd_layers.h): construction,
// forward shapes, clone, printing; and the 2-D pooling layers on unbatched [C, H, W] input.
#include <catch2/catch.hpp>

#include "ddl.h"

using namespace ddl;
using namespace ddl::nn;

TEST_CASE("2-D pooling layers accept unbatched [C, H, W] input as PyTorch's do", "[nn][pool]") {
  const Tensor x = arange(0.0, 32.0, 1.0).reshape({2, 4, 4});
  const Tensor xb = x.reshape({1, 2, 4, 4});
  for (Size2 out : {Size2(1), Size2(2), Size2(3)}) {
    AdaptiveAvgPool2d pool(out);
    const Variable y = pool(Variable(x));
    REQUIRE(y.shape() == Shape{2, out[0], out[1]});
    REQUIRE(to_vector<float>(y.data()) == to_vector<float>(pool(Variable(xb)).data()));
  }
  REQUIRE(AdaptiveMaxPool2d(3)(Variable(x)).shape() == Shape{2, 3, 3});
  REQUIRE(MaxPool2d(2)(Variable(x)).shape() == Shape{2, 2, 2});
  REQUIRE(AvgPool2d(2)(Variable(x)).shape() == Shape{2, 2, 2});
  REQUIRE_THROWS_WITH(AdaptiveAvgPool2d(2)(Variable(zeros({4, 4}))), Catch::Contains("AdaptiveAvgPool2d"));
}
