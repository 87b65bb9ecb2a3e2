// batch_norm: hand-computed and PyTorch golden values (tests/golden/norm_softmax_loss.py),
// running-stat updates, gradient checks in training and eval mode, thread-count
// determinism, error messages, and float16/bfloat16 inputs with float32 or 16-bit
// parameters (bit-exact to the float32 kernel on the widened input, and under autocast).
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <optional>
#include <vector>

#include "tests/common/formula.h"
#include "tests/common/gradcheck.h"
#include <ddl/ddl.h>

using namespace ddl;
using test::formula;
using test::require_all_close;

TEST_CASE("batch_norm: hand-computed 2x2 case and running stats", "[batch_norm]") {
  // Channel 0 holds {1, 3}, channel 1 {2, 4}: mean 2 and 3, biased var 1, unbiased var 2.
  Tensor x = from_vector<float>({1, 2, 3, 4}, {2, 2});
  Tensor rm = zeros({2}), rv = ones({2});
  BatchNormResult r = batch_norm(x, Tensor(), Tensor(), rm, rv, true, 0.1, 0.0);
  require_all_close(r.y, {-1, -1, 1, 1}, 1e-6);
  require_all_close(r.save_mean, {2, 3}, 1e-6);
  require_all_close(r.save_invstd, {1, 1}, 1e-6);
  require_all_close(rm, {0.2, 0.3}, 1e-6);
  require_all_close(rv, {1.1, 1.1}, 1e-6);  // 0.9·1 + 0.1·2

  // Eval uses the running stats and leaves them alone.
  Tensor w = from_vector<float>({2, 3}), b = from_vector<float>({1, -1});
  BatchNormResult e = batch_norm(x, w, b, rm, rv, false, 0.1, 0.0);
  const double s = 1.0 / std::sqrt(1.1);
  require_all_close(e.y, {2 * 0.8 * s + 1, 3 * 1.7 * s - 1, 2 * 2.8 * s + 1, 3 * 3.7 * s - 1}, 1e-5);
  require_all_close(rm, {0.2, 0.3}, 1e-6);
}

TEST_CASE("batch_norm: matches PyTorch over two training steps, then eval", "[batch_norm]") {
  const Shape shape{2, 3, 2, 2};
  for (DType dt : {DType::Float64, DType::Float32}) {
    const double tol = dt == DType::Float64 ? 1e-9 : 2e-5;
    Tensor x1 = formula(
        shape, [](int64_t i) { return 2.0 * std::sin(0.37 * i + 0.1) + 0.5; }, dt);
    Tensor x2 = formula(
        shape, [](int64_t i) { return 1.5 * std::cos(0.23 * i) - 0.2; }, dt);
    Tensor cot = formula(
        shape, [](int64_t i) { return std::cos(0.5 * i); }, dt);
    Variable w(formula(
                   {3}, [](int64_t i) { return 1.0 + 0.1 * i; }, dt),
               true);
    Variable b(formula(
                   {3}, [](int64_t i) { return 0.2 * i - 0.1; }, dt),
               true);
    Tensor rm = zeros({3}, dt), rv = ones({3}, dt);
    batch_norm(Variable(x1), w, b, rm, rv, true);
    Variable xv(x2, true);
    Variable y = batch_norm(xv, w, b, rm, rv, true, 0.1, 1e-5);
    y.backward(cot);
    require_all_close(
        y.data(), {0.992960165326,  0.964967234348,  0.882462750989,  0.7497919962,    1.77777334543,  1.346169557,
                   0.867510833732,  0.367006795128,  0.0375986682787, -0.527850384214, -1.02629155745, -1.4314733455,
                   -1.05660374009,  -1.12087248381,  -1.12979742146,  -1.0829085015,   -1.42502824559, -1.11989805289,
                   -0.731941894356, -0.281592338466, 0.446375649519,  1.05628701698,   1.64977416654,  2.19557978585},
        tol);
    require_all_close(rm, {-0.00549789444579, 0.0942321861156, 0.0431290848568}, tol);
    require_all_close(rv, {1.26732467692, 0.941146928044, 1.06821931049}, tol);
    require_all_close(
        xv.grad(),
        {0.259253396405,  0.171472533208,  -0.0705755474075, -0.408210565328, 0.604840102564, 0.00370245738129,
         -0.315762154312, -0.283812103466, -1.03629500524,   -0.322773149329, 0.490615745846, 1.19268144529,
         0.155851473566,  0.165128720099,  0.00698992264817, -0.27990993319,  0.70440017798,  0.066860506921,
         -0.34813010462,  -0.432098882449, -1.31342907975,   -0.592637709359, 0.332371839735, 1.24946591281},
        tol);
    require_all_close(w.grad(), {-0.414055684074, -0.556023290658, -0.681319056209}, tol);
    require_all_close(b.grad(), {5.52591755398, -5.79955399056, -0.698985460871}, tol);
    Variable ye = batch_norm(Variable(x1), w, b, rm, rv, false, 0.1, 1e-5);
    require_all_close(
        ye.data(), {0.52639015271,  1.15361619412,  1.67194503555,  2.01122329991,   2.82772184594,    2.66671759047,
                    2.22059066635,  1.54972225986,  1.01970293782,  0.169985604282,  -0.590341292621,  -1.15837107424,
                    -1.40121712362, -1.39297489551, -1.14896070999, -0.702200742356, -0.0298811195513, 0.801852965505,
                    1.60086506041,  2.25901262646,  3.00856773623,  3.1522394492,    2.98166753129,    2.51993809139},
        tol);
  }
}

