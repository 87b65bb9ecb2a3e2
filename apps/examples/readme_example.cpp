// The README's example, compiled by the build so it stays true:
// a small MLP learns y = x^2 on [-1, 1] with SGD.
#include <iostream>

#include <ddl/ddl.h>

int main() {
  using namespace ddl;
  manual_seed(0);
  Generator gen(0);
  const Tensor x = rand({256, 1}, gen) * 2.0 - 1.0;  // inputs in [-1, 1)
  const Tensor y = x * x;

  auto model = std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Linear>(1, 32), std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(32, 1)});
  optim::SGD opt(model->parameters(), {.lr = 0.1, .momentum = 0.9});

  for (int step = 0; step <= 500; ++step) {
    Variable loss = mse_loss(model->forward(Variable(x)), Variable(y));
    opt.zero_grad();
    loss.backward();
    opt.step();
    if (step % 100 == 0) std::cout << "step " << step << "  loss " << loss.item() << "\n";
  }
  std::cout << *model << "\n";
  return 0;
}
