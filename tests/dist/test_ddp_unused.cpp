// DDP with find_unused_parameters over real processes and Gloo, against one process
// that trains on every rank's share: a parameter no rank used keeps its gradient
// (undefined after zero_grad), so SGD's momentum and weight decay skip it as they do in
// one process; a parameter some ranks used gets the average, with zeros from the others;
// a parameter used only in a no_sync accumulation step still counts as used.
// PyTorch's reducer does the same ("globally unused parameters", reducer.cpp).
#include <catch2/catch.hpp>
#include <functional>

#include "tests/common/dist_fixtures.h"
#include "tests/common/harness.h"
#include "tests/common/small_cnn.h"
#include <ddl/ddl.h>
#include <ddl/dist/dist.h>

using namespace ddl;
using namespace ddl::dist;
using ddl::test::flat_params;

namespace {

// The small CNN and a 3 -> 3 head that forward applies only when use_head is set.
struct MaybeHead : nn::Module {
  std::shared_ptr<nn::Sequential> body = register_module("body", test::make_small_cnn());
  std::shared_ptr<nn::Linear> head = register_module("head", std::make_shared<nn::Linear>(3, 3));
  bool use_head = false;
  MaybeHead() : nn::Module("MaybeHead") {}
  Variable forward(const Variable& x) override { return use_head ? head->forward(body->forward(x)) : body->forward(x); }
};

constexpr int kWorld = 2;
constexpr int64_t kSteps = 4, kBatch = 2;  // per rank

struct UnusedData {
  Tensor x, y;
};
UnusedData unused_data() {
  Generator g(11);
  const int64_t n = kSteps * kWorld * kBatch;
  return {randn({n, 1, 8, 8}, g), randint(0, 3, {n}, g)};
}

// Does rank r's forward use the head at step s.
using HeadUse = std::function<bool(int64_t s, int r)>;

// Rank r's loss at step s: the mean over its kBatch samples.
Variable share_loss(nn::Module& net, MaybeHead& model, const UnusedData& d, int64_t s, int r, const HeadUse& use) {
  const int64_t first = (s * kWorld + r) * kBatch;
  model.use_head = use(s, r);
  return cross_entropy(net(Variable(d.x.narrow(0, first, kBatch))), d.y.narrow(0, first, kBatch));
}

// kSteps SGD steps with momentum and weight decay (zero_grad sets gradients to none). With
// ddp, this rank's share; without, one process: the mean of every rank's loss, whose
// gradient is the average DDP computes.
std::vector<float> train(MaybeHead& model, DistributedDataParallel* ddp, const UnusedData& d, int rank,
                         const HeadUse& use) {
  optim::SGD opt(model.parameters(), optim::SGDOptions(0.1).momentum(0.9).weight_decay(0.05));
  for (int64_t s = 0; s < kSteps; ++s) {
    opt.zero_grad();
    if (ddp) {
      share_loss(*ddp, model, d, s, rank, use).backward();
    } else {
      Variable loss = share_loss(model, model, d, s, 0, use);
      for (int r = 1; r < kWorld; ++r) loss = loss + share_loss(model, model, d, s, r, use);
      (loss * (1.0 / kWorld)).backward();
    }
    opt.step();
  }
  return flat_params(model);
}

}  // namespace

TEST_CASE("DDP find_unused_parameters: weights equal one process's, unused parameters untouched", "[dist][ddp]") {
  const std::vector<std::pair<std::string, HeadUse>> cases = {
      {"no rank uses the head", [](int64_t, int) { return false; }},
      {"only rank 0 uses the head", [](int64_t, int r) { return r == 0; }},
      {"every rank at step 0, then none", [](int64_t s, int) { return s == 0; }},
      {"rank 1 at steps 0 and 2, none at 1 and 3", [](int64_t s, int r) { return r == 1 && s % 2 == 0; }},
  };
  for (const auto& c : cases) {
    // Named references, not a structured binding: lambdas cannot capture bindings in Clang 14.
    const std::string& name = c.first;
    const HeadUse& use = c.second;
    DYNAMIC_SECTION(name) {
      test::ParentStoreServer server;
      const int port = server.port();
      auto outs = test::run_processes(kWorld, [&](int rank) {
        const UnusedData d = unused_data();
        MaybeHead ref_model;
        const auto initial_head = flat_params(*ref_model.head);
        const auto ref = train(ref_model, nullptr, d, 0, use);

        auto pg = test::gloo_group(port, rank, kWorld);
        auto model = std::make_shared<MaybeHead>();
        DistributedDataParallel ddp(model, pg, {.find_unused_parameters = true});
        const auto got = train(*model, &ddp, d, rank, use);
        const double diff = test::max_rel_diff(got, ref);
        DIST_EXPECT(diff < 1e-5, "rank ", rank, ": max relative difference to the one-process run ", diff);
        bool used_at_last_step = false;
        for (int r = 0; r < kWorld; ++r) used_at_last_step = used_at_last_step || use(kSteps - 1, r);
        for (const Variable& p : model->head->parameters())
          DIST_EXPECT(p.grad().defined() == used_at_last_step, "rank ", rank, ": the head's gradient is ",
                      p.grad().defined() ? "defined" : "undefined", " after the last step");
        if (name == "no rank uses the head")
          DIST_EXPECT(flat_params(*model->head) == initial_head, "rank ", rank,
                      ": the head no rank used moved (momentum or weight decay on a zero gradient)");
      });
      INFO(test::describe(outs));
      REQUIRE(test::all_ok(outs));
    }
  }
}

TEST_CASE("DDP find_unused_parameters: a parameter used only under no_sync is averaged", "[dist][ddp]") {
  test::ParentStoreServer server;
  const int port = server.port();
  auto outs = test::run_processes(kWorld, [&](int rank) {
    auto pg = test::gloo_group(port, rank, kWorld);
    const UnusedData d = unused_data();
    // Step 0 uses the head (every rank), step 1 does not; one optimizer step after both.
    const HeadUse use = [](int64_t s, int) { return s == 0; };
    // The head's gradient after both backwards: one process, or DDP with step 0 under no_sync.
    auto head_grad = [&](bool ddp_no_sync) {
      auto model = std::make_shared<MaybeHead>();
      std::unique_ptr<DistributedDataParallel> ddp;
      if (ddp_no_sync)
        ddp = std::make_unique<DistributedDataParallel>(model, pg, DDPOptions{.find_unused_parameters = true});
      for (int64_t s = 0; s < 2; ++s) {
        if (!ddp_no_sync) {
          Variable loss = share_loss(*model, *model, d, s, 0, use);
          for (int r = 1; r < kWorld; ++r) loss = loss + share_loss(*model, *model, d, s, r, use);
          (loss * (1.0 / kWorld)).backward();
        } else if (s == 0) {
          DistributedDataParallel::NoSync guard(*ddp);
          share_loss(*ddp, *model, d, s, rank, use).backward();
        } else {
          share_loss(*ddp, *model, d, s, rank, use).backward();
        }
      }
      DIST_EXPECT(model->head->weight.grad().defined(), "rank ", rank, ": the head has no gradient");
      return to_vector<float>(model->head->weight.grad());
    };
    const auto ref = head_grad(false), got = head_grad(true);
    const double diff = test::max_rel_diff(got, ref);
    DIST_EXPECT(diff < 1e-5, "rank ", rank, ": the head's gradient differs from one process's by ", diff);
  });
  INFO(test::describe(outs));
  REQUIRE(test::all_ok(outs));
}
