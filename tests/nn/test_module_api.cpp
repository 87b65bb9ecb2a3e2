// The model-writer's API beside the layers: named_modules / modules / buffers against
// PyTorch 1.13's names and order, Sequential's variadic constructor, NLLLoss (class
// weights, ignore_index, every reduction) against PyTorch's values and gradients,
// clone() of every loss module, brace-initialised rectangular pooling kernels, and
// Note [Copying modules]: a copy that would share state is refused, moves are not.
// Golden values: tests/golden/module_api.py.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <type_traits>
#include <vector>

#include "tests/common/first_grad.h"
#include "tests/common/golden_seq.h"
#include "tests/common/gradcheck.h"
#include <ddl/autograd/functions.h>
#include <ddl/nn/checkpoint.h>
#include <ddl/nn/layers.h>
#include <ddl/nn/losses.h>
#include <ddl/optim/sgd.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using test::require_close;
using test::seq;

namespace {

// Pasted from tests/golden/module_api.py.
const std::vector<std::string> modules_names = {"",           "features",   "features.0",      "features.1",
                                                "features.2", "features.3", "features.3.conv", "features.3.bn",
                                                "head",       "head.0",     "head.1"};
const std::vector<std::string> modules_types = {"Net",    "Sequential",  "Conv2d",     "BatchNorm2d", "ReLU",  "Block",
                                                "Conv2d", "BatchNorm2d", "Sequential", "Flatten",     "Linear"};
const std::vector<std::string> modules_prefixed = {"net",
                                                   "net.features",
                                                   "net.features.0",
                                                   "net.features.1",
                                                   "net.features.2",
                                                   "net.features.3",
                                                   "net.features.3.conv",
                                                   "net.features.3.bn",
                                                   "net.head",
                                                   "net.head.0",
                                                   "net.head.1"};
const std::vector<std::string> buffers_names = {"steps",
                                                "features.1.running_mean",
                                                "features.1.running_var",
                                                "features.1.num_batches_tracked",
                                                "features.3.bn.running_mean",
                                                "features.3.bn.running_var",
                                                "features.3.bn.num_batches_tracked"};

const std::vector<std::string> parameters_names = {"scale",
                                                   "features.0.weight",
                                                   "features.0.bias",
                                                   "features.1.weight",
                                                   "features.1.bias",
                                                   "features.3.conv.weight",
                                                   "features.3.conv.bias",
                                                   "features.3.bn.weight",
                                                   "features.3.bn.bias",
                                                   "head.1.weight",
                                                   "head.1.bias"};
const std::vector<std::string> state_names = {"scale",
                                              "steps",
                                              "features.0.weight",
                                              "features.0.bias",
                                              "features.1.weight",
                                              "features.1.bias",
                                              "features.1.running_mean",
                                              "features.1.running_var",
                                              "features.1.num_batches_tracked",
                                              "features.3.conv.weight",
                                              "features.3.conv.bias",
                                              "features.3.bn.weight",
                                              "features.3.bn.bias",
                                              "features.3.bn.running_mean",
                                              "features.3.bn.running_var",
                                              "features.3.bn.num_batches_tracked",
                                              "head.1.weight",
                                              "head.1.bias",
                                              "tied.weight",
                                              "tied.bias"};

// PyTorch's Net of module_api.py: a ReLU shared by features.2 and features.3.shared, and
// head.1 registered again as "tied"; named_modules lists each module once.
struct Block : nn::Module {
  explicit Block(std::shared_ptr<nn::Module> shared) : nn::Module("Block") {
    conv = register_module("conv", std::make_shared<nn::Conv2d>(3, 4, 3));
    bn = register_module("bn", std::make_shared<nn::BatchNorm2d>(4));
    register_module("shared", std::move(shared));
  }
  std::shared_ptr<nn::Conv2d> conv;
  std::shared_ptr<nn::BatchNorm2d> bn;
};

struct Net : nn::Module {
  Net() : nn::Module("Net") {
    scale = register_parameter("scale", ones({2}));
    steps = register_buffer("steps", zeros({}, DType::Int64));
    auto act = std::make_shared<nn::ReLU>();
    // Values are moved in, shared_ptrs shared: the LibTorch spelling.
    features = register_module(
        "features", std::make_shared<nn::Sequential>(nn::Conv2d(1, 3, 3), nn::BatchNorm2d(3), act, Block(act)));
    head = register_module("head", std::make_shared<nn::Sequential>(nn::Flatten(), nn::Linear(16, 2)));
    register_module("tied", (*head)[1]);
  }
  Variable scale, steps;
  std::shared_ptr<nn::Sequential> features, head;
};

std::vector<std::string> names_of(const auto& pairs) {
  std::vector<std::string> out;
  for (const auto& [n, v] : pairs) out.push_back(n);
  return out;
}

}  // namespace

