// A user's program built by tests/install against an installed ddl (through pkg-config,
// CMake and meson): a small MLP learns y = x^2 with autograd, nn and optim. It checks
// that training works from an install (the loss falls tenfold), not how well it fits.
#include <cstdio>

#include <ddl/ddl.h>

int main() {
  using namespace ddl;
  manual_seed(0);
  Generator gen(0);
  const Tensor x = rand({128, 1}, gen) * 2.0 - 1.0;  // inputs in [-1, 1)
  const Tensor y = x * x;

  auto model = std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Linear>(1, 16), std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(16, 1)});
  optim::SGD opt(model->parameters(), {.lr = 0.1, .momentum = 0.9});

  double first = 0, last = 0;
  for (int step = 0; step < 300; ++step) {
    Variable loss = mse_loss(model->forward(Variable(x)), Variable(y));
    opt.zero_grad();
    loss.backward();
    opt.step();
    (step == 0 ? first : last) = loss.item();
  }
  std::printf("train_tiny: loss %.6f -> %.6f\n", first, last);
  if (!(last < first / 10)) {
    std::fprintf(stderr, "train_tiny: the loss did not fall tenfold\n");
    return 1;
  }
  return 0;
}
