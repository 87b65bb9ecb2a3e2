// ResNet-18, CIFAR variant (He et al., 2016; 3x3 stem, no initial max pool):
// conv1/bn1, layer1..layer4 of two BasicBlocks each, global average pool, fc.
// Names follow the common PyTorch CIFAR implementation (kuangliu/pytorch-cifar):
// layerK.J.conv1, .bn1, .conv2, .bn2, .shortcut.0 (conv), .shortcut.1 (bn), and linear.
#pragma once

#include <ddl/nn/layers.h>

namespace ddl::nn {

class BasicBlock : public Module {
 public:
  BasicBlock(int64_t in_planes, int64_t planes, int64_t stride);
  Variable forward(const Variable& x) override;

  std::shared_ptr<Conv2d> conv1, conv2;
  std::shared_ptr<BatchNorm2d> bn1, bn2;
  std::shared_ptr<Sequential> shortcut;  // empty when the shapes already match
};

class ResNet18 : public Module {
 public:
  explicit ResNet18(int64_t num_classes = 10, int64_t in_channels = 3);
  Variable forward(const Variable& x) override;

  std::shared_ptr<Conv2d> conv1;
  std::shared_ptr<BatchNorm2d> bn1;
  std::shared_ptr<Sequential> layer1, layer2, layer3, layer4;
  std::shared_ptr<Linear> linear;
};

}  // namespace ddl::nn