TEST_CASE("named_modules: PyTorch's names and order, shared modules once", "[nn][module_api]") {
  auto net = std::make_shared<Net>();
  const auto mods = net->named_modules();
  REQUIRE(names_of(mods) == modules_names);
  std::vector<std::string> types;
  for (const auto& [n, m] : mods) types.push_back(m->type_name());
  REQUIRE(types == modules_types);
  REQUIRE(mods[0].second == net);  // held by a shared_ptr: the entry shares ownership
  REQUIRE(mods[2].second == (*net->features)[0]);
  REQUIRE(names_of(net->named_modules("net")) == modules_prefixed);

  const auto below = net->named_modules("", /*include_self=*/false);
  REQUIRE(names_of(below) == std::vector<std::string>(modules_names.begin() + 1, modules_names.end()));
  REQUIRE(net->modules().size() == modules_names.size());
  REQUIRE(net->modules(false).front() == net->features);

  // On the stack: the self entry points at the module without owning it.
  Net local;
  const auto local_mods = local.named_modules();
  REQUIRE(local_mods[0].second.get() == &local);
  REQUIRE(local_mods[0].second.use_count() == 0);
  REQUIRE(names_of(local_mods) == modules_names);

  // apply() visits every registration (the shared ReLU twice); named_modules once each.
  int applied = 0;
  net->apply([&](nn::Module&) { ++applied; });
  REQUIRE(applied == static_cast<int>(modules_names.size()) + 2);
}

TEST_CASE("buffers: named_buffers and buffers(), batch norm statistics among them", "[nn][module_api]") {
  auto net = std::make_shared<Net>();
  REQUIRE(names_of(net->named_buffers()) == buffers_names);
  const auto named = net->named_buffers();
  const auto plain = net->buffers();
  REQUIRE(plain.size() == named.size());
  for (size_t i = 0; i < plain.size(); ++i) REQUIRE(plain[i].impl() == named[i].second.impl());
  REQUIRE(net->buffers(/*recurse=*/false).size() == 1);
  REQUIRE(net->buffers(false)[0].impl() == net->steps.impl());
  for (const auto& b : plain) REQUIRE(!b.requires_grad());

  // The handles are the live statistics: a training forward changes them.
  const Variable running_mean = net->named_buffers()[1].second;
  const Tensor before = running_mean.data().clone();
  const Variable x(seq({2, 1, 6, 6}, 0.3, 0.2, 1.0, DType::Float32));
  (void)(*net->features)[1]->forward((*net->features)[0]->forward(x));  // conv, then batch norm
  REQUIRE(!allclose(running_mean.data(), before, 0, 0));
  REQUIRE(net->named_buffers()[3].second.data().item<int64_t>() == 1);  // num_batches_tracked
}

