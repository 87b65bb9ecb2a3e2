// A small CNN overfits 256 synthetic images: the whole stack (conv, bn, pool,
// linear, cross-entropy, autograd, SGD) working together.
#include <catch2/catch.hpp>

#include <ddl/ddl.h>

using namespace ddl;
using namespace ddl::nn;

TEST_CASE("a small CNN reaches 99% training accuracy on 256 images", "[nn][training]") {
  manual_seed(0);
  Generator gen(42);
  const int64_t n = 256, classes = 4;
  // Each class is a fixed random 1x12x12 template; samples add strong noise.
  const Tensor templates = randn({classes, 1, 12, 12}, gen);
  const Tensor labels = randint(0, classes, {n}, gen);
  std::vector<Tensor> rows;
  const auto lab = to_vector<int64_t>(labels);
  Tensor images = empty({n, 1, 12, 12});
  for (int64_t i = 0; i < n; ++i) images.select(0, i).copy_(templates.select(0, lab[i]));
  images.add_(mul(randn({n, 1, 12, 12}, gen), 1.0));

  Sequential model(std::vector<std::shared_ptr<Module>>{
      std::make_shared<Conv2d>(1, 8, 3, Conv2dOptions{.padding = 1}), std::make_shared<BatchNorm2d>(8),
      std::make_shared<ReLU>(), std::make_shared<MaxPool2d>(2),
      std::make_shared<Conv2d>(8, 16, 3, Conv2dOptions{.padding = 1}), std::make_shared<ReLU>(),
      std::make_shared<MaxPool2d>(2), std::make_shared<Flatten>(), std::make_shared<Linear>(16 * 3 * 3, classes)});
  optim::SGD opt(model.parameters(), {.lr = 0.05, .momentum = 0.9, .weight_decay = 1e-4});
  const int64_t batch = 32;
  double accuracy = 0;
  for (int epoch = 0; epoch < 30 && accuracy < 0.995; ++epoch) {
    const auto perm = to_vector<int64_t>(randperm(n, gen));
    model.train();
    for (int64_t b = 0; b < n; b += batch) {
      Tensor xb = empty({batch, 1, 12, 12});
      std::vector<int64_t> yb;
      for (int64_t k = 0; k < batch; ++k) {
        xb.select(0, k).copy_(images.select(0, perm[b + k]));
        yb.push_back(lab[perm[b + k]]);
      }
      Variable loss = cross_entropy(model(Variable(xb)), from_vector(yb));
      opt.zero_grad();
      loss.backward();
      opt.step();
    }
    model.eval();
    NoGradGuard no_grad;
    const Tensor pred = argmax(model(Variable(images)).data(), 1);
    accuracy = mean(eq(pred, labels).to(DType::Float64)).item();
  }
  INFO("training accuracy " << accuracy);
  REQUIRE(accuracy >= 0.99);
}
