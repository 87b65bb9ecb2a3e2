// softmax / log_softmax, cross_entropy, nll_loss and mse_loss: known values,
// PyTorch golden values (tests/golden/norm_softmax_loss.py), gradient checks
// and error messages.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <vector>

#include "tests/common/formula.h"
#include "tests/common/gradcheck.h"
#include <ddl/autograd/functions.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using test::formula;
using test::random_double;
using test::require_all_close;

TEST_CASE("softmax: known values and stability", "[softmax]") {
  Tensor x = from_vector<float>({1, 2, 3});
  require_all_close(softmax(x, 0), {0.0900305732, 0.2447284711, 0.6652409558}, 1e-6);
  require_all_close(log_softmax(x, -1), {-2.4076059644, -1.4076059644, -0.4076059644}, 1e-6);
  // Large logits: no overflow, as the max is subtracted first.
  Tensor big = from_vector<float>({1000, 1001, 1002});
  require_all_close(softmax(big, 0), {0.0900305732, 0.2447284711, 0.6652409558}, 1e-6);
  require_all_close(log_softmax(big, 0), {-2.4076059644, -1.4076059644, -0.4076059644}, 1e-4);
  // Over every dim of a 3-D tensor, values along that dim sum to 1 and match exp(log_softmax).
  Tensor t = random_double({3, 4, 5}, 1, -3, 3);
  for (int64_t dim : {0, 1, 2, -1}) {
    Tensor y = softmax(t, dim);
    require_all_close(sum(y, {dim}), std::vector<double>(static_cast<size_t>(60 / t.size(dim < 0 ? 2 : dim)), 1.0),
                      1e-12);
    REQUIRE(allclose(exp(log_softmax(t, dim)), y, 1e-12, 1e-12));
  }
}

TEST_CASE("softmax: gradients over dims 0, 1, -1 of 3-D inputs", "[softmax][grad]") {
  for (int64_t dim : {0, 1, -1}) {
    INFO("dim " << dim);
    const auto sm = [dim](const std::vector<Variable>& v) { return softmax(v[0], dim); };
    const auto lsm = [dim](const std::vector<Variable>& v) { return log_softmax(v[0], dim); };
    REQUIRE_GRADCHECK(sm, {random_double({3, 4, 5}, 2, -2, 2)});
    REQUIRE_GRADCHECK(lsm, {random_double({3, 4, 5}, 3, -2, 2)});
    REQUIRE_GRADCHECK(sm, {test::non_contiguous(random_double({2, 3, 4}, 4, -2, 2))});
    REQUIRE_GRADCHECK(lsm, {test::non_contiguous(random_double({2, 3, 4}, 5, -2, 2))});
  }
}

TEST_CASE("cross_entropy: matches PyTorch with ignore_index and label smoothing", "[loss]") {
  Tensor logits = formula({5, 4}, [](int64_t i) { return 3.0 * std::sin(0.7 * i); });
  Tensor target = from_vector<int64_t>({2, -1, 3, 0, 1});
  CrossEntropyOptions o{Reduction::Mean, -1, 0.1};
  require_all_close(cross_entropy(logits, target, o), {1.4521479175}, 1e-10);
  o.reduction = Reduction::Sum;
  require_all_close(cross_entropy(logits, target, o), {5.80859167}, 1e-9);
  o.reduction = Reduction::None;
  require_all_close(cross_entropy(logits, target, o),
                    {0.852640597894, 0, 0.578415601089, 0.470241853359, 3.90729361766}, 1e-10);
  o.reduction = Reduction::Mean;
  Variable lv(logits, true);
  cross_entropy(lv, target, o).backward();
  require_all_close(lv.grad(),
                    {-7.10998263163e-05,
                     0.0364326857443,
                     -0.112444288761,
                     0.0760827028432,
                     0,
                     0,
                     0,
                     0,
                     -0.00489488202827,
                     0.00322001157633,
                     0.0583780304338,
                     -0.0567031599818,
                     -0.0282847954204,
                     0.0344624084181,
                     -0.00104405914115,
                     -0.00513355385658,
                     -0.00473916350417,
                     -0.22678716007,
                     0.0252839832394,
                     0.206242340335},
                    1e-10);
  require_all_close(cross_entropy(logits, from_vector<int64_t>({2, 1, 3, 0, 1})), {1.51097994594}, 1e-10);
  // float32 agrees to float precision.
  require_all_close(cross_entropy(logits.to(DType::Float32), from_vector<int64_t>({2, 1, 3, 0, 1})), {1.51097994594},
                    1e-6);

  // [N, C, d]: class dim 1, default ignore_index -100.
  Tensor logits3 = formula({2, 3, 4}, [](int64_t i) { return std::sin(1.3 * i) + 0.1 * i; });
  Tensor target3 = from_vector<int64_t>({0, 2, 1, -100, 2, 2, 0, 1}, {2, 4});
  require_all_close(cross_entropy(logits3, target3, {Reduction::Mean, -100, 0.2}), {1.08817449197}, 1e-10);
  Tensor none3 = cross_entropy(logits3, target3, {Reduction::None});
  REQUIRE(none3.shape() == Shape{2, 4});
  require_all_close(
      none3,
      {0.951351464811, 1.66848155529, 0.810997149247, 0, 0.705567304557, 0.293030738552, 1.60486778616, 1.30942799891},
      1e-10);
}

