// The small CNN the data-parallel equivalence tests train: no BatchNorm, since
// per-rank batch statistics would break the equivalence with one large batch.
#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include <ddl/nn/layers.h>
#include <ddl/tensor/core/factory.h>
#include <ddl/tensor/core/random.h>

namespace ddl::test {

inline std::shared_ptr<nn::Sequential> make_small_cnn() {
  manual_seed(7);
  return std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Conv2d>(nn::Conv2dOptions(1, 4, 3).padding(1)), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::MaxPool2d>(2), std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(4 * 4 * 4, 3)});
}

// Its data: 1x8x8 images and three classes, the same on every rank (each takes its rows).
struct SmallCnnData {
  Tensor x, y;
};
inline SmallCnnData small_cnn_data(int64_t n) {
  Generator g(11);
  return {randn({n, 1, 8, 8}, g), randint(0, 3, {n}, g)};
}

// A model's parameters, flattened in order, for comparing replicas and strategies.
inline std::vector<float> flat_params(const nn::Module& m) {
  std::vector<float> flat;
  for (auto& p : m.parameters()) {
    auto v = to_vector<float>(p.data().contiguous());
    flat.insert(flat.end(), v.begin(), v.end());
  }
  return flat;
}

// The largest |a - b| / (|b| + 1e-3); huge when the sizes differ.
inline double max_rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = a.size() == b.size() ? 0 : 1e30;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    m = std::max(m, std::abs(double(a[i]) - b[i]) / (std::abs(double(b[i])) + 1e-3));
  return m;
}

}  // namespace ddl::test
