// The margin, embedding and likelihood losses (autograd/ops/margin_loss.h): finite-difference gradient checks
// of every loss and option in float64 (the reference sweep compares values and gradients with PyTorch), the
// modules against the functions, and errors naming the op.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "tests/common/error_of.h"
#include "tests/common/gradcheck.h"
#include <ddl/nn/margin_losses.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using test::error_of;
using test::random_double;

namespace {

// ±1 labels away from every kink: values the losses read as classes, never differentiated.
Tensor signs(int64_t n, uint64_t seed) { return sign(random_double({n}, seed, -1, 1)); }

}  // namespace

TEST_CASE("margin losses: gradients by central differences", "[loss][grad]") {
  const Tensor a = random_double({4, 5}, 1), b = random_double({4, 5}, 2), c = random_double({4, 5}, 3);
  const Tensor y45 = sign(random_double({4, 5}, 4));
  for (Reduction r : {Reduction::None, Reduction::Mean, Reduction::Sum}) {
    INFO("reduction " << static_cast<int>(r));
    REQUIRE_GRADCHECK([r](const auto& v) { return margin_ranking_loss(v[0], v[1], v[2], 0.3, r); }, {a, b, y45});
    REQUIRE_GRADCHECK([r, y45](const auto& v) { return hinge_embedding_loss(v[0], y45, 0.7, r); }, {a});
    REQUIRE_GRADCHECK([r, y45](const auto& v) { return soft_margin_loss(v[0], y45, r); }, {a});
    const Tensor bits = gt(random_double({4, 5}, 5), 0.0).to(DType::Float64), w = random_double({5}, 6, 0.1, 2);
    REQUIRE_GRADCHECK([r, w](const auto& v) { return multilabel_soft_margin_loss(v[0], v[1], w, r); }, {a, bits});
    const Tensor cls = from_vector<int64_t>({0, 4, 2, 2});
    for (int64_t p : {1, 2})
      REQUIRE_GRADCHECK([r, p, cls, w](const auto& v) { return multi_margin_loss(v[0], cls, p, 0.8, w, r); }, {a});
    const Tensor ml = from_vector<int64_t>({0, 3, -1, 1, 1, 4, 0, 2, 3, 0, 1, 2, 3, 4, 2, -1, 0, 0, 0, 0}, {4, 5});
    REQUIRE_GRADCHECK([r, ml](const auto& v) { return multilabel_margin_loss(v[0], ml, r); }, {a});
    const Tensor y4 = signs(4, 7);
    REQUIRE_GRADCHECK([r, y4](const auto& v) { return cosine_embedding_loss(v[0], v[1], y4, -0.2, r); }, {a, b});
    for (double p : {1.0, 2.0, 3.0, double(INFINITY)})
      for (bool swap : {false, true})
        REQUIRE_GRADCHECK(
            [r, p, swap](const auto& v) { return triplet_margin_loss(v[0], v[1], v[2], 1.5, p, 1e-6, swap, r); },
            {a, b, c});
    const Tensor counts = random_double({4, 5}, 8, 0, 4), rate = random_double({4, 5}, 9, 0.1, 3);
    for (bool full : {false, true}) {
      REQUIRE_GRADCHECK([r, full](const auto& v) { return poisson_nll_loss(v[0], v[1], true, full, 1e-8, r); },
                        {a, counts});
      REQUIRE_GRADCHECK([r, full](const auto& v) { return poisson_nll_loss(v[0], v[1], false, full, 1e-8, r); },
                        {rate, counts});
      const Tensor var = random_double({4, 5}, 10, 0.2, 2), var4 = random_double({4}, 11, 0.2, 2);
      REQUIRE_GRADCHECK([r, full](const auto& v) { return gaussian_nll_loss(v[0], v[1], v[2], full, 1e-6, r); },
                        {a, b, var});
      REQUIRE_GRADCHECK([r, full](const auto& v) { return gaussian_nll_loss(v[0], v[1], v[2], full, 1e-6, r); },
                        {a, b, var4});
    }
  }
}

TEST_CASE("ctc_loss: gradients through log_softmax by central differences", "[loss][grad]") {
  // PyTorch's (and ddl's) ctc gradient is exp(lp) − posterior, the gradient through log_softmax: check it there.
  const Tensor z = random_double({6, 3, 4}, 41, -2, 2);
  const Tensor padded = from_vector<int64_t>({1, 2, 2, 3, 3, 0, 1, 0, 0}, {3, 3});
  for (Reduction r : {Reduction::None, Reduction::Mean, Reduction::Sum})
    for (int64_t blank : {0, 3})
      REQUIRE_GRADCHECK(
          [r, padded, blank](const auto& v) {
            const Tensor t = blank == 0 ? padded : from_vector<int64_t>({1, 2, 2, 0, 0, 0, 1, 0, 0}, {3, 3});
            return ctc_loss(log_softmax(v[0], 2), t, {6, 5, 4}, {3, 2, 1}, blank, r);
          },
          {z});
  // One sequence, one label, T = 2: paths "a-", "-a", "aa" (a = 1, - = blank 0).
  const Tensor lp = log(from_vector<double>({0.5, 0.3, 0.2, 0.4, 0.4, 0.2}, {2, 1, 3}));
  const double p = 0.5 * 0.4 + 0.3 * 0.4 + 0.3 * 0.4;
  REQUIRE(ctc_loss(Variable(lp), from_vector<int64_t>({1}, {1, 1}), {2}, {1}, 0, Reduction::Sum).data().item() ==
          Approx(-std::log(p)));
  REQUIRE(nn::CTCLoss(nn::CTCLossOptions().reduction(Reduction::Sum))(Variable(lp), from_vector<int64_t>({1}, {1, 1}),
                                                                      {2}, {1})
              .data()
              .item() == Approx(-std::log(p)));
}