TEST_CASE("a shared submodule: its parameters once, its state under every name", "[nn][module_api]") {
  auto net = std::make_shared<Net>();
  REQUIRE(names_of(net->named_parameters()) == parameters_names);
  REQUIRE(names_of(net->named_state()) == state_names);  // state_dict keeps "tied.*"
  REQUIRE(net->parameters().size() == parameters_names.size());
  const int64_t head_params = 16 * 2 + 2;
  const int64_t expected = 2 + (3 * 9 + 3) + 3 + 3 + (4 * 3 * 9 + 4) + 4 + 4 + head_params;
  REQUIRE(net->parameter_count() == expected);

  // An optimizer step moves the tied weight once: SGD with lr 1 on loss = sum(w) subtracts 1.
  auto head = std::dynamic_pointer_cast<nn::Linear>((*net->head)[1]);
  const Tensor before = head->weight.data().clone();
  optim::SGD opt(net->parameters(), {.lr = 1.0});
  opt.zero_grad();
  sum(head->weight).backward();
  opt.step();
  REQUIRE(allclose(head->weight.data(), sub(before, 1.0), 1e-6, 1e-6));

  // A checkpoint round trip keeps the values, and the tie: loading writes into the one storage.
  const std::string path = std::filesystem::temp_directory_path() / ("ddl_tied_" + std::to_string(getpid()));
  nn::save_state(*net, path);
  auto fresh = std::make_shared<Net>();
  nn::load_state(*fresh, path);
  std::filesystem::remove(path);
  auto fresh_head = std::dynamic_pointer_cast<nn::Linear>((*fresh->head)[1]);
  REQUIRE(allclose(fresh_head->weight.data(), head->weight.data(), 0, 0));
  const auto state = fresh->named_state();
  const auto tied = std::find_if(state.begin(), state.end(), [](const auto& kv) { return kv.first == "tied.weight"; });
  REQUIRE(tied != state.end());
  REQUIRE(tied->second.data().raw_data() == fresh_head->weight.data().raw_data());
}

TEST_CASE("Sequential: LibTorch's variadic constructor", "[nn][module_api]") {
  manual_seed(3);
  auto shared = std::make_shared<nn::Linear>(8, 2);
  nn::Sequential seq_net(nn::Linear(4, 8), nn::ReLU(), shared);
  REQUIRE(seq_net.size() == 3);
  REQUIRE(names_of(seq_net.named_children()) == std::vector<std::string>{"0", "1", "2"});
  REQUIRE(seq_net[2] == shared);  // a shared_ptr argument is registered, not copied
  REQUIRE(seq_net[0]->type_name() == "Linear");
  REQUIRE(seq_net.parameters().size() == 4);

  auto first = std::dynamic_pointer_cast<nn::Linear>(seq_net[0]);
  REQUIRE(first != nullptr);
  const Variable x(seq({3, 4}, 0.7, 0.1, 1.0, DType::Float32));
  const Variable expect = shared->forward(relu(first->forward(x)));
  REQUIRE(allclose(seq_net.forward(x).data(), expect.data(), 0, 0));

  // A moved lvalue module keeps its parameters (now in the Sequential).
  nn::Linear lin(2, 3);
  const Tensor w = lin.weight.data();
  nn::Sequential moved(std::move(lin));
  REQUIRE(std::dynamic_pointer_cast<nn::Linear>(moved[0])->weight.data().shares_storage(w));
  REQUIRE(lin.named_parameters().empty());  // NOLINT(bugprone-use-after-move): what a move leaves
}

TEST_CASE("copying a module with registrations is refused; moves and clone() are not", "[nn][module_api]") {
  static_assert(std::is_move_constructible_v<nn::Linear>);
  nn::Linear a(4, 2);
  REQUIRE_THROWS_WITH(
      [&] {
        nn::Linear b = a;  // would share weight and bias but not the training flag
        (void)b;
      }(),
      Catch::Contains("Linear") && Catch::Contains("cannot be copied") && Catch::Contains("clone()"));
  nn::Sequential s(nn::Linear(2, 2), nn::ReLU());
  REQUIRE_THROWS_WITH(
      [&] {
        nn::Sequential t(static_cast<const nn::Sequential&>(s));
        (void)t;
      }(),
      Catch::Contains("Sequential") && Catch::Contains("std::shared_ptr"));

  // Nothing to share, so a whole copy: pooling and activations copy freely.
  nn::MaxPool2d pool({2, 4});
  nn::MaxPool2d pool_copy = pool;
  REQUIRE(pool_copy.extra_repr() == pool.extra_repr());
  nn::ReLU relu_layer;
  nn::ReLU relu_copy = relu_layer;
  REQUIRE(relu_copy.type_name() == "ReLU");

  // A move hands the registrations over; clone() still deep-copies.
  const Tensor w = a.weight.data();
  nn::Linear b = std::move(a);
  REQUIRE(b.named_parameters().size() == 2);
  REQUIRE(b.weight.data().shares_storage(w));
  auto c = nn::clone(b);
  REQUIRE(!c->weight.data().shares_storage(w));
  REQUIRE(allclose(c->weight.data(), w, 0, 0));
}

