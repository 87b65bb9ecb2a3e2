// MLP construction.
#include <ddl/nn/models/mlp.h>

namespace ddl::nn {

MLP::MLP(int64_t in_features, const std::vector<int64_t>& hidden, int64_t num_classes) : Module("MLP") {
  layers = register_module("layers", std::make_shared<Sequential>());
  int64_t width = in_features;
  for (int64_t h : hidden) {
    layers->push_back(std::make_shared<Linear>(width, h));
    layers->push_back(std::make_shared<ReLU>());
    width = h;
  }
  layers->push_back(std::make_shared<Linear>(width, num_classes));
}

}  // namespace ddl::nn
