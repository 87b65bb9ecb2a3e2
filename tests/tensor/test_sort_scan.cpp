// sort, argsort, topk, kthvalue, max/min along a dim, cumsum, cumprod and
// one-sided clamp: PyTorch golden values (tests/golden/sort_scan_einsum.py),
// finite-difference gradient checks, NaN order, stability, errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "tests/common/golden_seq.h"
#include "tests/common/gradcheck.h"
#include <ddl/autograd/functions.h>
#include <ddl/autograd/grad.h>
#include <ddl/tensor/ops.h>

using namespace ddl;
using ddl::test::checksum;
using ddl::test::non_contiguous;
using ddl::test::random_double;
using ddl::test::seq;
using V = std::vector<Variable>;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void require_near(const Tensor& got, const std::vector<double>& want, double tol = 1e-10) {
  const std::vector<double> g = to_vector<double>(got);
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i);
    if (std::isnan(want[i]))
      REQUIRE(std::isnan(g[i]));
    else
      REQUIRE(g[i] == Approx(want[i]).margin(tol));
  }
}

// Backpropagates seq(values.shape, 0.9, 0.1) from `values` (as the golden script)
// and checks values, indices (when given) and the gradient checksum of x.
void check_golden(const Variable& x, const Variable& values, const Tensor& indices, const std::vector<double>& want_v,
                  const std::vector<double>& want_i, double want_gx) {
  require_near(values.data(), want_v);
  if (!want_i.empty()) {
    REQUIRE(indices.dtype() == DType::Int64);
    require_near(indices, want_i, 0);
  }
  values.backward(seq(values.shape(), 0.9, 0.1));
  REQUIRE(checksum(x.grad()) == Approx(want_gx).margin(1e-10));
}

// The gradient of <f(x), c> w.r.t. x as a function of x, for gradcheck: built with
// create_graph when x requires grad (gradcheck's analytic pass differentiates it),
// a plain first-order grad otherwise (its finite differences). See test_higher_order.cpp.
ddl::test::VariableFn first_grad(const ddl::test::VariableFn& f) {
  return [f](const std::vector<Variable>& xs) {
    GradModeGuard grad_on(true);
    const bool create = xs[0].requires_grad();
    const Variable x = create ? xs[0] : Variable(xs[0].data(), true);
    const Variable y = f({x});
    Generator gen(77);
    const Variable l = sum(mul(y, Variable(rand(y.shape(), gen, DType::Float64) - 0.5)));
    return autograd::grad({l}, {x}, {}, std::nullopt, /*create_graph=*/create)[0];
  };
}

// ---- golden values printed by tests/golden/sort_scan_einsum.py ----
// sort_d1: shape [4, 5]
const std::vector<double> sort_d1_v = {0.0415806624333, 0.295520206661,  0.675463180551,  0.841470984808,
                                       0.991664810452,  -0.977530117665, -0.88345465572,  -0.611857890943,
                                       -0.37387666483,  0.311541363513,  -0.625070648893, 0.0247754254534,
                                       0.662969230082,  0.850436620629,  0.989358246623,  -0.980936230066,
                                       -0.875452174688, -0.358229282237, 0.327474439138,  0.859161814856};
const std::vector<double> sort_d1_i = {4, 0, 3, 1, 2, 1, 2, 0, 3, 4, 4, 3, 2, 0, 1, 0, 1, 2, 3, 4};
const double sort_d1_gx = 0.279882048240835;
// sort_d0_desc: shape [4, 5]
const std::vector<double> sort_d0_desc_v = {0.850436620629,  0.989358246623,  0.991664810452,  0.675463180551,
                                            0.859161814856,  0.295520206661,  0.841470984808,  0.662969230082,
                                            0.327474439138,  0.311541363513,  -0.611857890943, -0.875452174688,
                                            -0.358229282237, 0.0247754254534, 0.0415806624333, -0.980936230066,
                                            -0.977530117665, -0.88345465572,  -0.37387666483,  -0.625070648893};