TEST_CASE("NLLLoss: class weights, ignore_index and every reduction against PyTorch", "[nn][module_api][loss]") {
  // Pasted from tests/golden/module_api.py.
  const std::vector<double> nll_none = {0.924397880054, 0.443499359753, 0.732680025633, 1.60745284433, 1.44457890835};
  const std::vector<double> nll_none_g = {
      0, 0, -0.0998334166468, 0, -0.841470984808, 0, 0, 0, 0, 0, 0, -0.946300087687, 0, -0.334988150156, 0, 0,
      0, 0, 0.529836140908,   0};
  const std::vector<double> nll_none_w = {1.84879576011, 0.221749679877, 0.183170006408, 1.60745284433, 2.8891578167};
  const std::vector<double> nll_none_w_g = {
      0, 0, -0.199666833294, 0, -0.420735492404, 0, 0, 0, 0, 0, 0, -0.236575021922, 0, -0.334988150156, 0, 0,
      0, 0, 1.05967228182,   0};
  const std::vector<double> nll_none_ign = {0.924397880054, 0.443499359753, 0, 1.60745284433, 1.44457890835};
  const std::vector<double> nll_none_ign_g = {
      0, 0, -0.0998334166468, 0, -0.841470984808, 0, 0, 0, 0, 0, 0, 0, 0, -0.334988150156, 0, 0,
      0, 0, 0.529836140908,   0};
  const std::vector<double> nll_none_w_ign = {1.84879576011, 0.221749679877, 0, 1.60745284433, 2.8891578167};
  const std::vector<double> nll_none_w_ign_g = {
      0, 0, -0.199666833294, 0, -0.420735492404, 0, 0, 0, 0, 0, 0, 0, 0, -0.334988150156, 0, 0, 0, 0, 1.05967228182, 0};
  const std::vector<double> nll_mean = {1.03052180362};
  const std::vector<double> nll_mean_g = {
      0, 0, -0.0199666833294, 0, -0.0199666833294, 0, 0, 0, 0, 0, 0, -0.0199666833294, 0, -0.0199666833294, 0, 0,
      0, 0, -0.0199666833294, 0};
  const std::vector<double> nll_mean_w = {1.17396975781};
  const std::vector<double> nll_mean_w_g = {
      0, 0, -0.0347246666598, 0, -0.00868116666494, 0, 0, 0, 0, 0, 0, -0.00434058333247, 0, -0.0173623333299, 0, 0,
      0, 0, -0.0347246666598, 0};
  const std::vector<double> nll_mean_ign = {1.10498224812};
  const std::vector<double> nll_mean_ign_g = {
      0, 0, -0.0249583541617, 0, -0.0249583541617, 0, 0, 0, 0, 0, 0, 0, 0, -0.0249583541617, 0, 0,
      0, 0, -0.0249583541617, 0};
  const std::vector<double> nll_mean_w_ign = {1.194028382};
  const std::vector<double> nll_mean_w_ign_g = {
      0, 0, -0.0363030605988, 0, -0.00907576514971, 0, 0, 0, 0, 0, 0, 0, 0, -0.0181515302994, 0, 0,
      0, 0, -0.0363030605988, 0};
  const std::vector<double> nll_sum = {5.15260901812};
  const std::vector<double> nll_sum_g = {
      0, 0, -0.0998334166468, 0, -0.0998334166468, 0, 0, 0, 0, 0, 0, -0.0998334166468, 0, -0.0998334166468, 0, 0,
      0, 0, -0.0998334166468, 0};
  const std::vector<double> nll_sum_w = {6.75032610743};
  const std::vector<double> nll_sum_w_g = {
      0, 0, -0.199666833294, 0, -0.0499167083234, 0, 0, 0, 0, 0, 0, -0.0249583541617, 0, -0.0998334166468, 0, 0,
      0, 0, -0.199666833294, 0};
  const std::vector<double> nll_sum_ign = {4.41992899249};
  const std::vector<double> nll_sum_ign_g = {
      0, 0, -0.0998334166468, 0, -0.0998334166468, 0, 0, 0, 0, 0, 0, 0, 0, -0.0998334166468, 0, 0,
      0, 0, -0.0998334166468, 0};
  const std::vector<double> nll_sum_w_ign = {6.56715610102};
  const std::vector<double> nll_sum_w_ign_g = {
      0, 0, -0.199666833294, 0, -0.0499167083234, 0, 0, 0, 0, 0, 0, 0, 0, -0.0998334166468, 0, 0,
      0, 0, -0.199666833294, 0};
  struct Case {
    Reduction reduction;
    bool weighted;
    int64_t ignore;
    const std::vector<double>& value;
    const std::vector<double>& grad;
  };
  const std::vector<Case> cases = {
      {Reduction::None, false, -100, nll_none, nll_none_g},
      {Reduction::None, true, -100, nll_none_w, nll_none_w_g},
      {Reduction::None, false, 3, nll_none_ign, nll_none_ign_g},
      {Reduction::None, true, 3, nll_none_w_ign, nll_none_w_ign_g},
      {Reduction::Mean, false, -100, nll_mean, nll_mean_g},
      {Reduction::Mean, true, -100, nll_mean_w, nll_mean_w_g},
      {Reduction::Mean, false, 3, nll_mean_ign, nll_mean_ign_g},
      {Reduction::Mean, true, 3, nll_mean_w_ign, nll_mean_w_ign_g},
      {Reduction::Sum, false, -100, nll_sum, nll_sum_g},
      {Reduction::Sum, true, -100, nll_sum_w, nll_sum_w_g},
      {Reduction::Sum, false, 3, nll_sum_ign, nll_sum_ign_g},
      {Reduction::Sum, true, 3, nll_sum_w_ign, nll_sum_w_ign_g},
  };
  const Tensor log_probs = log_softmax(seq({5, 4}, 0.7, 0.3, 2.0), 1);
  const Tensor target = from_vector<int64_t>({2, 0, 3, 1, 2});
  const Tensor weight = from_vector<double>({0.5, 1.0, 2.0, 0.25});
  for (const Case& c : cases) {
    INFO("reduction " << int(c.reduction) << ", weighted " << c.weighted << ", ignore_index " << c.ignore);
    const nn::NLLLoss loss =
        c.weighted ? nn::NLLLoss(weight, {c.reduction, c.ignore}) : nn::NLLLoss({c.reduction, c.ignore});
    Variable lp(log_probs.clone(), true);
    const Variable y = loss(lp, target);
    require_close(y.data(), c.value);
    y.backward(seq(y.shape(), 0.9, 0.1));
    require_close(lp.grad(), c.grad);
  }

  // [N, C, d] inputs with weights, Mean (divides by the summed weights of the targets).
  const std::vector<double> nll3_w_mean = {2.23540602479};
  const std::vector<double> nll3_w_mean_g = {-0.142857142857,
                                             0,
                                             0,
                                             0,
                                             0,
                                             0,
                                             -0.047619047619,
                                             0,
                                             0,
                                             -0.190476190476,
                                             0,
                                             -0.190476190476,
                                             0,
                                             0,
                                             -0.142857142857,
                                             0,
                                             -0.047619047619,
                                             -0.047619047619,
                                             0,
                                             0,
                                             0,
                                             0,
                                             0,
                                             -0.190476190476};
  Variable lp3(log_softmax(seq({2, 3, 4}, 0.45, 0.2, 1.5), 1), true);
  const Variable y3 =
      nn::NLLLoss(from_vector<double>({1.5, 0.5, 2.0}))(lp3, from_vector<int64_t>({0, 2, 1, 2, 1, 1, 0, 2}, {2, 4}));
  require_close(y3.data(), nll3_w_mean);
  y3.backward();
  require_close(lp3.grad(), nll3_w_mean_g);
}

