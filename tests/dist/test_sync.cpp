// The gradient-synchronisation strategies over real processes and Gloo: every registered
// gradient strategy ends where one process on the whole batch ends, with identical
// replicas; stepwise and local-sgd do what they define; the hand-written ring
// all-reduce sums any size; a rank's wait is charged to the call it happened in
// (last_comm()); bad specs are named.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "tests/common/dist_fixtures.h"
#include "tests/common/harness.h"
#include "tests/common/small_cnn.h"
#include <ddl/ddl.h>
#include <ddl/dist/dist.h>

using namespace ddl;
using namespace ddl::dist;

namespace {

std::shared_ptr<nn::Sequential> make_cnn() { return test::make_small_cnn(); }

using Data = test::SmallCnnData;
Data sync_data(int64_t n) { return test::small_cnn_data(n); }
using test::flat_params;
using test::max_rel_diff;

// One training step through the strategy, on rows [begin, begin + b) of d.
void train_step(SyncStrategy& s, optim::Optimizer& opt, const Data& d, int64_t begin, int64_t b) {
  Variable loss = cross_entropy(s.model().forward(Variable(d.x.narrow(0, begin, b))), d.y.narrow(0, begin, b));
  opt.zero_grad();
  loss.backward();
  s.after_backward();
  s.step(opt);
  s.after_step();
}

// Every rank's vector, in rank order.
std::vector<std::vector<float>> gather_all(ProcessGroup& pg, const std::vector<float>& mine) {
  const int64_t n = static_cast<int64_t>(mine.size());
  const Tensor all = zeros({pg.size() * n});
  pg.all_gather(all, from_vector(mine));
  const auto v = to_vector<float>(all);
  std::vector<std::vector<float>> rows;
  for (int r = 0; r < pg.size(); ++r) rows.emplace_back(v.begin() + r * n, v.begin() + (r + 1) * n);
  return rows;
}

// Mean of rows 0..k (inclusive).
std::vector<float> mean_of_first(const std::vector<std::vector<float>>& rows, int k) {
  std::vector<float> m(rows[0].size(), 0.f);
  for (size_t i = 0; i < m.size(); ++i) {
    double s = 0;
    for (int r = 0; r <= k; ++r) s += rows[r][i];
    m[i] = static_cast<float>(s / (k + 1));
  }
  return m;
}

}  // namespace

// DDL_SYNC_PLUGINS=a.so:b.so: a student's plugins join the check below (docs/sync.md).
static void load_plugins_from_env() {
  const char* env = std::getenv("DDL_SYNC_PLUGINS");
  std::string list = env ? env : "";
  for (size_t start = 0; start < list.size();) {
    const size_t end = std::min(list.find(':', start), list.size());
    if (end > start) load_sync_plugin(list.substr(start, end - start));
    start = end + 1;
  }
}