TEST_CASE("gaussian_nll_loss: var below eps is clamped in value but keeps slope 1, as PyTorch", "[loss][grad]") {
  // PyTorch clamps a copy under no_grad: loss = 0.5 (log eps + d^2 / eps), d loss / d var = d loss / d v at v = eps.
  Variable x(from_vector<double>({0.5})), y(from_vector<double>({0.0})), var(from_vector<double>({1e-9}), true);
  Variable l = gaussian_nll_loss(x, y, var, false, 1e-3, Reduction::Sum);
  REQUIRE(l.data().item() == Approx(0.5 * (std::log(1e-3) + 0.25 / 1e-3)));
  l.backward();
  REQUIRE(var.grad().item() == Approx(0.5 * (1 / 1e-3 - 0.25 / (1e-3 * 1e-3))));
}

TEST_CASE("multilabel_margin_loss: targets end at the first -1", "[loss]") {
  // x = [0.1, 0.2, 0.4, 0.8], targets {3, 0}: sum over j in {3, 0}, k in {1, 2} of max(0, 1 - (x_j - x_k)) / 4.
  Variable x(from_vector<double>({0.1, 0.2, 0.4, 0.8}));
  const double expect = ((1 - 0.6) + (1 - 0.4) + (1 + 0.1) + (1 + 0.3)) / 4;
  REQUIRE(multilabel_margin_loss(x, from_vector<int64_t>({3, 0, -1, 1})).data().item() == Approx(expect));
}

TEST_CASE("margin loss modules call their functions with their options", "[loss][module]") {
  const Variable a(random_double({3, 4}, 21)), b(random_double({3, 4}, 22)), c(random_double({3, 4}, 23));
  const Tensor w = random_double({4}, 24, 0.1, 2), cls = from_vector<int64_t>({1, 0, 3});
  nn::MultiMarginLoss mm(nn::MultiMarginLossOptions().p(2).margin(0.5).reduction(Reduction::Sum), w);
  REQUIRE(mm(a, cls).data().item() == Approx(multi_margin_loss(a, cls, 2, 0.5, w, Reduction::Sum).data().item()));
  auto copy = std::dynamic_pointer_cast<nn::MultiMarginLoss>(mm.clone());
  REQUIRE((*copy)(a, cls).data().item() == Approx(mm(a, cls).data().item()));
  nn::TripletMarginLoss tl(nn::TripletMarginLossOptions().margin(0.5).p(1).eps(1e-6).swap(true));
  REQUIRE(tl(a, b, c).data().item() ==
          Approx(triplet_margin_loss(a, b, c, 0.5, 1, 1e-6, true, Reduction::Mean).data().item()));
  nn::GaussianNLLLoss gl(nn::GaussianNLLLossOptions().full(true).eps(1e-6));
  const Variable var(random_double({3}, 25, 0.5, 1));
  REQUIRE(gl(a, b, var).data().item() == Approx(gaussian_nll_loss(a, b, var, true).data().item()));
  nn::PoissonNLLLoss pl(nn::PoissonNLLLossOptions().log_input(false).full(true).eps(1e-8).reduction(Reduction::Sum));
  const Variable rate(random_double({3, 4}, 26, 0.1, 2)), cnt(random_double({3, 4}, 27, 0, 4));
  REQUIRE(pl(rate, cnt).data().item() ==
          Approx(poisson_nll_loss(rate, cnt, false, true, 1e-8, Reduction::Sum).data().item()));
  REQUIRE(nn::CosineEmbeddingLoss(0.1)(a, b, signs(3, 28)).data().item() ==
          Approx(cosine_embedding_loss(a, b, signs(3, 28), 0.1).data().item()));
  REQUIRE_THROWS_WITH(nn::MultiMarginLoss(nn::MultiMarginLossOptions().p(3)), Catch::Contains("MultiMarginLoss"));
}

TEST_CASE("margin losses: errors name the op and the shapes", "[loss]") {
  const Variable a(random_double({3, 4}, 31)), v4(random_double({4}, 32));
  REQUIRE_THAT(error_of([&] { margin_ranking_loss(a, v4, a); }),
               Catch::Contains("margin_ranking_loss") && Catch::Contains("[4]"));
  REQUIRE_THAT(error_of([&] {
                 multi_margin_loss(a, from_vector<int64_t>({0, 4, 1}));
               }),
               Catch::Contains("multi_margin_loss: target out of range"));
  REQUIRE_THAT(error_of([&] {
                 multi_margin_loss(a, from_vector<int64_t>({0, 1}), 3);
               }),
               Catch::Contains("multi_margin_loss: only p == 1 and p == 2"));
  REQUIRE_THAT(error_of([&] {
                 multilabel_margin_loss(a, from_vector<int64_t>({0, 1, 2, 4}, {1, 4}));
               }),
               Catch::Contains("multilabel_margin_loss"));
  REQUIRE_THAT(error_of([&] {
                 cosine_embedding_loss(a, a, from_vector<double>({1.0}, {1, 1}));
               }),
               Catch::Contains("cosine_embedding_loss"));
  REQUIRE_THAT(error_of([&] { triplet_margin_loss(a, a, v4); }), Catch::Contains("triplet_margin_loss"));
  REQUIRE_THAT(error_of([&] { gaussian_nll_loss(a, a, v4); }), Catch::Contains("gaussian_nll_loss: var [4]"));
  REQUIRE_THAT(error_of([&] {
                 gaussian_nll_loss(v4, v4, Variable(from_vector<double>({1, -1, 1, 1})));
               }),
               Catch::Contains("gaussian_nll_loss: var has negative entries"));
}
