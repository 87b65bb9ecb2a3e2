// Keeps docs/libtorch.md true, part 2: nn, optim, data, dist and serialization (part 1,
// tensors and autograd, is test_libtorch_names.cpp), as part 1 does: every name used once
// with a small check. Names that need files, a GPU or a launcher are taken by address only.
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <ddl/ddl.h>
#include <ddl/dist/dist.h>

using namespace ddl;

namespace {
// A throwaway path under the system temp directory, unique per process.
std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("ddl_names_" + std::to_string(::getpid()) + "_" + name)).string();
}
}  // namespace

namespace {
// The user-defined module of docs/nn.md: LibTorch's `struct NetImpl : torch::nn::Module`
// plus TORCH_MODULE(Net) becomes a plain class held by std::shared_ptr.
struct Net : nn::Module {
  Net() : nn::Module("Net") {
    fc1 = register_module("fc1", std::make_shared<nn::Linear>(4, 8));
    fc2 = register_module("fc2", std::make_shared<nn::Linear>(8, 2));
    scale = register_parameter("scale", ones({2}));
    steps = register_buffer("steps", scalar_tensor(0, DType::Int64));
  }
  Variable forward(const Variable& x) override { return fc2->forward(relu(fc1->forward(x))) * scale; }
  std::shared_ptr<nn::Linear> fc1, fc2;
  Variable scale, steps;
};
}  // namespace