TEST_CASE("batch_norm: gradients in training mode", "[batch_norm][grad]") {
  using test::random_double;
  const auto bn_train = [](const std::vector<Variable>& v) {
    return batch_norm(v[0], v[1], v[2], Tensor(), Tensor(), true, 0.1, 1e-5);
  };
  SECTION("[N, C]") {
    REQUIRE_GRADCHECK(bn_train, {random_double({6, 4}, 1), random_double({4}, 2), random_double({4}, 3)});
  }
  SECTION("[N, C, H, W] with running stats") {
    Tensor rm = zeros({3}, DType::Float64), rv = ones({3}, DType::Float64);
    const auto f = [&](const std::vector<Variable>& v) { return batch_norm(v[0], v[1], v[2], rm, rv, true); };
    REQUIRE_GRADCHECK(f, {random_double({2, 3, 3, 4}, 4), random_double({3}, 5), random_double({3}, 6)});
  }
  SECTION("non-contiguous input") {
    // [N, C, H, W] seen through a permuted copy, and [N, C] as a transposed view.
    REQUIRE_GRADCHECK(
        bn_train, {test::non_contiguous(random_double({3, 2, 2, 3}, 7)), random_double({2}, 8), random_double({2}, 9)});
    REQUIRE_GRADCHECK(bn_train, {random_double({5, 3}, 10).t(), random_double({5}, 11), random_double({5}, 12)});
  }
  SECTION("long rows (S >= 64), and rows cut into several runs without affine") {
    // See Note [Batch norm passes] in tensor/cpu/batch_norm.cpp for the two reduction paths.
    REQUIRE_GRADCHECK(bn_train, {random_double({2, 2, 8, 9}, 13), random_double({2}, 14), random_double({2}, 15)});
    const auto f = [](const std::vector<Variable>& v) {
      return batch_norm(v[0], Variable(), Variable(), Tensor(), Tensor(), true);
    };
    REQUIRE_GRADCHECK(f, {random_double({1, 1, 1030}, 16)});
  }
}

TEST_CASE("batch_norm: gradients in eval mode", "[batch_norm][grad]") {
  Tensor rm = test::random_double({3}, 20), rv = test::random_double({3}, 21, 0.5, 2.0);
  const auto f = [&](const std::vector<Variable>& v) { return batch_norm(v[0], v[1], v[2], rm, rv, false); };
  REQUIRE_GRADCHECK(
      f, {test::random_double({4, 3, 2, 2}, 22), test::random_double({3}, 23), test::random_double({3}, 24)});
  REQUIRE_GRADCHECK(f, {test::non_contiguous(test::random_double({4, 3, 5}, 25)), test::random_double({3}, 26),
                        test::random_double({3}, 27)});
}

