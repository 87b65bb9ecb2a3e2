// BatchNorm3d, InstanceNorm1d/2d/3d and LocalResponseNorm (nn/norm_more.h): finite-difference
// gradient checks of their functions, running statistics, train/eval, unbatched inputs, clone,
// refusals. Values against PyTorch: tests/reference/rows_layers_more.cpp.
#include <catch2/catch.hpp>

#include "ddl.h"
#include "nn/norm_more.h"
#include "tests/common/error_of.h"
#include "tests/common/gradcheck.h"

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
  const Tensor mean = y.data().mean({2}), var = var(y.data(), {2}, 0);
  REQUIRE(allclose(mean, zeros({2, 3}, DType::Float64), 0, 1e-12));
  REQUIRE(allclose(var, ones({2, 3}, DType::Float64), 1e-4, 1e-4));
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