TEST_CASE("nn: modules, containers, layers, losses, init, functional", "[libtorch]") {
  auto net = std::make_shared<Net>();
  REQUIRE(net->forward(Variable(ones({3, 4}))).shape() == Shape{3, 2});
  REQUIRE((*net)(Variable(ones({3, 4}))).shape() == Shape{3, 2});
  REQUIRE(net->parameters().size() == 5);
  REQUIRE(net->named_parameters()[0].first == "scale");
  REQUIRE(net->named_buffers()[0].first == "steps");
  REQUIRE(net->buffers().size() == 1);
  REQUIRE(net->named_modules()[1].first == "fc1");  // "" is the module itself
  REQUIRE(net->modules().size() == 3);
  REQUIRE(net->named_children()[1].first == "fc2");
  REQUIRE(net->children().size() == 2);
  REQUIRE(net->named_state().size() == 6);
  REQUIRE(net->parameter_count() == 4 * 8 + 8 + 8 * 2 + 2 + 2);
  net->eval();
  REQUIRE_FALSE(net->is_training());
  net->train();
  net->to(Device::cpu());
  net->to(DType::Float64);
  REQUIRE(net->fc1->weight.dtype() == DType::Float64);
  net->zero_grad();
  int visited = 0;
  net->apply([&](nn::Module&) { ++visited; });
  REQUIRE(visited == 3);
  std::ostringstream printed;
  printed << *net;  // std::cout << *module
  INFO(printed.str());
  REQUIRE(printed.str().find("(fc1): Linear(in_features=4, out_features=8, bias=True)") != std::string::npos);

  auto seq = std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Linear>(4, 3), std::make_shared<nn::ReLU>(), std::make_shared<nn::Flatten>()});
  seq->push_back(std::make_shared<nn::Dropout>(0.0));
  REQUIRE(seq->size() == 4);
  REQUIRE((*seq)[1]->type_name() == "ReLU");
  REQUIRE(seq->forward(Variable(ones({2, 4}))).shape() == Shape{2, 3});
  nn::Sequential variadic(nn::Linear(4, 3), nn::ReLU(), seq);  // LibTorch's variadic Sequential
  REQUIRE(variadic.size() == 3);
  static_assert(std::is_base_of_v<nn::Cloneable<nn::Linear>, nn::Linear>);
  REQUIRE(nn::Linear(4, 2, /*bias=*/false).extra_repr() == "in_features=4, out_features=2, bias=False");
  REQUIRE_FALSE(nn::Linear(4, 2, false).bias.defined());
  auto copy = nn::clone(*seq);  // module->clone()
  REQUIRE(copy->named_parameters()[0].second.data().shares_storage(seq->named_parameters()[0].second.data()) == false);
  nn::ModuleList list;
  list.push_back(std::make_shared<nn::Linear>(2, 2));
  REQUIRE(list.at<nn::Linear>(0)->weight.shape() == Shape{2, 2});
  nn::ModuleDict dict;
  dict.insert("head", std::make_shared<nn::Identity>());
  REQUIRE(dict.contains("head"));
  REQUIRE(dict.keys() == std::vector<std::string>{"head"});
  REQUIRE(nn::call_child(*dict.at<nn::Identity>("head"), "head", Variable(ones({1}))).numel() == 1);
  std::ostringstream tree;
  net->pretty_print(tree);
  REQUIRE(tree.str().rfind("Net(", 0) == 0);

  const Variable img(rand({2, 3, 8, 8}));
  REQUIRE(nn::Conv2d(nn::Conv2dOptions(3, 4, {3, 5}).stride({1, 2}).padding({1, 2})).forward(img).shape() ==
          Shape{2, 4, 8, 4});
  REQUIRE(nn::Conv1d(nn::Conv1dOptions(3, 4, 3).padding(1)).forward(Variable(rand({2, 3, 5}))).shape() ==
          Shape{2, 4, 5});
  REQUIRE(nn::ConvTranspose2d(nn::ConvTranspose2dOptions(3, 2, 2).stride(2)).forward(img).shape() ==
          Shape{2, 2, 16, 16});
  REQUIRE(nn::MaxPool2d(2).forward(img).shape() == Shape{2, 3, 4, 4});
  REQUIRE(nn::AvgPool2d({2, 4}).forward(img).shape() == Shape{2, 3, 4, 2});
  REQUIRE(nn::AdaptiveAvgPool2d(1).forward(img).shape() == Shape{2, 3, 1, 1});
  REQUIRE(nn::AdaptiveMaxPool2d({3, 5}).forward(img).shape() == Shape{2, 3, 3, 5});
  REQUIRE(nn::Upsample::by_scale(2.0).forward(img).shape() == Shape{2, 3, 16, 16});
  REQUIRE(nn::Upsample::to_size({4, 6}).forward(img).shape() == Shape{2, 3, 4, 6});
  REQUIRE(nn::BatchNorm2d(3).forward(img).shape() == img.shape());
  REQUIRE(nn::BatchNorm1d(3).running_mean.shape() == Shape{3});
  REQUIRE(nn::LayerNorm({8}).forward(img).shape() == img.shape());
  REQUIRE(nn::GroupNorm(1, 3).forward(img).shape() == img.shape());
  REQUIRE(nn::Embedding(10, 4, 0).forward(from_vector<int64_t>({0, 3})).shape() == Shape{2, 4});
  REQUIRE(nn::LSTM(4, 6).forward(Variable(rand({5, 2, 4}))).shape() == Shape{5, 2, 6});
  REQUIRE(nn::GRU(4, 6).forward(Variable(rand({5, 2, 4}))).shape() == Shape{5, 2, 6});
  REQUIRE(nn::MultiheadAttention(8, 2).forward(Variable(rand({3, 2, 8}))).shape() == Shape{3, 2, 8});
  REQUIRE(nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16))
              .forward(Variable(rand({3, 2, 8})))
              .shape() == Shape{3, 2, 8});
  REQUIRE(nn::LSTMCell(4, 6).forward(Variable(rand({2, 4})), {}).c.shape() == Shape{2, 6});
  REQUIRE(nn::GRUCell(4, 6).forward(Variable(rand({2, 4})), Variable()).shape() == Shape{2, 6});
  REQUIRE(nn::RNN(nn::RNNOptions(4, 6).nonlinearity("relu")).forward(Variable(rand({5, 2, 4}))).shape() ==
          Shape{5, 2, 6});
  REQUIRE(nn::RNN(4, 6).forward(Variable(rand({5, 2, 4})), Variable()).h_n.shape() == Shape{1, 2, 6});
  REQUIRE(nn::RNNCell(4, 6).forward(Variable(rand({2, 4}))).shape() == Shape{2, 6});
  REQUIRE(nn::TransformerDecoderLayer(nn::TransformerDecoderLayerOptions(8, 2).dim_feedforward(16))
              .forward(Variable(rand({3, 2, 8})), Variable(rand({4, 2, 8})))
              .shape() == Shape{3, 2, 8});
  (void)sizeof(nn::TransformerDecoder);
  (void)sizeof(nn::TransformerDecoderMasks);
  nn::TransformerMasks tmasks;
  tmasks.tgt_mask = nn::Transformer::generate_square_subsequent_mask(3);
  REQUIRE(nn::Transformer(nn::TransformerOptions(8, 2).num_encoder_layers(1).num_decoder_layers(1).dim_feedforward(16))
              .forward(Variable(rand({4, 2, 8})), Variable(rand({3, 2, 8})), tmasks)
              .shape() == Shape{3, 2, 8});
  (void)sizeof(nn::TransformerEncoder);
  (void)sizeof(nn::MLP);
  (void)sizeof(nn::ResNet18);
  (void)sizeof(nn::VGG);
  (void)&nn::make_model;
  REQUIRE(nn::causal_mask(3).dtype() == DType::Bool);
  for (const std::shared_ptr<nn::Module>& act : std::vector<std::shared_ptr<nn::Module>>{
           std::make_shared<nn::ReLU>(), std::make_shared<nn::GELU>(), std::make_shared<nn::SiLU>(),
           std::make_shared<nn::LeakyReLU>(0.1), std::make_shared<nn::Sigmoid>(), std::make_shared<nn::Tanh>(),
           std::make_shared<nn::Softmax>(1), std::make_shared<nn::LogSoftmax>(1)})
    REQUIRE(act->forward(img).shape() == img.shape());
  for (const std::shared_ptr<nn::Module>& act : std::vector<std::shared_ptr<nn::Module>>{
           std::make_shared<nn::ELU>(0.5), std::make_shared<nn::SELU>(), std::make_shared<nn::CELU>(),
           std::make_shared<nn::Hardtanh>(), std::make_shared<nn::ReLU6>(), std::make_shared<nn::Hardshrink>(),
           std::make_shared<nn::Softshrink>(), std::make_shared<nn::Tanhshrink>(),
           std::make_shared<nn::Threshold>(0.1, 20.0), std::make_shared<nn::PReLU>(3), std::make_shared<nn::RReLU>(),
           std::make_shared<nn::LogSigmoid>(), std::make_shared<nn::Softmin>(1), std::make_shared<nn::Softsign>(),
           std::make_shared<nn::Mish>(), std::make_shared<nn::Hardswish>(), std::make_shared<nn::Hardsigmoid>()})
    REQUIRE(act->forward(img).shape() == img.shape());
  REQUIRE(nn::GLU(-1).forward(img).shape() == Shape{2, 3, 8, 4});
  REQUIRE(nn::Unflatten(1, {3, 1}).forward(img).shape() == Shape{2, 3, 1, 8, 8});
  REQUIRE(nn::PixelUnshuffle(2).forward(img).shape() == Shape{2, 12, 4, 4});
  REQUIRE(nn::PixelShuffle(2).forward(nn::PixelUnshuffle(2).forward(img)).shape() == img.shape());

  const Variable logits(from_vector<float>({2, 0, 0, 0, 2, 0}, {2, 3}));
  const Tensor target = from_vector<int64_t>({0, 1});
  REQUIRE(nn::CrossEntropyLoss()(logits, target).item() == Approx(cross_entropy(logits, target).item()));
  REQUIRE(nn::CrossEntropyLoss(nn::CrossEntropyLossOptions().weight(ones({3})).label_smoothing(0.1))(logits, target)
              .item() > 0);
  const Variable p(from_vector<float>({0.25f, 0.75f})), q(from_vector<float>({0.0f, 1.0f}));
  REQUIRE(nn::MSELoss()(p, q).item() == Approx(0.0625));
  REQUIRE(nn::L1Loss()(p, q).item() == Approx(0.25));
  REQUIRE(nn::SmoothL1Loss(Reduction::Sum, 1.0)(p, q).item() == Approx(0.0625));
  REQUIRE(nn::HuberLoss(Reduction::Mean, 1.0)(p, q).item() == Approx(0.03125));
  REQUIRE(nn::BCELoss()(p, q).item() == Approx(-std::log(0.75)));
  REQUIRE(nn::BCEWithLogitsLoss()(Variable(zeros({2})), q).item() == Approx(std::log(2.0)));
  REQUIRE(nn::KLDivLoss(KLDivReduction::BatchMean)(log(p), p).item() == Approx(0.0).margin(1e-7));
  {  // the margin, embedding and likelihood losses (nn/margin_losses.h)
    const Variable x(from_vector<float>({0.5f, -1}, {1, 2})), x2(from_vector<float>({1, 0}, {1, 2}));
    const Tensor cls = from_vector<int64_t>({0}), sgn = from_vector<float>({1});
    REQUIRE(nn::MarginRankingLoss(0.1)(x, x2, Variable(from_vector<float>({1, 1}, {1, 2}))).item() >= 0);
    REQUIRE(nn::HingeEmbeddingLoss()(x, ones({1, 2})).item() == Approx(-0.25));
    REQUIRE(nn::SoftMarginLoss()(x, ones({1, 2})).item() > 0);
    REQUIRE(nn::MultiLabelSoftMarginLoss()(x, Variable(ones({1, 2}))).item() > 0);
    REQUIRE(nn::MultiMarginLoss(nn::MultiMarginLossOptions().p(1).margin(1.0))(x, cls).item() == Approx(0.0));
    REQUIRE(nn::MultiLabelMarginLoss()(x, from_vector<int64_t>({0, -1}, {1, 2})).item() == Approx(0.0));
    REQUIRE(nn::CosineEmbeddingLoss()(x, x, sgn).item() == Approx(0.0).margin(1e-6));
    REQUIRE(nn::TripletMarginLoss(nn::TripletMarginLossOptions().margin(1.0).swap(true))(x, x, x2).item() >= 0);
    REQUIRE(nn::PoissonNLLLoss(nn::PoissonNLLLossOptions().log_input(true))(x, Variable(ones({1, 2}))).item() > 0);
    REQUIRE(nn::GaussianNLLLoss(nn::GaussianNLLLossOptions().full(false))(x, x, Variable(ones({1, 2}))).item() ==
            Approx(0.0));
    const Variable lp(log(full({2, 1, 2}, 0.5)));  // [T, N, C]: two steps, blank 0 and label 1 equally likely
    REQUIRE(nn::CTCLoss(nn::CTCLossOptions().reduction(Reduction::Sum))(lp, from_vector<int64_t>({1}, {1, 1}), {2}, {1})
                .item() == Approx(-std::log(0.75)));
  }
  REQUIRE(nll_loss(log_softmax(logits, 1), target).item() == Approx(cross_entropy(logits, target).item()));
  REQUIRE(nn::NLLLoss(ones({3}), nn::NLLLossOptions().ignore_index(1))(log_softmax(logits, 1), target).item() ==
          Approx(cross_entropy(logits, from_vector<int64_t>({0, -100})).item()));

  const Tensor wt = empty({4, 3});
  nn::init::xavier_uniform_(wt);  // torch::nn::init::xavier_uniform_
  nn::init::kaiming_normal_(wt, 0, nn::init::FanMode::FanOut, nn::init::Nonlinearity::Relu);
  nn::init::normal_(wt, 0, 1);
  nn::init::uniform_(wt, -1, 1);
  nn::init::xavier_normal_(wt);
  nn::init::kaiming_uniform_(wt);
  nn::init::default_linear_conv_init(wt, Tensor());
  nn::init::constant_(wt, 0.5);
  REQUIRE(wt.sum().item<double>() == 6);
  REQUIRE(nn::init::calculate_gain(nn::init::Nonlinearity::Relu) == Approx(std::sqrt(2.0)));

  namespace F = nn::functional;  // namespace F = torch::nn::functional
  REQUIRE(F::relu(img).shape() == img.shape());
  REQUIRE(F::elu(img, 0.5).shape() == img.shape());  // F::elu(x, F::ELUFuncOptions().alpha(0.5))
  REQUIRE(F::prelu(img, Variable(full({1}, 0.25))).shape() == img.shape());
  REQUIRE(F::pixel_shuffle(Variable(rand({1, 4, 2, 2})), 2).shape() == Shape{1, 1, 4, 4});
  REQUIRE(F::max_pool2d(img, 2).shape() == Shape{2, 3, 4, 4});
  REQUIRE(F::flatten(img).shape() == Shape{2, 192});
  REQUIRE(F::dropout(img, 0.5, /*training=*/false, default_generator()).data().shares_storage(img.data()));
  REQUIRE(F::linear(Variable(ones({1, 2})), Variable(ones({3, 2})), Variable()).shape() == Shape{1, 3});
}

