// Keeps docs/libtorch.md true, part 1: tensors and autograd (part 2, the modules,
// optimizers, data, dist and serialization, is test_libtorch_names_modules.cpp). Every ddl
// name in its LibTorch -> ddl table is used, in the section order of the table, with a small
// check of what it returns. A renamed or removed API breaks this build; a changed meaning
// fails a REQUIRE. It does not test the ops themselves (their own tests do, against PyTorch).
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
  REQUIRE(sin(x).shape() == x.shape());  // torch::sin, and the other unary math of tensor/ops/math_ops.h
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
