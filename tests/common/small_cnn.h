// The small CNN the data-parallel equivalence tests train: no BatchNorm, since
// per-rank batch statistics would break the equivalence with one large batch.
#pragma once

#include <memory>

#include <ddl/nn/layers.h>
#include <ddl/tensor/random.h>

namespace ddl::test {

inline std::shared_ptr<nn::Sequential> make_small_cnn() {
  manual_seed(7);
  return std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Conv2d>(1, 4, 3, nn::Conv2dOptions{.padding = 1}), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::MaxPool2d>(2), std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(4 * 4 * 4, 3)});
}

}  // namespace ddl::test