TEST_CASE("batch_norm: strided running stats are updated in place", "[batch_norm]") {
  Tensor stats = zeros({3, 2});  // column 0 = mean, column 1 = var: both stride 2
  Tensor rm = stats.select(1, 0), rv = stats.select(1, 1);
  rv.fill_(1.0);
  // Channels {1, 3}, {2, 6}, {3, 9}: means 2, 4, 6; unbiased vars 2, 8, 18.
  Tensor x = from_vector<float>({1, 2, 3, 3, 6, 9}, {2, 3});
  batch_norm(x, Tensor(), Tensor(), rm, rv, true, 0.5, 1e-5);
  require_all_close(stats, {1.0, 1.5, 2.0, 4.5, 3.0, 9.5}, 1e-6);
}

TEST_CASE("batch_norm: results do not depend on the thread count", "[batch_norm]") {
  // Long rows (S = 81), short rows (S = 4) and [N, C] take different reduction paths.
  for (const Shape& shape : {Shape{16, 64, 9, 9}, Shape{16, 300, 2, 2}, Shape{32, 3000}}) {
    INFO("shape " << shape);
    Generator gen(7);
    const int64_t c = shape[1];
    Tensor x = randn(shape, gen), w = randn({c}, gen), b = randn({c}, gen), gy = randn(shape, gen);
    const int saved = get_num_threads();
    std::vector<std::vector<float>> outs[2];
    for (int t = 1; t <= 2; ++t) {
      set_num_threads(t);
      Tensor rm = zeros({c}), rv = ones({c});
      BatchNormResult r = batch_norm(x, w, b, rm, rv, true, 0.1, 1e-5);
      BatchNormGrads g = batch_norm_backward(gy, x, w, r.save_mean, r.save_invstd, true, 1e-5, {true, true, true});
      for (const Tensor& o : {r.y, rm, rv, g.grad_input, g.grad_weight, g.grad_bias})
        outs[t - 1].push_back(to_vector<float>(o));
    }
    set_num_threads(saved);
    REQUIRE(outs[0] == outs[1]);
  }
}

TEST_CASE("batch_norm: float32 agrees with float64 on both reduction paths", "[batch_norm]") {
  for (const Shape& shape : {Shape{4, 8, 30, 40}, Shape{64, 24}}) {
    INFO("shape " << shape);
    const int64_t c = shape[1];
    // An offset mean makes the centred variance matter.
    Tensor x = test::random_double(shape, 40, 9.0, 11.0), w = test::random_double({c}, 41);
    Tensor gy = test::random_double(shape, 42);
    BatchNormResult r64 = batch_norm(x, w, Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5);
    BatchNormResult r32 =
        batch_norm(x.to(DType::Float32), w.to(DType::Float32), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5);
    REQUIRE(allclose(r32.y.to(DType::Float64), r64.y, 1e-4, 1e-4));
    BatchNormGrads g64 = batch_norm_backward(gy, x, w, r64.save_mean, r64.save_invstd, true, 1e-5, {true, true, true});
    BatchNormGrads g32 = batch_norm_backward(gy.to(DType::Float32), x.to(DType::Float32), w.to(DType::Float32),
                                             r32.save_mean, r32.save_invstd, true, 1e-5, {true, true, true});
    REQUIRE(allclose(g32.grad_input.to(DType::Float64), g64.grad_input, 1e-3, 1e-4));
    REQUIRE(allclose(g32.grad_weight.to(DType::Float64), g64.grad_weight, 1e-3, 1e-3));
    REQUIRE(allclose(g32.grad_bias.to(DType::Float64), g64.grad_bias, 1e-4, 1e-3));
  }
}

