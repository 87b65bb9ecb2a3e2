// DistributedDataParallel over real processes and Gloo: k steps with world size
// W and batch b per rank end with the same parameters as one process with batch
// W*b on the same samples; no_sync accumulation equals synchronised steps;
// replicas stay bitwise identical; unused parameters are named.
#include <catch2/catch.hpp>

#include "ddl.h"
#include "dist/dist.h"
#include "tests/common/harness.h"
#include "tests/common/small_cnn.h"

using namespace ddl;
using namespace ddl::dist;

namespace {

std::shared_ptr<nn::Sequential> make_cnn() { return test::make_small_cnn(); }

// A model whose forward never touches one of its layers.
struct WithUnusedHead : nn::Module {
  std::shared_ptr<nn::Sequential> body = register_module("body", make_cnn());
  std::shared_ptr<nn::Linear> unused_head = register_module("unused_head", std::make_shared<nn::Linear>(3, 3));
  WithUnusedHead() : nn::Module("WithUnusedHead") {}
  Variable forward(const Variable& x) override { return body->forward(x); }
};

struct Data {
  Tensor x, y;
};
Data make_data(int64_t n) {
  Generator g(11);
  return {randn({n, 1, 8, 8}, g), randint(0, 3, {n}, g)};
}

// Parameters after `steps` SGD steps; each step uses global batch `global_b`, of which this
// rank takes rows [rank * b, (rank + 1) * b).
std::vector<float> train(nn::Module& model, nn::Module& params_of, const Data& d, int64_t steps, int64_t global_b,
                         int rank, int world, DistributedDataParallel* ddp = nullptr) {
  optim::SGD opt(params_of.parameters(), {.lr = 0.1, .momentum = 0.9});
  const int64_t b = global_b / world;
  for (int64_t s = 0; s < steps; ++s) {
    const Tensor xb = d.x.narrow(0, s * global_b + rank * b, b), yb = d.y.narrow(0, s * global_b + rank * b, b);
    Variable loss = cross_entropy(model(Variable(xb)), yb);
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
  (void)ddp;
  std::vector<float> flat;
  for (auto& p : params_of.parameters()) {
    auto v = to_vector<float>(p.data());
    flat.insert(flat.end(), v.begin(), v.end());
  }
  return flat;
}

double max_rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(double(a[i]) - b[i]) / (std::abs(double(b[i])) + 1e-3));
  return m;
}

std::shared_ptr<ProcessGroup> connect(int port, int rank, int world) {
  TCPStoreOptions so;
  so.timeout = Millis(20000);
  auto store = std::make_shared<TCPStore>("127.0.0.1", port, so);
  GlooOptions go;
  go.timeout = Millis(20000);
  return std::make_shared<ProcessGroupGloo>(store, rank, world, go);
}

}  // namespace

TEST_CASE("DDP with W ranks of batch b equals one process with batch W*b", "[dist][ddp]") {
  for (int world : {2, 3}) {
    DYNAMIC_SECTION("world " << world) {
      TCPStoreServer server("127.0.0.1", 0);
      const int port = server.port();
      const int64_t steps = 4, global_b = 6;
      auto outs = test::run_processes(world, [&](int rank) {
        const Data d = make_data(steps * global_b);
        auto ref_model = make_cnn();
        const auto ref = train(*ref_model, *ref_model, d, steps, global_b, 0, 1);

        auto pg = connect(port, rank, world);
        auto model = make_cnn();
        DistributedDataParallel ddp(model, pg, {.bucket_cap_mb = 0.002, .first_bucket_mb = 0.0005});
        DIST_EXPECT(ddp.stats().bucket_bytes.size() >= 2, "expected several buckets, got ", ddp.stats().bucket_bytes.size());
        const auto got = train(ddp, *model, d, steps, global_b, rank, world, &ddp);
        DIST_EXPECT(ddp.stats().synced_steps == steps, "synced ", ddp.stats().synced_steps, " steps");
        const double diff = max_rel_diff(got, ref);
        DIST_EXPECT(diff < 1e-5, "rank ", rank, ": max relative difference to the single-process run ", diff);
        // Replicas are bitwise identical: max and min over ranks agree.
        const Tensor mine = from_vector(got), hi = mine.clone(), lo = mine.clone();
        pg->all_reduce(hi, ReduceOp::Max);
        pg->all_reduce(lo, ReduceOp::Min);
        DIST_EXPECT(to_vector<float>(hi) == to_vector<float>(lo), "replicas differ after training");
      });
      INFO(test::describe(outs));
      REQUIRE(test::all_ok(outs));
    }
  }
}

