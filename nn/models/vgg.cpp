// VGG configurations (Simonyan & Zisserman, 2014), CIFAR head.
#include <map>
#include <vector>

#include <ddl/nn/models/mlp.h>
#include <ddl/nn/models/resnet.h>
#include <ddl/nn/models/resnet9_small.h>
#include <ddl/nn/models/vgg.h>

namespace ddl::nn {

namespace {
constexpr int kPool = -1;
const std::map<int, std::vector<int>>& configs() {
  static const std::map<int, std::vector<int>> cfg = {
      {11, {64, kPool, 128, kPool, 256, 256, kPool, 512, 512, kPool, 512, 512, kPool}},
      {13, {64, 64, kPool, 128, 128, kPool, 256, 256, kPool, 512, 512, kPool, 512, 512, kPool}},
      {16, {64, 64, kPool, 128, 128, kPool, 256, 256, 256, kPool, 512, 512, 512, kPool, 512, 512, 512, kPool}},
      {19, {64,  64,  kPool, 128, 128,   kPool, 256, 256, 256, 256,  kPool,
            512, 512, 512,   512, kPool, 512,   512, 512, 512, kPool}},
  };
  return cfg;
}
}  // namespace

VGG::VGG(int depth, bool batch_norm, int64_t num_classes, int64_t in_channels) : Module("VGG") {
  const auto it = configs().find(depth);
  DDL_CHECK(it != configs().end(), "VGG: depth must be 11, 13, 16 or 19, got ", depth);
  features = register_module("features", std::make_shared<Sequential>());
  int64_t channels = in_channels;
  for (int v : it->second) {
    if (v == kPool) {
      features->push_back(std::make_shared<MaxPool2d>(2, 2));
      continue;
    }
    features->push_back(std::make_shared<Conv2d>(Conv2dOptions(channels, v, 3).padding(1)));
    if (batch_norm) features->push_back(std::make_shared<BatchNorm2d>(v));
    features->push_back(std::make_shared<ReLU>());
    channels = v;
  }
  classifier = register_module("classifier", std::make_shared<Linear>(512, num_classes));
}

Variable VGG::forward(const Variable& x) {
  DDL_CHECK(x.dim() == 4 && x.size(2) == 32 && x.size(3) == 32,
            "VGG: expected [N, C, 32, 32] input (CIFAR variant), got ", x.shape());
  return call_child(*classifier, "classifier", call_child(*features, "features", x).flatten(1));
}

std::shared_ptr<Module> make_model(const std::string& name, int64_t num_classes, int64_t in_channels,
                                   int64_t image_size) {
  for (int depth : {11, 13, 16, 19}) {
    const std::string base = "vgg" + std::to_string(depth);
    if (name == base) return std::make_shared<VGG>(depth, false, num_classes, in_channels);
    if (name == base + "_bn") return std::make_shared<VGG>(depth, true, num_classes, in_channels);
  }
  if (name == "mlp")
    return std::make_shared<MLP>(in_channels * image_size * image_size, std::vector<int64_t>{512, 256}, num_classes);
  if (name == "resnet18") return std::make_shared<ResNet18>(num_classes, in_channels);
  if (name == "resnet9_small") return std::make_shared<ResNet9Small>(num_classes, in_channels);
  DDL_CHECK(false, "make_model: unknown model '", name,
            "'; expected vgg11|13|16|19 with optional _bn, mlp, resnet18 or resnet9_small");
  return nullptr;
}

}  // namespace ddl::nn
