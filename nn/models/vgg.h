// VGG-11/13/16/19, with or without BatchNorm, CIFAR variant (32x32 input):
// `features` is a Sequential of conv3x3/[bn]/relu blocks and 2x2 max pools
// (five pools take 32x32 to 1x1), then `classifier` = Linear(512, classes).
// Parameter names equal those of the same network written in PyTorch as
//   self.features = nn.Sequential(...); self.classifier = nn.Linear(512, n)
// so weights move between the two through safetensors.
#pragma once

#include <memory>
#include <string>

#include <ddl/nn/layers.h>

namespace ddl::nn {

class VGG : public Module {
 public:
  // depth: 11, 13, 16 or 19.
  VGG(int depth, bool batch_norm, int64_t num_classes = 10, int64_t in_channels = 3);
  Variable forward(const Variable& x) override;

  std::shared_ptr<Sequential> features;
  std::shared_ptr<Linear> classifier;
};

// Builds a model by name: vgg11, vgg11_bn, ..., vgg19_bn, mlp (for 28x28/32x32 inputs), resnet18,
// resnet9_small (nn/models/resnet9_small.h, width 16).
std::shared_ptr<Module> make_model(const std::string& name, int64_t num_classes = 10, int64_t in_channels = 3,
                                   int64_t image_size = 32);

}  // namespace ddl::nn
