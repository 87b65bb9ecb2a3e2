// Elementwise losses with input and target of different float dtypes, and with integer
// ones, as PyTorch 1.13 (values probed there): mse, l1 and smooth_l1 promote; huber_loss
// takes the input's dtype, binary_cross_entropy_with_logits the target's; gradients come
// back in each argument's own dtype; integer tensors are refused, naming the loss.
// Also the unbatched [C] input of nll_loss_forward / nll_loss_backward, and the Tensor
// cross_entropy with class-probability targets.
#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <vector>

#include <ddl/autograd/functions.h>
#include <ddl/autograd/grad.h>
#include <ddl/tensor/ops.h>

using namespace ddl;

namespace {
using Loss = std::function<Variable(const Variable&, const Variable&)>;
struct Case {
  std::string name;
  Loss f;
  int rule;  // 0 promote, 1 the input's dtype, 2 the target's
};
std::vector<Case> cases() {
  return {{"mse_loss", [](const Variable& a, const Variable& b) { return mse_loss(a, b); }, 0},
          {"l1_loss", [](const Variable& a, const Variable& b) { return l1_loss(a, b); }, 0},
          {"smooth_l1_loss", [](const Variable& a, const Variable& b) { return smooth_l1_loss(a, b); }, 0},
          {"huber_loss", [](const Variable& a, const Variable& b) { return huber_loss(a, b); }, 1},
          {"binary_cross_entropy_with_logits",
           [](const Variable& a, const Variable& b) { return binary_cross_entropy_with_logits(a, b); }, 2}};
}
}  // namespace

TEST_CASE("regression losses: mixed float dtypes as PyTorch 1.13", "[loss][dtype]") {
  const Tensor x = from_vector<double>({0.1, 0.7, 0.4, 0.9, 0.3, 0.5}, {2, 3});
  const Tensor y = from_vector<double>({0.2, 0.1, 0.8, 0.6, 0.3, 0.0}, {2, 3});
  for (const Case& c : cases()) {
    for (auto [da, db] : {std::pair{DType::Float32, DType::Float64}, std::pair{DType::Float64, DType::Float32},
                          std::pair{DType::BFloat16, DType::Float32}}) {
      INFO(c.name << " " << da << " " << db);
      Variable a(x.to(da), true), b(y.to(db), true);
      const Variable l = c.f(a, b);
      const DType want = c.rule == 0 ? promote_types(da, db) : c.rule == 1 ? da : db;
      CHECK(l.dtype() == want);
      // The same loss on both in `want` (the computation PyTorch does).
      const double ref = c.f(Variable(x.to(da).to(want)), Variable(y.to(db).to(want))).data().item();
      CHECK(l.data().item() == Approx(ref).epsilon(1e-6));
      const auto g = autograd::grad({l}, {a, b});
      CHECK(g[0].dtype() == da);
      CHECK(g[1].dtype() == db);
    }
  }
}

TEST_CASE("regression losses: integer input or target is refused", "[loss][dtype]") {
  const Tensor f = zeros({3, 4}), i = zeros({3, 4}, DType::Int64);
  for (const Case& c : cases()) {
    INFO(c.name);
    REQUIRE_THROWS_WITH(c.f(Variable(i), Variable(i)), Catch::StartsWith(c.name + ": "));
    REQUIRE_THROWS_WITH(c.f(Variable(f), Variable(i.to(DType::Int32))), Catch::StartsWith(c.name + ": "));
  }
}

TEST_CASE("nll_loss_forward and nll_loss_backward: an unbatched input, and errors naming them", "[loss]") {
  // torch.ops.aten.nll_loss_forward(x, t, None, 1 (mean), -100) on x [5], t 0-d: the batch of one.
  const Tensor lp = log_softmax(from_vector<double>({0.5, -1, 2, 0, 1}, {5}), 0);
  const Tensor t = scalar_tensor(2.0, DType::Int64);
  for (Reduction r : {Reduction::Mean, Reduction::Sum, Reduction::None}) {
    const CrossEntropyOptions o{r, -100, 0.0};
    const Tensor loss = nll_loss_forward(lp, t, o);
    REQUIRE(loss.dim() == 0);
    CHECK(loss.item() == Approx(-to_vector<double>(lp)[2]));
    for (bool through : {false, true}) {
      const Tensor g = nll_loss_backward(scalar_tensor(1.0, DType::Float64), lp, t, o, through);
      REQUIRE(g.shape() == Shape{5});
      const std::vector<double> gv = to_vector<double>(g), p = to_vector<double>(ddl::exp(lp));
      for (int c = 0; c < 5; ++c) CHECK(gv[c] == Approx((through ? p[c] : 0.0) - (c == 2 ? 1.0 : 0.0)));
    }
  }
  const Tensor lp2 = zeros({3, 4}, DType::Float64), t32 = zeros({3}, DType::Int32);
  REQUIRE_THROWS_WITH(nll_loss_forward(lp2, t32, {}), Catch::StartsWith("nll_loss_forward: "));
  REQUIRE_THROWS_WITH(nll_loss_backward(scalar_tensor(1.0, DType::Float64), lp2, t32, {}, true),
                      Catch::StartsWith("nll_loss_backward: "));
}

TEST_CASE("cross_entropy (Tensor): class-probability targets, as PyTorch 1.13", "[loss]") {
  // torch.nn.functional.cross_entropy(x, t, ...) on these, in float64.
  const Tensor x = from_vector<double>({0.5, -1, 2, 0, 1, -0.5}, {2, 3});
  const Tensor t = from_vector<double>({0.2, 0.3, 0.5, 1, 0, 0}, {2, 3});
  CHECK(cross_entropy(x, t).item() == Approx(1.452840040382551).epsilon(1e-12));
  CHECK(cross_entropy(x, t, {Reduction::Sum, -100, 0.1}).item() == Approx(2.919013414098435).epsilon(1e-12));
  const std::vector<double> none = to_vector<double>(cross_entropy(x, t, {Reduction::None, -100, 0.0}));
  REQUIRE(none.size() == 2);
  CHECK(none[0] == Approx(1.441311296657157).epsilon(1e-12));
  CHECK(none[1] == Approx(1.464368784107945).epsilon(1e-12));
  // Unbatched: [C] logits with a [C] target.
  const Tensor l1 = cross_entropy(x.select(0, 0), t.select(0, 0), {Reduction::None, -100, 0.0});
  CHECK(l1.dim() == 0);
  CHECK(l1.item() == Approx(1.441311296657157).epsilon(1e-12));
  REQUIRE_THROWS_WITH(cross_entropy(x, zeros({2, 4}, DType::Float64)), Catch::StartsWith("cross_entropy: "));
}