TEST_CASE("nll_loss with weights: cross-checks, gradients, errors", "[nn][module_api][loss]") {
  const Tensor logits = seq({6, 3}, 0.55, 0.4, 2.0);
  const Tensor target = from_vector<int64_t>({0, 2, 1, 1, -100, 2});
  const Tensor weight = from_vector<double>({0.3, 1.7, 0.9});
  for (Reduction r : {Reduction::None, Reduction::Mean, Reduction::Sum}) {
    // nll_loss(log_softmax) is cross_entropy, weighted or not.
    const Variable ce = cross_entropy(Variable(logits), target, weight, {r, -100, 0.0});
    REQUIRE(allclose(nll_loss(log_softmax(Variable(logits), 1), target, weight, r).data(), ce.data(), 1e-12, 1e-12));
    REQUIRE_GRADCHECK([&](const std::vector<Variable>& v) { return nll_loss(v[0], target, weight, r); }, {logits});
    // Double backward: the gradient of nll_loss(x ⊙ x) in x, differentiated again.
    REQUIRE_GRADCHECK(
        test::first_grad([&](const std::vector<Variable>& v) { return nll_loss(v[0] * v[0], target, weight, r); }, 0),
        {logits});
  }
  REQUIRE_THROWS_WITH(nll_loss(Variable(logits), target, from_vector<double>({1.0, 2.0})),
                      Catch::Contains("nll_loss") && Catch::Contains("weight must be [3]"));
  REQUIRE_THROWS_WITH(nll_loss(Variable(logits), from_vector<int64_t>({0, 1, 2, 3, 0, 0}), weight),
                      Catch::Contains("nll_loss") && Catch::Contains("target 3"));
  REQUIRE_THROWS_WITH(nll_loss(Variable(logits), seq({6, 3}, 0.1, 0.1), weight),
                      Catch::Contains("nll_loss") && Catch::Contains("int64"));
}