const std::vector<double> sort_d0_desc_i = {2, 2, 0, 0, 3, 0, 0, 2, 3, 1, 1, 3, 3, 2, 0, 3, 1, 1, 1, 2};
const double sort_d0_desc_gx = 1.07368874567373;
// topk_k3_d1: shape [4, 3]
const std::vector<double> topk_k3_d1_v = {0.991664810452, 0.841470984808,  0.675463180551, 0.311541363513,
                                          -0.37387666483, -0.611857890943, 0.989358246623, 0.850436620629,
                                          0.662969230082, 0.859161814856,  0.327474439138, -0.358229282237};
const std::vector<double> topk_k3_d1_i = {2, 1, 3, 4, 3, 0, 1, 0, 2, 4, 3, 2};
const double topk_k3_d1_gx = 0.889611613359292;
// topk_k2_d0_small: shape [2, 5]
const std::vector<double> topk_k2_d0_small_v = {-0.980936230066, -0.977530117665, -0.88345465572,  -0.37387666483,
                                                -0.625070648893, -0.611857890943, -0.875452174688, -0.358229282237,
                                                0.0247754254534, 0.0415806624333};
const std::vector<double> topk_k2_d0_small_i = {3, 1, 1, 1, 2, 1, 3, 3, 2, 0};
const double topk_k2_d0_small_gx = 1.75822235603871;
// kthvalue_k2_d1: shape [4]
const std::vector<double> kthvalue_k2_d1_v = {0.295520206661, -0.88345465572, 0.0247754254534, -0.875452174688};
const std::vector<double> kthvalue_k2_d1_i = {0, 2, 3, 1};
const double kthvalue_k2_d1_gx = 2.04286354452007;
// max_d1: shape [4]
const std::vector<double> max_d1_v = {0.991664810452, 0.311541363513, 0.989358246623, 0.859161814856};
const std::vector<double> max_d1_i = {2, 4, 1, 4};
const double max_d1_gx = 2.06571055711278;
// min_d0_keep: shape [1, 5]
const std::vector<double> min_d0_keep_v = {-0.980936230066, -0.977530117665, -0.88345465572, -0.37387666483,
                                           -0.625070648893};
const std::vector<double> min_d0_keep_i = {3, 1, 1, 1, 2};
const double min_d0_keep_gx = 1.54408866008482;
// cumsum_d1: shape [4, 5]
const std::vector<double> cumsum_d1_v = {
    0.295520206661, 1.13699119147,   2.12865600192,  2.80411918247,  2.84569984491,  -0.611857890943, -1.58938800861,
    -2.47284266433, -2.84671932916,  -2.53517796564, 0.850436620629, 1.83979486725,  2.50276409733,   2.52753952279,
    1.90246887389,  -0.980936230066, -1.85638840475, -2.21461768699, -1.88714324785, -1.027981433};
const double cumsum_d1_gx = -1.14482638977143;
// cumsum_d0: shape [3, 2, 4]
const std::vector<double> cumsum_d0_v = {
    0.198669330795,  0.564642473395,  0.841470984808,   0.985449729988,   0.973847630878,   0.80849640382,
    0.515501371821,  0.14112000806,   -0.0568717712318, -0.0472154175477, -0.0301047876057, -0.008241273645,
    0.0149233562151, 0.0357319162636, 0.0508991924077,  0.0580306052424,  0.254669592282,   0.609771181171,
    0.868603308206,  0.99030207173,   0.955653912895,   0.770129014138,   0.463017677649,   0.0828060306957};
const double cumsum_d0_gx = 2.55017726305329;
// clamp_min: shape [4, 5]
const std::vector<double> clamp_min_v = {
    0.295520206661, 0.841470984808, 0.991664810452, 0.675463180551, 0.0415806624333, -0.25,          -0.25,
    -0.25,          -0.25,          0.311541363513, 0.850436620629, 0.989358246623,  0.662969230082, 0.0247754254534,
    -0.25,          -0.25,          -0.25,          -0.25,          0.327474439138,  0.859161814856};
