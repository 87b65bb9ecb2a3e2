// SyncBatchNorm over real processes and Gloo: at 2 and 3 ranks with different batch sizes
// per rank, outputs, input/weight/bias gradients and running statistics equal one process's
// BatchNorm on the concatenated batch; the input gradient matches finite differences of the
// global loss taken across ranks; conversion reaches typed members; DDP with SyncBatchNorm
// trains as one process on the whole batch.
#include <catch2/catch.hpp>

#include "tests/common/dist_fixtures.h"
#include "tests/common/harness.h"
#include <ddl/ddl.h>
#include <ddl/dist/dist.h>
#include <ddl/dist/nn/sync_batch_norm.h>

using namespace ddl;
using namespace ddl::dist;

namespace {

// Largest |a - b| / (|b| + 1e-3).
double max_rel(const Tensor& a, const Tensor& b) {
  const auto va = to_vector<double>(a.to(DType::Float64)), vb = to_vector<double>(b.to(DType::Float64));
  if (va.size() != vb.size()) return 1e300;
  double m = 0;
  for (size_t i = 0; i < va.size(); ++i) m = std::max(m, std::abs(va[i] - vb[i]) / (std::abs(vb[i]) + 1e-3));
  return m;
}

// Rows per rank: different on purpose, one rank with a single row.
std::vector<int64_t> rows_for(int world) {
  return world == 2 ? std::vector<int64_t>{5, 1} : std::vector<int64_t>{3, 6, 2};
}

struct Case {
  Tensor x, cot;  // the whole batch [B, C, *] and the cotangent of y
  Tensor w, b;    // [C]
};
Case make_case(int64_t batch, const Shape& tail, DType dt) {
  Generator g(5);
  Shape s{batch, 3};
  for (int64_t d : tail) s.push_back(d);
  // An offset, so the mean matters; float64 draws rounded to dt.
  Case c{randn(s, g, DType::Float64) * 2.0 + 1.5, randn(s, g, DType::Float64), randn({3}, g, DType::Float64),
         randn({3}, g, DType::Float64)};
  c.x = c.x.to(dt), c.cot = c.cot.to(dt), c.w = c.w.to(dt), c.b = c.b.to(dt);
  return c;
}

std::shared_ptr<nn::BatchNorm> make_bn(int64_t dims, const Case& c) {
  std::shared_ptr<nn::BatchNorm> bn;
  if (dims == 2)
    bn = std::make_shared<nn::BatchNorm2d>(3, 1e-5, 0.3);
  else
    bn = std::make_shared<nn::BatchNorm1d>(3, 1e-5, 0.3);
  bn->to(c.x.dtype());
  bn->weight.data().copy_(c.w);
  bn->bias.data().copy_(c.b);
  return bn;
}

}  // namespace

TEST_CASE("SyncBatchNorm equals one process's BatchNorm on the concatenated batch", "[dist][syncbn]") {
  for (int world : {2, 3})
    for (DType dt : {DType::Float64, DType::Float32})
      for (int64_t dims : {1, 2})
        DYNAMIC_SECTION("world " << world << " " << dtype_name(dt) << " BatchNorm" << dims << "d") {
          test::ParentStoreServer server;
          const int port = server.port();
          // float64 holds the combination to rounding; float32 to its own precision.
          const double tol = dt == DType::Float64 ? 1e-10 : 2e-5;
          auto outs = test::run_processes(world, [&](int rank) {
            const auto rows = rows_for(world);
            int64_t total = 0, first = 0;
            for (int r = 0; r < world; ++r) total += rows[r], first += r < rank ? rows[r] : 0;
            const Shape tail = dims == 2 ? Shape{4, 3} : Shape{};
            const Case c = make_case(total, tail, dt);

            // Reference: one BatchNorm on the whole batch, two training steps.
            auto ref = make_bn(dims, c);
            Variable rx(c.x.clone(), true);
            for (int step = 0; step < 2; ++step) rx.zero_grad(), (ref->forward(rx) * Variable(c.cot)).sum().backward();
            const Tensor ry = ref->forward(Variable(c.x)).data();  // a third step, for y only

            auto pg = test::gloo_group(port, rank, world);
            auto bn = make_bn(dims, c);
            convert_sync_batchnorm(bn, pg);
            DIST_EXPECT(count_sync_batchnorm(*bn) == 1, "not converted");
            Variable x(c.x.narrow(0, first, rows[rank]).clone(), true);
            const Tensor cot = c.cot.narrow(0, first, rows[rank]);
            for (int step = 0; step < 2; ++step) x.zero_grad(), (bn->forward(x) * Variable(cot)).sum().backward();
            const Tensor y = bn->forward(Variable(x.data())).data();

            DIST_EXPECT(max_rel(y, ry.narrow(0, first, rows[rank])) < tol, "output: ", max_rel(y, ry));
            DIST_EXPECT(max_rel(x.grad(), rx.grad().narrow(0, first, rows[rank])) < tol, "input gradient ",
                        max_rel(x.grad(), rx.grad().narrow(0, first, rows[rank])));
            // Weight and bias: this rank's share; the group's sum is the whole batch's.
            for (auto [mine, theirs] : {std::pair{bn->weight, ref->weight}, std::pair{bn->bias, ref->bias}}) {
              const Tensor sum = mine.grad().clone();
              pg->all_reduce(sum);
              DIST_EXPECT(max_rel(sum, theirs.grad()) < tol, "parameter gradient ", max_rel(sum, theirs.grad()));
            }
            // Three training forwards: momentum applied three times, unbiased over the group's count.
            DIST_EXPECT(max_rel(bn->running_mean.data(), ref->running_mean.data()) < tol, "running_mean");
            DIST_EXPECT(max_rel(bn->running_var.data(), ref->running_var.data()) < tol, "running_var");
            DIST_EXPECT(bn->num_batches_tracked.data().item<int64_t>() == 3, "num_batches_tracked");
            // Evaluation uses the running statistics locally (no collective): the same as plain BatchNorm.
            bn->eval(), ref->eval();
            DIST_EXPECT(max_rel(bn->forward(Variable(x.data())).data(),
                                ref->forward(Variable(c.x)).data().narrow(0, first, rows[rank])) < tol,
                        "eval output");
          });
          INFO(test::describe(outs));
          REQUIRE(test::all_ok(outs));
        }
}

