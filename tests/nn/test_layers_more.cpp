// BatchNorm3d, InstanceNorm1d/2d/3d and LocalResponseNorm (nn/norm_more.h): finite-difference
// gradient checks of their functions, running statistics, train/eval, unbatched inputs, clone,
// refusals. Values against PyTorch: tests/reference/rows_layers_more.cpp.
#include <catch2/catch.hpp>
#include <cmath>
#include <sstream>

#include "tests/common/error_of.h"
#include "tests/common/gradcheck.h"
#include <ddl/ddl.h>
#include <ddl/nn/bilinear.h>
#include <ddl/nn/dropout_more.h>
#include <ddl/nn/fold.h>
#include <ddl/nn/norm_more.h>
#include <ddl/nn/padding.h>

using namespace ddl;
using namespace ddl::nn;
using ddl::test::error_of;
using ddl::test::random_double;

TEST_CASE("instance_norm and local_response_norm pass gradient checks", "[nn][norm_more][gradcheck]") {
  const Tensor x = random_double({2, 3, 4}, 1, -2, 2), w = random_double({3}, 2), b = random_double({3}, 3);
  REQUIRE_GRADCHECK([](const std::vector<Variable>& v) { return instance_norm(v[0], {}, {}, v[1], v[2]); }, {x, w, b});
  // Running statistics given but not used for the output (training): gradients as without them.
  REQUIRE_GRADCHECK(
      [](const std::vector<Variable>& v) {
        return instance_norm(v[0], zeros({3}, DType::Float64), ones({3}, DType::Float64), v[1], v[2]);
      },
      {random_double({2, 3, 2, 3}, 4, -2, 2), w, b});
  // Eval with running statistics: an affine map of x.
  REQUIRE_GRADCHECK(
      [](const std::vector<Variable>& v) {
        return instance_norm(v[0], full({3}, 0.5, DType::Float64), full({3}, 2.0, DType::Float64), v[1], {}, false);
      },
      {x, w});
  REQUIRE_GRADCHECK([](const std::vector<Variable>& v) { return local_response_norm(v[0], 3, 0.5, 0.75, 1.0); },
                    {random_double({2, 5, 3}, 5, -2, 2)});
  REQUIRE_GRADCHECK([](const std::vector<Variable>& v) { return local_response_norm(v[0], 2, 1.0, 0.5, 2.0); },
                    {test::non_contiguous(random_double({2, 4, 3, 2}, 6, -2, 2))});
}

TEST_CASE("instance_norm normalises each sample and channel and averages the running updates", "[nn][norm_more]") {
  const Tensor x = random_double({2, 3, 5}, 7, -2, 2);
  Tensor rm = zeros({3}, DType::Float64), rv = ones({3}, DType::Float64);
  const Variable y = instance_norm(Variable(x), rm, rv);
  const Tensor mean = y.data().mean({2}), variance = var(y.data(), {2}, 0);
  REQUIRE(allclose(mean, zeros({2, 3}, DType::Float64), 0, 1e-12));
  REQUIRE(allclose(variance, ones({2, 3}, DType::Float64), 1e-4, 1e-4));
  // running = 0.9 * running + 0.1 * (mean over samples of each sample's statistic), unbiased variance.
  REQUIRE(allclose(rm, x.mean({2}).mean({0}) * 0.1, 1e-12, 1e-12));
  REQUIRE(allclose(rv, var(x, {2}, 1).mean({0}) * 0.1 + 0.9, 1e-12, 1e-12));
  CHECK_THAT(error_of([&] {
               instance_norm(Variable(random_double({2, 3, 1}, 8)));
             }),
             Catch::Contains("instance_norm") && Catch::Contains("spatial element"));
  CHECK_THAT(error_of([&] { instance_norm(Variable(x), {}, {}, Variable(ones({2}, DType::Float64))); }),
             Catch::Contains("instance_norm"));
}

