// A user's project that has its own data/dataset.h and nn/module.h and builds with -I.
// first, against an installed ddl included as <ddl/...>: both sets of headers must reach
// the files they mean. Trains a Linear layer for a few steps so ddl's nn, optim and data
// headers are all used; exits 0 when the loss fell.
#include <cstdio>

#include "data/dataset.h"  // the project's own
#include "nn/module.h"     // the project's own
#include <ddl/ddl.h>

int main() {
  const app::Dataset own_data;
  const app::Module own_module;
  ddl::manual_seed(0);
  const ddl::Tensor x = ddl::randn({64, 3}), y = ddl::matmul(x, ddl::randn({3, 1}));
  const auto ds = std::make_shared<ddl::data::TensorDataset>(x, y);
  ddl::data::DataLoader loader(ds);
  ddl::nn::Linear fc(3, 1);
  ddl::optim::SGD opt(fc.parameters(), ddl::optim::SGDOptions(0.01));
  double first = 0, last = 0;
  for (int step = 0; step < 50; ++step) {
    const ddl::Variable loss = ddl::mse_loss(fc.forward(ddl::Variable(x)), ddl::Variable(y));
    opt.zero_grad();
    loss.backward();
    opt.step();
    (step == 0 ? first : last) = loss.item();
  }
  std::printf("own headers: %d names, %d layers; ddl: %lld examples, loss %.4f -> %.4f\n", own_data.size(),
              own_module.layers, static_cast<long long>(loader.dataset().size()), first, last);
  return last < first ? 0 : 1;
}