const double clamp_min_gx = -1.09259900842821;
// clamp_max: shape [4, 5]
const std::vector<double> clamp_max_v = {
    0.295520206661, 0.5, 0.5, 0.5, 0.0415806624333, -0.611857890943, -0.977530117665, -0.88345465572,  -0.37387666483,
    0.311541363513, 0.5, 0.5, 0.5, 0.0247754254534, -0.625070648893, -0.980936230066, -0.875452174688, -0.358229282237,
    0.327474439138, 0.5};
const double clamp_max_gx = 0.890860300652534;
// cumprod of seq([2, 5], 0.7, 0.3) along dim 1
const std::vector<double> cumprod_d1 = {0.295520206661,   0.24867167933,   0.246598953748, 0.166568513619,
                                        0.00692602913681, -0.611857890943, 0.598109516128, -0.528402636653,
                                        0.197557415479,   0.0615473065907};
// sort of {3, nan, 1, 2, nan, 0}: NaN is largest
const std::vector<double> nan_sort_v = {0, 1, 2, 3, kNaN, kNaN};
const std::vector<double> nan_sort_i = {5, 2, 3, 0, 1, 4};
const std::vector<double> nan_sort_desc_v = {kNaN, kNaN, 3, 2, 1, 0};
const std::vector<double> nan_sort_desc_i = {1, 4, 0, 3, 2, 5};
// stable sort of {2, 1, 2, 1, 2, 0}, ascending and descending
const std::vector<double> ties_i = {5, 1, 3, 0, 2, 4};
const std::vector<double> ties_desc_i = {0, 2, 4, 1, 3, 5};

}  // namespace

TEST_CASE("sort, topk, kthvalue, max/min(dim): values, indices and gradients as PyTorch", "[sort][golden]") {
  const Tensor x0 = seq({4, 5}, 0.7, 0.3);
  auto leaf = [&] { return Variable(x0.clone(), true); };
  {
    Variable x = leaf();
    auto [v, i] = sort(x, 1);
    check_golden(x, v, i, sort_d1_v, sort_d1_i, sort_d1_gx);
  }
  {
    Variable x = leaf();
    auto [v, i] = x.sort(0, true);
    check_golden(x, v, i, sort_d0_desc_v, sort_d0_desc_i, sort_d0_desc_gx);
  }
  {
    Variable x = leaf();
    auto [v, i] = topk(x, 3, 1);
    check_golden(x, v, i, topk_k3_d1_v, topk_k3_d1_i, topk_k3_d1_gx);
  }
  {
    Variable x = leaf();
    auto [v, i] = x.topk(2, 0, false);
    check_golden(x, v, i, topk_k2_d0_small_v, topk_k2_d0_small_i, topk_k2_d0_small_gx);
  }
  {
    Variable x = leaf();
    auto [v, i] = kthvalue(x, 2, 1);
    check_golden(x, v, i, kthvalue_k2_d1_v, kthvalue_k2_d1_i, kthvalue_k2_d1_gx);
  }
  {
    Variable x = leaf();
    auto [v, i] = x.max(1);
    check_golden(x, v, i, max_d1_v, max_d1_i, max_d1_gx);
  }
  {
    Variable x = leaf();
    auto [v, i] = x.min(0, true);
    check_golden(x, v, i, min_d0_keep_v, min_d0_keep_i, min_d0_keep_gx);
  }
  // The tensor forms give the same values and indices.
  require_near(argsort(x0, 1), sort_d1_i, 0);
  require_near(x0.topk(3, 1).values, topk_k3_d1_v);
  require_near(x0.max(1).indices, max_d1_i, 0);
}