TEST_CASE("DDP no_sync accumulation equals synchronised micro-steps", "[dist][ddp]") {
  TCPStoreServer server("127.0.0.1", 0);
  const int port = server.port();
  auto outs = test::run_processes(2, [&](int rank) {
    auto pg = connect(port, rank, 2);
    const Data d = make_data(16);
    auto run = [&](bool use_no_sync) {
      auto model = make_cnn();
      DistributedDataParallel ddp(model, pg);
      optim::SGD opt(model->parameters(), {.lr = 0.1});
      opt.zero_grad();
      for (int micro = 0; micro < 2; ++micro) {
        const Tensor xb = d.x.narrow(0, micro * 8 + rank * 4, 4), yb = d.y.narrow(0, micro * 8 + rank * 4, 4);
        if (use_no_sync && micro == 0) {
          DistributedDataParallel::NoSync guard(ddp);
          cross_entropy(ddp(Variable(xb)), yb).backward();
        } else {
          cross_entropy(ddp(Variable(xb)), yb).backward();
        }
      }
      opt.step();
      std::vector<float> flat;
      for (auto& p : model->parameters()) {
        auto v = to_vector<float>(p.data());
        flat.insert(flat.end(), v.begin(), v.end());
      }
      return std::make_pair(flat, ddp.stats().synced_steps);
    };
    const auto [accumulated, synced_once] = run(true);
    const auto [stepwise, synced_twice] = run(false);
    DIST_EXPECT(synced_once == 1 && synced_twice == 2, "synced ", synced_once, " and ", synced_twice, " times");
    DIST_EXPECT(max_rel_diff(accumulated, stepwise) < 1e-5, "no_sync accumulation differs");
  });
  INFO(test::describe(outs));
  REQUIRE(test::all_ok(outs));
}

TEST_CASE("DDP names parameters that got no gradient, or tolerates them", "[dist][ddp]") {
  TCPStoreServer server("127.0.0.1", 0);
  const int port = server.port();
  auto outs = test::run_processes(2, [&](int rank) {
    auto pg = connect(port, rank, 2);
    const Data d = make_data(4);
    {
      auto model = std::make_shared<WithUnusedHead>();
      DistributedDataParallel ddp(model, pg, {.find_unused_parameters = true});
      cross_entropy(ddp(Variable(d.x.narrow(0, rank * 2, 2))), d.y.narrow(0, rank * 2, 2)).backward();
      for (auto& [name, p] : model->named_parameters())
        DIST_EXPECT(p.grad().defined(), name, " has no gradient");
    }
    auto model = std::make_shared<WithUnusedHead>();
    DistributedDataParallel ddp(model, pg);
    std::string message = "(no error)";
    try {
      cross_entropy(ddp(Variable(d.x.narrow(0, rank * 2, 2))), d.y.narrow(0, rank * 2, 2)).backward();
    } catch (const std::exception& e) {
      message = e.what();
    }
    DIST_EXPECT(message.find("unused_head.weight") != std::string::npos, "expected an error naming unused_head.weight, got: ",
                message);
  });
  INFO(test::describe(outs));
  REQUIRE(test::all_ok(outs));
}
