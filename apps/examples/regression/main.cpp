// ddl's version of pytorch/examples' cpp/regression: fit a random degree-4 polynomial
// y = w1 x + w2 x^2 + w3 x^3 + w4 x^4 + b with one Linear(4, 1) layer on the features
// [x, x^2, x^3, x^4], SGD (lr 0.1) and the smooth L1 loss, on fresh random batches
// until the loss is below 1e-3. Prints the learned and the true polynomial and the
// largest coefficient error (the test's check):
//   build/apps/examples/regression --seed 3
#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>

#include <ddl/ddl.h>

using namespace ddl;

namespace {

constexpr int64_t kDegree = 4;

// x: [N] -> features [N, kDegree], columns x, x^2, ..., x^kDegree.
Tensor make_features(const Tensor& x) {
  std::vector<Tensor> powers;
  for (int64_t i = 1; i <= kDegree; ++i) powers.push_back(pow(x.unsqueeze(1), double(i)));
  return cat(powers, 1);
}

// "y = 1.2 x^1 -0.5 x^2 ... + b", the coefficients w: [kDegree] and b: [1].
std::string describe(const Tensor& w, const Tensor& b) {
  std::ostringstream s;
  s << "y = ";
  const std::vector<float> ws = to_vector<float>(w.contiguous()), bs = to_vector<float>(b.contiguous());
  for (int64_t i = 0; i < kDegree; ++i) s << ws[size_t(i)] << " x^" << i + 1 << " ";
  s << "+ " << bs[0];
  return s.str();
}

}  // namespace

int main(int argc, char** argv) try {
  CLI::App app{"ddl's version of pytorch/examples cpp/regression"};
  int64_t seed = 1, batch_size = 32, max_batches = 100000;
  double stop_loss = 1e-3;
  app.add_option("--seed", seed, "seed of the target polynomial and of the batches");
  app.add_option("--batch-size", batch_size, "points per batch")->check(CLI::PositiveNumber);
  app.add_option("--max-batches", max_batches, "give up after this many batches")->check(CLI::PositiveNumber);
  app.add_option("--stop-loss", stop_loss, "stop once a batch's loss is below this")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  manual_seed(static_cast<uint64_t>(seed));
  const auto start = std::chrono::steady_clock::now();
  const Tensor w_target = randn({kDegree, 1}) * 5.0, b_target = randn({1}) * 5.0;
  nn::Linear fc(kDegree, 1);
  const auto sgd_opts = optim::SGDOptions(0.1);
  optim::SGD optimizer(fc.parameters(), sgd_opts);

  double loss = 0;
  int64_t batch = 0;
  while (batch++ < max_batches) {
    const Tensor x = make_features(randn({batch_size}));
    const Tensor y = matmul(x, w_target) + b_target;  // [batch_size, 1]
    optimizer.zero_grad();
    const Variable output = smooth_l1_loss(fc.forward(Variable(x)), Variable(y));
    loss = output.item();
    output.backward();
    optimizer.step();
    if (loss < stop_loss) break;
  }
  const double max_error =
      amax(abs(cat({fc.weight.data().view({-1}) - w_target.view({-1}), fc.bias.data() - b_target}, 0)), {0}).item();
  std::printf("Loss: %g after %lld batches\n", loss, (long long)std::min(batch, max_batches));
  std::printf("==> Learned function:\t%s\n", describe(fc.weight.data().view({-1}), fc.bias.data()).c_str());
  std::printf("==> Actual function:\t%s\n", describe(w_target.view({-1}), b_target).c_str());
  std::printf("max coefficient error: %.6f\n", max_error);
  std::printf("time %.3f s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return loss < stop_loss ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "regression: error: %s\n", e.what());
  return 1;
}