TEST_CASE("SyncBatchNorm's input gradient matches finite differences of the global loss", "[dist][syncbn]") {
  // The global loss Σ_ranks Σ y_r·c_r; one element on one rank moves every rank's
  // normalisation, so only the group's sums in backward give its derivative.
  test::ParentStoreServer server;
  const int port = server.port();
  const int world = 3;
  auto outs = test::run_processes(world, [&](int rank) {
    const auto rows = rows_for(world);
    int64_t total = 0, first = 0;
    for (int r = 0; r < world; ++r) total += rows[r], first += r < rank ? rows[r] : 0;
    const Case c = make_case(total, {2}, DType::Float64);
    auto pg = test::gloo_group(port, rank, world);
    const Tensor mine = c.x.narrow(0, first, rows[rank]).clone(), cot = c.cot.narrow(0, first, rows[rank]);
    const Variable w(c.w.clone(), true), b(c.b.clone(), true);
    const auto global_loss = [&](const Tensor& xin) {
      Variable y = sync_batch_norm(Variable(xin), w, b, Tensor(), Tensor(), 0.1, 1e-5, pg);
      const Tensor l = (y.data() * cot).sum().reshape({1}).clone();
      pg->all_reduce(l);
      return l.item<double>();
    };
    Variable x(mine.clone(), true);
    (sync_batch_norm(x, w, b, Tensor(), Tensor(), 0.1, 1e-5, pg) * Variable(cot)).sum().backward();
    const double h = 1e-6;
    // An element on rank 0 and one on rank 2: every rank runs each forward.
    for (int owner : {0, 2})
      for (int64_t flat : {int64_t{0}, int64_t{7}, int64_t{11}}) {
        const Tensor plus = mine.clone(), minus = mine.clone();
        if (rank == owner) {
          plus.view({-1})[flat].add_(h);
          minus.view({-1})[flat].add_(-h);
        }
        const double numeric = (global_loss(plus) - global_loss(minus)) / (2 * h);
        if (rank != owner) continue;
        const double analytic = x.grad().view({-1})[flat].item<double>();
        DIST_EXPECT(std::abs(numeric - analytic) < 1e-6 * (1 + std::abs(analytic)), "element ", flat, " of rank ",
                    owner, ": finite difference ", numeric, ", backward ", analytic);
      }
    // The weight is replicated: moving it on every rank moves the global loss by Σ_ranks grad.
    const Tensor gw = w.grad().clone();
    pg->all_reduce(gw);
    for (int64_t k = 0; k < 3; ++k) {
      const Tensor w0 = w.data().clone();
      w.data()[k].add_(h);
      const double lp = global_loss(mine);
      w.data()[k].add_(-2 * h);
      const double lm = global_loss(mine);
      w.data().copy_(w0);
      const double analytic = gw[k].item<double>(), numeric = (lp - lm) / (2 * h);
      DIST_EXPECT(std::abs(numeric - analytic) < 1e-6 * (1 + std::abs(analytic)), "weight ", k, ": finite difference ",
                  numeric, ", backward ", analytic);
    }
  });
  INFO(test::describe(outs));
  REQUIRE(test::all_ok(outs));
}