TEST_CASE("cumsum and one-sided clamp: values and gradients as PyTorch", "[scan][golden]") {
  const Tensor x0 = seq({4, 5}, 0.7, 0.3);
  {
    Variable x(x0.clone(), true);
    check_golden(x, cumsum(x, 1), {}, cumsum_d1_v, {}, cumsum_d1_gx);
  }
  {
    Variable x(seq({3, 2, 4}, 0.4, 0.2), true);
    check_golden(x, x.cumsum(0), {}, cumsum_d0_v, {}, cumsum_d0_gx);
  }
  {
    Variable x(x0.clone(), true);
    check_golden(x, clamp(x, -0.25, std::nullopt), {}, clamp_min_v, {}, clamp_min_gx);
  }
  {
    Variable x(x0.clone(), true);
    check_golden(x, x.clamp(std::nullopt, 0.5), {}, clamp_max_v, {}, clamp_max_gx);
  }
  require_near(cumprod(seq({2, 5}, 0.7, 0.3), 1), cumprod_d1);
  require_near(x0.clamp(-0.25, std::nullopt), clamp_min_v);
}

TEST_CASE("sort orders NaN as the largest value and is stable", "[sort]") {
  const Tensor x = from_vector<double>({3, kNaN, 1, 2, kNaN, 0});
  auto [v, i] = sort(x);
  require_near(v, nan_sort_v);
  require_near(i, nan_sort_i, 0);
  auto [vd, id] = sort(x, 0, true, true);
  require_near(vd, nan_sort_desc_v);
  require_near(id, nan_sort_desc_i, 0);
  // topk counts NaN as the largest too.
  require_near(topk(x, 2).indices, {1, 4}, 0);

  const Tensor ties = from_vector<int64_t>({2, 1, 2, 1, 2, 0});
  REQUIRE(sort(ties, -1, false, true).values.dtype() == DType::Int64);
  require_near(sort(ties, -1, false, true).indices, ties_i, 0);
  require_near(sort(ties, -1, true, true).indices, ties_desc_i, 0);
  // float32 and non-contiguous inputs sort the same values.
  const Tensor f = seq({5, 4}, 0.7, 0.3).to(DType::Float32).t();
  REQUIRE(!f.is_contiguous());
  REQUIRE(allclose(sort(f, 1).values, sort(f.contiguous(), 1).values));
  REQUIRE(sort(f, 1).values.dtype() == DType::Float32);
}

TEST_CASE("sort, topk, kthvalue, max(dim) and cumsum pass gradient checks", "[sort][scan][grad]") {
  const Tensor a = random_double({3, 4, 5}, 1);  // continuous values: no ties
  REQUIRE_GRADCHECK([](const V& x) { return sort(x[0], 1).values; }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return sort(x[0], -1, true).values; }, {non_contiguous(a)});
  REQUIRE_GRADCHECK([](const V& x) { return topk(x[0], 2, 2).values; }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return topk(x[0], 3, 0, false).values; }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return kthvalue(x[0], 2, 1).values; }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return kthvalue(x[0], 3, -1, true).values; }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return x[0].max(1).values; }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return x[0].min(2, true).values; }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return cumsum(x[0], 0); }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return cumsum(x[0], -1); }, {non_contiguous(a)});
  REQUIRE_GRADCHECK([](const V& x) { return mul(cumsum(x[0], 1), x[0]); }, {a});
  // Away from the bounds (|x| != 0.3 almost surely): the gradient is 1 inside, 0 outside.
  REQUIRE_GRADCHECK([](const V& x) { return clamp(x[0], -0.3, std::nullopt); }, {a});
  REQUIRE_GRADCHECK([](const V& x) { return clamp(x[0], std::nullopt, 0.3); }, {a});
}

