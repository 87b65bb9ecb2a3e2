// nn/forward_hooks.h: a hooked child of a Sequential or a TransformerEncoder runs between
// its pre- and post-hook, and the post-hook's output is what the container passes on; a
// module its parent calls directly is never hooked; hooks are removed by id, die with
// their module, and a module takes one.
#include <catch2/catch.hpp>

#include <ddl/ddl.h>
#include <ddl/nn/forward_hooks.h>

using namespace ddl;

TEST_CASE("forward hooks run around a Sequential's child and may replace its output", "[nn][hooks]") {
  auto fc = std::make_shared<nn::Linear>(3, 2);
  auto seq =
      std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{fc, std::make_shared<nn::ReLU>()});
  REQUIRE(nn::hooked_children(*seq).size() == 2);
  REQUIRE(nn::hooked_children(*fc).empty());
  std::vector<std::string> calls;
  const int id = nn::add_forward_hook(fc, {.pre = [&](nn::Module& m) { calls.push_back("pre " + m.type_name()); },
                                           .post =
                                               [&](nn::Module&, Variable out) {
                                                 calls.push_back("post");
                                                 return out + Variable(ones({1}));  // ReLU then sees out + 1
                                               }});
  const Tensor x = randn({4, 3});
  const Tensor want = relu(fc->forward(Variable(x)) + Variable(ones({1}))).data();
  calls.clear();  // the direct call above is not hooked: only containers call the hooks
  CHECK(to_vector<float>(seq->forward(Variable(x)).data()) == to_vector<float>(want));
  CHECK(calls == std::vector<std::string>{"pre Linear", "post"});
  CHECK_THROWS_WITH(nn::add_forward_hook(fc, {}), Catch::Contains("already has a forward hook"));
  nn::remove_forward_hook(id);
  calls.clear();
  seq->forward(Variable(x));
  CHECK(calls.empty());
}

TEST_CASE("forward hooks run around a TransformerEncoder's layers, in order", "[nn][hooks]") {
  const nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).dropout(0.0));
  auto enc = std::make_shared<nn::TransformerEncoder>(layer, 3);
  const auto layers = nn::hooked_children(*enc);
  REQUIRE(layers.size() == 3);
  std::vector<int> order;
  std::vector<int> ids;
  for (int i = 0; i < 3; ++i)
    ids.push_back(nn::add_forward_hook(layers[i], {.pre = [&order, i](nn::Module&) { order.push_back(i); }}));
  enc->forward(Variable(randn({5, 2, 8})));
  CHECK(order == std::vector<int>{0, 1, 2});
  for (int id : ids) nn::remove_forward_hook(id);
}

TEST_CASE("a forward hook dies with its module", "[nn][hooks]") {
  std::weak_ptr<nn::Module> gone;
  {
    auto fc = std::make_shared<nn::Linear>(2, 2);
    nn::add_forward_hook(fc, {.pre = [](nn::Module&) {}});
    gone = fc;
  }
  CHECK(gone.expired());  // the table holds the module weakly
  auto again = std::make_shared<nn::Linear>(2, 2);
  bool ran = false;
  const int id = nn::add_forward_hook(again, {.pre = [&](nn::Module&) { ran = true; }});
  nn::Sequential(std::vector<std::shared_ptr<nn::Module>>{again}).forward(Variable(randn({1, 2})));
  CHECK(ran);
  nn::remove_forward_hook(id);
}
