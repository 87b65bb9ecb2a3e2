// Keeps docs/libtorch.md true: every ddl name in its LibTorch -> ddl table is used here,
// in the section order of the table, with a small check of what it returns. A renamed or
// removed API breaks this build; a changed meaning fails a REQUIRE. It does not test the
// ops themselves (their own tests do, against PyTorch): one call per name is enough.
// Names that need files, a GPU or a launcher are taken by address only.
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

TEST_CASE("tensors: creation, dtype and device", "[libtorch]") {
  const Tensor z = zeros({2, 3});                             // torch::zeros
  const Tensor o = ones({2, 3}, DType::Float64);              // torch::ones(.., torch::kFloat64)
  const Tensor f = full({1}, 7.0, DType::Int64);              // torch::full
  const Tensor e = empty({4});                                // torch::empty
  const Tensor a = arange(5);                                 // torch::arange(5): int64
  const Tensor r = arange(0.0, 1.0, 0.25);                    // torch::arange(0, 1, 0.25)
  const Tensor v = from_vector<float>({1, 2, 3, 4}, {2, 2});  // torch::tensor({...}).view({2, 2})
  float buf[3] = {1, 2, 3};
  const Tensor b = from_blob(buf, {3}, DType::Float32);  // torch::from_blob
  REQUIRE(z.shape() == Shape{2, 3});                     // t.sizes()
  REQUIRE(z.size(1) == 3);                               // t.size(1)
  REQUIRE(z.numel() == 6);                               // t.numel()
  REQUIRE(o.dtype() == DType::Float64);                  // t.scalar_type() == torch::kFloat64
  REQUIRE(f.item<int64_t>() == 7);                       // t.item<int64_t>()
  REQUIRE(e.numel() == 4);
  REQUIRE(a.dtype() == DType::Int64);
  REQUIRE(r.numel() == 4);
  REQUIRE(to_vector<float>(v) == std::vector<float>{1, 2, 3, 4});  // t.data_ptr / accessor
  REQUIRE(b.data<float>() == buf);                                 // t.data_ptr<float>()
  REQUIRE(zeros_like(v).shape() == v.shape());                     // torch::zeros_like
  REQUIRE(ones_like(v).sum().item<float>() == 4);                  // torch::ones_like
  REQUIRE(full_like(v, 2.0).sum().item<float>() == 8);             // torch::full_like
  REQUIRE(scalar_tensor(3.0).dim() == 0);                          // torch::scalar_tensor
  REQUIRE(v.to(DType::Float64).dtype() == DType::Float64);         // t.to(torch::kFloat64)
  REQUIRE(v.to(Device::cpu()).device().is_cpu());                  // t.to(torch::kCPU)
  REQUIRE(Device::cuda(1).str() == "cuda:1");                      // torch::Device(torch::kCUDA, 1)
  REQUIRE(Device::parse("cuda:1") == Device::cuda(1));             // torch::Device("cuda:1")
  REQUIRE(cuda::device_count() >= 0);                              // torch::cuda::device_count()
  (void)&cuda::is_available;                                       // torch::cuda::is_available()
  REQUIRE(v.clone().shares_storage(v) == false);                   // t.clone()
  REQUIRE(is_floating(DType::BFloat16));
  REQUIRE(dtype_size(DType::Float16) == 2);
  REQUIRE(dtype_size(DType::Int16) == 2);                   // torch::kInt16
  REQUIRE(zeros({2}, DType::Int8).dtype() == DType::Int8);  // torch::kInt8
  REQUIRE(promote_types(DType::Int8, DType::UInt8) == DType::Int16);
  REQUIRE(gt(v, 2.0).dtype() == DType::Bool);
  REQUIRE(v.dim() == 2);  // torch::isFloatingType
}

TEST_CASE("tensors: views and shape", "[libtorch]") {
  const Tensor x = arange(0.0, 24.0, 1.0).view({2, 3, 4});
  REQUIRE(x.reshape({6, 4}).shape() == Shape{6, 4});
  REQUIRE(x.permute({2, 0, 1}).shape() == Shape{4, 2, 3});
  REQUIRE(x.transpose(0, 2).shape() == Shape{4, 3, 2});
  REQUIRE(x.flatten(1).shape() == Shape{2, 12});
  REQUIRE(x.narrow(2, 1, 2).shape() == Shape{2, 3, 2});
  REQUIRE(x.slice(1, 0, 3, 2).shape() == Shape{2, 2, 4});
  REQUIRE(x.select(0, 1).shape() == Shape{3, 4});
  REQUIRE(x.unsqueeze(0).squeeze(0).shape() == x.shape());
  REQUIRE(x.select(0, 0).t().shape() == Shape{4, 3});
  REQUIRE(ones({1, 3}).expand({5, 3}).stride(0) == 0);
  REQUIRE(x.transpose(0, 1).is_contiguous() == false);
  REQUIRE(x.transpose(0, 1).contiguous().is_contiguous());
  REQUIRE(repeat(ones({2}), {3}).numel() == 6);
  REQUIRE(flip(arange(3), {0}).index({0}).item<int64_t>() == 2);
  REQUIRE(pad(ones({2, 2}), {1, 1}).shape() == Shape{2, 4});  // F::pad
}

