// How far apart the exact gradient strategies may end (docs/sync.md, "Exactly the
// same? The order of the sum"): each adds the N ranks' gradients in its own order, and
// float addition is commutative but not associative. On 2 ranks there is one sum,
// g0 + g1 = g1 + g0, so allreduce, gather-scatter, ring, param-server and ddp end
// bit-identical after several steps; gather-scatter and param-server both add in rank
// order at rank 0, so they agree bit for bit on any number of ranks; on 3 and 4 ranks one
// step leaves them all within the rounding bound of two orders of an N-term float32 sum,
// which a strategy that lost or doubled a gradient would exceed by orders of magnitude.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>

#include "tests/common/dist_fixtures.h"
#include "tests/common/harness.h"
#include "tests/common/small_cnn.h"
#include <ddl/ddl.h>
#include <ddl/dist/dist.h>

using namespace ddl;
using namespace ddl::dist;

namespace {

const std::vector<std::string> kExact = {"allreduce", "gather-scatter", "ring", "param-server", "ddp"};
constexpr double kLr = 0.1;

std::vector<float> flat_of(const std::vector<Tensor>& ts) {
  std::vector<float> flat;
  for (const Tensor& t : ts) {
    const auto v = to_vector<float>(t.contiguous());
    flat.insert(flat.end(), v.begin(), v.end());
  }
  return flat;
}
std::vector<float> weights_of(const nn::Module& m) {
  std::vector<Tensor> ts;
  for (auto& p : m.parameters()) ts.push_back(p.data());
  return flat_of(ts);
}

// The weights after `steps` SGD steps with `spec` on this rank's shard of a fixed batch;
// `grads`, when given, gets this rank's own first gradient (before any averaging).
std::vector<float> train(const std::string& spec, const std::shared_ptr<ProcessGroup>& pg, int64_t steps,
                         std::vector<float>* grads = nullptr) {
  const int world = pg->size(), rank = pg->rank();
  const int64_t b = 4;
  Generator g(11);
  const Tensor x = randn({steps * world * b, 1, 8, 8}, g), y = randint(0, 3, {steps * world * b}, g);
  auto model = test::make_small_cnn();
  auto sync = make_sync_strategy(spec, model, pg);
  optim::SGD opt(model->parameters(), optim::SGDOptions(kLr).momentum(0.9));
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t begin = (s * world + rank) * b;
    Variable loss = cross_entropy(sync->model().forward(Variable(x.narrow(0, begin, b))), y.narrow(0, begin, b));
    opt.zero_grad();
    loss.backward();
    if (grads && s == 0) {
      std::vector<Tensor> gs;
      for (auto& p : model->parameters()) gs.push_back(p.grad());
      *grads = flat_of(gs);
    }
    sync->after_backward();
    sync->step(opt);
    sync->after_step();
  }
  return weights_of(*model);
}

// Distance from |x| to the next float up: one unit in the last place.
double ulp(float x) {
  const float a = std::abs(x);
  return double(std::nextafter(a, std::numeric_limits<float>::infinity())) - a;
}

}  // namespace

TEST_CASE("on 2 ranks the exact strategies end on the same bits", "[dist][sync]") {
  test::run_ranks(2, [](int, std::shared_ptr<ProcessGroup> pg) {
    const auto first = train(kExact.front(), pg, 4);
    for (const auto& spec : kExact) {
      const auto w = train(spec, pg, 4);
      size_t differ = 0;
      for (size_t i = 0; i < w.size(); ++i) differ += std::memcmp(&w[i], &first[i], sizeof(float)) != 0;
      DIST_EXPECT(w.size() == first.size() && differ == 0, spec, " differs from ", kExact.front(), " in ", differ,
                  " of ", w.size(), " weights after 4 steps on 2 ranks");
    }
  });
}

TEST_CASE("gather-scatter and param-server add in rank order: the same bits on any number of ranks", "[dist][sync]") {
  test::run_ranks(3, [](int, std::shared_ptr<ProcessGroup> pg) {
    const auto hub = train("gather-scatter", pg, 4), server = train("param-server", pg, 4);
    size_t differ = 0;
    for (size_t i = 0; i < hub.size(); ++i) differ += std::memcmp(&hub[i], &server[i], sizeof(float)) != 0;
    DIST_EXPECT(hub.size() == server.size() && differ == 0, "param-server differs from gather-scatter in ", differ,
                " of ", hub.size(), " weights after 4 steps on 3 ranks");
  });
}

TEST_CASE("on 3 and 4 ranks one step of the exact strategies differs by rounding only", "[dist][sync]") {
  for (int world : {3, 4}) {
    DYNAMIC_SECTION("world " << world) {
      test::run_ranks(world, [world](int, std::shared_ptr<ProcessGroup> pg) {
        std::vector<float> mine;
        const auto base = train(kExact.front(), pg, 1, &mine);
        // Every rank's own gradient: S = sum of |g_r| and the exact mean, per weight.
        const int64_t n = static_cast<int64_t>(mine.size());
        const Tensor all = zeros({world * n});
        pg->all_gather(all, from_vector(mine));
        const auto g = to_vector<float>(all);
        // Two float32 sums of the same N terms in different orders differ by at most
        // 2(N-1)u·S (Higham, Accuracy and Stability of Numerical Algorithms, 2002, §4.2,
        // to first order); dividing by N, the step's lr·g and the rounding of w - lr·g add
        // a few u of the mean and one ulp of the result. u = 2^-24.
        const double u = std::ldexp(1.0, -24);
        for (const auto& spec : kExact) {
          const auto w = train(spec, pg, 1);
          double worst = 0;
          int64_t ulps = 0, at = -1;
          for (int64_t i = 0; i < n; ++i) {
            double s = 0, mean = 0;
            for (int r = 0; r < world; ++r) s += std::abs(double(g[r * n + i])), mean += double(g[r * n + i]) / world;
            const double d = std::abs(double(w[i]) - base[i]);
            const double bound =
                kLr * (2 * (world - 1) * u * s / world + 4 * u * std::abs(mean)) + std::max(ulp(w[i]), ulp(base[i]));
            if (d / bound > worst) worst = d / bound, at = i;
            ulps = std::max<int64_t>(ulps, std::llround(d / std::min(ulp(w[i]), ulp(base[i]))));
          }
          DIST_EXPECT(worst <= 1.0, spec, " vs ", kExact.front(), " on ", world, " ranks: weight ", at, " differs by ",
                      worst, " times the rounding bound (", ulps, " ulp at most)");
        }
      });
    }
  }
}
