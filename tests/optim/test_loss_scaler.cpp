// LossScaler (torch.cuda.amp.GradScaler's rules): scaled loss and unscaled
// gradients, a step skipped on an injected inf/NaN with the scale halved,
// growth after growth_interval clean steps, inf and NaN in different
// parameters and finite gradients whose sums overflow, state save/restore, a float16
// gradient that flushes to zero without scaling, and an MLP trained under
// float16 autocast with a scaler (from 2^16, and from 2^24 where it backs off).
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include <ddl/ddl.h>

using namespace ddl;

namespace {
// loss = sum(c * w^2) on w = [1, -2], c = [1, 3]: grad = 2 c w = [2, -12].
Variable quadratic_loss(const Variable& w) { return sum(mul(Variable(from_vector<double>({1, 3}, {2})), mul(w, w))); }
}  // namespace

TEST_CASE("scale, unscale and step give the unscaled update", "[loss_scaler]") {
  Variable w(from_vector<double>({1, -2}, {2}), true);
  optim::SGD opt({w}, optim::SGDOptions{.lr = 0.1});
  optim::LossScaler scaler;
  REQUIRE(scaler.get_scale() == 65536.0);
  const Variable loss = quadratic_loss(w);
  const Variable scaled = scaler.scale(loss);
  REQUIRE(scaled.data().item() == loss.data().item() * 65536.0);
  scaled.backward();
  REQUIRE(to_vector<double>(w.grad()) == std::vector<double>{2 * 65536.0, -12 * 65536.0});
  REQUIRE(scaler.step(opt));
  REQUIRE(to_vector<double>(w.grad()) == std::vector<double>{2, -12});
  const std::vector<double> stepped = to_vector<double>(w.data());  // the SGD step on the unscaled gradient
  REQUIRE(stepped[0] == Approx(1 - 0.1 * 2).epsilon(1e-14));
  REQUIRE(stepped[1] == Approx(-2 + 0.1 * 12).epsilon(1e-14));
  scaler.update();
  REQUIRE(scaler.get_scale() == 65536.0);
  REQUIRE(scaler.growth_tracker() == 1);
  // unscale_ twice without update() is a mistake.
  opt.zero_grad();
  scaler.scale(quadratic_loss(w)).backward();
  scaler.unscale_(opt);
  REQUIRE_THROWS_WITH(scaler.unscale_(opt), Catch::Contains("already called"));
}

