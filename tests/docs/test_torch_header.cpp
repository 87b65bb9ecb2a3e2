// torch.h, the migration header: a small MLP written in LibTorch's spelling (holders,
// TORCH_MODULE, fluent options, torch::optim) trains exactly as the same network in ddl's
// spelling, step for step, bit for bit.
#include <catch2/catch.hpp>

#include "torch.h"

namespace {

// LibTorch's form, as in its C++ frontend tutorial.
struct NetImpl : torch::nn::Module {
  NetImpl() {
    fc1 = register_module("fc1", torch::nn::Linear(4, 8));
    fc2 = register_module("fc2", torch::nn::Linear(torch::nn::LinearOptions(8, 3).bias(true)));
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(fc1->forward(x));
    return torch::log_softmax(fc2(x), 1);
  }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};
TORCH_MODULE(Net);

// ddl's form.
struct DdlNet : ddl::nn::Module {
  DdlNet() : Module("DdlNet") {
    fc1 = register_module("fc1", std::make_shared<ddl::nn::Linear>(4, 8));
    fc2 = register_module("fc2", std::make_shared<ddl::nn::Linear>(8, 3));
  }
  ddl::Variable forward(const ddl::Variable& x) override {
    return ddl::log_softmax(fc2->forward(ddl::relu(fc1->forward(x))), 1);
  }
  std::shared_ptr<ddl::nn::Linear> fc1, fc2;
};

// DDL_MODULE in ddl's own spelling.
struct BlockImpl : ddl::nn::Module {
  explicit BlockImpl(int64_t n) : Module("Block") {
    fc = register_module("fc", std::make_shared<ddl::nn::Linear>(n, n));
  }
  ddl::Variable forward(const ddl::Variable& x) override { return ddl::relu(fc->forward(x)) + x; }
  std::shared_ptr<ddl::nn::Linear> fc;
};
DDL_MODULE(Block);

}  // namespace

TEST_CASE("an MLP in LibTorch's spelling trains as the same MLP in ddl's", "[docs][torch]") {
  ddl::manual_seed(3);
  const ddl::Tensor x = ddl::randn({16, 4});
  const ddl::Tensor y = ddl::randint(0, 3, {16});

  torch::manual_seed(7);
  Net net;
  torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.1).momentum(0.9));
  ddl::manual_seed(7);
  auto ref = std::make_shared<DdlNet>();
  ddl::optim::SGD ref_opt(ref->parameters(), ddl::optim::SGDOptions(0.1).momentum(0.9));

  REQUIRE(net->named_parameters().size() == 4);
  REQUIRE(net->named_parameters()[2].first == "fc2.weight");
  for (int step = 0; step < 5; ++step) {
    opt.zero_grad();
    torch::Tensor loss = torch::nn::functional::nll_loss(net(x), y);
    loss.backward();
    opt.step();
    ref_opt.zero_grad();
    ddl::Variable ref_loss = ddl::nll_loss(ref->forward(x), y);
    ref_loss.backward();
    ref_opt.step();
    INFO("step " << step);
    REQUIRE(loss.item() == ref_loss.item());
  }
  torch::NoGradGuard no_grad;
  REQUIRE(ddl::equal(net->fc2->weight.data(), ref->fc2->weight.data()));
}

