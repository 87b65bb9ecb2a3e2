// ResNet-9 of the DAWNBench CIFAR-10 recipe (Page, "How to train your ResNet", 2018) at
// a chosen width (16: a quarter of the original's, ~0.4 M parameters): prep conv, layer1
// (conv, 2x2 max pool) + res1 (two convs, added), layer2 (conv, pool), layer3 (conv, pool)
// + res3, global max pool (amax over H, W), linear. Every conv is 3x3, bias-free, followed by BatchNorm and
// ReLU. Names equal bench/torch_fmnist_tta.py's ResNet9Small (prep.0, res1.3, ...).
#pragma once

#include <ddl/nn/layers.h>

namespace ddl::nn {

class ResNet9Small : public Module {
 public:
  // width >= 1: channels of the prep conv; the layers have 2, 4 and 8 times as many.
  explicit ResNet9Small(int64_t num_classes = 10, int64_t in_channels = 1, int64_t width = 16);
  // x: [N, in_channels, H, W] with H and W multiples of 8 (32x32: padded Fashion-MNIST, CIFAR).
  Variable forward(const Variable& x) override;

  std::shared_ptr<Sequential> prep, layer1, res1, layer2, layer3, res3;
  std::shared_ptr<Linear> linear;
};

}  // namespace ddl::nn