TEST_CASE("cross_entropy and nll_loss: gradients", "[loss][grad]") {
  Tensor target = from_vector<int64_t>({1, 0, 3, 3, 2, -100});
  for (Reduction r : {Reduction::Mean, Reduction::Sum, Reduction::None})
    for (double eps : {0.0, 0.25}) {
      INFO("reduction " << static_cast<int>(r) << ", label_smoothing " << eps);
      const auto ce = [&](const std::vector<Variable>& v) { return cross_entropy(v[0], target, {r, -100, eps}); };
      REQUIRE_GRADCHECK(ce, {random_double({6, 4}, 10, -2, 2)});
      REQUIRE_GRADCHECK(ce, {random_double({4, 6}, 11, -2, 2).t()});
    }
  Tensor target3 = from_vector<int64_t>({0, 2, 1, 1, 2, 0}, {2, 3});
  const auto ce3 = [&](const std::vector<Variable>& v) {
    return cross_entropy(v[0], target3, {Reduction::Mean, 1, 0.1});
  };
  REQUIRE_GRADCHECK(ce3, {random_double({2, 3, 3}, 12, -2, 2)});
  for (Reduction r : {Reduction::Mean, Reduction::Sum, Reduction::None}) {
    const auto nll = [&](const std::vector<Variable>& v) { return nll_loss(v[0], target, r); };
    REQUIRE_GRADCHECK(nll, {random_double({6, 4}, 13)});
  }
}

TEST_CASE("nll_loss: equals cross_entropy on log_softmax", "[loss]") {
  Tensor x = random_double({7, 5}, 20, -3, 3);
  Tensor target = from_vector<int64_t>({4, 0, 1, 2, 3, 0, 4});
  Tensor lp = log_softmax(x, 1);
  REQUIRE(allclose(nll_loss(lp, target), cross_entropy(x, target), 1e-12, 1e-12));
  REQUIRE(
      allclose(nll_loss(lp, target, Reduction::Sum, 0), cross_entropy(x, target, {Reduction::Sum, 0}), 1e-12, 1e-12));
  // Hand-computed: −mean of the picked log-probs.
  Tensor p = from_vector<double>({-1, -2, -3, -4}, {2, 2});
  require_all_close(nll_loss(p, from_vector<int64_t>({1, 0})), {2.5}, 1e-12);
  // Every sample ignored: Mean is 0/0 = NaN, as in PyTorch.
  REQUIRE(std::isnan(nll_loss(p, from_vector<int64_t>({-100, -100})).item()));
}

TEST_CASE("mse_loss: values and gradients", "[loss][grad]") {
  Variable a(from_vector<double>({1, 2, 3, 4}, {2, 2})), b(from_vector<double>({0, 2, 5, 1}, {2, 2}));
  REQUIRE(mse_loss(a, b).item() == Approx(3.5));  // (1 + 0 + 4 + 9) / 4
  REQUIRE(mse_loss(a, b, Reduction::Sum).item() == Approx(14.0));
  require_all_close(mse_loss(a, b, Reduction::None).data(), {1, 0, 4, 9}, 1e-12);
  for (Reduction r : {Reduction::Mean, Reduction::Sum, Reduction::None}) {
    const auto f = [r](const std::vector<Variable>& v) { return mse_loss(v[0], v[1], r); };
    REQUIRE_GRADCHECK(f, {random_double({3, 4}, 30), test::non_contiguous(random_double({3, 4}, 31))});
  }
}

TEST_CASE("losses: errors name the op, the sample and the shapes", "[loss][errors]") {
  Tensor x = zeros({3, 4});
  REQUIRE_THROWS_WITH(cross_entropy(x, from_vector<int64_t>({0, 7, 1})), Catch::Contains("cross_entropy") &&
                                                                             Catch::Contains("target 7 of sample 1") &&
                                                                             Catch::Contains("4 classes"));
  REQUIRE_THROWS_WITH(nll_loss(x, from_vector<int64_t>({0, 1, -5})),
                      Catch::Contains("nll_loss") && Catch::Contains("sample 2"));
  REQUIRE_THROWS_WITH(cross_entropy(x, from_vector<int64_t>({0, 1})),
                      Catch::Contains("cross_entropy") && Catch::Contains("[3, 4]") && Catch::Contains("[2]"));
  REQUIRE_THROWS_WITH(cross_entropy(x, zeros({3})), Catch::Contains("int64"));
  REQUIRE_THROWS_WITH(cross_entropy(x, zeros({3}, DType::Int64), {Reduction::Mean, -100, 1.5}),
                      Catch::Contains("label_smoothing"));
  REQUIRE_THROWS_WITH(mse_loss(Variable(zeros({2, 3})), Variable(zeros({3, 2}))),
                      Catch::Contains("mse_loss") && Catch::Contains("[2, 3]") && Catch::Contains("[3, 2]"));
  REQUIRE_THROWS_WITH(softmax(x, 2), Catch::Contains("softmax"));
  REQUIRE_THROWS_WITH(softmax_backward(zeros({3, 3}), x, 1), Catch::Contains("softmax_backward"));
}