TEST_CASE("optim: optimizers, groups, clipping, schedules", "[libtorch]") {
  Variable w(from_vector<float>({1, -1}), true);
  optim::SGD sgd({w}, optim::SGDOptions(0.5).momentum(0.9));
  sum(w * w).backward();
  REQUIRE(optim::clip_grad_norm_({w}, 1.0) == Approx(std::sqrt(8.0)));  // torch::nn::utils::clip_grad_norm_
  sgd.step();
  sgd.zero_grad();
  REQUIRE(w.data().index({0}).item<double>() == Approx(1 - 0.5 / std::sqrt(2.0)));
  REQUIRE(sgd.param_groups()[0].lr() == 0.5);
  sgd.param_groups()[0].set_lr(0.1);  // group.options().set_lr(0.1)
  Variable head(ones({1}), true);
  sgd.add_param_group({head}, {{"lr", 0.01}});
  REQUIRE(sgd.param_groups().size() == 2);
  optim::StepLR sched(sgd, 1, 0.5);
  sched.step();
  REQUIRE(sgd.param_groups()[0].lr() == Approx(0.05));
  optim::Adam adam({w}, optim::AdamOptions(1e-3));
  optim::AdamW adamw({w}, optim::AdamWOptions(1e-3).weight_decay(0.01));
  optim::RMSprop rms({w}, optim::RMSpropOptions(1e-2));
  optim::Adagrad ada({w}, optim::AdagradOptions(1e-2));
  optim::CosineAnnealingLR cos(adam, 10);
  (void)sizeof(optim::MultiStepLR);
  (void)sizeof(optim::WarmupLR);
  (void)sizeof(optim::OneCycleLR);
  (void)sizeof(optim::ReduceLROnPlateau);
  REQUIRE(adam.param_groups()[0].lr() == Approx(1e-3));
  REQUIRE(adamw.param_groups()[0].options.at("weight_decay") == 0.01);
  optim::AdamW adamw_amsgrad({w}, optim::AdamWOptions(1e-3).amsgrad(true));  // AdamWOptions().amsgrad(true)
  REQUIRE(adamw_amsgrad.param_groups()[0].options.at("amsgrad") == 1);
  optim::Adamax adamax({w}, optim::AdamaxOptions(2e-3).betas({0.9, 0.999}));  // and NAdam, RAdam, Rprop, ASGD
  REQUIRE(adamax.param_groups()[0].options.at("beta2") == 0.999);
  optim::NAdam nadam({w});
  optim::RAdam radam({w});
  optim::Rprop rprop({w});
  optim::ASGD asgd({w});
  REQUIRE(nadam.param_groups()[0].lr() + radam.param_groups()[0].lr() + rprop.param_groups()[0].lr() +
              asgd.param_groups()[0].lr() ==
          Approx(2e-3 + 1e-3 + 1e-2 + 1e-2));
  REQUIRE(optim::clip_grad_norm_({w}, 10.0, /*norm_type=*/1.0, /*error_if_nonfinite=*/true) >= 0);
  optim::clip_grad_value_({w}, 0.1);  // torch::nn::utils::clip_grad_value_
  {  // optim::LBFGS(params, LBFGSOptions(1).line_search_fn("strong_wolfe")), opt.step(closure)
    Variable v(from_vector<double>({3}), true);
    optim::LBFGS lbfgs({v}, optim::LBFGSOptions(1).line_search_fn("strong_wolfe"));
    lbfgs.step([&] {
      lbfgs.zero_grad();
      Variable l = sum(v * v);
      l.backward();
      return l.data().item();
    });
    REQUIRE(v.data().item() == Approx(0.0).margin(1e-6));
  }
  REQUIRE(rms.param_groups()[0].lr() == Approx(1e-2));
  REQUIRE(ada.param_groups()[0].lr() == Approx(1e-2));
}