TEST_CASE("batch_norm: errors name the op and shapes", "[batch_norm][errors]") {
  Tensor x = zeros({4, 3, 2});
  REQUIRE_THROWS_WITH(batch_norm(x, zeros({4}), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5),
                      Catch::Contains("batch_norm") && Catch::Contains("weight") && Catch::Contains("[4]"));
  REQUIRE_THROWS_WITH(batch_norm(zeros({1, 3}), Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5),
                      Catch::Contains("more than 1 value per channel"));
  REQUIRE_THROWS_WITH(batch_norm(zeros({4}), Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5),
                      Catch::Contains("batch_norm") && Catch::Contains("[N, C]"));
  REQUIRE_THROWS_WITH(batch_norm(x, Tensor(), Tensor(), zeros({3}), Tensor(), false, 0.1, 1e-5),
                      Catch::Contains("both"));
  REQUIRE_THROWS_WITH(batch_norm(x, zeros({3}, DType::Float64), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5),
                      Catch::Contains("float64"));
}

namespace {
// A float tensor's values widened to float (exact for the 16-bit dtypes).
std::vector<float> values(const Tensor& t) { return to_vector<float>(t.to(DType::Float32)); }
}  // namespace

TEST_CASE("batch_norm: a 16-bit input with float32 parameters is the float32 kernel on the widened input, rounded once",
          "[batch_norm][half]") {
  // S = 25 (short rows), S = 72 (long rows; Note [Batch norm passes]) and [N, C].
  for (DType h : {DType::Float16, DType::BFloat16}) {
    for (const Shape& shape : {Shape{4, 3, 5, 5}, Shape{2, 3, 8, 9}, Shape{16, 5}}) {
      for (bool affine : {true, false}) {
        INFO(h << " " << shape << (affine ? " affine" : " no affine"));
        Generator gen(11);
        const int64_t c = shape[1];
        const Tensor xh = add(mul(randn(shape, gen), 2.0), 0.5).to(h), x32 = xh.to(DType::Float32);
        const Tensor gy = randn(shape, gen).to(h);
        const Tensor w = affine ? randn({c}, gen) : Tensor(), b = affine ? randn({c}, gen) : Tensor();
        Tensor rm = mul(randn({c}, gen), 0.1), rv = add(rand({c}, gen), 0.5);
        Tensor rm32 = rm.clone(), rv32 = rv.clone();
        for (bool training : {true, false}) {
          INFO((training ? "training" : "eval"));
          const BatchNormResult r = batch_norm(xh, w, b, rm, rv, training, 0.1, 1e-5);
          const BatchNormResult ref = batch_norm(x32, w, b, rm32, rv32, training, 0.1, 1e-5);
          REQUIRE(r.y.dtype() == h);
          REQUIRE(r.save_mean.dtype() == DType::Float32);
          REQUIRE(r.save_invstd.dtype() == DType::Float32);
          REQUIRE(values(r.y) == values(ref.y.to(h)));
          REQUIRE(values(r.save_mean) == values(ref.save_mean));
          REQUIRE(values(r.save_invstd) == values(ref.save_invstd));
          REQUIRE(values(rm) == values(rm32));  // the running update, in float32
          REQUIRE(values(rv) == values(rv32));

          const BatchNormGrads g =
              batch_norm_backward(gy, xh, w, r.save_mean, r.save_invstd, training, 1e-5, {true, affine, affine});
          const BatchNormGrads gref = batch_norm_backward(gy.to(DType::Float32), x32, w, ref.save_mean, ref.save_invstd,
                                                          training, 1e-5, {true, affine, affine});
          REQUIRE(g.grad_input.dtype() == h);
          REQUIRE(values(g.grad_input) == values(gref.grad_input.to(h)));
          if (!affine) continue;
          REQUIRE(g.grad_weight.dtype() == DType::Float32);
          REQUIRE(g.grad_bias.dtype() == DType::Float32);
          REQUIRE(values(g.grad_weight) == values(gref.grad_weight));
          REQUIRE(values(g.grad_bias) == values(gref.grad_bias));
          // Parameter gradients alone (no input gradient).
          const BatchNormGrads gp =
              batch_norm_backward(gy, xh, w, r.save_mean, r.save_invstd, training, 1e-5, {false, true, true});
          REQUIRE_FALSE(gp.grad_input.defined());
          REQUIRE(values(gp.grad_weight) == values(gref.grad_weight));
          REQUIRE(values(gp.grad_bias) == values(gref.grad_bias));
        }
      }
    }
  }
}

