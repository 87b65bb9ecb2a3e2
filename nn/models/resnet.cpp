// ResNet-18 (CIFAR variant) blocks and forward.
#include <ddl/nn/models/resnet.h>

namespace ddl::nn {

BasicBlock::BasicBlock(int64_t in_planes, int64_t planes, int64_t stride) : Module("BasicBlock") {
  conv1 = register_module(
      "conv1",
      std::make_shared<Conv2d>(in_planes, planes, 3, Conv2dOptions{.stride = stride, .padding = 1, .bias = false}));
  bn1 = register_module("bn1", std::make_shared<BatchNorm2d>(planes));
  conv2 =
      register_module("conv2", std::make_shared<Conv2d>(planes, planes, 3, Conv2dOptions{.padding = 1, .bias = false}));
  bn2 = register_module("bn2", std::make_shared<BatchNorm2d>(planes));
  shortcut = register_module("shortcut", std::make_shared<Sequential>());
  if (stride != 1 || in_planes != planes) {
    shortcut->push_back(std::make_shared<Conv2d>(in_planes, planes, 1, Conv2dOptions{.stride = stride, .bias = false}));
    shortcut->push_back(std::make_shared<BatchNorm2d>(planes));
  }
}

Variable BasicBlock::forward(const Variable& x) {
  Variable out = relu(call_child(*bn1, "bn1", call_child(*conv1, "conv1", x)));
  out = call_child(*bn2, "bn2", call_child(*conv2, "conv2", out));
  return relu(out + call_child(*shortcut, "shortcut", x));
}

namespace {
std::shared_ptr<Sequential> make_layer(int64_t& in_planes, int64_t planes, int64_t stride) {
  auto layer = std::make_shared<Sequential>();
  layer->push_back(std::make_shared<BasicBlock>(in_planes, planes, stride));
  layer->push_back(std::make_shared<BasicBlock>(planes, planes, 1));
  in_planes = planes;
  return layer;
}
}  // namespace

ResNet18::ResNet18(int64_t num_classes, int64_t in_channels) : Module("ResNet18") {
  conv1 = register_module("conv1",
                          std::make_shared<Conv2d>(in_channels, 64, 3, Conv2dOptions{.padding = 1, .bias = false}));
  bn1 = register_module("bn1", std::make_shared<BatchNorm2d>(64));
  int64_t in_planes = 64;
  layer1 = register_module("layer1", make_layer(in_planes, 64, 1));
  layer2 = register_module("layer2", make_layer(in_planes, 128, 2));
  layer3 = register_module("layer3", make_layer(in_planes, 256, 2));
  layer4 = register_module("layer4", make_layer(in_planes, 512, 2));
  linear = register_module("linear", std::make_shared<Linear>(512, num_classes));
}

Variable ResNet18::forward(const Variable& x) {
  Variable out = relu(call_child(*bn1, "bn1", call_child(*conv1, "conv1", x)));
  for (auto [layer, name] : {std::pair{layer1, "layer1"}, {layer2, "layer2"}, {layer3, "layer3"}, {layer4, "layer4"}})
    out = call_child(*layer, name, out);
  return call_child(*linear, "linear", mean(out, {2, 3}));
}

}  // namespace ddl::nn
