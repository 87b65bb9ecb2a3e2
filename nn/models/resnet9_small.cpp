// ResNet9Small's layers and forward: res1 and res3 are Sequentials whose output is added to their input.
#include <ddl/nn/models/resnet9_small.h>

namespace ddl::nn {

namespace {
// conv3x3 (no bias: BatchNorm's shift replaces it), BatchNorm, ReLU, appended to `s`.
void add_conv_bn(Sequential& s, int64_t in, int64_t out) {
  s.push_back(std::make_shared<Conv2d>(Conv2dOptions(in, out, 3).padding(1).bias(false)));
  s.push_back(std::make_shared<BatchNorm2d>(out));
  s.push_back(std::make_shared<ReLU>());
}

std::shared_ptr<Sequential> block(int64_t in, int64_t out, bool pool) {
  auto s = std::make_shared<Sequential>();
  add_conv_bn(*s, in, out);
  if (pool) s->push_back(std::make_shared<MaxPool2d>(2, 2));
  return s;
}

std::shared_ptr<Sequential> residual_body(int64_t c) {
  auto s = std::make_shared<Sequential>();
  add_conv_bn(*s, c, c);
  add_conv_bn(*s, c, c);
  return s;
}
}  // namespace

ResNet9Small::ResNet9Small(int64_t num_classes, int64_t in_channels, int64_t width) : Module("ResNet9Small") {
  DDL_CHECK(width >= 1 && in_channels >= 1 && num_classes >= 1,
            "ResNet9Small: width, in_channels and num_classes must be positive, got ", width, ", ", in_channels, ", ",
            num_classes);
  const int64_t w = width;
  prep = register_module("prep", block(in_channels, w, false));
  layer1 = register_module("layer1", block(w, 2 * w, true));
  res1 = register_module("res1", residual_body(2 * w));
  layer2 = register_module("layer2", block(2 * w, 4 * w, true));
  layer3 = register_module("layer3", block(4 * w, 8 * w, true));
  res3 = register_module("res3", residual_body(8 * w));
  linear = register_module("linear", std::make_shared<Linear>(8 * w, num_classes));
}

Variable ResNet9Small::forward(const Variable& x) {
  DDL_CHECK(x.dim() == 4 && x.size(2) % 8 == 0 && x.size(3) % 8 == 0 && x.size(2) > 0 && x.size(3) > 0,
            "ResNet9Small: expected [N, C, H, W] input with H and W multiples of 8 (three 2x2 pools), got ", x.shape());
  Variable out = call_child(*layer1, "layer1", call_child(*prep, "prep", x));
  out = out + call_child(*res1, "res1", out);
  out = call_child(*layer3, "layer3", call_child(*layer2, "layer2", out));
  out = out + call_child(*res3, "res3", out);
  return call_child(*linear, "linear", amax(out, {2, 3}));
}

}  // namespace ddl::nn