TEST_CASE("loss modules clone: same results, separate weights", "[nn][module_api][loss]") {
  const Tensor x = seq({4, 3}, 0.3, 0.2, 0.8);
  const Tensor p = add(mul(seq({4, 3}, 0.5, 0.1), 0.4), 0.5);  // in (0, 1)
  const Tensor cls = from_vector<int64_t>({0, 2, 1, 1});
  const Tensor w = from_vector<double>({0.5, 2.0, 1.0});
  auto same = [](const nn::Module& m, const Variable& a, const Variable& b) {
    REQUIRE(allclose(a.data(), b.data(), 0, 0));
    (void)m;
  };
  {
    nn::NLLLoss orig(w.clone(), {Reduction::Sum, 1});
    auto copy = nn::clone(orig);
    same(*copy, orig(log_softmax(Variable(x), 1), cls), (*copy)(log_softmax(Variable(x), 1), cls));
    REQUIRE(!copy->named_buffers()[0].second.data().shares_storage(orig.named_buffers()[0].second.data()));
    orig.named_buffers()[0].second.data().fill_(1.0);  // the copy keeps its own weight
    REQUIRE(!allclose(orig(log_softmax(Variable(x), 1), cls).data(), (*copy)(log_softmax(Variable(x), 1), cls).data()));
  }
  {
    nn::CrossEntropyLoss orig(w.clone(), {Reduction::Mean, -100, 0.1});
    auto copy = nn::clone(orig);
    same(*copy, orig(Variable(x), cls), (*copy)(Variable(x), cls));
    REQUIRE(!copy->named_buffers()[0].second.data().shares_storage(orig.named_buffers()[0].second.data()));
    auto plain = nn::clone(nn::CrossEntropyLoss());
    REQUIRE(plain->named_buffers().empty());
  }
  {
    nn::BCEWithLogitsLoss orig(w.clone(), Reduction::Sum, from_vector<double>({1.0, 3.0, 0.5}));
    auto copy = nn::clone(orig);
    same(*copy, orig(Variable(x), Variable(p)), (*copy)(Variable(x), Variable(p)));
    REQUIRE(names_of(copy->named_buffers()) == std::vector<std::string>{"weight", "pos_weight"});
  }
  nn::BCELoss bce(w.clone());
  same(bce, bce(Variable(p), Variable(p)), (*nn::clone(bce))(Variable(p), Variable(p)));
  nn::MSELoss mse(Reduction::Sum);
  same(mse, mse(Variable(x), Variable(p)), (*nn::clone(mse))(Variable(x), Variable(p)));
  nn::L1Loss l1(Reduction::None);
  same(l1, l1(Variable(x), Variable(p)), (*nn::clone(l1))(Variable(x), Variable(p)));
  nn::SmoothL1Loss sl1(Reduction::Sum, 0.3);
  same(sl1, sl1(Variable(x), Variable(p)), (*nn::clone(sl1))(Variable(x), Variable(p)));
  nn::HuberLoss huber(Reduction::Mean, 0.4);
  same(huber, huber(Variable(x), Variable(p)), (*nn::clone(huber))(Variable(x), Variable(p)));
  nn::KLDivLoss kl(KLDivReduction::BatchMean);
  same(kl, kl(log_softmax(Variable(x), 1), Variable(p)), (*nn::clone(kl))(log_softmax(Variable(x), 1), Variable(p)));
  // The configuration travels: a clone of a Sum loss is not a Mean loss.
  REQUIRE(nn::clone(sl1)->forward(Variable(x), Variable(p)).item() ==
          Approx(nn::SmoothL1Loss(Reduction::Sum, 0.3)(Variable(x), Variable(p)).item()));
}