TEST_CASE("holders share, hold nothing from nullptr, and go into Sequential", "[docs][torch]") {
  torch::nn::Linear empty{nullptr};
  REQUIRE(empty.is_empty());
  REQUIRE_FALSE(empty);
  REQUIRE_THROWS_WITH(empty->forward(ddl::ones({1, 2})), Catch::Contains("empty"));

  torch::nn::Linear fc(2, 3);
  torch::nn::Linear same = fc;  // a holder copy shares the module, as in LibTorch
  REQUIRE(same.ptr() == fc.ptr());
  torch::nn::Sequential seq(fc, torch::nn::ReLU(), torch::nn::Linear(torch::nn::LinearOptions(3, 1).bias(false)));
  REQUIRE(seq->size() == 3);
  REQUIRE(seq[0] == fc.ptr());
  REQUIRE(seq->forward(ddl::ones({5, 2})).shape() == ddl::Shape{5, 1});
  REQUIRE(seq->parameters().size() == 3);

  torch::nn::Conv2d conv(torch::nn::Conv2dOptions(3, 8, 3).stride(2).padding(1).bias(false));
  REQUIRE(conv(ddl::ones({1, 3, 8, 8})).shape() == ddl::Shape{1, 8, 4, 4});
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(4, 6).num_layers(2).batch_first(true));
  REQUIRE(lstm->forward(ddl::ones({2, 5, 4})).shape() == ddl::Shape{2, 5, 6});
  torch::nn::CrossEntropyLoss ce(torch::nn::CrossEntropyLossOptions().reduction(torch::kSum));
  REQUIRE(ce(ddl::zeros({2, 4}), ddl::zeros({2}, torch::kInt64)).item() == Approx(2 * std::log(4.0)));

  torch::nn::LSTMCell cell(torch::nn::LSTMCellOptions(4, 6).bias(false));
  REQUIRE(cell->parameters().size() == 2);
  torch::nn::GRUCell gru_cell(torch::nn::GRUCellOptions(4, 6));
  REQUIRE(gru_cell->parameters().size() == 4);
  Block block(3);
  REQUIRE(block(ddl::ones({2, 3})).shape() == ddl::Shape{2, 3});
  torch::nn::Sequential blocks(block, Block(3));
  REQUIRE(blocks->named_parameters()[0].first == "0.fc.weight");

  torch::Tensor t = torch::ones({2, 2});
  REQUIRE(t.dtype() == torch::kFloat32);
  auto loader_opts = torch::data::DataLoaderOptions(64).workers(2).drop_last(true);
  REQUIRE(loader_opts.batch_size() == 64);
  REQUIRE(loader_opts.workers() == 2);
}

TEST_CASE("torch.h: the later layers, optimizers and autograd factories in LibTorch's spelling", "[torch_h]") {
  torch::Tensor w = torch::randn({3, 2}, torch::requires_grad());
  REQUIRE(w.requires_grad());
  REQUIRE(w.is_leaf());
  torch::Tensor lit = torch::tensor({{1.0, 2.0}, {3.0, 4.0}}, torch::dtype(torch::kFloat64));
  REQUIRE(lit.dtype() == torch::kFloat64);
  REQUIRE(lit.sizes() == std::vector<int64_t>{2, 2});

  torch::nn::Conv3d conv(torch::nn::Conv3dOptions(1, 2, 3).padding(1));
  REQUIRE(conv(torch::ones({1, 1, 4, 4, 4})).sizes() == std::vector<int64_t>{1, 2, 4, 4, 4});
  torch::nn::MaxPool1d pool(torch::nn::MaxPool1dOptions(2));
  REQUIRE(pool(torch::ones({1, 2, 6})).sizes() == std::vector<int64_t>{1, 2, 3});
  torch::nn::InstanceNorm2d inorm(torch::nn::InstanceNorm2dOptions(2).affine(true));
  REQUIRE(inorm->parameters().size() == 2);
  torch::nn::RNN rnn(torch::nn::RNNOptions(4, 5).num_layers(2));
  REQUIRE(rnn->parameters().size() == 8);
  torch::nn::Dropout2d drop(0.5);
  drop->eval();
  REQUIRE(ddl::equal(drop(torch::ones({1, 2, 3, 3})).data(), ddl::ones({1, 2, 3, 3})));

  torch::optim::Adamax opt({w}, torch::optim::AdamaxOptions(0.1));
  (w * w).sum().backward();
  const ddl::Tensor before = w.data().clone();
  opt.step();
  REQUIRE_FALSE(ddl::equal(w.data(), before));
}
