// A multilayer perceptron: Flatten, then Linear+ReLU per hidden width, then a Linear head.
#pragma once

#include <vector>

#include <ddl/nn/layers.h>

namespace ddl::nn {

class MLP : public Module {
 public:
  MLP(int64_t in_features, const std::vector<int64_t>& hidden, int64_t num_classes);
  Variable forward(const Variable& x) override { return layers->forward(x.flatten(1)); }

  std::shared_ptr<Sequential> layers;
};

}  // namespace ddl::nn