TEST_CASE("tensors: indexing with Slice, None, Ellipsis; index_put_", "[libtorch]") {
  const Tensor x = arange(0.0, 24.0, 1.0).view({2, 3, 4});
  // x[1:, None, ..., ::2]
  REQUIRE(x.index({Slice(1), None, Ellipsis, Slice(None, None, 2)}).shape() == Shape{1, 1, 3, 2});
  REQUIRE(x.index({-1, Slice(1, -1)}).shape() == Shape{1, 4});
  const Tensor idx = from_vector<int64_t>({2, 0});
  REQUIRE(x.index({0, idx}).shape() == Shape{2, 4});
  REQUIRE(index_select(x, 1, idx).shape() == Shape{2, 2, 4});
  REQUIRE(gather(x, 2, zeros({2, 3, 1}, DType::Int64)).sum().item<double>() == 0 + 4 + 8 + 12 + 16 + 20);
  const Tensor y = zeros({2, 3});
  y.index_put_({gt(ones({2, 3}), 0.0)}, 1.0);  // y[mask] = 1
  REQUIRE(y.sum().item<double>() == 6);
  y.index_put_({Slice(), 0}, 5.0);  // y[:, 0] = 5
  REQUIRE(y.sum().item<double>() == 14);
  index_put_(y, {from_vector<int64_t>({0, 0})}, ones({2, 3}), /*accumulate=*/true);
  REQUIRE(y.index({0, 1}).item<double>() == 3);
  REQUIRE(masked_fill(y, gt(y, 2.0), 0.0).sum().item<double>() == 2);
  REQUIRE(nonzero(from_vector<float>({0, 1, 1})).shape() == Shape{2, 1});
  REQUIRE(where(gt(y, 2.0), y, zeros_like(y)).sum().item<double>() == 18);
  REQUIRE(scatter(zeros({3}), 0, from_vector<int64_t>({1}), 4.0).index({1}).item<double>() == 4);
  REQUIRE(scatter_add(zeros({3}), 0, from_vector<int64_t>({1, 1}), ones({2})).index({1}).item<double>() == 2);
}