namespace {
// LibTorch's `struct Squares : torch::data::datasets::Dataset<Squares>`.
class Squares : public data::Dataset {
 public:
  int64_t size() const override { return 10; }

 protected:
  data::Example load(int64_t i) const override {
    return {full({1}, static_cast<double>(i)), scalar_tensor(static_cast<double>(i * i), DType::Int64)};
  }
};
}  // namespace

TEST_CASE("data: datasets, loaders, samplers, splits, collate", "[libtorch]") {
  auto squares = std::make_shared<Squares>();
  REQUIRE(squares->get(3).target.item<int64_t>() == 9);
  data::DataLoader loader(squares, data::DataLoaderOptions(4).shuffle(true).drop_last(true).workers(1));
  int64_t batches = 0;
  for (const data::Batch& batch : loader) {
    REQUIRE(batch.data.shape() == Shape{4, 1});
    REQUIRE(batch.target.shape() == Shape{4});
    ++batches;
  }
  REQUIRE(batches == 2);
  loader.set_epoch(1);  // DistributedSampler.set_epoch

  auto tensors = std::make_shared<data::TensorDataset>(zeros({6, 2}), arange(6));
  auto parts = data::random_split(tensors, std::vector<int64_t>{4, 2}, /*seed=*/1);
  REQUIRE(parts[1]->size() == 2);
  data::Subset first(tensors, {0, 1});
  data::ConcatDataset both({tensors, squares});
  REQUIRE(first.size() == 2);
  REQUIRE(both.size() == 16);
  REQUIRE(data::SequentialSampler(3).indices() == std::vector<int64_t>{0, 1, 2});
  REQUIRE(data::RandomSampler(3, 5).indices().size() == 3);
  REQUIRE(data::DistributedSampler(10, /*num_replicas=*/2, /*rank=*/1).size() == 5);
  REQUIRE(data::WeightedRandomSampler({1.0, 2.0}, 4).size() == 4);
  REQUIRE(data::BatchSampler(std::make_shared<data::SequentialSampler>(5), 2, true).batches().size() == 2);
  auto stream = std::make_shared<data::GeneratorDataset>([](int64_t) {  // an IterableDataset
    return []() -> std::optional<data::Example> { return std::nullopt; };
  });
  REQUIRE(data::StreamLoader(stream, 4).begin() == data::StreamLoader(stream, 4).end());

  data::DataLoaderOptions opts;
  opts.batch_size(3);
  opts.collate_fn([](const std::vector<data::Example>& examples) {  // collate_fn=
    data::Batch b = data::collate(examples);
    b.data = b.data * 2.0;
    return b;
  });
  data::DataLoader doubled(tensors, opts);
  REQUIRE(doubled.size() == 2);
  REQUIRE((*doubled.begin()).target.shape() == Shape{3});

  data::Transform norm = data::Normalize({0.5}, {0.5});  // torch::data::transforms::Normalize
  data::TransformContext ctx(/*seed=*/0, /*epoch=*/0, /*index=*/0);
  REQUIRE(norm(ones({1, 2, 2}), ctx).sum().item<double>() == Approx(4.0));
  data::Transform crop = data::Compose({data::RandomCrop(2, 2, /*padding=*/1), norm});
  REQUIRE(crop(ones({1, 2, 2}), ctx).shape() == Shape{1, 2, 2});
  (void)sizeof(data::MNIST);  // torch::data::datasets::MNIST
  (void)sizeof(data::CIFAR10);
}