TEST_CASE("InstanceNorm layers: running statistics, train and eval, unbatched input, clone", "[nn][norm_more]") {
  InstanceNorm2d plain(3);
  CHECK(plain.parameters().empty());
  CHECK(plain.buffers().empty());
  InstanceNorm2d m(InstanceNorm2dOptions(3).affine(true).track_running_stats(true).momentum(0.5));
  CHECK(m.parameters().size() == 2);
  CHECK(m.buffers().size() == 3);
  m.to(DType::Float64);
  const Tensor x = random_double({2, 3, 2, 4}, 9, -2, 2);
  m(Variable(x));
  const Tensor rm = m.running_mean.data().clone();
  CHECK_FALSE(allclose(rm, zeros({3}, DType::Float64), 0, 0));
  // Eval normalises with the running statistics and leaves them alone.
  m.eval();
  const Variable ye = m(Variable(x));
  CHECK(allclose(m.running_mean.data(), rm, 0, 0));
  const Tensor expect = (x - rm.view({1, 3, 1, 1})) / (m.running_var.data().view({1, 3, 1, 1}) + 1e-5).sqrt();
  CHECK(allclose(ye.data(), expect, 1e-12, 1e-12));
  // Clone: same class, same state, own storage.
  auto copy = nn::clone(m);
  CHECK(copy->type_name() == "InstanceNorm2d");
  CHECK(allclose(copy->running_mean.data(), rm, 0, 0));
  copy->running_mean.data().fill_(7.0);
  CHECK(allclose(m.running_mean.data(), rm, 0, 0));
  CHECK_FALSE(copy->is_training());
  // An unbatched [C, H, W] is one sample.
  InstanceNorm1d one(4);
  const Tensor u = random_double({4, 6}, 10, -2, 2);
  CHECK(allclose(one(Variable(u)).data(), one(Variable(u.unsqueeze(0))).data().squeeze(0), 0, 0));
  CHECK_THAT(error_of([&] { one(Variable(random_double({4}, 11))); }), Catch::Contains("InstanceNorm1d"));
  CHECK_THAT(error_of([&] { m(Variable(random_double({2, 4, 3, 3}, 12))); }), Catch::Contains("InstanceNorm2d"));
  InstanceNorm3d three(2);
  CHECK(three(Variable(random_double({2, 2, 2, 2, 3}, 13))).shape() == Shape{2, 2, 2, 2, 3});
  CHECK_THAT(error_of([&] { three(Variable(random_double({2, 2, 3}, 14))); }), Catch::Contains("InstanceNorm3d"));
}

TEST_CASE("BatchNorm3d and LocalResponseNorm layers", "[nn][norm_more]") {
  BatchNorm3d bn(2);
  bn.to(DType::Float64);
  const Tensor x = random_double({3, 2, 2, 2, 2}, 15, -2, 2);
  const Variable y = bn(Variable(x));
  CHECK(allclose(y.data().mean({0, 2, 3, 4}), zeros({2}, DType::Float64), 0, 1e-12));
  CHECK(bn.num_batches_tracked.data().item<int64_t>() == 1);
  CHECK(allclose(bn.running_mean.data(), x.mean({0, 2, 3, 4}) * 0.1, 1e-12, 1e-12));
  CHECK_THAT(error_of([&] { bn(Variable(random_double({3, 2, 2, 2}, 16))); }), Catch::Contains("BatchNorm3d"));
  auto copy = nn::clone(bn);
  CHECK(copy->type_name() == "BatchNorm3d");
  CHECK(allclose(copy->running_mean.data(), bn.running_mean.data(), 0, 0));

  LocalResponseNorm lrn(LocalResponseNormOptions(3).alpha(0.5).k(2.0));
  const Tensor z = random_double({2, 4, 3}, 17, -2, 2);
  CHECK(allclose(lrn(Variable(z)).data(), local_response_norm(Variable(z), 3, 0.5, 0.75, 2.0).data(), 0, 0));
  // size 1, alpha 1, beta 1, k 0: x / x^2.
  CHECK(allclose(LocalResponseNorm(1, 1.0, 1.0, 0.0)(Variable(z)).data(), 1.0 / z, 1e-12, 1e-12));
  CHECK_THAT(error_of([] { LocalResponseNorm(0); }), Catch::Contains("LocalResponseNorm"));
  CHECK_THAT(error_of([&] { lrn(Variable(random_double({2, 4}, 18))); }), Catch::Contains("local_response_norm"));
}