TEST_CASE("tensors: joins, reductions, sort, einsum, comparisons, random", "[libtorch]") {
  const Tensor a = ones({2, 3}), b = zeros({2, 3});
  REQUIRE(cat({a, b}, 0).shape() == Shape{4, 3});
  REQUIRE(stack({a, b}, 0).shape() == Shape{2, 2, 3});
  REQUIRE(split(a, 1, 1).size() == 3);
  REQUIRE(chunk(a, 2, 0).size() == 2);

  const Tensor x = from_vector<float>({3, 1, 2, 5, 4, 0}, {2, 3});
  REQUIRE(x.sum().item<double>() == 15);
  REQUIRE(x.sum({1}, true).shape() == Shape{2, 1});  // t.sum({1}, /*keepdim=*/true)
  REQUIRE(x.mean({0}).shape() == Shape{3});
  REQUIRE(var(x, {1}).shape() == Shape{2});
  REQUIRE(amax(x).item<double>() == 5);
  REQUIRE(amin(x, {1}).index({1}).item<double>() == 0);
  REQUIRE(x.argmax().item<int64_t>() == 3);
  auto [mx, imx] = x.max(1);  // std::tie(values, indices) = t.max(1)
  REQUIRE(imx.index({0}).item<int64_t>() == 0);
  REQUIRE(mx.index({1}).item<double>() == 5);
  REQUIRE(cumsum(x, 1).index({0, 2}).item<double>() == 6);

  auto [sv, si] = x.sort(1, /*descending=*/true);
  REQUIRE(si.index({0, 0}).item<int64_t>() == 0);
  REQUIRE(sv.index({1, 0}).item<double>() == 5);
  auto [tv, ti] = topk(x, 2, 1);
  REQUIRE(tv.shape() == Shape{2, 2});
  REQUIRE(ti.index({1, 1}).item<int64_t>() == 1);
  REQUIRE(argsort(x, 1).index({0, 0}).item<int64_t>() == 1);
  REQUIRE(kthvalue(x, 1, 1).values.index({0}).item<double>() == 1);

  REQUIRE(einsum("ij,kj->ik", {x, x}).shape() == Shape{2, 2});
  REQUIRE(matmul(x, x.t()).index({0, 0}).item<double>() == 14);

  REQUIRE(eq(x, x).dtype() == DType::Bool);
  REQUIRE(x.gt(2.0).sum().item<int64_t>() == 3);
  REQUIRE(allclose(x, x.clone()));
  REQUIRE(clamp(x, 1.0, 3.0).sum().item<double>() == 3 + 1 + 2 + 3 + 3 + 1);
  REQUIRE(sin(x).shape() == x.shape());  // torch::sin, and the other unary math of tensor/math_ops.h
  REQUIRE((tan(x).numel() + asin(x).numel() + atan(x).numel() + sinh(x).numel() + atanh(x).numel()) == 30);
  REQUIRE(log1p(x).shape() == expm1(x).shape());
  REQUIRE(atan2(x, x).dtype() == x.dtype());
  REQUIRE(fmod(x, 2.0).shape() == remainder(x, x).shape());
  REQUIRE(lerp(x, x, 0.5).shape() == x.shape());
  REQUIRE(clamp_min(x, 2.0).shape() == clamp_max(x, x).shape());
  REQUIRE(softplus(x).shape() == x.shape());  // F::softplus
  REQUIRE(clamp(x, x, x).shape() == x.shape());
  REQUIRE(pow(2.0, x).shape() == (1.0 / x).shape());
  REQUIRE(floor(x).shape() == ceil(x).shape());  // torch::floor, ceil, round, trunc, frac, sign
  REQUIRE(round(x, 1).shape() == trunc(frac(x)).shape());
  REQUIRE(sign(x).shape() == pow(x, x).shape());               // torch::pow(tensor, tensor)
  REQUIRE(to_vector<float>(div(x, 2.0, "floor"))[0] == 1.0f);  // torch::div(x, 2, "floor")
  REQUIRE(x.index({0, 0}).item<float>() == 3.0f);              // t[0][0].item<float>()

  manual_seed(7);  // torch::manual_seed
  const Tensor r1 = randn({4});
  manual_seed(7);
  REQUIRE(allclose(randn({4}), r1, 0, 0));
  Generator gen(3);  // at::Generator with a seed
  REQUIRE(rand({3}, gen).numel() == 3);
  REQUIRE(randint(0, 5, {10}).dtype() == DType::Int64);
  REQUIRE(randperm(5).sum().item<int64_t>() == 10);
  REQUIRE(rand_like(x).shape() == x.shape());
  REQUIRE(bernoulli({8}, 1.0, gen).sum().item<double>() == 8);
}

TEST_CASE("tensors: more reductions, roll, tile, linspace, linear algebra", "[libtorch]") {
  const Tensor t = from_vector<double>({1, 2, 3, 4}, {2, 2});
  REQUIRE(prod(t, 1).sum().item<double>() == 14);                                     // t.prod(1)
  REQUIRE(ddl::std(t, {}).item<double>() > 0);                                        // torch::std
  REQUIRE(logsumexp(t, {0, 1}).item<double>() > 4);                                   // torch::logsumexp
  REQUIRE(norm(t, 1.0, {}).item<double>() == 10);                                     // linalg::vector_norm
  REQUIRE(all(t, 1).sum().item<int64_t>() == 2);                                      // t.all(1)
  REQUIRE(any(t).to(DType::Int64).item<int64_t>() == 1);                              // t.any()
  REQUIRE(equal(t, t));                                                               // torch::equal
  REQUIRE(roll(t, {1}, {0}).shape() == t.shape());                                    // torch::roll
  REQUIRE(tile(t, {2}).shape() == Shape{2, 4});                                       // torch::tile
  REQUIRE(linspace(0, 1, 5).numel() == 5);                                            // torch::linspace
  REQUIRE(logspace(0, 2, 3, 10.0).numel() == 3);                                      // torch::logspace
  REQUIRE(inverse(t).shape() == t.shape());                                           // linalg::inv
  REQUIRE(det(t).item<double>() == Approx(-2));                                       // linalg::det
  REQUIRE(std::get<0>(slogdet(t)).item<double>() == -1);                              // linalg::slogdet
  REQUIRE(solve(t, from_vector<double>({1, 2})).numel() == 2);                        // linalg::solve
  REQUIRE(cholesky(from_vector<double>({4, 2, 2, 3}, {2, 2})).shape() == t.shape());  // linalg::cholesky
  REQUIRE(std::get<1>(qr(t)).shape() == t.shape());                                   // linalg::qr
  REQUIRE(std::get<1>(svd(t)).numel() == 2);                                          // linalg::svd
}