TEST_CASE("batch_norm: 16-bit parameters are the float32 ones widened, and the results rounded once",
          "[batch_norm][half]") {
  // Note [16-bit batch norm parameters]: a model converted wholly with .to(bfloat16).
  for (DType h : {DType::Float16, DType::BFloat16}) {
    for (const Shape& shape : {Shape{4, 3, 5, 5}, Shape{16, 5}}) {
      INFO(h << " " << shape);
      Generator gen(21);
      const int64_t c = shape[1];
      const Tensor x = add(mul(randn(shape, gen), 2.0), 0.5).to(h), gy = randn(shape, gen).to(h);
      const Tensor w = randn({c}, gen).to(h), b = randn({c}, gen).to(h);
      Tensor rm = mul(randn({c}, gen), 0.1).to(h), rv = add(rand({c}, gen), 0.5).to(h);
      Tensor rm32 = rm.to(DType::Float32), rv32 = rv.to(DType::Float32);
      const Tensor w32 = w.to(DType::Float32), b32 = b.to(DType::Float32);
      for (bool training : {true, false}) {
        INFO((training ? "training" : "eval"));
        const BatchNormResult r = batch_norm(x, w, b, rm, rv, training, 0.1, 1e-5);
        const BatchNormResult ref = batch_norm(x, w32, b32, rm32, rv32, training, 0.1, 1e-5);
        REQUIRE(r.y.dtype() == h);
        REQUIRE(r.save_mean.dtype() == DType::Float32);
        REQUIRE(values(r.y) == values(ref.y));
        REQUIRE(values(r.save_invstd) == values(ref.save_invstd));
        REQUIRE(rm.dtype() == h);
        REQUIRE(values(rm) == values(rm32.to(h)));  // updated in float32, rounded once
        REQUIRE(values(rv) == values(rv32.to(h)));
        rm32 = rm.to(DType::Float32), rv32 = rv.to(DType::Float32);  // the next round starts equal

        const BatchNormGrads g =
            batch_norm_backward(gy, x, w, r.save_mean, r.save_invstd, training, 1e-5, {true, true, true});
        const BatchNormGrads gref =
            batch_norm_backward(gy, x, w32, ref.save_mean, ref.save_invstd, training, 1e-5, {true, true, true});
        REQUIRE(g.grad_weight.dtype() == h);
        REQUIRE(g.grad_bias.dtype() == h);
        REQUIRE(values(g.grad_input) == values(gref.grad_input));
        REQUIRE(values(g.grad_weight) == values(gref.grad_weight.to(h)));
        REQUIRE(values(g.grad_bias) == values(gref.grad_bias.to(h)));
      }
      // Strided 16-bit running statistics are updated in place, too.
      Tensor stats = stack({zeros({c}), ones({c})}, 1).to(h);
      Tensor smean = stats.select(1, 0), svar = stats.select(1, 1);
      batch_norm(x, w, b, smean, svar, true, 0.5, 1e-5);
      Tensor m32 = zeros({c}), v32 = ones({c});
      batch_norm(x, w32, b32, m32, v32, true, 0.5, 1e-5);
      REQUIRE(values(stats.select(1, 0)) == values(m32.to(h)));
      REQUIRE(values(stats.select(1, 1)) == values(v32.to(h)));
    }
  }
}