TEST_CASE("dist: process groups, collectives, DDP", "[libtorch]") {
  // One rank over an in-process store: every collective is the identity.
  auto group = std::make_shared<dist::ProcessGroupGloo>(std::make_shared<dist::HashStore>(), 0, 1);
  REQUIRE(group->rank() == 0);
  REQUIRE(group->size() == 1);
  const Tensor t = from_vector<float>({1, 2});
  group->all_reduce(t, dist::ReduceOp::Sum);  // dist.all_reduce(t, op=ReduceOp.SUM)
  group->broadcast(t, 0);
  std::shared_ptr<dist::Work> work = group->all_reduce_async(t, dist::ReduceOp::Max);  // async_op=True
  work->wait();
  REQUIRE(work->is_success());
  const Tensor gathered = zeros({2});
  group->all_gather(gathered, t);  // all_gather_into_tensor
  group->barrier();
  const Tensor scattered = zeros({2});
  group->reduce_scatter(scattered, t);  // reduce_scatter_tensor
  REQUIRE(to_vector<float>(scattered) == std::vector<float>{1, 2});
  (void)&dist::ProcessGroup::send;
  (void)&dist::ProcessGroup::recv;
  REQUIRE(to_vector<float>(gathered) == std::vector<float>{1, 2});

  auto model = std::make_shared<nn::Linear>(2, 1);
  dist::DistributedDataParallel ddp(model, group);  // DistributedDataParallel(model)
  sum(ddp.forward(Variable(ones({3, 2})))).backward();
  REQUIRE(model->weight.grad().sum().item<double>() == Approx(6.0));

  (void)&dist::init_process_group;  // dist.init_process_group
  (void)&dist::destroy_process_group;
  (void)&dist::get_rank;
  (void)&dist::get_world_size;
  (void)&dist::new_group;
  (void)&dist::launch_env;  // torchrun's RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, ...
  (void)sizeof(dist::TCPStore);
  (void)sizeof(dist::FileStore);
  (void)sizeof(dist::PrefixStore);
}

