// Activation functions and modules (golden values from PyTorch, gradient checks)
// and the containers Identity, ModuleList and ModuleDict (registration seen by
// parameters(), state, to() and train()).
#include <catch2/catch.hpp>
#include <sstream>

#include "tests/common/gradcheck.h"
#include "tests/nn/sequence_golden.h"
#include "tests/nn/sequence_layers_golden.h"
#include <ddl/ddl.h>

using namespace ddl;
using namespace ddl::nn;
using ddl::test::leaf;
using ddl::test::random_double;

TEST_CASE("Activation modules match PyTorch", "[nn][activation][golden]") {
  const Variable x = leaf({2, 5}, 0.9, 0.2, 3.0);
  const std::vector<Variable> ys = {GELU()(x),    GELU("tanh")(x), SiLU()(x),     LeakyReLU(0.2)(x),
                                    Sigmoid()(x), Tanh()(x),       Softmax(1)(x), LogSoftmax(0)(x)};
  test::check_golden_case(nullptr, {x}, ys, activations_outputs, activations_input_grads);
}

TEST_CASE("gelu, silu and leaky_relu pass gradient checks", "[nn][activation][gradcheck]") {
  const Tensor x = random_double({3, 7}, 31, -3, 3);
  REQUIRE_GRADCHECK([](const std::vector<Variable>& v) { return gelu(v[0]); }, {x});
  REQUIRE_GRADCHECK([](const std::vector<Variable>& v) { return gelu(v[0], "tanh"); }, {x});
  REQUIRE_GRADCHECK([](const std::vector<Variable>& v) { return silu(v[0]); }, {x});
  REQUIRE_GRADCHECK([](const std::vector<Variable>& v) { return leaky_relu(v[0], 0.1); }, {x});
}

TEST_CASE("GELU works in float32 and refuses an unknown approximation", "[nn][activation]") {
  const Tensor x = from_vector(std::vector<float>{-1.0f, 0.0f, 2.0f});
  const std::vector<float> y = to_vector<float>(GELU()(x).data());
  // x * Phi(x): Phi(-1) = 0.158655..., Phi(2) = 0.977249...
  REQUIRE(y[0] == Approx(-0.15865525f));
  REQUIRE(y[1] == 0.0f);
  REQUIRE(y[2] == Approx(1.95449974f));
  REQUIRE_THROWS_WITH(GELU("erf"), Catch::Contains("approximate"));
  std::ostringstream os;
  os << GELU("tanh") << ' ' << LeakyReLU(0.2) << ' ' << Softmax(-1);
  REQUIRE(os.str() == "GELU(approximate='tanh') LeakyReLU(negative_slope=0.2) Softmax(dim=-1)");
}

TEST_CASE("Identity returns its input", "[nn][containers]") {
  const Variable x(random_double({2, 3}, 1), true);
  Identity id;
  REQUIRE(id(x).impl() == x.impl());
}

TEST_CASE("ModuleList registers its elements", "[nn][containers]") {
  auto list = std::make_shared<ModuleList>();
  list->push_back(std::make_shared<Linear>(3, 4));
  list->push_back(std::make_shared<ReLU>());
  list->push_back(std::make_shared<Linear>(4, 2, false));
  REQUIRE(list->size() == 3);
  const auto names = list->named_parameters();
  REQUIRE(names.size() == 3);
  REQUIRE(names[0].first == "0.weight");
  REQUIRE(names[1].first == "0.bias");
  REQUIRE(names[2].first == "2.weight");
  REQUIRE(list->at<Linear>(2)->weight.shape() == Shape({2, 4}));
  REQUIRE_THROWS_WITH(list->at<Linear>(1), Catch::Contains("ReLU"));
  REQUIRE_THROWS_WITH((*list)[3], Catch::Contains("out of range"));

  // Nested in a model: names, to(), train() and zero_grad() reach the elements.
  struct Model : Module {
    std::shared_ptr<ModuleList> blocks;
    Model() : Module("Model") {
      blocks = register_module("blocks", std::make_shared<ModuleList>(std::vector<std::shared_ptr<Module>>{
                                             std::make_shared<Linear>(2, 2), std::make_shared<LayerNorm>(Shape{2})}));
    }
  } model;
  const auto state = model.named_state();
  REQUIRE(state.size() == 4);
  REQUIRE(state[2].first == "blocks.1.weight");
  model.to(DType::Float64);
  for (const auto& [n, v] : model.named_state()) REQUIRE(v.dtype() == DType::Float64);
  model.eval();
  REQUIRE(!model.blocks->at<LayerNorm>(1)->is_training());
}

TEST_CASE("ModuleDict registers by key in insertion order", "[nn][containers]") {
  ModuleDict d;
  d.insert("encoder", std::make_shared<Linear>(3, 4));
  d.insert("act", std::make_shared<GELU>());
  d.insert("decoder", std::make_shared<Linear>(4, 3));
  REQUIRE(d.keys() == std::vector<std::string>{"encoder", "act", "decoder"});
  REQUIRE(d.contains("act"));
  REQUIRE(!d.contains("missing"));
  REQUIRE(d.named_parameters()[2].first == "decoder.weight");
  REQUIRE(d.parameter_count() == 3 * 4 + 4 + 4 * 3 + 3);
  REQUIRE(d.at<Linear>("decoder")->weight.shape() == Shape({3, 4}));
  REQUIRE_THROWS_WITH(d["missing"], Catch::Contains("missing"));
  REQUIRE_THROWS_WITH(d.insert("act", std::make_shared<Tanh>()), Catch::Contains("already registered"));
  REQUIRE_THROWS_WITH(d.insert("a.b", std::make_shared<Tanh>()), Catch::Contains("no '.'"));
}