TEST_CASE("batch_norm: a 16-bit input takes float32 parameters, or all of them in its dtype",
          "[batch_norm][half][errors]") {
  const Tensor x = zeros({4, 3, 2}, DType::BFloat16);
  REQUIRE_THROWS_WITH(batch_norm(x, zeros({3}, DType::BFloat16), zeros({3}), Tensor(), Tensor(), true, 0.1, 1e-5),
                      Catch::Contains("batch_norm: bias [3] is float32") && Catch::Contains("[4, 3, 2]") &&
                          Catch::Contains("needs bfloat16 bias"));
  REQUIRE_THROWS_WITH(batch_norm(x, zeros({3}, DType::Float16), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5),
                      Catch::Contains("weight") && Catch::Contains("float16") && Catch::Contains("needs float32"));
  REQUIRE_THROWS_WITH(batch_norm(x, Tensor(), Tensor(), zeros({3}, DType::Float16), ones({3}), true, 0.1, 1e-5),
                      Catch::Contains("running_mean") && Catch::Contains("float16") && Catch::Contains("float32"));
  REQUIRE_THROWS_WITH(
      batch_norm(zeros({4, 3}, DType::Float64), zeros({3}), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5),
      Catch::Contains("float64") && Catch::Contains("[4, 3]"));
  const BatchNormResult r = batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5);
  REQUIRE_THROWS_WITH(batch_norm_backward(x, x, Tensor(), r.save_mean.to(DType::BFloat16), r.save_invstd, true, 1e-5,
                                          {true, false, false}),
                      Catch::Contains("save_mean") && Catch::Contains("float32"));
  REQUIRE_THROWS_WITH(batch_norm_backward(x.to(DType::Float32), x, Tensor(), r.save_mean, r.save_invstd, true, 1e-5,
                                          {true, false, false}),
                      Catch::Contains("grad_y") && Catch::Contains("bfloat16"));
}

TEST_CASE("conv -> BatchNorm2d -> ReLU -> max pool under bf16 autocast keeps bf16 activations and trains",
          "[batch_norm][half][autocast]") {
  manual_seed(5);
  nn::Conv2d conv(nn::Conv2dOptions(3, 8, 3).padding(1));
  nn::BatchNorm2d bn(8);
  nn::Linear fc(8 * 4 * 4, 10);
  const auto bn32 = std::dynamic_pointer_cast<nn::BatchNorm2d>(bn.clone());
  Generator gen(12);
  const Tensor x = randn({4, 3, 8, 8}, gen);
  const Tensor labels = from_vector<int64_t>({1, 3, 5, 7}, {4});
  const auto block = [&](nn::Module& norm, std::optional<DType> low) {
    std::optional<autocast::Guard> guard;
    if (low) guard.emplace(*low);
    const Variable c = conv.forward(Variable(x));
    const Variable n = norm.forward(c);
    const Variable p = max_pool2d(relu(n), 2);
    if (low) {  // BN, ReLU and the pool stay 16-bit (no float32 copy between the convs)
      REQUIRE(c.dtype() == *low);
      REQUIRE(n.dtype() == *low);
      REQUIRE(p.dtype() == *low);
    }
    return cross_entropy(fc.forward(p.reshape({4, -1})), labels);
  };
  const double loss32 = block(*bn32, std::nullopt).data().item();
  Variable loss = block(bn, DType::BFloat16);
  REQUIRE(loss.dtype() == DType::Float32);
  REQUIRE(loss.data().item() == Approx(loss32).epsilon(3e-2));

  // Running statistics: float32, updated as in the float32 run (from bf16 conv outputs).
  REQUIRE(bn.running_mean.dtype() == DType::Float32);
  REQUIRE(bn.num_batches_tracked.data().item() == 1.0);
  REQUIRE(allclose(bn.running_mean.data(), bn32->running_mean.data(), 2e-2, 2e-3));
  REQUIRE(allclose(bn.running_var.data(), bn32->running_var.data(), 2e-2, 2e-3));

  std::vector<Variable> params = conv.parameters();
  for (const Variable& p : bn.parameters()) params.push_back(p);
  for (const Variable& p : fc.parameters()) params.push_back(p);
  const Tensor w_before = bn.weight.data().clone();
  loss.backward();
  for (const Variable& p : params) {
    REQUIRE(p.dtype() == DType::Float32);
    REQUIRE(p.grad().dtype() == DType::Float32);
    REQUIRE(std::isfinite(sum(p.grad()).item()));
  }
  optim::SGD opt(params, optim::SGDOptions(0.05));
  opt.step();
  REQUIRE_FALSE(allclose(bn.weight.data(), w_before, 0, 0));
  REQUIRE(block(bn, DType::BFloat16).data().item() < loss.data().item());  // one step on the batch lowers its loss
  REQUIRE(bn.num_batches_tracked.data().item() == 2.0);
}