TEST_CASE("serialization: state dicts, optimizer state, safetensors", "[libtorch]") {
  const std::string model_path = temp_path("model.safetensors"), opt_path = temp_path("opt.safetensors"),
                    raw_path = temp_path("raw.safetensors");
  auto a = std::make_shared<nn::Linear>(3, 2), b = std::make_shared<nn::Linear>(3, 2);
  nn::save_state(*a, model_path);  // torch::save(model, path)
  nn::load_state(*b, model_path);  // torch::load(model, path)
  REQUIRE(allclose(a->weight.data(), b->weight.data(), 0, 0));

  optim::Adam opt(a->parameters(), optim::AdamOptions(0.1));
  sum(a->forward(Variable(ones({1, 3})))).backward();
  opt.step();
  optim::save_optimizer(opt, opt_path);  // torch::save(optimizer, path)
  optim::Adam restored(b->parameters(), optim::AdamOptions(0.1));
  optim::load_optimizer(restored, opt_path);
  REQUIRE(restored.state_tensors().size() == opt.state_tensors().size());

  nn::save_safetensors(raw_path, {{"x", arange(3)}});
  nn::TensorFile file = nn::load_safetensors(raw_path);
  REQUIRE(file.tensors[0].first == "x");
  REQUIRE(to_vector<int64_t>(file.tensors[0].second) == std::vector<int64_t>{0, 1, 2});
  for (const auto& p : {model_path, opt_path, raw_path}) std::remove(p.c_str());
}