TEST_CASE("an inf or NaN gradient skips the step and halves the scale", "[loss_scaler]") {
  for (double bad : {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    Variable w(from_vector<float>({1, -2}, {2}), true), v(from_vector<float>({0.5f}, {1}), true);
    optim::SGD opt({w, v}, optim::SGDOptions{.lr = 0.1});
    optim::LossScaler scaler(optim::LossScalerOptions{.init_scale = 1024.0, .growth_interval = 3});
    // Two clean steps: the tracker counts them.
    for (int i = 0; i < 2; ++i) {
      opt.zero_grad();
      scaler.scale(add(quadratic_loss(w.to(DType::Float64)), sum(mul(v, v)).to(DType::Float64))).backward();
      REQUIRE(scaler.step(opt));
      scaler.update();
    }
    REQUIRE(scaler.growth_tracker() == 2);
    const std::vector<double> before = to_vector<double>(w.data()), v_before = to_vector<double>(v.data());
    // The injected overflow: one element of one gradient.
    opt.zero_grad();
    scaler.scale(add(quadratic_loss(w.to(DType::Float64)), sum(mul(v, v)).to(DType::Float64))).backward();
    v.grad().fill_(bad);
    REQUIRE_FALSE(scaler.step(opt));
    REQUIRE(to_vector<double>(w.data()) == before);  // no parameter moved
    REQUIRE(to_vector<double>(v.data()) == v_before);
    scaler.update();
    REQUIRE(scaler.get_scale() == 512.0);
    REQUIRE(scaler.growth_tracker() == 0);
    // Three clean steps in a row double it again.
    for (int i = 0; i < 3; ++i) {
      opt.zero_grad();
      scaler.scale(add(quadratic_loss(w.to(DType::Float64)), sum(mul(v, v)).to(DType::Float64))).backward();
      REQUIRE(scaler.step(opt));
      scaler.update();
    }
    REQUIRE(scaler.get_scale() == 1024.0);
  }
}

TEST_CASE("inf or NaN in any of several gradients skips the step; large finite ones do not", "[loss_scaler]") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  struct Case {
    std::vector<float> ga, gb, gc;
    bool steps;
  };
  // The check folds every gradient into one flag (Note [One sync per unscale] in
  // optim/loss_scaler.cpp); a flag raised by overflowing sums is confirmed per gradient.
  const std::vector<Case> cases = {
      {{1, inf}, {2, 3}, {nan, 4}, false},               // inf and NaN in different parameters
      {{1, 2}, {-inf, 3}, {5, 4}, false},                // -inf in the middle one
      {{1, 2}, {2, 3}, {5, nan}, false},                 // NaN in the last one
      {{inf, -inf}, {2, 3}, {5, 4}, false},              // inf and -inf in one: their sum is NaN
      {{3e38f, 3e38f}, {-3e38f, -3e38f}, {1, 2}, true},  // finite, though their sums overflow float32
      {{1, 2}, {2, 3}, {5, 4}, true},
  };
  for (const Case& k : cases) {
    std::vector<Variable> p{Variable(zeros({2}), true), Variable(zeros({2}), true), Variable(zeros({2}), true)};
    optim::SGD opt(p, optim::SGDOptions{.lr = 1.0});
    optim::LossScaler scaler(optim::LossScalerOptions{.init_scale = 1.0, .growth_interval = 2});
    for (int step = 0; step < 2; ++step) {
      opt.zero_grad();
      scaler.scale(add(add(sum(p[0]), sum(p[1])), sum(p[2]))).backward();
      const std::vector<std::vector<float>> gs = {k.ga, k.gb, k.gc};
      for (int i = 0; i < 3; ++i) p[i].grad().copy_(from_vector<float>(gs[i], {2}));
      REQUIRE(scaler.step(opt) == k.steps);
      scaler.update();
      for (int i = 0; i < 3; ++i)
        REQUIRE(to_vector<float>(p[i].data())[1] == (k.steps ? -(step + 1.0f) * gs[i][1] : 0.0f));  // float SGD
    }
    // Two skips halve the scale twice; two clean steps (growth_interval) double it once.
    REQUIRE(scaler.get_scale() == (k.steps ? 2.0 : 0.25));
    REQUIRE(scaler.growth_tracker() == 0);
  }
}

TEST_CASE("state saves and restores the schedule; disabled passes through", "[loss_scaler]") {
  optim::LossScaler a(optim::LossScalerOptions{.init_scale = 8.0, .growth_factor = 4.0, .growth_interval = 5});
  Variable w(from_vector<double>({1, -2}, {2}), true);
  optim::SGD opt({w}, optim::SGDOptions{.lr = 0.1});
  a.scale(quadratic_loss(w)).backward();
  a.step(opt);
  a.update();
  optim::LossScaler b;
  b.load_state(a.state());
  REQUIRE(b.get_scale() == 8.0);
  REQUIRE(b.growth_tracker() == 1);
  REQUIRE(b.state() == a.state());
  REQUIRE_THROWS_WITH(b.load_state({{"scale", 2.0}}), Catch::Contains("missing 'growth_factor'"));
  optim::LossScaler off(optim::LossScalerOptions{.enabled = false});
  REQUIRE(off.get_scale() == 1.0);
  REQUIRE_THROWS_WITH(optim::LossScaler(optim::LossScalerOptions{.backoff_factor = 1.5}),
                      Catch::Contains("backoff_factor"));
}