TEST_CASE("batch_norm: double backward of a 16-bit input keeps each input's dtype",
          "[batch_norm][half][double_backward]") {
  for (DType pdt : {DType::Float32, DType::BFloat16}) {  // float32 or 16-bit parameters
    for (bool training : {true, false}) {
      INFO(pdt << (training ? " training" : " eval"));
      Generator gen(13);
      const Tensor xh = randn({4, 3, 2, 2}, gen).to(DType::BFloat16),
                   cot = randn({4, 3, 2, 2}, gen).to(DType::BFloat16);
      Variable x(xh, true), w(add(randn({3}, gen), 1.0).to(pdt), true), b(randn({3}, gen).to(pdt), true);
      Tensor rm = zeros({3}, pdt), rv = ones({3}, pdt);
      const Variable y = batch_norm(x, w, b, rm, rv, training);
      const std::vector<Variable> g =
          autograd::grad({y}, {x, w, b}, {Variable(cot)}, std::nullopt, /*create_graph=*/true);
      REQUIRE(g[0].dtype() == DType::BFloat16);
      REQUIRE(g[1].dtype() == pdt);
      REQUIRE(g[2].dtype() == pdt);
      // x reaches the loss through the weight gradient in both modes.
      const Variable g1 = g[1].to(DType::Float32);
      add(sum(mul(g[0].to(DType::Float32), g[0].to(DType::Float32))), sum(mul(g1, g1))).backward();
      REQUIRE(x.grad().defined());
      REQUIRE(x.grad().dtype() == DType::BFloat16);
      REQUIRE(w.grad().dtype() == pdt);
    }
  }
}

TEST_CASE("a conv -> BatchNorm2d -> Linear model converted wholly to bfloat16 trains like its float32 twin",
          "[batch_norm][half]") {
  manual_seed(6);
  nn::Sequential net;
  net.push_back(std::make_shared<nn::Conv2d>(nn::Conv2dOptions(3, 8, 3).padding(1)));
  net.push_back(std::make_shared<nn::BatchNorm2d>(8));
  net.push_back(std::make_shared<nn::ReLU>());
  net.push_back(std::make_shared<nn::Flatten>());
  net.push_back(std::make_shared<nn::Linear>(8 * 6 * 6, 10));
  const auto net32 = net.clone();
  net.to(DType::BFloat16);
  for (const auto& [name, v] : net.named_buffers())
    if (is_floating(v.dtype())) REQUIRE(v.dtype() == DType::BFloat16);
  Generator gen(14);
  const Tensor x = randn({8, 3, 6, 6}, gen), labels = from_vector<int64_t>({0, 1, 2, 3, 4, 5, 6, 7}, {8});
  const auto loss_of = [&](nn::Module& m, DType dt) {
    return cross_entropy(m.forward(Variable(x.to(dt))).to(DType::Float32), labels);
  };
  optim::SGD opt(net.parameters(), optim::SGDOptions(0.1).momentum(0.9));
  optim::SGD opt32(net32->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  double first = 0, last = 0;
  for (int step = 0; step < 5; ++step) {
    opt.zero_grad(), opt32.zero_grad();
    Variable loss = loss_of(net, DType::BFloat16), loss32 = loss_of(*net32, DType::Float32);
    REQUIRE(loss.data().item() == Approx(loss32.data().item()).epsilon(5e-2));
    loss.backward(), loss32.backward();
    for (const Variable& p : net.parameters()) REQUIRE(p.grad().dtype() == DType::BFloat16);
    opt.step(), opt32.step();
    (step == 0 ? first : last) = loss.data().item();
  }
  REQUIRE(last < first);
  const auto& bn = dynamic_cast<nn::BatchNorm2d&>(*net[1]);
  const auto& bn32 = dynamic_cast<nn::BatchNorm2d&>(*net32->children()[1]);
  REQUIRE(bn.running_var.dtype() == DType::BFloat16);
  REQUIRE(allclose(bn.running_var.data().to(DType::Float32), bn32.running_var.data(), 3e-2, 1e-2));
}
