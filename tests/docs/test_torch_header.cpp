// torch.h, the migration header: a small MLP written in LibTorch's spelling (holders,
// TORCH_MODULE, fluent options, torch::optim) trains exactly as the same network in ddl's
// spelling, step for step, bit for bit.
#include <catch2/catch.hpp>
#include <sstream>

#include <ddl/torch.h>

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

// The same module: printed the same (type, extra_repr, children), the same parameters
// and buffers by name and shape.
void require_same_module(const ddl::nn::Module& a, const ddl::nn::Module& b) {
  std::ostringstream ra, rb;
  ra << a;
  rb << b;
  REQUIRE(ra.str() == rb.str());
  auto shapes = [](const std::vector<std::pair<std::string, ddl::Variable>>& v) {
    std::vector<std::pair<std::string, ddl::Shape>> out;
    for (const auto& [name, t] : v) out.emplace_back(name, t.sizes());
    return out;
  };
  REQUIRE(shapes(a.named_parameters()) == shapes(b.named_parameters()));
  REQUIRE(shapes(a.named_buffers()) == shapes(b.named_buffers()));
}

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

TEST_CASE("torch.h: the layers' option structs in LibTorch's spelling build the positional layers", "[torch_h]") {
  namespace nn = torch::nn;
  using ddl::nn::Size2;
  const auto x = torch::randn({2, 4, 6, 6});

  nn::BatchNorm1d bn1(nn::BatchNorm1dOptions(4).eps(1e-3).affine(false));
  require_same_module(*bn1, ddl::nn::BatchNorm1d(4, 1e-3, 0.1, false));
  nn::BatchNorm2d bn2(nn::BatchNorm2dOptions(64).momentum(0.01));
  require_same_module(*bn2, ddl::nn::BatchNorm2d(64, 1e-5, 0.01));
  nn::BatchNorm3d bn3(nn::BatchNorm3dOptions(3).track_running_stats(false));
  require_same_module(*bn3, ddl::nn::BatchNorm3d(3, 1e-5, 0.1, true, false));
  REQUIRE_THROWS_AS(nn::BatchNorm2d(nn::BatchNormOptions(0)), ddl::Error);
  REQUIRE_THROWS_AS(nn::BatchNorm2d(nn::BatchNormOptions(2).momentum(std::nullopt)), ddl::Error);

  nn::MaxPool2d mp(nn::MaxPool2dOptions(2).stride(2));
  require_same_module(*mp, ddl::nn::MaxPool2d(2, 2));
  REQUIRE(ddl::equal(mp(x).data(), ddl::nn::MaxPool2d(2)(x).data()));
  nn::MaxPool2d mp2(nn::MaxPool2dOptions({3, 2}).padding(1).dilation({1, 2}).ceil_mode(true));
  require_same_module(*mp2, ddl::nn::MaxPool2d(Size2(3, 2), Size2(3, 2), 1, Size2(1, 2), true));
  nn::AvgPool2d ap(nn::AvgPool2dOptions(3).stride(1).padding(1).count_include_pad(false));
  ddl::nn::AvgPool2d ap_pos(3, 1, 1, false, false);
  require_same_module(*ap, ap_pos);
  REQUIRE(ddl::equal(ap(x).data(), ap_pos(x).data()));
  nn::AdaptiveAvgPool2d aap(nn::AdaptiveAvgPool2dOptions({2, 3}));
  require_same_module(*aap, ddl::nn::AdaptiveAvgPool2d(Size2(2, 3)));
  REQUIRE(aap(x).sizes() == std::vector<int64_t>{2, 4, 2, 3});
  nn::AdaptiveMaxPool2d amp(nn::AdaptiveMaxPool2dOptions(1));
  require_same_module(*amp, ddl::nn::AdaptiveMaxPool2d(1));
  REQUIRE(amp(x).sizes() == std::vector<int64_t>{2, 4, 1, 1});

  require_same_module(*nn::Dropout(nn::DropoutOptions(0.2)), ddl::nn::Dropout(0.2));
  require_same_module(*nn::Dropout2d(nn::Dropout2dOptions().p(0.3)), ddl::nn::Dropout2d(0.3));
  REQUIRE_THROWS_AS(nn::Dropout(nn::DropoutOptions(1.5)), ddl::Error);
  nn::Flatten flat(nn::FlattenOptions().start_dim(2));
  require_same_module(*flat, ddl::nn::Flatten(2));
  REQUIRE(flat(x).sizes() == std::vector<int64_t>{2, 4, 36});

  nn::Embedding emb(nn::EmbeddingOptions(10, 3).padding_idx(0));
  require_same_module(*emb, ddl::nn::Embedding(10, 3, 0));
  REQUIRE(ddl::equal(emb->weight.data()[0], ddl::zeros({3})));
  REQUIRE_THROWS_AS(nn::Embedding(nn::EmbeddingOptions(10, 3).padding_idx(10)), ddl::Error);
  REQUIRE_THROWS_AS(nn::Embedding(nn::EmbeddingOptions(10, 3).max_norm(1.0)), ddl::Error);
  REQUIRE_THROWS_AS(nn::Embedding(nn::EmbeddingOptions(10, 3).sparse(true)), ddl::Error);

  nn::LayerNorm ln(nn::LayerNormOptions({6, 6}).eps(1e-6).elementwise_affine(false));
  require_same_module(*ln, ddl::nn::LayerNorm(ddl::Shape{6, 6}, 1e-6, false));
  nn::GroupNorm gn(nn::GroupNormOptions(2, 4).eps(1e-3));
  require_same_module(*gn, ddl::nn::GroupNorm(2, 4, 1e-3));
  REQUIRE(gn(x).sizes() == x.sizes());
  REQUIRE_THROWS_AS(nn::GroupNorm(nn::GroupNormOptions(3, 4)), ddl::Error);

  require_same_module(*nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2)), ddl::nn::LeakyReLU(0.2));
  require_same_module(*nn::Softmax(nn::SoftmaxOptions(1)), ddl::nn::Softmax(1));
  require_same_module(*nn::LogSoftmax(nn::LogSoftmaxOptions(1)), ddl::nn::LogSoftmax(1));
  require_same_module(*nn::Softmin(nn::SoftminOptions(0)), ddl::nn::Softmin(0));
  require_same_module(*nn::ELU(nn::ELUOptions().alpha(0.5)), ddl::nn::ELU(0.5));
  require_same_module(*nn::CELU(nn::CELUOptions().alpha(2.0)), ddl::nn::CELU(2.0));
  require_same_module(*nn::GLU(nn::GLUOptions(1)), ddl::nn::GLU(1));
  require_same_module(*nn::Hardtanh(nn::HardtanhOptions().min_val(-2).max_val(2)), ddl::nn::Hardtanh(-2, 2));
  REQUIRE_THROWS_AS(nn::Hardtanh(nn::HardtanhOptions().min_val(2).max_val(1)), ddl::Error);
  require_same_module(*nn::Hardshrink(nn::HardshrinkOptions().lambda(0.3)), ddl::nn::Hardshrink(0.3));
  require_same_module(*nn::Softshrink(nn::SoftshrinkOptions(0.3)), ddl::nn::Softshrink(0.3));
  require_same_module(*nn::Threshold(nn::ThresholdOptions(0.1, 20)), ddl::nn::Threshold(0.1, 20));
  require_same_module(*nn::PReLU(nn::PReLUOptions().num_parameters(4)), ddl::nn::PReLU(4));
  require_same_module(*nn::RReLU(nn::RReLUOptions().lower(0.1).upper(0.3)), ddl::nn::RReLU(0.1, 0.3));
  require_same_module(*nn::Unflatten(nn::UnflattenOptions(1, {2, 2})), ddl::nn::Unflatten(1, {2, 2}));
  require_same_module(*nn::PixelShuffle(nn::PixelShuffleOptions(2)), ddl::nn::PixelShuffle(2));
  require_same_module(*nn::PixelUnshuffle(nn::PixelUnshuffleOptions(2)), ddl::nn::PixelUnshuffle(2));

  nn::Upsample up(nn::UpsampleOptions().scale_factor(std::vector<double>({2, 2})).mode(torch::kBilinear));
  require_same_module(*up, ddl::nn::Upsample::by_scale({2.0, 2.0}, ddl::InterpolateMode::Bilinear));
  REQUIRE(up(x).sizes() == std::vector<int64_t>{2, 4, 12, 12});
  nn::Upsample up_size(nn::UpsampleOptions().size(std::vector<int64_t>({3, 5})));
  require_same_module(*up_size, ddl::nn::Upsample::to_size(Size2(3, 5)));
  REQUIRE_THROWS_AS(nn::Upsample(nn::UpsampleOptions()), ddl::Error);
  REQUIRE_THROWS_AS(nn::Upsample(nn::UpsampleOptions().size(std::vector<int64_t>({3}))), ddl::Error);
  REQUIRE_THROWS_AS(nn::Upsample(nn::UpsampleOptions().scale_factor(std::vector<double>({2, 2})).align_corners(false)),
                    ddl::Error);

  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2).dropout(0.1).bias(false));
  require_same_module(*mha, ddl::nn::MultiheadAttention(8, 2, 0.1, false));
  REQUIRE_THROWS_AS(nn::MultiheadAttention(nn::MultiheadAttentionOptions(8, 3)), ddl::Error);
  REQUIRE_THROWS_AS(nn::MultiheadAttention(nn::MultiheadAttentionOptions(8, 2).kdim(4)), ddl::Error);
  REQUIRE_THROWS_AS(nn::MultiheadAttention(nn::MultiheadAttentionOptions(8, 2).add_bias_kv(true)), ddl::Error);

  nn::TransformerEncoder enc(nn::TransformerEncoderOptions(nn::TransformerEncoderLayerOptions(8, 2), 3));
  require_same_module(*enc, ddl::nn::TransformerEncoder(ddl::nn::TransformerEncoderLayer(8, 2), 3));
  nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16));
  nn::TransformerEncoder enc2(nn::TransformerEncoderOptions(layer, 2));
  require_same_module(*enc2, ddl::nn::TransformerEncoder(*layer, 2));
  REQUIRE(enc2(torch::randn({5, 2, 8})).sizes() == std::vector<int64_t>{5, 2, 8});
  REQUIRE_THROWS_AS(nn::TransformerEncoder(nn::TransformerEncoderOptions(layer, 0)), ddl::Error);
}