namespace {
// A model holding its BatchNorm in a typed member, as ResNet's blocks do.
struct Net : nn::Module {
  std::shared_ptr<nn::Conv2d> conv = register_module("conv", std::make_shared<nn::Conv2d>(nn::Conv2dOptions(1, 4, 3)));
  std::shared_ptr<nn::BatchNorm2d> bn = register_module("bn", std::make_shared<nn::BatchNorm2d>(4));
  std::shared_ptr<nn::Sequential> head = register_module(
      "head",
      std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
          std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(4 * 4 * 4, 8),
          std::make_shared<nn::BatchNorm1d>(8), std::make_shared<nn::ReLU>(), std::make_shared<nn::Linear>(8, 3)}));
  Net() : nn::Module("Net") {}
  Variable forward(const Variable& x) override { return head->forward(relu(bn->forward(conv->forward(x)))); }
};
std::shared_ptr<Net> make_net() {
  manual_seed(3);
  return std::make_shared<Net>();
}
std::vector<double> flat_state(const nn::Module& m) {
  std::vector<double> out;
  for (const auto& [n, v] : m.named_state()) {
    if (v.dtype() == DType::Int64) continue;
    const auto p = to_vector<double>(v.data().to(DType::Float64));
    out.insert(out.end(), p.begin(), p.end());
  }
  return out;
}
}  // namespace

TEST_CASE("DDP with SyncBatchNorm trains as one process on the whole batch", "[dist][syncbn]") {
  test::ParentStoreServer server;
  const int port = server.port();
  const int world = 2;
  const int64_t b = 4, steps = 3;
  auto outs = test::run_processes(world, [&](int rank) {
    Generator g(9);
    const Tensor xs = randn({steps * world * b, 1, 6, 6}, g), ys = randint(0, 3, {steps * world * b}, g);
    const auto train = [&](nn::Module& model, nn::Module& inner, int r, int w) {
      optim::SGD opt(inner.parameters(), optim::SGDOptions(0.1).momentum(0.9));
      for (int64_t s = 0; s < steps; ++s) {
        const int64_t at = s * world * b + r * (world * b / w), n = world * b / w;
        Variable loss = cross_entropy(model(Variable(xs.narrow(0, at, n))), ys.narrow(0, at, n));
        opt.zero_grad();
        loss.backward();
        opt.step();
      }
    };
    auto ref = make_net();
    train(*ref, *ref, 0, 1);

    auto pg = test::gloo_group(port, rank, world);
    auto net = make_net();
    convert_sync_batchnorm(net, pg);
    DIST_EXPECT(count_sync_batchnorm(*net) == 2, "converted ", count_sync_batchnorm(*net), " of 2 BatchNorm layers");
    DistributedDataParallel ddp(net, pg);
    train(ddp, *net, rank, world);
    const auto got = flat_state(*net), want = flat_state(*ref);
    double m = 0;
    for (size_t i = 0; i < got.size(); ++i) m = std::max(m, std::abs(got[i] - want[i]) / (std::abs(want[i]) + 1e-3));
    DIST_EXPECT(got.size() == want.size() && m < 1e-4, "parameters and running stats differ by ", m);
  });
  INFO(test::describe(outs));
  REQUIRE(test::all_ok(outs));
}

TEST_CASE("SyncBatchNorm names what it refuses", "[dist][syncbn]") {
  auto pg = std::make_shared<ProcessGroupGloo>(std::make_shared<HashStore>(), 0, 1);
  const Variable w(ones({3})), b(zeros({3}));
  // One value per channel over the group, as PyTorch refuses.
  REQUIRE_THROWS_WITH(sync_batch_norm(Variable(ones({1, 3})), w, b, Tensor(), Tensor(), 0.1, 1e-5, pg),
                      Catch::Contains("more than 1 value per channel"));
  REQUIRE_THROWS_WITH(sync_batch_norm(Variable(ones({4})), w, b, Tensor(), Tensor(), 0.1, 1e-5, pg),
                      Catch::Contains("[N, C, *]"));
  REQUIRE_THROWS_WITH(convert_sync_batchnorm(std::make_shared<nn::BatchNorm1d>(3), nullptr),
                      Catch::Contains("process group is null"));
}
