// Layers: known outputs, default initialisation, train/eval behaviour.
#include <catch2/catch.hpp>
#include <cmath>

#include <ddl/ddl.h>

using namespace ddl;
using namespace ddl::nn;

TEST_CASE("Linear computes x W^T + b", "[nn][layers]") {
  Linear lin(2, 3);
  lin.weight.data().copy_(from_vector<float>({1, 2, 3, 4, 5, 6}, {3, 2}));
  lin.bias.data().copy_(from_vector<float>({0.5f, -0.5f, 0}));
  const Variable y = lin(Variable(from_vector<float>({1, 1, 2, 0}, {2, 2})));
  REQUIRE(to_vector<float>(y.data()) == std::vector<float>{3.5f, 6.5f, 11, 2.5f, 5.5f, 10});
  REQUIRE_THROWS_WITH(lin(Variable(zeros({2, 5}))),
                      Catch::Contains("linear: input [2, 5] does not match weight [3, 2]"));
}

TEST_CASE("default init follows PyTorch's bounds", "[nn][init]") {
  manual_seed(0);
  Conv2d conv(64, 128, 3);  // fan_in = 576
  const double bound = 1.0 / std::sqrt(576.0);
  const Tensor w = conv.weight.data().to(DType::Float64);
  REQUIRE(amax(w).item() <= bound);
  REQUIRE(amin(w).item() >= -bound);
  REQUIRE(mean(w).item() == Approx(0).margin(0.002));
  REQUIRE(var(w).item() == Approx(bound * bound / 3).epsilon(0.03));  // U(-b, b) has variance b^2 / 3
  REQUIRE(amax(conv.bias.data()).item() <= bound);
  Tensor k = empty({256, 512});
  init::kaiming_normal_(k, 0, init::FanMode::FanIn, init::Nonlinearity::Relu);
  REQUIRE(std::sqrt(var(k).item()) == Approx(std::sqrt(2.0 / 512)).epsilon(0.02));
  init::xavier_uniform_(k);
  REQUIRE(amax(k).item() <= std::sqrt(6.0 / (256 + 512)));
  BatchNorm2d bn(8);
  REQUIRE(to_vector<float>(bn.weight.data()) == std::vector<float>(8, 1));
  REQUIRE(to_vector<float>(bn.bias.data()) == std::vector<float>(8, 0));
}

TEST_CASE("BatchNorm uses batch statistics in training and running ones in eval", "[nn][layers]") {
  BatchNorm1d bn(2, 1e-5, 0.5);
  const Tensor x = from_vector<float>({1, 10, 3, 20, 5, 30}, {3, 2});  // channel means 3 and 20
  Variable y = bn(Variable(x));
  REQUIRE(to_vector<float>(mean(y.data(), {0})) == std::vector<float>{0, 0});
  REQUIRE(bn.num_batches_tracked.item() == 1);
  // running = 0.5 * old + 0.5 * batch (unbiased variance: 4 and 100)
  REQUIRE(to_vector<float>(bn.running_mean.data()) == std::vector<float>{1.5f, 10});
  REQUIRE(to_vector<float>(bn.running_var.data()) == std::vector<float>{2.5f, 50.5f});
  bn.eval();
  y = bn(Variable(x));
  REQUIRE(bn.num_batches_tracked.item() == 1);
  REQUIRE(to_vector<float>(y.data())[0] == Approx((1 - 1.5) / std::sqrt(2.5 + 1e-5)));
  REQUIRE_THROWS_WITH(bn(Variable(zeros({3, 5}))), Catch::Contains("has 5 channels, expected 2"));
}

TEST_CASE("Dropout drops in training only", "[nn][layers]") {
  Generator gen(1);
  Dropout drop(0.5, &gen);
  const Tensor x = ones({1000});
  const auto y = to_vector<float>(drop(Variable(x)).data());
  const auto zeros_n = std::count(y.begin(), y.end(), 0.0f);
  REQUIRE(zeros_n > 400);
  REQUIRE(zeros_n < 600);
  REQUIRE(std::count(y.begin(), y.end(), 2.0f) == 1000 - zeros_n);
  drop.eval();
  REQUIRE(to_vector<float>(drop(Variable(x)).data()) == std::vector<float>(1000, 1));
}

TEST_CASE("pooling, flatten and adaptive pooling layers", "[nn][layers]") {
  const Tensor x = arange(0.0, 16.0, 1.0).reshape({1, 1, 4, 4});
  REQUIRE(to_vector<float>(MaxPool2d(2)(Variable(x)).data()) == std::vector<float>{5, 7, 13, 15});
  REQUIRE(to_vector<float>(AvgPool2d(2)(Variable(x)).data()) == std::vector<float>{2.5f, 4.5f, 10.5f, 12.5f});
  REQUIRE(to_vector<float>(AdaptiveAvgPool2d({1, 1})(Variable(x)).data()) == std::vector<float>{7.5f});
  REQUIRE(to_vector<float>(AdaptiveAvgPool2d({2, 2})(Variable(x)).data()) ==
          std::vector<float>{2.5f, 4.5f, 10.5f, 12.5f});
  REQUIRE(Flatten()(Variable(x)).shape() == Shape{1, 16});
  // Non-dividing sizes use PyTorch's overlapping windows (tests/tensor/test_adaptive_upsample.cpp).
  REQUIRE(to_vector<float>(AdaptiveAvgPool2d({3, 3})(Variable(x)).data()) ==
          std::vector<float>{2.5f, 3.5f, 4.5f, 6.5f, 7.5f, 8.5f, 10.5f, 11.5f, 12.5f});
}

TEST_CASE("loss modules", "[nn][layers]") {
  CrossEntropyLoss ce;
  const Variable logits(from_vector<float>({0, 0, 0, 0}, {2, 2}));
  REQUIRE(ce(logits, from_vector<int64_t>({0, 1})).item() == Approx(std::log(2.0)));
  MSELoss mse;
  REQUIRE(mse(Variable(from_vector<float>({1, 3})), Variable(from_vector<float>({0, 0}))).item() == Approx(5));
}

TEST_CASE("a VGG forward pass gives logits of the right shape", "[nn][models]") {
  manual_seed(0);
  VGG m(11, true, 10, 1);
  Generator gen(2);
  const Variable y = m(Variable(randn({2, 1, 32, 32}, gen)));
  REQUIRE(y.shape() == Shape{2, 10});
  REQUIRE_THROWS_WITH(m(Variable(zeros({2, 1, 28, 28}))), Catch::Contains("expected [N, C, 32, 32]"));
}
