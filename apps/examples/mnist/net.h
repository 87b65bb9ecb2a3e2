// The network of pytorch/examples' cpp/mnist (and cpp/distributed): two 5x5
// convolutions with max-pooling, channel dropout, two linear layers, log-softmax.
// Shared by apps/examples/mnist and apps/examples/distributed; header-only, as the
// examples have no library of their own.
#pragma once

#include <ddl/ddl.h>

namespace examples {

struct Net : ddl::nn::Module {
  Net() : Module("Net") {
    conv1 = register_module("conv1", std::make_shared<ddl::nn::Conv2d>(1, 10, 5));
    conv2 = register_module("conv2", std::make_shared<ddl::nn::Conv2d>(10, 20, 5));
    fc1 = register_module("fc1", std::make_shared<ddl::nn::Linear>(320, 50));
    fc2 = register_module("fc2", std::make_shared<ddl::nn::Linear>(50, 10));
    conv2_drop = register_module("conv2_drop", std::make_shared<ddl::nn::Dropout2d>(0.5));
    dropout = register_module("dropout", std::make_shared<ddl::nn::Dropout>(0.5));
  }

  // x: [N, 1, 28, 28] -> log-probabilities [N, 10]
  ddl::Variable forward(const ddl::Variable& input) override {
    ddl::Variable x = ddl::relu(ddl::max_pool2d(conv1->forward(input), 2));
    x = ddl::relu(ddl::max_pool2d(conv2_drop->forward(conv2->forward(x)), 2));
    x = x.view({-1, 320});
    x = dropout->forward(ddl::relu(fc1->forward(x)));
    return ddl::log_softmax(fc2->forward(x), 1);
  }

  std::shared_ptr<ddl::nn::Conv2d> conv1, conv2;
  std::shared_ptr<ddl::nn::Linear> fc1, fc2;
  std::shared_ptr<ddl::nn::Dropout2d> conv2_drop;
  std::shared_ptr<ddl::nn::Dropout> dropout;
};

}  // namespace examples
