// The nccl process group on one GPU (skipped without one, see cuda_main.cpp): every collective
// against its closed form (tests/common/collective_checks.h, through the OnDevice adapter of
// nccl_checks.h), stream ordering, errors, byte counters, DDP on CUDA equal to one process,
// the auto backend's split between gloo and nccl, and the operations' trace spans. World 1
// runs in this process; several processes are test_nccl_ranks (two GPUs) and
// test_nccl_shared_gpu (two ranks on one GPU).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/common/collective_checks.h"
#include "tests/cuda/nccl_checks.h"
#include <ddl/ddl.h>
#include <ddl/dist/dist.h>
#include <ddl/dist/process_group_auto.h>
#include <ddl/tensor/core/devices.h>
#include <ddl/trace/snapshot.h>

using namespace ddl;
using namespace ddl::dist;

TEST_CASE("nccl world 1: every collective, ordering, errors, counters", "[cuda][nccl]") {
  auto pg = new_group("nccl", std::make_shared<HashStore>(), 0, 1, test::nccl_test_options());
  REQUIRE(pg->backend() == "nccl");
  test::OnDevice adapter(pg, Device::cuda(0));
  test::check_all_collectives(adapter);
  test::check_native(*pg, Device::cuda(0));
}

TEST_CASE("nccl world 1: DDP on CUDA equals one process", "[cuda][nccl]") {
  auto pg = new_group("nccl", std::make_shared<HashStore>(), 0, 1, test::nccl_test_options());
  test::ddp_matches_one_process(pg, Device::cuda(0));
}

TEST_CASE("auto backend: CPU tensors over gloo, CUDA tensors over nccl", "[cuda][nccl]") {
  auto pg = new_group("auto", std::make_shared<HashStore>(), 0, 1, test::nccl_test_options());
  REQUIRE(pg->backend() == "gloo+nccl");
  Tensor cpu = full(Shape{3}, 2.0), gpu = full(Shape{3}, 3.0).to(Device::cuda(0));
  pg->all_reduce(cpu);
  // nccl counts an operation when its end event fires and its wait() leaves the host running
  // (Note [NCCL Work::wait]); wait(timeout) blocks the host until then.
  pg->all_reduce_async(gpu)->wait(Millis(60000));
  REQUIRE(to_vector<float>(gpu)[0] == 3.0f);
  auto& a = dynamic_cast<ProcessGroupAuto&>(*pg);
  REQUIRE(a.cpu_group().stats()[OpKind::AllReduce].calls == 1);
  REQUIRE(a.cuda_group().stats()[OpKind::AllReduce].calls == 1);
  REQUIRE(pg->stats()[OpKind::AllReduce].calls == 2);
}

TEST_CASE("nccl operations are async spans on the trace, from hand-off to completion", "[cuda][nccl][trace]") {
  auto pg = new_group("nccl", std::make_shared<HashStore>(), 0, 1, test::nccl_test_options());
  Tensor t = full(Shape{1000}, 1.0).to(Device::cuda(0));
  pg->all_reduce_async(t)->wait(Millis(60000));  // creates the communicator outside the trace
  trace::start();
  pg->all_reduce_async(t)->wait(Millis(60000));
  pg->all_reduce_async(t)->wait(Millis(60000));
  trace::stop();
  const trace::Snapshot s = trace::snapshot();
  std::vector<const trace::Event*> begins, ends;
  for (const trace::Event& e : s.events)
    if (e.cat && std::string(e.cat) == "nccl") {
      REQUIRE(std::string(e.name) == "all_reduce");
      (e.phase == 'b' ? begins : ends).push_back(&e);
    }
  REQUIRE(begins.size() == 2);
  REQUIRE(ends.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    REQUIRE(begins[i]->id == ends[i]->id);
    REQUIRE(begins[i]->id != 0);
    REQUIRE(ends[i]->ts_ns >= begins[i]->ts_ns);
    REQUIRE(begins[i]->nargs == 2);
    REQUIRE(ends[i]->args[0].value == 0);  // "failed"
  }
  REQUIRE(begins[0]->id != begins[1]->id);
}
