// DDP's default average scales each gradient while copying it into its bucket (Note [Fused
// scale] in dist/ddp/ddp.cpp): on 3 ranks (1/3 is inexact, so x/3 and x·(1/3) differ) the
// averaged gradients equal, bit for bit, those of the two-pass hooks::allreduce_hook (copy,
// then scale the bucket), in float32 and float64.
#include <catch2/catch.hpp>

#include "tests/common/dist_fixtures.h"
#include "tests/common/harness.h"
#include "tests/common/small_cnn.h"
#include <ddl/ddl.h>
#include <ddl/dist/dist.h>

using namespace ddl;
using namespace ddl::dist;

namespace {

// Every gradient after one DDP backward on this rank's half batch, in parameter order.
std::vector<double> grads_after(std::shared_ptr<ProcessGroup> group, bool two_pass, DType dtype, int rank) {
  manual_seed(7);
  auto model = test::make_small_cnn();
  model->to(dtype);
  DDPOptions opts;
  opts.first_bucket_mb = 0.001;  // several buckets
  DistributedDataParallel ddp(model, group, opts);
  if (two_pass) ddp.register_comm_hook(hooks::allreduce_hook());
  Generator g(100 + rank);
  const Tensor x = randn({2, 1, 8, 8}, g).to(dtype), y = randint(0, 3, {2}, g);
  cross_entropy(ddp(Variable(x)), y).backward();
  std::vector<double> out;
  for (auto& p : model->parameters()) {
    const auto v = to_vector<double>(p.grad());  // float32 to float64 is exact
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

}  // namespace

TEST_CASE("DDP's fused copy and scale equals the two-pass allreduce_hook bit for bit", "[dist][ddp]") {
  test::ParentStoreServer server;
  const int port = server.port();
  auto outs = test::run_processes(3, [&](int rank) {
    auto store = test::store_client(port, Millis(20000));
    int n = 0;
    for (DType dtype : {DType::Float32, DType::Float64}) {
      const auto group = [&] {
        return std::make_shared<ProcessGroupGloo>(std::make_shared<PrefixStore>("g" + std::to_string(n++), store), rank,
                                                  3, test::gloo_options(Millis(20000), 1));
      };
      const auto fused = grads_after(group(), false, dtype, rank), two = grads_after(group(), true, dtype, rank);
      DIST_EXPECT(fused.size() == two.size() && !fused.empty(), "gradient counts");
      size_t differ = 0;
      for (size_t i = 0; i < fused.size(); ++i) differ += fused[i] != two[i];
      DIST_EXPECT(differ == 0, dtype_name(dtype), ": ", differ, " of ", fused.size(), " gradients differ");
    }
  });
  INFO(test::describe(outs));
  REQUIRE(test::all_ok(outs));
}
