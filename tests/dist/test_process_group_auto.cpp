// ProcessGroupAuto sends each call to the group of its tensors' device and adds the two
// groups' counters; two gloo groups stand in for gloo and nccl, so this runs on any machine.
#include <catch2/catch.hpp>

#include <ddl/dist/dist.h>
#include <ddl/dist/process_group_auto.h>
#include <ddl/tensor/core/factory.h>

using namespace ddl;
using namespace ddl::dist;

TEST_CASE("ProcessGroupAuto sends CPU tensors to its CPU group and adds the counters", "[dist]") {
  // Two gloo groups stand in for gloo and nccl: every call here has CPU tensors.
  auto cpu = new_group("gloo", std::make_shared<HashStore>(), 0, 1);
  auto other = new_group("gloo", std::make_shared<HashStore>(), 0, 1);
  ProcessGroupAuto pg(cpu, other);
  REQUIRE(pg.backend() == "gloo+gloo");
  REQUIRE((pg.rank() == 0 && pg.size() == 1));
  Tensor t = full(Shape{4}, 3.0), out = zeros(Shape{4});
  pg.all_reduce(t, ReduceOp::Max);
  pg.broadcast(t, 0);
  pg.all_gather(out, t);
  pg.gather(out, t, 0);
  pg.barrier();
  REQUIRE(to_vector<float>(out) == std::vector<float>{3, 3, 3, 3});
  REQUIRE(cpu->stats()[OpKind::AllReduce].calls == 1);
  REQUIRE(cpu->stats()[OpKind::Gather].calls == 1);
  REQUIRE(other->stats()[OpKind::AllReduce].calls == 0);
  other->all_reduce(t);  // counted once, through the sum
  REQUIRE(pg.stats()[OpKind::AllReduce].calls == 2);
  pg.reset_stats();
  REQUIRE(pg.stats()[OpKind::AllReduce].calls == 0);
  REQUIRE(!pg.is_broken());
  REQUIRE_THROWS_WITH(ProcessGroupAuto(cpu, nullptr), Catch::Contains("ProcessGroupAuto"));
}

TEST_CASE("ProcessGroupAuto's barrier leaves the CUDA group alone until a CUDA tensor used it", "[dist]") {
  // A CPU-only job must not create NCCL communicators (NCCL refuses two ranks on one GPU).
  // Once a CUDA tensor went through the group, the barrier also waits for the CUDA group:
  // tests/cuda/test_nccl_stream.cpp checks that on a GPU.
  auto cpu = new_group("gloo", std::make_shared<HashStore>(), 0, 1);
  auto other = new_group("gloo", std::make_shared<HashStore>(), 0, 1);
  ProcessGroupAuto pg(cpu, other);
  Tensor t = full(Shape{4}, 1.0);
  pg.all_reduce(t);
  auto work = pg.barrier_async();
  work->wait();
  REQUIRE(work->is_success());
  REQUIRE(cpu->stats()[OpKind::Barrier].calls == 1);
  REQUIRE(other->stats()[OpKind::Barrier].calls == 0);
}