TEST_CASE("dropout variants: channels dropped whole, statistics, eval is the identity", "[nn][dropout_more]") {
  Generator gen(5);
  const Tensor x = ones({40, 50, 3}, DType::Float64);
  const Variable y = dropout1d(Variable(x), 0.3, true, gen);
  // Each channel is all zeros or all 1 / 0.7.
  const Tensor zero = eq(y.data(), 0.0).to(DType::Float64).sum({2});
  CHECK(allclose(zero * (3.0 - zero), zeros({40, 50}, DType::Float64), 0, 0));
  const double dropped = zero.sum().item<double>() / (3.0 * 40 * 50);
  CHECK(std::abs(dropped - 0.3) < 0.03);  // 2000 channels: sd 0.01
  CHECK(allclose(y.data().mean(), scalar_tensor(1.0, DType::Float64), 0, 0.05));
  // The gradient is the same mask.
  Variable leaf(x.clone(), true);
  Generator g1(9), g2(9);
  dropout2d(leaf, 0.5, true, g1).sum().backward();
  CHECK(allclose(leaf.grad(), dropout2d(Variable(x), 0.5, true, g2).data(), 0, 0));
  // Eval, p = 0: x itself.
  Dropout3d d3(0.5, &gen);
  d3.eval();
  const Variable z(random_double({2, 3, 2, 2, 2}, 19));
  CHECK(d3(z).data().data<double>() == z.data().data<double>());
  CHECK_THAT(error_of([] { Dropout2d(1.5); }), Catch::Contains("Dropout2d"));
  CHECK_THAT(error_of([&] {
               dropout1d(Variable(x.view({40, 150, 1, 1})), 0.5, true, gen);
             }),
             Catch::Contains("dropout1d"));
  auto copy = nn::clone(d3);
  CHECK(copy->type_name() == "Dropout3d");
  CHECK_FALSE(copy->is_training());
}

TEST_CASE("dropout variants pass gradient checks with a fixed mask", "[nn][dropout_more][gradcheck]") {
  // A generator seeded inside the function draws the same mask at every evaluation.
  const Tensor x = random_double({3, 4, 2, 2}, 34, -2, 2);
  REQUIRE_GRADCHECK(
      [](const std::vector<Variable>& v) {
        Generator g(3);
        return dropout2d(v[0], 0.4, true, g);
      },
      {x});
  REQUIRE_GRADCHECK(
      [](const std::vector<Variable>& v) {
        Generator g(4);
        return alpha_dropout(v[0], 0.3, true, g);
      },
      {x});
  REQUIRE_GRADCHECK(
      [](const std::vector<Variable>& v) {
        Generator g(5);
        return feature_alpha_dropout(v[0], 0.5, true, g);
      },
      {x});
}

TEST_CASE("alpha dropout keeps zero mean and unit variance", "[nn][dropout_more]") {
  Generator gen(6);
  const Tensor x = randn({200000}, gen, DType::Float64);
  const Tensor y = alpha_dropout(Variable(x), 0.2, true, gen).data();
  CHECK(std::abs(y.mean().item<double>()) < 0.01);
  CHECK(std::abs(var(y).item<double>() - 1.0) < 0.02);
  // Dropped elements all take one value, a * -alpha' * (1 - p) ... one of two affine images of x.
  const double alpha = 1.7580993408473766, p = 0.2, a = 1.0 / std::sqrt((alpha * alpha * p + 1) * (1 - p));
  const Tensor dropped = le(abs(y - (-alpha * a * (1 - p))), 1e-12);
  const Tensor kept = le(abs(y - (x * a + alpha * a * p)), 1e-12);
  CHECK(all(ge(dropped.to(DType::Float64) + kept.to(DType::Float64), 1.0)).item<bool>());
  // FeatureAlphaDropout drops whole channels.
  FeatureAlphaDropout fad(0.5, &gen);
  const Tensor f = fad(Variable(ones({30, 20, 4}, DType::Float64))).data();
  const Tensor fd =
      le(abs(f - (-alpha / std::sqrt((alpha * alpha * 0.5 + 1) * 0.5) * 0.5)), 1e-12).to(DType::Float64).sum({2});
  CHECK(allclose(fd * (4.0 - fd), zeros({30, 20}, DType::Float64), 0, 0));
  fad.eval();
  CHECK(allclose(fad(Variable(ones({2, 3}))).data(), ones({2, 3}), 0, 0));
}