TEST_CASE("pooling: a braced pair is the kernel, as in LibTorch", "[nn][module_api][pool]") {
  const std::vector<double> maxpool_2x4 = {0.935616001553, 0.999957646499, 0.749174348332, 0.999871708718,
                                           0.722881349512, 0.999739337037, 0.92119810882,  0.999560537602};
  const std::vector<double> avgpool_2x4 = {0.0702149247083, -0.0378839517615, 0.0814199559605, -0.00914016193047,
                                           0.0820029358573, 0.0207960538639,  0.0718878088134, 0.048019215475};
  const Variable img(seq({1, 2, 4, 8}, 0.37, 0.1));
  nn::MaxPool2d max_pool({2, 4});
  nn::AvgPool2d avg_pool({2, 4});
  REQUIRE(max_pool.forward(img).shape() == Shape{1, 2, 2, 2});
  require_close(max_pool.forward(img).data(), maxpool_2x4);
  require_close(avg_pool.forward(img).data(), avgpool_2x4);
  REQUIRE(avg_pool.extra_repr() == "kernel_size=(2, 4), stride=(2, 4), padding=0");
  REQUIRE(max_pool.extra_repr() == "kernel_size=(2, 4), stride=(2, 4), padding=0, dilation=1, ceil_mode=False");
  // {k} is one number, as PyTorch's int kernel_size; two plain numbers stay (kernel, stride).
  REQUIRE(nn::AvgPool2d({2}).extra_repr() == "kernel_size=2, stride=2, padding=0");
  REQUIRE(nn::AvgPool2d(2, 4).extra_repr() == "kernel_size=2, stride=4, padding=0");
  REQUIRE(nn::MaxPool2d({2, 4}, {1, 2}).extra_repr() ==
          "kernel_size=(2, 4), stride=(1, 2), padding=0, dilation=1, ceil_mode=False");
  REQUIRE_THROWS_WITH(nn::MaxPool2d({1, 2, 3}), Catch::Contains("MaxPool2d") && Catch::Contains("3 numbers"));
  auto copy = std::make_shared<nn::AvgPool2d>(nn::AvgPool2d({2, 4}));
  require_close(copy->clone()->forward(img).data(), avgpool_2x4);
}