TEST_CASE("sort, topk, max(dim) and cumsum support double backward", "[sort][scan][grad]") {
  // y = op(x) * x: op's gradient input depends on x, so the second derivative goes
  // through op's differentiable backward (a scatter_add, a reversed cumsum).
  const Tensor a = random_double({3, 4}, 2);
  REQUIRE_GRADCHECK(first_grad([](const V& x) { return mul(sort(x[0], 1).values, x[0]); }), {a});
  REQUIRE_GRADCHECK(first_grad([](const V& x) { return mul(topk(x[0], 2, 0).values, x[0].narrow(0, 0, 2)); }), {a});
  REQUIRE_GRADCHECK(first_grad([](const V& x) { return mul(x[0].max(1).values, x[0].select(1, 0)); }), {a});
  REQUIRE_GRADCHECK(first_grad([](const V& x) { return mul(cumsum(x[0], 1), x[0]); }), {a});
  REQUIRE_GRADCHECK(first_grad([](const V& x) { return mul(clamp(x[0], std::nullopt, 0.3), x[0]); }), {a});
}

TEST_CASE("clamp's gradient passes at the bounds, as PyTorch's", "[scan][grad]") {
  Variable x(from_vector<double>({-1, 0, 0.5, 1, 2}), true);
  clamp(x, 0.0, std::nullopt).sum().backward();
  REQUIRE(to_vector<double>(x.grad()) == std::vector<double>{0, 1, 1, 1, 1});
  x.zero_grad();
  x.clamp(std::nullopt, 1.0).sum().backward();
  REQUIRE(to_vector<double>(x.grad()) == std::vector<double>{1, 1, 1, 1, 0});
  // Integer tensors clamp on one side without losing their dtype; NaN stays NaN.
  const Tensor i = from_vector<int64_t>({-5, 0, 7});
  REQUIRE(to_vector<int64_t>(clamp(i, std::nullopt, 3.0)) == std::vector<int64_t>{-5, 0, 3});
  REQUIRE(clamp(i, 1.0, std::nullopt).dtype() == DType::Int64);
  REQUIRE(std::isnan(clamp(from_vector<double>({kNaN}), 0.0, std::nullopt).item()));
  // Two bare nullopts would match the number and the tensor bounds alike, as in LibTorch.
  const std::optional<double> none;
  REQUIRE_THROWS_WITH(clamp(i, none, none), Catch::Contains("at least one of min and max"));
}

TEST_CASE("cumsum of integers and bools gives int64; cumprod", "[scan]") {
  REQUIRE(to_vector<int64_t>(cumsum(from_vector<int64_t>({1, 2, 3, 4}), 0)) == std::vector<int64_t>{1, 3, 6, 10});
  const Tensor b = cumsum(gt(from_vector<double>({1, -1, 2, 3}), 0.0), 0);
  REQUIRE(b.dtype() == DType::Int64);
  REQUIRE(to_vector<int64_t>(b) == std::vector<int64_t>{1, 1, 2, 3});
  REQUIRE(to_vector<double>(cumprod(from_vector<double>({1, 2, 3, 4}), 0)) == std::vector<double>{1, 2, 6, 24});
  // Empty dims and 0-dim tensors.
  REQUIRE(cumsum(zeros({0, 3}), 0).shape() == Shape{0, 3});
  REQUIRE(cumsum(scalar_tensor(2.5), 0).item() == 2.5);
  REQUIRE(sort(zeros({2, 0}), 1).values.shape() == Shape{2, 0});
}

TEST_CASE("sort ops reject bad arguments with clear errors", "[sort][errors]") {
  const Tensor x = zeros({2, 3});
  REQUIRE_THROWS_WITH(topk(x, 4, 1), Catch::Contains("topk: k = 4 is out of range"));
  REQUIRE_THROWS_WITH(kthvalue(x, 0, 1), Catch::Contains("k counts from 1"));
  REQUIRE_THROWS_WITH(sort(x, 2), Catch::Contains("sort"));
  REQUIRE_THROWS_WITH(cumsum(x, -3), Catch::Contains("cumsum"));
}