TEST_CASE("padding layers: modes, ranks, repr, gradients", "[nn][padding]") {
  const Tensor x = random_double({1, 2, 3, 4, 3}, 20, -2, 2);
  ReflectionPad3d r3(1);
  CHECK(r3(Variable(x)).shape() == Shape{1, 2, 5, 6, 5});
  CHECK(allclose(r3(Variable(x)).data(), pad(x, {1, 1, 1, 1, 1, 1}, PadMode::Reflect), 0, 0));
  ReplicationPad2d r2({1, 0, 2, 1});
  CHECK(r2(Variable(x.select(0, 0).select(0, 0))).shape() == Shape{3, 7, 4});
  CHECK(ZeroPad2d(2)(Variable(x.select(0, 0))).shape() == Shape{2, 3, 8, 7});
  ConstantPad1d c1(ConstantPad1dOptions(1, 2.5));
  CHECK(c1(Variable(ones({2, 2}))).data().select(1, 0).sum().item<float>() == 5.0f);
  CHECK_THAT(error_of([&] { ReflectionPad1d(1)(Variable(x)); }), Catch::Contains("ReflectionPad1d"));
  CHECK_THAT(error_of([&] { ReplicationPad3d(1)(Variable(ones({3, 3}))); }), Catch::Contains("ReplicationPad3d"));
  CHECK_THAT(error_of([] { ReflectionPad2d({1, 2, 3}); }), Catch::Contains("ReflectionPad2d"));
  std::ostringstream os;
  os << ConstantPad2d(1, 3.5) << " " << ReflectionPad2d(1);
  CHECK(os.str() == "ConstantPad2d(padding=(1, 1, 1, 1), value=3.5) ReflectionPad2d((1, 1, 1, 1))");
  REQUIRE_GRADCHECK([](const std::vector<Variable>& v) { return ReflectionPad3d({1, 2, 0, 1, 2, 1})(v[0]); }, {x});
  REQUIRE_GRADCHECK([](const std::vector<Variable>& v) { return ReplicationPad3d(2)(v[0]); }, {x});
}

TEST_CASE("fold and unfold: adjoint, identity with convolution, gradients", "[nn][fold]") {
  const Tensor x = random_double({2, 3, 5, 6}, 21, -2, 2);
  Unfold un(UnfoldOptions({2, 3}).dilation({1, 2}).padding(1).stride({2, 1}));
  const Variable cols = un(Variable(x));
  CHECK(cols.shape() == Shape{2, 18, 3 * 4});
  // fold is unfold's adjoint: <unfold(x), c> == <x, fold(c)>.
  const Tensor c = random_double(cols.shape(), 22);
  Fold fo(FoldOptions({5, 6}, {2, 3}).dilation({1, 2}).padding(1).stride({2, 1}));
  const double lhs = (cols.data() * c).sum().item<double>(), rhs = (x * fo(Variable(c)).data()).sum().item<double>();
  CHECK(std::abs(lhs - rhs) < 1e-10 * (1 + std::abs(lhs)));
  // fold(unfold(x)) with non-overlapping blocks is x.
  CHECK(allclose(Fold({4, 6}, 2, 1, 0, 2)(Unfold(2, 1, 0, 2)(Variable(x.narrow(2, 0, 4)))).data(), x.narrow(2, 0, 4), 0,
                 0));
  // A convolution as unfold + matmul.
  const Tensor w = random_double({4, 3, 2, 2}, 23);
  const Variable conv = conv2d(Variable(x), Variable(w), Variable());
  const Variable viaunfold = matmul(Variable(w.reshape({4, 12})), unfold(Variable(x), {2, 2})).reshape({2, 4, 4, 5});
  CHECK(allclose(conv.data(), viaunfold.data(), 1e-12, 1e-12));
  REQUIRE_GRADCHECK(
      [](const std::vector<Variable>& v) {
        return unfold(v[0], {2, 2}, {2, 1}, {1, 0}, {1, 2});
      },
      {random_double({1, 2, 4, 5}, 24)});
  REQUIRE_GRADCHECK(
      [](const std::vector<Variable>& v) {
        return fold(v[0], {4, 5}, {2, 2}, {1, 2}, {1, 0}, {2, 1});
      },
      {random_double({1, 8, 3 * 3}, 25)});
  std::ostringstream os;
  os << Fold({5, 6}, 2) << " " << Unfold(2, 1, 0, 2);
  CHECK(os.str() ==
        "Fold(output_size=(5, 6), kernel_size=2, dilation=1, padding=0, stride=1) "
        "Unfold(kernel_size=2, dilation=1, padding=0, stride=2)");
  CHECK_THAT(error_of([&] { fold(Variable(c), {5, 6}, {2, 2}); }), Catch::Contains("fold"));
}