TEST_CASE("gradient strategies with W ranks of batch b equal one process with batch W*b", "[dist][sync]") {
  load_plugins_from_env();
  for (int world : {2, 3, 4}) {
    DYNAMIC_SECTION("world " << world) {
      test::run_ranks(world, [world](int rank, std::shared_ptr<ProcessGroup> pg) {
        load_plugins_from_env();  // a rank process is a fresh one
        const int64_t steps = 4, global_b = 12, b = global_b / world;
        const Data d = sync_data(steps * global_b);
        auto ref_model = make_cnn();
        optim::SGD ref_opt(ref_model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
        for (int64_t s = 0; s < steps; ++s) {
          Variable loss = cross_entropy((*ref_model)(Variable(d.x.narrow(0, s * global_b, global_b))),
                                        d.y.narrow(0, s * global_b, global_b));
          ref_opt.zero_grad();
          loss.backward();
          ref_opt.step();
        }
        const auto ref = flat_params(*ref_model);
        const int64_t P = static_cast<int64_t>(ref.size()),
                      n_params = static_cast<int64_t>(ref_model->parameters().size());

        // Every registered strategy that averages gradients (dist/sync/registry.h): a new
        // one joins this check by registering.
        for (const RegisteredSyncStrategy& entry : sync_strategies()) {
          if (!entry.info.averages_gradients) continue;
          const std::string spec = entry.example();
          auto model = make_cnn();
          // Replicas start different: the strategy must make them identical.
          for (auto& p : model->parameters()) p.data().add_(0.5 * rank);
          auto sync = make_sync_strategy(spec, model, pg);
          DIST_EXPECT(sync->name() == spec, "name() is ", sync->name());
          optim::SGD opt(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
          pg->reset_stats();
          for (int64_t s = 0; s < steps; ++s) {
            train_step(*sync, opt, d, s * global_b + rank * b, b);
            DIST_EXPECT(sync->last_comm_ms() >= 0, spec, ": negative communication time");
          }
          const CommStats st = pg->stats();
          sync->gather_full_model();  // fsdp holds 1/N of the weights until asked for all of them
          const auto got = flat_params(*model);
          const double diff = max_rel_diff(got, ref);
          DIST_EXPECT(diff < 1e-5, spec, ", rank ", rank, ": max relative difference to one process ", diff);
          const Tensor mine = from_vector(got), hi = mine.clone(), lo = mine.clone();
          pg->all_reduce(hi, ReduceOp::Max);
          pg->all_reduce(lo, ReduceOp::Min);
          DIST_EXPECT(to_vector<float>(hi) == to_vector<float>(lo), spec, ": replicas differ after training");

          // Each strategy talks the way it says it does.
          if (spec == "allreduce")
            DIST_EXPECT(st[OpKind::AllReduce].calls == steps * n_params, spec, ": ", st.summary());
          if (spec == "gather-scatter") {
            // Every parameter goes to the hub and its average comes back, one send/recv each
            // way per worker (see Note [Gather-scatter on send/recv]).
            const int64_t peers = rank == 0 ? world - 1 : 1, bytes = 4 * steps * P * peers;
            DIST_EXPECT(st[OpKind::Send].calls == steps * n_params * peers &&
                            st[OpKind::Recv].calls == steps * n_params * peers &&
                            st[OpKind::Send].bytes_sent == bytes && st[OpKind::Recv].bytes_received == bytes &&
                            st[OpKind::Gather].calls == 0,
                        spec, ": ", st.summary());
          }
          if (spec == "param-server")
            DIST_EXPECT(st[OpKind::Gather].calls == steps && st[OpKind::Broadcast].calls == steps, spec, ": ",
                        st.summary());
          if (spec == "ring") {
            // Rank r sends every chunk but r+1 in lap 1 and every chunk but r+2 in lap 2
            // (2(N-1)/N·P floats when P splits evenly), and receives what rank r-1 sends.
            const auto chunk = [&](int c) {
              c %= world;
              return (c + 1) * P / world - c * P / world;
            };
            const int64_t sent = 4 * steps * (2 * P - chunk(rank + 1) - chunk(rank + 2));
            const int64_t received = 4 * steps * (2 * P - chunk(rank) - chunk(rank + 1));
            DIST_EXPECT(st[OpKind::AllReduce].calls == 0 && st[OpKind::Send].bytes_sent == sent &&
                            st[OpKind::Recv].bytes_received == received,
                        spec, ": expected ", sent, " bytes sent and ", received, " received; ", st.summary());
          }
        }
      });
    }
  }
}

TEST_CASE("gather-scatter sends a large gradient in 1 MiB pieces and averages every piece", "[dist][sync]") {
  test::run_ranks(3, [](int rank, std::shared_ptr<ProcessGroup> pg) {
    // 600 x 600 floats is 1.37 MiB: two pieces; with the bias, three messages each way.
    auto model = std::make_shared<nn::Linear>(600, 600);
    auto sync = make_sync_strategy("gather-scatter", model, pg);
    for (auto& p : model->parameters()) p.set_grad(full(p.shape(), float(rank + 1)));
    pg->reset_stats();
    sync->after_backward();
    for (auto& p : model->parameters()) {
      const auto g = to_vector<float>(p.grad());
      DIST_EXPECT(std::all_of(g.begin(), g.end(), [](float v) { return v == 2.0f; }), "not the average (1+2+3)/3");
    }
    const CommStats st = pg->stats();
    const int64_t messages = rank == 0 ? 3 * 2 : 3;  // the hub talks to both workers
    DIST_EXPECT(st[OpKind::Send].calls == messages && st[OpKind::Recv].calls == messages, st.summary());
  });
}

TEST_CASE("ring_all_reduce sums sizes that do not split evenly, pipelined or not", "[dist][sync]") {
  for (int world : {2, 3, 4}) {
    DYNAMIC_SECTION("world " << world) {
      test::run_ranks(world, [world](int rank, std::shared_ptr<ProcessGroup> pg) {
        for (int64_t n : {0, 1, 2, 3, 5, 7, 1000}) {
          for (int64_t sub : {0, 1, 3}) {
            // float64 and small integers: every partial sum is exact, whatever the order.
            std::vector<double> v(n), want(n);
            for (int64_t i = 0; i < n; ++i) {
              v[i] = rank * 1000.0 + i + 0.5;
              want[i] = 1000.0 * world * (world - 1) / 2 + world * (i + 0.5);
            }
            const Tensor t = from_vector(v);
            ring_all_reduce(*pg, t, sub);
            DIST_EXPECT(to_vector<double>(t) == want, "n=", n, " sub=", sub, ": wrong sum");
          }
        }
        const Tensor f = full({10}, 1.0f + rank);
        ring_all_reduce(*pg, f, 4);
        DIST_EXPECT(to_vector<float>(f) == std::vector<float>(10, world * (world + 1) / 2.0f), "float32: wrong sum");
        std::string message = "(no error)";
        try {
          ring_all_reduce(*pg, zeros({2, 3}));
        } catch (const Error& e) {
          message = e.what();
        }
        DIST_EXPECT(message.find("ring_all_reduce") != std::string::npos, "expected an error, got: ", message);
      });
    }
  }
}

TEST_CASE("stepwise: rank k carries on with the mean of ranks 0..k", "[dist][sync]") {
  for (int world : {2, 3, 4}) {
    DYNAMIC_SECTION("world " << world) {
      test::run_ranks(world, [world](int rank, std::shared_ptr<ProcessGroup> pg) {
        const int64_t b = 4, steps = 2;
        const Data d = sync_data(steps * world * b);
        auto model = make_cnn();
        int64_t P = 0;
        {
          auto sync = make_sync_strategy("stepwise", model, pg);
          optim::SGD opt(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
          pg->reset_stats();
          for (int64_t s = 0; s < steps; ++s) {
            // Each rank its own shard, so the local steps differ.
            const int64_t begin = (s * world + rank) * b;
            Variable loss =
                cross_entropy(sync->model().forward(Variable(d.x.narrow(0, begin, b))), d.y.narrow(0, begin, b));
            opt.zero_grad();
            loss.backward();
            sync->after_backward();
            sync->step(opt);
            const auto before = flat_params(*model);
            P = static_cast<int64_t>(before.size());
            const auto rows = gather_all(*pg, before);
            sync->after_step();
            const auto after = flat_params(*model);
            if (rank == 0) DIST_EXPECT(after == before, "step ", s, ": rank 0 must keep its own parameters");
            const double diff = max_rel_diff(after, mean_of_first(rows, rank));
            DIST_EXPECT(diff < 1e-5, "step ", s, ", rank ", rank, ": differs from the mean of ranks 0..", rank, " by ",
                        diff);
            if (rank > 0) DIST_EXPECT(max_rel_diff(after, before) > 1e-4, "rank ", rank, " kept its own parameters");
          }
        }  // the destructor waits for the last send
        // Traffic: every rank but the last sends the model once per step, every rank but 0 receives it.
        const CommStats st = pg->stats();
        DIST_EXPECT(st[OpKind::Send].bytes_sent == (rank < world - 1 ? steps * 4 * P : 0), st.summary());
        DIST_EXPECT(st[OpKind::Recv].bytes_received == (rank > 0 ? steps * 4 * P : 0), st.summary());
      });
    }
  }
}

TEST_CASE("local-sgd:K averages the replicas every K steps and only then", "[dist][sync]") {
  for (int world : {2, 3, 4}) {
    DYNAMIC_SECTION("world " << world) {
      test::run_ranks(world, [world](int rank, std::shared_ptr<ProcessGroup> pg) {
        const int64_t b = 4, steps = 4, K = 2;
        const Data d = sync_data(steps * world * b);
        auto model = make_cnn();
        auto sync = make_sync_strategy("local-sgd:2", model, pg);
        DIST_EXPECT(sync->name() == "local-sgd:2", "name() is ", sync->name());
        optim::SGD opt(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
        for (int64_t s = 0; s < steps; ++s) {
          const int64_t begin = (s * world + rank) * b;
          Variable loss =
              cross_entropy(sync->model().forward(Variable(d.x.narrow(0, begin, b))), d.y.narrow(0, begin, b));
          opt.zero_grad();
          loss.backward();
          sync->after_backward();
          sync->step(opt);
          const auto before = flat_params(*model);
          const auto rows = gather_all(*pg, before);
          sync->after_step();
          const auto after = flat_params(*model);
          const auto after_rows = gather_all(*pg, after);
          if ((s + 1) % K != 0) {
            DIST_EXPECT(after == before && sync->last_comm_ms() == 0, "step ", s, ": no averaging expected");
            DIST_EXPECT(after_rows[0] != after_rows[1], "step ", s,
                        ": replicas should differ between averaging points");
          } else {
            for (int r = 1; r < world; ++r)
              DIST_EXPECT(after_rows[r] == after_rows[0], "step ", s, ": rank ", r,
                          " differs from rank 0 after averaging");
            const double diff = max_rel_diff(after, mean_of_first(rows, world - 1));
            DIST_EXPECT(diff < 1e-5, "step ", s, ": differs from the mean of all ranks by ", diff);
          }
        }
      });
    }
  }
}

namespace {

// The small CNN with a BatchNorm, so that DDP has buffers to broadcast in forward.
std::shared_ptr<nn::Sequential> make_bn_cnn() {
  manual_seed(7);
  return std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Conv2d>(nn::Conv2dOptions(1, 4, 3).padding(1)), std::make_shared<nn::BatchNorm2d>(4),
      std::make_shared<nn::ReLU>(), std::make_shared<nn::MaxPool2d>(2), std::make_shared<nn::Flatten>(),
      std::make_shared<nn::Linear>(4 * 4 * 4, 3)});
}

enum class Call { Forward, Backward, AfterBackward, Step };
constexpr const char* kCalls[] = {"forward", "backward", "after_backward", "step"};
constexpr const char* kFields[] = {"forward_ms", "backward_ms", "after_backward_ms", "step_ms", "after_step_ms"};

// One training step; with `sleep`, this rank sleeps 150 ms just before `before`, so
// its peer waits for it in whichever call next needs it. Returns last_comm() as
// {forward, backward, after_backward, step, after_step} ms.
std::vector<float> step_with_delay(SyncStrategy& s, optim::Optimizer& opt, const Data& d, int64_t begin, int64_t b,
                                   bool sleep, Call before) {
  const auto pause = [&](Call c) {
    if (sleep && c == before) std::this_thread::sleep_for(std::chrono::milliseconds(150));
  };
  pause(Call::Forward);
  Variable out = s.model().forward(Variable(d.x.narrow(0, begin, b)));
  Variable loss = cross_entropy(out, d.y.narrow(0, begin, b));
  opt.zero_grad();
  pause(Call::Backward);
  loss.backward();
  pause(Call::AfterBackward);
  s.after_backward();
  pause(Call::Step);
  s.step(opt);
  s.after_step();
  const StepComm& c = s.last_comm();
  return {float(c.forward_ms), float(c.backward_ms), float(c.after_backward_ms), float(c.step_ms),
          float(c.after_step_ms)};
}

}  // namespace

TEST_CASE("last_comm() charges a wait for a late peer to the call it happened in", "[dist][sync]") {
  struct Case {
    const char* spec;
    int sleeper;
    Call before;
    int waiter;
    int field;  // index into kFields
    const char* why;
  };
  const Case cases[] = {
      {"param-server", 0, Call::Step, 1, 3, "the pull waits for rank 0's optimizer step"},
      {"param-server", 1, Call::AfterBackward, 0, 2, "rank 0's gather waits for rank 1's push"},
      {"ddp", 0, Call::Forward, 1, 0, "forward broadcasts rank 0's BatchNorm buffers"},
      {"ddp", 0, Call::Backward, 1, 1, "backward waits for the buckets' all-reduces"},
  };
  test::run_ranks(2, [&](int rank, std::shared_ptr<ProcessGroup> pg) {
    const int64_t b = 4;
    const Data d = sync_data(4 * b);
    for (const Case& c : cases) {
      auto model = make_bn_cnn();
      auto sync = make_sync_strategy(c.spec, model, pg);
      optim::SGD opt(model->parameters(), optim::SGDOptions(0.1));
      step_with_delay(*sync, opt, d, rank * b, b, false, c.before);  // warm-up: connections, allocations
      const auto mine = step_with_delay(*sync, opt, d, (2 + rank) * b, b, rank == c.sleeper, c.before);
      const auto all = gather_all(*pg, mine);
      const std::string what = std::string(c.spec) + ", rank " + std::to_string(c.sleeper) + " sleeps before " +
                               kCalls[static_cast<int>(c.before)] + " (" + c.why + ")";
      // A 150 ms sleep: the peer waits about that long, in that call and no other.
      const float waited = all[c.waiter][c.field];
      DIST_EXPECT(waited >= 50, what, ": rank ", c.waiter, "'s ", kFields[c.field], " is ", waited, " ms");
      for (int r = 0; r < 2; ++r)
        for (int f = 0; f < 5; ++f) {
          if (r == c.waiter && f == c.field) continue;
          DIST_EXPECT(all[r][f] < waited / 2, what, ": rank ", r, "'s ", kFields[f], " is ", all[r][f], " ms, rank ",
                      c.waiter, "'s ", kFields[c.field], " ", waited, " ms");
          // Calls in which a strategy does not communicate report exactly 0.
          const bool used = std::string(c.spec) == "ddp" ? f <= 1 : (f == 2 || f == 3);
          if (!used) DIST_EXPECT(all[r][f] == 0, what, ": rank ", r, "'s ", kFields[f], " is ", all[r][f], " ms");
        }
    }
  });
}

TEST_CASE("make_sync_strategy names bad specs", "[dist][sync]") {
  auto model = make_cnn();
  using Catch::Contains;
  REQUIRE_THROWS_WITH(make_sync_strategy("bogus", model, nullptr),
                      Contains("unknown sync strategy 'bogus'") && Contains("local-sgd:K"));
  REQUIRE_THROWS_WITH(make_sync_strategy("", model, nullptr), Contains("unknown sync strategy"));
  REQUIRE_THROWS_WITH(make_sync_strategy("Ring", model, nullptr), Contains("unknown sync strategy 'Ring'"));
  REQUIRE_THROWS_WITH(make_sync_strategy("local-sgd", model, nullptr), Contains("local-sgd:K, e.g. local-sgd:4"));
  for (const char* bad :
       {"local-sgd:", "local-sgd:0", "local-sgd:-2", "local-sgd:x", "local-sgd:4x", "local-sgd:99999999999"})
    REQUIRE_THROWS_WITH(make_sync_strategy(bad, model, nullptr), Contains("K must be a whole number"));
  REQUIRE_THROWS_WITH(make_sync_strategy("local-sgd4", model, nullptr), Contains("local-sgd:K"));
  REQUIRE_THROWS_WITH(make_sync_strategy("ring", model, nullptr), Contains("process group"));
}