TEST_CASE("float16 gradients below 2^-24 flush to zero unless the loss is scaled", "[loss_scaler]") {
  // y = w x with w a float32 master weight used in float16: d loss / dw = 1e-8 * x, below half's smallest subnormal.
  const Tensor x = full({4}, 1.0, TensorOptions(DType::Float16));
  auto grad_of_w = [&](double scale) {
    Variable w(from_vector<float>({0.5f}, {1}), true);
    const Variable y = mul(w.to(DType::Float16), Variable(x));
    mul(sum(y).to(DType::Float32), 1e-8 * scale).backward();
    return w.grad().item() / scale;
  };
  REQUIRE(grad_of_w(1.0) == 0.0);
  REQUIRE(grad_of_w(65536.0) == Approx(4e-8).epsilon(1e-2));
}

namespace {

// A 2-layer MLP on 48 samples of 12 features (class: the largest of three feature
// sums), full-batch SGD; float16 autocast with a LossScaler when `fp16`. Returns
// the loss of each step; counts skipped steps.
std::vector<double> train_mlp(bool fp16, double init_scale, int* skipped, std::vector<Variable>* params_out,
                              double* final_scale = nullptr) {
  Generator g(17);
  const Tensor x = randn({48, 12}, g);
  const Tensor y = argmax(sum(x.reshape({48, 3, 4}), {2}), 1);
  Generator init(23);
  std::vector<Variable> params{Variable(mul(randn({32, 12}, init), 0.3), true), Variable(zeros({32}), true),
                               Variable(mul(randn({3, 32}, init), 0.2), true), Variable(zeros({3}), true)};
  optim::SGD opt(params, optim::SGDOptions{.lr = 0.1, .momentum = 0.9});
  optim::LossScaler scaler(optim::LossScalerOptions{.init_scale = init_scale, .enabled = fp16});
  std::vector<double> losses;
  for (int step = 0; step < 40; ++step) {
    opt.zero_grad();
    Variable loss;
    {
      autocast::Guard guard(DType::Float16, fp16);
      loss = cross_entropy(linear(relu(linear(Variable(x), params[0], params[1])), params[2], params[3]), y);
    }
    scaler.scale(loss).backward();
    if (!scaler.step(opt)) ++*skipped;
    scaler.update();
    losses.push_back(loss.data().item());
  }
  *params_out = params;
  if (final_scale) *final_scale = scaler.get_scale();
  return losses;
}

}  // namespace

TEST_CASE("an MLP trained under float16 autocast with a LossScaler follows the float32 run", "[loss_scaler]") {
  int skipped32 = 0, skipped16 = 0, skipped_big = 0;
  std::vector<Variable> p32, p16, p_big;
  const std::vector<double> l32 = train_mlp(false, 1.0, &skipped32, &p32);
  const std::vector<double> l16 = train_mlp(true, 65536.0, &skipped16, &p16);
  // Starting at 2^24, the scaled gradients overflow float16: steps are skipped and the scale halves until they fit.
  double final_scale = 0;
  const std::vector<double> l_big = train_mlp(true, 16777216.0, &skipped_big, &p_big, &final_scale);
  INFO("float32 " << l32.front() << " -> " << l32.back() << "; float16 " << l16.front() << " -> " << l16.back()
                  << " with " << skipped16 << " skipped steps");
  REQUIRE(skipped32 == 0);
  REQUIRE(l32.back() < 0.5 * l32.front());
  REQUIRE(l16.back() < 0.5 * l16.front());
  REQUIRE(std::abs(l16.back() - l32.back()) < 0.01 + 0.25 * l32.back());
  for (const Variable& p : p16) REQUIRE(p.dtype() == DType::Float32);
  INFO("from 2^24: " << skipped_big << " skipped steps, final scale " << final_scale << ", loss " << l_big.back());
  REQUIRE(skipped_big >= 1);
  REQUIRE(final_scale == 16777216.0 / std::pow(2.0, skipped_big));  // one halving per skipped step (no growth in 40)
  REQUIRE(l_big.back() < 0.5 * l_big.front());
}
