// The network of pytorch/examples' cpp/mnist (and cpp/distributed): two 5x5
// convolutions with max-pooling, channel dropout, two linear layers, log-softmax.
// Shared by apps/examples/mnist and apps/examples/distributed; header-only, as the
// examples have no library of their own.
#pragma once

#include "ddl.h"

namespace examples {

// torch::nn::Dropout2d: zeroes whole channels ([N, C, 1, 1] mask) and scales the rest
// by 1 / (1 - p). ddl has no such layer, so the example keeps these few lines.
inline ddl::Variable channel_dropout(const ddl::Variable& x, double p, bool training) {
  if (!training || p == 0) return x;
  const ddl::Tensor keep = ddl::bernoulli({x.shape()[0], x.shape()[1], 1, 1}, 1 - p, ddl::default_generator());
  return x * (keep / (1 - p));
}

struct Net : ddl::nn::Module {
  Net() : Module("Net") {
    conv1 = register_module("conv1", std::make_shared<ddl::nn::Conv2d>(1, 10, 5));
    conv2 = register_module("conv2", std::make_shared<ddl::nn::Conv2d>(10, 20, 5));
    fc1 = register_module("fc1", std::make_shared<ddl::nn::Linear>(320, 50));
    fc2 = register_module("fc2", std::make_shared<ddl::nn::Linear>(50, 10));
    dropout = register_module("dropout", std::make_shared<ddl::nn::Dropout>(0.5));
  }

  // x: [N, 1, 28, 28] -> log-probabilities [N, 10]
  ddl::Variable forward(const ddl::Variable& input) override {
    ddl::Variable x = ddl::relu(ddl::max_pool2d(conv1->forward(input), 2));
    x = ddl::relu(ddl::max_pool2d(channel_dropout(conv2->forward(x), 0.5, is_training()), 2));
    x = x.view({-1, 320});
    x = dropout->forward(ddl::relu(fc1->forward(x)));
    return ddl::log_softmax(fc2->forward(x), 1);
  }

  std::shared_ptr<ddl::nn::Conv2d> conv1, conv2;
  std::shared_ptr<ddl::nn::Linear> fc1, fc2;
  std::shared_ptr<ddl::nn::Dropout> dropout;
};

}  // namespace examples
