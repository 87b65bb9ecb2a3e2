// DistributedDataParallel over real processes and Gloo: k steps with world size
// W and batch b per rank end with the same parameters as one process with batch
// W*b on the same samples; no_sync accumulation equals synchronised steps;
// replicas stay bitwise identical; unused parameters are named; buffers come from
// rank 0; wait statistics add up; buckets follow the caps; buckets launch during backward.
#include <catch2/catch.hpp>

#include "tests/common/dist_fixtures.h"
#include "tests/common/harness.h"
#include "tests/common/small_cnn.h"
#include <ddl/ddl.h>
#include <ddl/dist/dist.h>

using namespace ddl;
using namespace ddl::dist;

namespace {

std::shared_ptr<nn::Sequential> make_cnn() { return test::make_small_cnn(); }

// A model whose forward never touches one of its layers.
struct WithUnusedHead : nn::Module {
  std::shared_ptr<nn::Sequential> body = register_module("body", make_cnn());
  std::shared_ptr<nn::Linear> unused_head = register_module("unused_head", std::make_shared<nn::Linear>(3, 3));
  bool use_head = false;  // true: a step where the head does get a gradient
  WithUnusedHead() : nn::Module("WithUnusedHead") {}
  Variable forward(const Variable& x) override {
    return use_head ? unused_head->forward(body->forward(x)) : body->forward(x);
  }
};

struct DdpData {
  Tensor x, y;
};
DdpData ddp_data(int64_t n) {
  Generator g(11);
  return {randn({n, 1, 8, 8}, g), randint(0, 3, {n}, g)};
}

// Parameters after `steps` SGD steps; each step uses global batch `global_b`, of which this
// rank takes rows [rank * b, (rank + 1) * b).
std::vector<float> train(nn::Module& model, nn::Module& params_of, const DdpData& d, int64_t steps, int64_t global_b,
                         int rank, int world, DistributedDataParallel* ddp = nullptr) {
  optim::SGD opt(params_of.parameters(), optim::SGDOptions(0.1).momentum(0.9));
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

}  // namespace

TEST_CASE("DDP with W ranks of batch b equals one process with batch W*b", "[dist][ddp]") {
  for (int world : {2, 3, 4}) {
    DYNAMIC_SECTION("world " << world) {
      test::ParentStoreServer server;
      const int port = server.port();
      const int64_t steps = 4, global_b = 12;
      auto outs = test::run_processes(world, [&](int rank) {
        const DdpData d = ddp_data(steps * global_b);
        auto ref_model = make_cnn();
        const auto ref = train(*ref_model, *ref_model, d, steps, global_b, 0, 1);

        auto pg = test::gloo_group(port, rank, world);
        auto model = make_cnn();
        DistributedDataParallel ddp(model, pg, {.bucket_cap_mb = 0.002, .first_bucket_mb = 0.0005});
        DIST_EXPECT(ddp.stats().bucket_bytes.size() >= 2, "expected several buckets, got ",
                    ddp.stats().bucket_bytes.size());
        const auto got = train(ddp, *model, d, steps, global_b, rank, world, &ddp);
        DIST_EXPECT(ddp.stats().synced_steps == steps, "synced ", ddp.stats().synced_steps, " steps");
        const double diff = test::max_rel_diff(got, ref);
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
  test::ParentStoreServer server;
  const int port = server.port();
  auto outs = test::run_processes(2, [&](int rank) {
    auto pg = test::gloo_group(port, rank, 2);
    const DdpData d = ddp_data(16);
    auto run = [&](bool use_no_sync) {
      auto model = make_cnn();
      DistributedDataParallel ddp(model, pg);
      optim::SGD opt(model->parameters(), optim::SGDOptions(0.1));
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
    DIST_EXPECT(test::max_rel_diff(accumulated, stepwise) < 1e-5, "no_sync accumulation differs");
  });
  INFO(test::describe(outs));
  REQUIRE(test::all_ok(outs));
}

TEST_CASE("DDP names parameters that got no gradient, or tolerates them", "[dist][ddp]") {
  test::ParentStoreServer server;
  const int port = server.port();
  auto outs = test::run_processes(2, [&](int rank) {
    auto pg = test::gloo_group(port, rank, 2);
    const DdpData d = ddp_data(4);
    {
      auto model = std::make_shared<WithUnusedHead>();
      DistributedDataParallel ddp(model, pg, {.find_unused_parameters = true});
      cross_entropy(ddp(Variable(d.x.narrow(0, rank * 2, 2))), d.y.narrow(0, rank * 2, 2)).backward();
      // No rank used the head: its gradients stay undefined, as in one process
      // (tests/dist/test_ddp_unused.cpp compares whole runs).
      for (auto& [name, p] : model->named_parameters())
        DIST_EXPECT(p.grad().defined() == (name.rfind("unused_head.", 0) != 0), name, " has ",
                    p.grad().defined() ? "a" : "no", " gradient");
      // A step that uses the head leaves its gradient in the bucket; the next step, which
      // does not, must leave the head's gradient alone (undefined after zero_grad), not
      // write that stale bucket into it.
      model->use_head = true;
      model->zero_grad();
      cross_entropy(ddp(Variable(d.x.narrow(0, rank * 2, 2))), d.y.narrow(0, rank * 2, 2)).backward();
      DIST_EXPECT(sum(abs(model->unused_head->weight.grad())).item() > 0, "the head got no gradient when used");
      model->use_head = false;
      model->zero_grad();
      cross_entropy(ddp(Variable(d.x.narrow(0, rank * 2, 2))), d.y.narrow(0, rank * 2, 2)).backward();
      for (const Variable& p : model->unused_head->parameters())
        DIST_EXPECT(!p.grad().defined(), "an unused parameter's gradient was written: ", sum(abs(p.grad())).item());
    }
    auto model = std::make_shared<WithUnusedHead>();
    DistributedDataParallel ddp(model, pg);
    std::string message = "(no error)";
    try {
      cross_entropy(ddp(Variable(d.x.narrow(0, rank * 2, 2))), d.y.narrow(0, rank * 2, 2)).backward();
    } catch (const std::exception& e) {
      message = e.what();
    }
    DIST_EXPECT(message.find("unused_head.weight") != std::string::npos,
                "expected an error naming unused_head.weight, got: ", message);
  });
  INFO(test::describe(outs));
  REQUIRE(test::all_ok(outs));
}

namespace {

// A CNN with BatchNorm, whose running statistics are DDP's buffers.
std::shared_ptr<nn::Sequential> make_bn_cnn() {
  manual_seed(3);
  return std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Conv2d>(nn::Conv2dOptions(1, 4, 3).padding(1)), std::make_shared<nn::BatchNorm2d>(4),
      std::make_shared<nn::ReLU>(), std::make_shared<nn::Flatten>(), std::make_shared<nn::Linear>(4 * 8 * 8, 3)});
}

// Every buffer of `m`, as float64, concatenated.
std::vector<double> flat_buffers(const nn::Module& m) {
  std::vector<double> flat;
  for (auto& [name, b] : m.named_buffers()) {
    auto v = to_vector<double>(b.data().to(DType::Float64));
    flat.insert(flat.end(), v.begin(), v.end());
  }
  return flat;
}

// Parameters of the given sizes (float32), registered as p0, p1, ... in that order.
struct Blobs : nn::Module {
  explicit Blobs(const std::vector<int64_t>& numels) : nn::Module("Blobs") {
    for (size_t i = 0; i < numels.size(); ++i) register_parameter("p" + std::to_string(i), zeros({numels[i]}));
  }
};

// Checks DDP's bucket plan against the rule: walking the parameters in reverse registration
// order, each bucket takes parameters while they fit its cap (first_cap for bucket 0, cap
// after); a parameter larger than the cap sits alone. Returns the parameters per bucket.
std::vector<size_t> check_bucket_plan(const DDPStats& st, const std::vector<int64_t>& numels, int64_t first_cap,
                                      int64_t cap) {
  REQUIRE(st.bucket_params.size() == st.bucket_bytes.size());
  size_t total = 0;
  for (size_t n : st.bucket_params) total += n;
  REQUIRE(total == numels.size());
  int64_t k = static_cast<int64_t>(numels.size()) - 1;  // next parameter, in reverse order
  for (size_t b = 0; b < st.bucket_params.size(); ++b) {
    const int64_t limit = b == 0 ? first_cap : cap;
    int64_t bytes = 0;
    for (size_t j = 0; j < st.bucket_params[b]; ++j) bytes += 4 * numels[k--];
    INFO("bucket " << b << ": " << st.bucket_params[b] << " parameters, " << bytes << " bytes, cap " << limit);
    CHECK(st.bucket_bytes[b] == bytes);
    CHECK((bytes <= limit || st.bucket_params[b] == 1));
    if (k >= 0) CHECK(bytes + 4 * numels[k] > limit);  // filled: the next parameter did not fit
  }
  return st.bucket_params;
}

}  // namespace

TEST_CASE("DDP broadcast_buffers: rank 0's BatchNorm statistics on every rank at forward", "[dist][ddp]") {
  test::ParentStoreServer server;
  const int port = server.port();
  auto outs = test::run_processes(2, [&](int rank) {
    auto pg = test::gloo_group(port, rank, 2);
    Generator g(5);
    const Tensor x = randn({4, 1, 8, 8}, g);  // the same batch on both ranks
    for (bool broadcast : {true, false}) {
      auto model = make_bn_cnn();
      DistributedDataParallel ddp(model, pg, {.broadcast_buffers = broadcast});
      // Replicas drift apart (as with per-rank batches); set each rank's statistics apart.
      for (auto& [name, b] : model->named_buffers())
        b.data().fill_(name.find("num_batches") != std::string::npos ? 10 * rank : rank + 1);
      const auto before = flat_buffers(*model);
      ddp(Variable(x));
      const auto after = flat_buffers(*model);
      DIST_EXPECT(after != before, "forward did not update the running statistics");
      // Rank 0's statistics after forward, on every rank.
      const Tensor mine = from_vector(after), theirs = mine.clone();
      pg->broadcast(theirs, 0);
      const bool same = to_vector<double>(theirs) == after;
      if (broadcast)
        DIST_EXPECT(same, "rank ", rank, ": buffers differ from rank 0's after a forward with broadcast_buffers");
      else if (rank == 1)
        DIST_EXPECT(!same, "buffers equal rank 0's although broadcast_buffers is off");
    }
  });
  INFO(test::describe(outs));
  REQUIRE(test::all_ok(outs));
}

TEST_CASE("DDP wait statistics: non-negative per step, the total is their sum", "[dist][ddp]") {
  test::ParentStoreServer server;
  const int port = server.port();
  auto outs = test::run_processes(2, [&](int rank) {
    auto pg = test::gloo_group(port, rank, 2);
    const DdpData d = ddp_data(16);
    auto model = make_cnn();
    DistributedDataParallel ddp(model, pg, {.bucket_cap_mb = 0.002, .first_bucket_mb = 0.0005});
    DIST_EXPECT(ddp.stats().total_wait_ms == 0 && ddp.stats().synced_steps == 0, "stats before any backward");
    double sum = 0;
    for (int step = 0; step < 4; ++step) {
      const Tensor xb = d.x.narrow(0, step * 4 + rank * 2, 2), yb = d.y.narrow(0, step * 4 + rank * 2, 2);
      if (step == 2) {  // an accumulation step communicates nothing and changes nothing
        DistributedDataParallel::NoSync guard(ddp);
        const DDPStats st = ddp.stats();
        cross_entropy(ddp(Variable(xb)), yb).backward();
        DIST_EXPECT(ddp.stats().total_wait_ms == st.total_wait_ms && ddp.stats().synced_steps == st.synced_steps,
                    "no_sync step changed the wait statistics");
        continue;
      }
      cross_entropy(ddp(Variable(xb)), yb).backward();
      const DDPStats& st = ddp.stats();
      DIST_EXPECT(st.last_wait_ms >= 0, "step ", step, ": negative wait ", st.last_wait_ms);
      sum += st.last_wait_ms;
      DIST_EXPECT(st.total_wait_ms == sum, "step ", step, ": total ", st.total_wait_ms, " != sum of steps ", sum);
    }
    DIST_EXPECT(ddp.stats().synced_steps == 3, "synced ", ddp.stats().synced_steps, " steps");
  });
  INFO(test::describe(outs));
  REQUIRE(test::all_ok(outs));
}

TEST_CASE("DDP buckets: reverse registration order, filled up to the cap, 25 MiB by default", "[dist][ddp]") {
  auto pg = std::make_shared<ProcessGroupGloo>(std::make_shared<HashStore>(), 0, 1);
  const int64_t MiB = 1024 * 1024;
  SECTION("small caps") {
    // Bytes (float32): 1200, 200, 4000, 80, 2800, 20000, 40, 1600; caps 1500 then 4000.
    // By hand, in reverse: {p7: 1600 alone, over the first cap}, {p6}, {p5: 20000 alone},
    // {p4, p3}, {p2: exactly 4000}, {p1, p0}.
    const std::vector<int64_t> numels{300, 50, 1000, 20, 700, 5000, 10, 400};
    auto model = std::make_shared<Blobs>(numels);
    DistributedDataParallel ddp(model, pg, {.bucket_cap_mb = 4000.0 / MiB, .first_bucket_mb = 1500.0 / MiB});
    CHECK(check_bucket_plan(ddp.stats(), numels, 1500, 4000) == std::vector<size_t>{1, 1, 1, 2, 1, 2});
  }
  SECTION("default caps") {
    CHECK(DDPOptions{}.bucket_cap_mb == 25);
    // 28 parameters of 1 MiB: 1 in the first bucket (1 MiB), 25 in the next, 2 left.
    const std::vector<int64_t> numels(28, MiB / 4);
    auto model = std::make_shared<Blobs>(numels);
    DistributedDataParallel ddp(model, pg);
    CHECK(check_bucket_plan(ddp.stats(), numels, int64_t(DDPOptions{}.first_bucket_mb * MiB), 25 * MiB) ==
          std::vector<size_t>{1, 25, 2});
  }
}

TEST_CASE("DDP overlap: buckets are launched from gradient hooks while backward runs", "[dist][ddp]") {
  test::ParentStoreServer server;
  const int port = server.port();
  auto outs = test::run_processes(2, [&](int rank) {
    auto pg = test::gloo_group(port, rank, 2);
    const DdpData d = ddp_data(4);
    const Tensor xb = d.x.narrow(0, rank * 2, 2), yb = d.y.narrow(0, rank * 2, 2);
    auto model = make_cnn();
    // The first-registered parameter sits in the last bucket and gets its gradient last.
    // This hook is registered before DDP's, so it runs before DDP sees that gradient.
    DistributedDataParallel* ddp_ptr = nullptr;
    int64_t launched_at_last_grad = -1;
    Variable first = model->parameters().front();
    const int hook = first.register_post_accumulate_grad_hook(
        [&](Variable&) { launched_at_last_grad = static_cast<int64_t>(ddp_ptr->buckets_launched()); });
    DistributedDataParallel ddp(model, pg, {.bucket_cap_mb = 0.0005, .first_bucket_mb = 0.0005});
    ddp_ptr = &ddp;
    const auto buckets = static_cast<int64_t>(ddp.stats().bucket_bytes.size());
    DIST_EXPECT(buckets >= 3, "expected several buckets, got ", buckets);
    cross_entropy(ddp(Variable(xb)), yb).backward();
    DIST_EXPECT(launched_at_last_grad >= 1 && launched_at_last_grad < buckets, "when the last gradient arrived ",
                launched_at_last_grad, " of ", buckets, " buckets were launched; expected some but not all");
    DIST_EXPECT(static_cast<int64_t>(ddp.last_overlapped_buckets()) == buckets, "only ", ddp.last_overlapped_buckets(),
                " of ", buckets, " buckets were launched before backward ended");
    DIST_EXPECT(static_cast<int64_t>(ddp.buckets_launched()) == buckets, "buckets_launched after backward");
    first.remove_hook(hook);

    // Bucket 0 holds the unused head (registered last): it completes only at the end of
    // backward, and buckets launch in order, so nothing can be launched from a hook.
    auto unused = std::make_shared<WithUnusedHead>();
    DistributedDataParallel ddp2(unused, pg,
                                 {.bucket_cap_mb = 0.002, .first_bucket_mb = 0.0005, .find_unused_parameters = true});
    cross_entropy(ddp2(Variable(xb)), yb).backward();
    DIST_EXPECT(ddp2.last_overlapped_buckets() == 0, ddp2.last_overlapped_buckets(),
                " buckets launched during backward although bucket 0 waits for unused parameters");
  });
  INFO(test::describe(outs));
  REQUIRE(test::all_ok(outs));
}