TEST_CASE("nn: normalisation, dropout, padding, fold and bag layers", "[libtorch]") {
  const Variable x(rand({2, 4, 3, 3}));
  REQUIRE(nn::BatchNorm3d(4)(Variable(rand({2, 4, 2, 2, 2}))).shape() == Shape{2, 4, 2, 2, 2});
  nn::InstanceNorm2d in(nn::InstanceNorm2dOptions(4).affine(true).track_running_stats(true));
  REQUIRE(in(x).shape() == x.shape());
  REQUIRE(nn::InstanceNorm1d(4)(Variable(rand({4, 5}))).shape() == Shape{4, 5});
  REQUIRE(nn::InstanceNorm3d(4).parameters().empty());
  REQUIRE(nn::LocalResponseNorm(2)(x).shape() == x.shape());
  Generator gen(1);
  for (auto m : std::vector<std::shared_ptr<nn::Module>>{
           std::make_shared<nn::Dropout1d>(0.5, &gen), std::make_shared<nn::Dropout2d>(0.5, &gen),
           std::make_shared<nn::Dropout3d>(0.5, &gen), std::make_shared<nn::AlphaDropout>(0.5, &gen),
           std::make_shared<nn::FeatureAlphaDropout>(0.5, &gen)}) {
    m->eval();
    const Variable seq(rand({2, 4, 3}));  // [N, C, L]: every variant takes it
    REQUIRE(m->forward(seq).data().shares_storage(seq.data()));
  }
  REQUIRE(nn::ReflectionPad1d(1)(Variable(rand({2, 3}))).shape() == Shape{2, 5});
  REQUIRE(nn::ReflectionPad2d(1)(x).shape() == Shape{2, 4, 5, 5});
  REQUIRE(nn::ReflectionPad3d(1)(Variable(rand({1, 2, 2, 2, 2}))).shape() == Shape{1, 2, 4, 4, 4});
  REQUIRE(nn::ReplicationPad1d({1, 2})(Variable(rand({2, 3}))).shape() == Shape{2, 6});
  REQUIRE(nn::ReplicationPad2d(nn::ReplicationPad2dOptions({1, 1, 2, 0}))(x).shape() == Shape{2, 4, 5, 5});
  REQUIRE(nn::ReplicationPad3d(1)(Variable(rand({2, 2, 2, 2}))).shape() == Shape{2, 4, 4, 4});
  REQUIRE(nn::ZeroPad2d(1)(x).shape() == Shape{2, 4, 5, 5});
  REQUIRE(nn::ConstantPad1d(1, 2.0)(x).shape() == Shape{2, 4, 3, 5});
  REQUIRE(nn::ConstantPad2d(nn::ConstantPad2dOptions(1, 0.5))(x).shape() == Shape{2, 4, 5, 5});
  REQUIRE(nn::ConstantPad3d(1, 0.0)(x).shape() == Shape{2, 6, 5, 5});
  const Variable cols = nn::Unfold(nn::UnfoldOptions(2).stride(1))(x);
  REQUIRE(cols.shape() == Shape{2, 16, 4});
  REQUIRE(nn::Fold(nn::FoldOptions(3, 2))(cols).shape() == x.shape());
  nn::Bilinear bl(nn::BilinearOptions(3, 2, 5).bias(false));
  REQUIRE(bl.forward(Variable(rand({4, 3})), Variable(rand({4, 2}))).shape() == Shape{4, 5});
  nn::EmbeddingBag bag(nn::EmbeddingBagOptions(10, 3).mode(EmbeddingBagMode::Sum).padding_idx(0));
  REQUIRE(bag.forward(from_vector<int64_t>({1, 2, 0, 4}, {2, 2})).shape() == Shape{2, 3});

  namespace F = nn::functional;
  REQUIRE(F::instance_norm(x).shape() == x.shape());
  REQUIRE(F::local_response_norm(x, 2).shape() == x.shape());
  REQUIRE(F::dropout2d(x, 0.5, false).data().shares_storage(x.data()));
  REQUIRE(F::dropout1d(Variable(rand({2, 3})), 0.0).shape() == Shape{2, 3});
  REQUIRE(F::dropout3d(x, 1.0).shape() == x.shape());
  REQUIRE(F::alpha_dropout(x, 0.5, false).shape() == x.shape());
  REQUIRE(F::feature_alpha_dropout(x, 0.5, false).shape() == x.shape());
  REQUIRE(F::pad(x, {1, 1}, PadMode::Reflect).shape() == Shape{2, 4, 3, 5});
  REQUIRE(F::fold(F::unfold(x, {2, 2}), {3, 3}, {2, 2}).shape() == x.shape());
  REQUIRE(F::bilinear(Variable(rand({4, 3})), Variable(rand({4, 2})), bl.weight).shape() == Shape{4, 5});
  REQUIRE(
      F::embedding_bag(from_vector<int64_t>({1, 2, 3}), bag.weight, from_vector<int64_t>({0, 1}), EmbeddingBagMode::Max)
          .shape() == Shape{2, 3});
}
