// The nccl process group on one GPU (skipped without one, see cuda_main.cpp): every collective
// against its closed form (tests/common/collective_checks.h, through the OnDevice adapter of
// nccl_checks.h), stream ordering, errors, byte counters, DDP on CUDA equal to one process,
// and the auto backend's split between gloo and nccl. World 1 runs in this process; several
// processes are test_nccl_ranks (two GPUs) and test_nccl_shared_gpu (two ranks on one GPU).
#include <catch2/catch.hpp>

#include "ddl.h"
#include "dist/dist.h"
#include "dist/process_group_auto.h"
#include "tensor/devices.h"
#include "tests/common/collective_checks.h"
#include "tests/cuda/nccl_checks.h"

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
