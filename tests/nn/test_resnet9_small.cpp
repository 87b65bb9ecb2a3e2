// ResNet9Small (nn/models/resnet9_small.h): names and counts as PyTorch's twin in
// bench/torch_fmnist_tta.py, forward and backward shapes, and the input check.
#include <catch2/catch.hpp>

#include <ddl/ddl.h>
#include <ddl/nn/models/resnet9_small.h>

using namespace ddl;
using namespace ddl::nn;

TEST_CASE("ResNet9Small names and counts equal PyTorch's", "[nn][models]") {
  ResNet9Small m(10, 1, 16);
  // From PyTorch 1.13 (bench/torch_fmnist_tta.py's ResNet9Small(16)): 50 state_dict
  // entries, 412,666 parameters; 412,954 with 3 input channels.
  const auto state = m.named_state();
  REQUIRE(state.size() == 50);
  REQUIRE(m.parameter_count() == 412666);
  REQUIRE(ResNet9Small(10, 3, 16).parameter_count() == 412954);
  REQUIRE(make_model("resnet9_small", 10, 1)->parameter_count() == 412666);
  const std::vector<std::pair<size_t, std::string>> names = {
      {0, "prep.0.weight"},   {1, "prep.1.weight"},  {5, "prep.1.num_batches_tracked"},
      {6, "layer1.0.weight"}, {42, "res3.3.weight"}, {48, "linear.weight"},
      {49, "linear.bias"}};
  for (const auto& [i, name] : names) REQUIRE(state[i].first == name);
  // The count by formula at another width: eight bias-free 3x3 convs, eight BatchNorms, the Linear
  // (PyTorch: 103,810 at width 8).
  const int64_t w = 8, c[] = {1, w, 2 * w, 2 * w, 2 * w, 4 * w, 8 * w, 8 * w, 8 * w};
  int64_t expected = 8 * w * 10 + 10;
  for (int i = 0; i < 8; ++i) expected += c[i] * c[i + 1] * 9 + 2 * c[i + 1];
  REQUIRE(ResNet9Small(10, 1, w).parameter_count() == expected);
}

TEST_CASE("ResNet9Small forward and backward shapes", "[nn][models]") {
  manual_seed(0);
  ResNet9Small m(10, 1, 4);
  const Variable x(randn({2, 1, 32, 32}));
  const Variable y = m.forward(x);
  REQUIRE(y.shape() == Shape{2, 10});
  sum(y * Variable(randn({2, 10}))).backward();
  for (const auto& [name, p] : m.named_parameters()) {
    INFO(name);
    REQUIRE(p.grad().defined());
    REQUIRE(p.grad().shape() == p.shape());
  }
  // Any size divisible by 8 (three 2x2 pools, then a global max): 64x48 with 3 channels.
  REQUIRE(ResNet9Small(7, 3, 4).forward(Variable(randn({1, 3, 64, 48}))).shape() == Shape{1, 7});
  REQUIRE_THROWS_WITH(m.forward(Variable(randn({2, 1, 28, 28}))), Catch::Contains("ResNet9Small: expected"));
  REQUIRE_THROWS_WITH(ResNet9Small(10, 1, 0), Catch::Contains("ResNet9Small: width"));
}
