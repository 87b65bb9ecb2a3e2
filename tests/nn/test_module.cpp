// Module registration, naming, traversal, modes, printing.
#include <catch2/catch.hpp>
#include <sstream>

#include <ddl/ddl.h>

using namespace ddl;
using namespace ddl::nn;

TEST_CASE("VGG-11-BN names and counts equal PyTorch's", "[nn][module]") {
  VGG m(11, true, 10, 1);
  const auto state = m.named_state();
  // From PyTorch 1.13: the same network's state_dict has 58 entries, 9,229,962 parameters.
  REQUIRE(state.size() == 58);
  REQUIRE(m.parameter_count() == 9229962);
  const std::vector<std::string> first = {"features.0.weight",
                                          "features.0.bias",
                                          "features.1.weight",
                                          "features.1.bias",
                                          "features.1.running_mean",
                                          "features.1.running_var",
                                          "features.1.num_batches_tracked",
                                          "features.4.weight"};
  for (size_t i = 0; i < first.size(); ++i) REQUIRE(state[i].first == first[i]);
  REQUIRE(state[55].first == "features.26.num_batches_tracked");
  REQUIRE(state[56].first == "classifier.weight");
  REQUIRE(state[57].first == "classifier.bias");
  REQUIRE(VGG(11, true, 10, 3).parameter_count() == 9231114);  // PyTorch 1.13: VGG-11-BN convs + Linear(512, 10)
  REQUIRE(m.named_parameters().size() == 2 * 8 + 2 * 8 + 2);
  REQUIRE(m.named_buffers().size() == 3 * 8);
}

TEST_CASE("registration rejects bad and duplicate names", "[nn][module]") {
  Module m("Custom");
  m.register_parameter("w", zeros({2}));
  REQUIRE_THROWS_WITH(m.register_parameter("w", zeros({2})), Catch::Contains("already registered"));
  REQUIRE_THROWS_WITH(m.register_buffer("a.b", zeros({2})), Catch::Contains("no '.'"));
  REQUIRE_THROWS_WITH(m.forward(Variable(zeros({1}))),
                      Catch::Contains("Custom: this module has no single-input forward"));
}

TEST_CASE("handles stay valid across to(dtype)", "[nn][module]") {
  Linear lin(3, 2);
  Variable w = lin.weight;
  lin.to(DType::Float64);
  REQUIRE(w.dtype() == DType::Float64);
  REQUIRE(lin.weight.dtype() == DType::Float64);
  BatchNorm2d bn(4);
  bn.to(DType::Float64);
  REQUIRE(bn.num_batches_tracked.dtype() == DType::Int64);
  if (cuda::is_available()) {  // the GPU machine (scripts/gpu_check.sh runs this suite there)
    lin.to(Device::cuda(0));
    REQUIRE(w.device() == Device::cuda(0));
  } else {
    REQUIRE_THROWS(lin.to(Device::cuda(0)));
  }
}

TEST_CASE("train and eval propagate; zero_grad and apply reach every module", "[nn][module]") {
  auto seq = std::make_shared<Sequential>(
      std::vector<std::shared_ptr<Module>>{std::make_shared<Linear>(4, 3), std::make_shared<ReLU>(),
                                           std::make_shared<Dropout>(0.5), std::make_shared<Linear>(3, 2)});
  seq->eval();
  REQUIRE_FALSE((*seq)[2]->is_training());
  seq->train();
  REQUIRE((*seq)[2]->is_training());
  int count = 0;
  seq->apply([&](Module&) { ++count; });
  REQUIRE(count == 5);
  sum(seq->forward(Variable(ones({5, 4})))).backward();
  for (auto& p : seq->parameters()) REQUIRE(p.grad().defined());
  seq->zero_grad();
  for (auto& p : seq->parameters()) REQUIRE_FALSE(p.grad().defined());
  REQUIRE_THROWS_WITH((*seq)[7], Catch::Contains("index 7 out of range"));
}

TEST_CASE("modules print as a PyTorch-style tree", "[nn][module]") {
  auto seq = std::make_shared<Sequential>(std::vector<std::shared_ptr<Module>>{
      std::make_shared<Conv2d>(Conv2dOptions(1, 64, 3).padding(1)), std::make_shared<BatchNorm2d>(64),
      std::make_shared<ReLU>(), std::make_shared<MaxPool2d>(2, 2), std::make_shared<Linear>(512, 10)});
  std::ostringstream os;
  os << *seq;
  REQUIRE(os.str() ==
          "Sequential(\n"
          "  (0): Conv2d(1, 64, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))\n"
          "  (1): BatchNorm2d(64, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)\n"
          "  (2): ReLU()\n"
          "  (3): MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)\n"
          "  (4): Linear(in_features=512, out_features=10, bias=True)\n"
          ")");
}

TEST_CASE("make_model knows every model name", "[nn][models]") {
  for (const char* name : {"vgg11", "vgg13_bn", "vgg16", "vgg19_bn", "mlp", "resnet18"})
    REQUIRE(make_model(name) != nullptr);
  REQUIRE(make_model("resnet18")->parameter_count() == 11173962);  // the usual CIFAR ResNet-18 figure
  REQUIRE_THROWS_WITH(make_model("vgg12"), Catch::Contains("unknown model 'vgg12'"));
}