TEST_CASE("autograd: requires_grad, backward, grad, no_grad, custom functions, anomaly", "[libtorch]") {
  Variable x(from_vector<double>({1, 2, 3}), /*requires_grad=*/true);
  Variable y = sum(x * x);
  REQUIRE(y.requires_grad());
  y.backward();
  REQUIRE(to_vector<double>(x.grad()) == std::vector<double>{2, 4, 6});  // x.grad()
  x.zero_grad();
  REQUIRE_FALSE(x.grad().defined());  // set_to_none, as PyTorch 2's default

  Variable w = Variable(ones({3}, DType::Float64)).requires_grad_();
  std::vector<Variable> g = autograd::grad({sum(w * x)}, {w});  // torch::autograd::grad
  REQUIRE(to_vector<double>(g[0].data()) == std::vector<double>{1, 2, 3});
  autograd::backward({sum(w)}, {Tensor()});  // torch::autograd::backward
  REQUIRE(w.grad().sum().item<double>() == 3);
  autograd::backward({sum(w), sum(w * 2.0)}, {});  // grad_tensors empty: ones for scalar roots
  REQUIRE(w.grad().sum().item<double>() == 12);
  Variable wf = w.to(DType::Float32).to(Device::cpu()).unsqueeze(0).squeeze();  // recorded on Variable too
  REQUIRE(wf.dtype() == DType::Float32);
  REQUIRE(w.is_leaf());
  REQUIRE_FALSE((w * 2.0).detach().requires_grad());

  {
    NoGradGuard no_grad;  // torch::NoGradGuard
    REQUIRE_FALSE(is_grad_enabled());
    REQUIRE_FALSE((w * 2.0).requires_grad());
    GradModeGuard enable(true);  // torch::AutoGradMode(true)
    REQUIRE((w * 2.0).requires_grad());
  }

  autograd::CustomFunction twice;  // torch::autograd::Function<Twice>
  twice.name = "twice";
  twice.forward = [](autograd::FunctionCtx& ctx, const std::vector<Tensor>& in) -> std::vector<Tensor> {
    ctx.save_for_backward({in[0]});
    return {mul(in[0], 2.0)};
  };
  twice.backward = [](autograd::FunctionCtx& ctx, const std::vector<Tensor>& go) -> std::vector<Tensor> {
    REQUIRE(ctx.saved_tensors().size() == 1);
    REQUIRE(ctx.needs_input_grad(0));
    return {mul(go[0], 2.0)};
  };
  Variable u(ones({2}, DType::Float64), true);
  sum(twice.apply({u})[0]).backward();
  REQUIRE(u.grad().sum().item<double>() == 4);

  {
    autograd::DetectAnomalyGuard anomaly;  // torch::autograd::DetectAnomalyGuard
    REQUIRE(autograd::is_anomaly_enabled());
  }
  REQUIRE_FALSE(autograd::is_anomaly_enabled());
  (void)&autograd::set_detect_anomaly;  // torch::autograd::AnomalyMode::set_enabled

  int fired = 0;
  Variable h(ones({2}), true);
  h.register_post_accumulate_grad_hook([&](Variable&) { ++fired; });  // register_post_accumulate_grad_hook
  sum(h).backward();
  REQUIRE(fired == 1);
}

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

TEST_CASE("tensors and autograd: literals, options, operator[], in-place, hooks", "[libtorch]") {
  const Tensor t = ddl::tensor({{1, 2}, {3, 4}});                          // torch::tensor({{1, 2}, {3, 4}})
  REQUIRE(t.sizes() == std::vector<int64_t>{2, 2});                        // t.sizes()
  REQUIRE(t.dtype() == kLong);                                             // torch::kLong
  REQUIRE(zeros({2}, ddl::dtype(kFloat64)).options().dtype() == kDouble);  // torch::dtype(..), t.options()
  REQUIRE(eye(2).sum().item() == 2);                                       // torch::eye
  REQUIRE(t[1][0].item() == 3);                                            // t[1][0]
  t[0][0] = 9;                                                             // t[0][0] = 9
  REQUIRE(t[0][0].item() == 9);
  Variable x = autograd::ones({2}, ddl::requires_grad());  // torch::ones({2}, torch::requires_grad())
  Variable y = x * 2.0;
  y.retain_grad();                                           // y.retain_grad()
  y.register_hook([](const Tensor& g) { return g * 3.0; });  // y.register_hook(...)
  Variable z = y * 1.0;
  z.mul_(y);                                  // z.mul_(y)
  z.sum().backward({}, std::nullopt, false);  // backward(gradient, retain_graph, create_graph)
  REQUIRE(y.grad().sum().item() > 0);
  REQUIRE(x.grad().sum().item() > 0);
}

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