TEST_CASE("Bilinear and EmbeddingBag layers", "[nn][bilinear][embedding_bag]") {
  Bilinear bl(3, 2, 4);
  bl.to(DType::Float64);
  CHECK(bl.weight.shape() == Shape{4, 3, 2});
  const Tensor x1 = random_double({5, 3}, 26), x2 = random_double({5, 2}, 27);
  const Variable y = bl.forward(Variable(x1), Variable(x2));
  // y[n, o] = x1[n] . W[o] . x2[n] + b[o], checked at one element.
  const Tensor w = bl.weight.data().to(DType::Float64);
  double expect = bl.bias.data().to(DType::Float64).data<double>()[1];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j)
      expect += x1.data<double>()[2 * 3 + i] * w.data<double>()[1 * 6 + i * 2 + j] * x2.data<double>()[2 * 2 + j];
  CHECK(std::abs(y.data().to(DType::Float64).data<double>()[2 * 4 + 1] - expect) < 1e-5);
  CHECK(nn::clone(bl)->weight.data().data<double>() != bl.weight.data().data<double>());
  REQUIRE_GRADCHECK([](const std::vector<Variable>& v) { return bilinear(v[0], v[1], v[2], v[3]); },
                    {random_double({2, 3, 3}, 28), random_double({2, 3, 2}, 29), random_double({4, 3, 2}, 30),
                     random_double({4}, 31)});

  EmbeddingBag bag(EmbeddingBagOptions(10, 3).mode(EmbeddingBagMode::Sum).padding_idx(2));
  CHECK(allclose(bag.weight.data().select(0, 2), zeros({3}), 0, 0));
  const Tensor idx = from_vector(std::vector<int64_t>{1, 2, 4, 4, 7}), off = from_vector(std::vector<int64_t>{0, 3});
  const Variable s = bag.forward(idx, off);
  const Tensor wt = bag.weight.data();
  CHECK(allclose(s.data().select(0, 0), wt.select(0, 1) + wt.select(0, 4), 0, 1e-6));
  CHECK(allclose(s.data().select(0, 1), wt.select(0, 4) + wt.select(0, 7), 0, 1e-6));
  std::ostringstream os;
  os << bag;
  CHECK(os.str() == "EmbeddingBag(10, 3, mode=sum, padding_idx=2)");
  const Tensor wd = random_double({6, 2}, 32);
  const Tensor i2 = from_vector(std::vector<int64_t>{0, 3, 5, 3, 1, 1}),
               o2 = from_vector(std::vector<int64_t>{0, 2, 2});
  REQUIRE_GRADCHECK([&](const std::vector<Variable>& v) { return embedding_bag(i2, v[0], o2, EmbeddingBagMode::Mean); },
                    {wd});
  REQUIRE_GRADCHECK(
      [&](const std::vector<Variable>& v) { return embedding_bag(i2, v[0], o2, EmbeddingBagMode::Sum, v[1]); },
      {wd, random_double({6}, 33)});
  REQUIRE_GRADCHECK([&](const std::vector<Variable>& v) { return embedding_bag(i2, v[0], o2, EmbeddingBagMode::Max); },
                    {wd});
  CHECK_THAT(error_of([&] { embedding_bag(i2, Variable(wd), from_vector(std::vector<int64_t>{1})); }),
             Catch::Contains("embedding_bag"));
}
