// A 2-layer MLP built from tensors and autograd learns XOR with plain SGD.
#include <catch2/catch.hpp>

#include <ddl/ddl.h>

using namespace ddl;

TEST_CASE("a 2-8-1 MLP learns XOR", "[autograd][training]") {
  Generator gen(0);
  const Tensor x = from_vector<float>({0, 0, 0, 1, 1, 0, 1, 1}, {4, 2});
  const Tensor y = from_vector<float>({0, 1, 1, 0}, {4, 1});
  Variable w1(uniform_(empty({8, 2}), -1, 1, gen), true);
  Variable b1(zeros({8}), true);
  Variable w2(uniform_(empty({1, 8}), -1, 1, gen), true);
  Variable b2(zeros({1}), true);
  const std::vector<Variable> params = {w1, b1, w2, b2};
  double first_loss = 0, loss_value = 0;
  for (int step = 0; step < 2000; ++step) {
    Variable h = tanh(linear(Variable(x), w1, b1));
    Variable p = sigmoid(linear(h, w2, b2));
    Variable loss = mean(pow(p - Variable(y), 2.0));
    for (auto param : params) param.zero_grad();
    loss.backward();
    {
      NoGradGuard no_grad;
      for (const auto& param : params) param.data().add_(param.grad(), -1.0);
    }
    loss_value = loss.item();
    if (step == 0) first_loss = loss_value;
  }
  Variable h = tanh(linear(Variable(x), w1, b1));
  const auto pred = to_vector<float>(sigmoid(linear(h, w2, b2)).data());
  INFO("first loss " << first_loss << ", final loss " << loss_value);
  REQUIRE(loss_value < 0.02);
  REQUIRE(pred[0] < 0.2f);
  REQUIRE(pred[1] > 0.8f);
  REQUIRE(pred[2] > 0.8f);
  REQUIRE(pred[3] < 0.2f);
}
