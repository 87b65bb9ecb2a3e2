// Backend selection where no GPU is usable: "nccl" fails at once with a message naming
// CUDA and gloo, and "auto" is plain gloo. On a machine with a GPU this program reports
// itself skipped; the GPU side is tested in tests/cuda/test_nccl.cpp. ProcessGroupAuto's
// routing is in test_process_group_auto.cpp, train_cifar's flags in test_train_cifar_device.cpp.
#include <catch2/catch.hpp>

#include "tests/common/skip.h"
#include <ddl/ddl.h>
#include <ddl/dist/dist.h>
#include <ddl/tensor/core/devices.h>

using namespace ddl;
using namespace ddl::dist;

namespace {

InitOptions world_of_one() {
  InitOptions o;
  o.store = std::make_shared<HashStore>();
  o.rank = 0;
  o.world_size = 1;
  return o;
}

void skip_with_a_gpu() {
  if (cuda::is_available()) DDL_SKIP("this machine has a GPU: the nccl backend is tested in tests/cuda/test_nccl.cpp");
}

}  // namespace

TEST_CASE("nccl without a GPU fails at once, naming CUDA and gloo", "[dist]") {
  skip_with_a_gpu();
  CHECK(!is_backend_available("nccl"));
  CHECK(is_backend_available("gloo"));
  CHECK(is_backend_available("auto"));
  // (Catch's combined matchers hold their parts by pointer: spell them out at each use.)
  REQUIRE_THROWS_WITH(init_process_group("nccl", world_of_one()),
                      Catch::Contains("nccl") && Catch::Contains("CUDA") && Catch::Contains("gloo"));
  REQUIRE(!is_initialized());
  REQUIRE_THROWS_WITH(new_group("nccl", std::make_shared<HashStore>(), 0, 1),
                      Catch::Contains("nccl") && Catch::Contains("CUDA") && Catch::Contains("gloo"));
  REQUIRE_THROWS_WITH(new_group("mpi", std::make_shared<HashStore>(), 0, 1), Catch::Contains("unknown backend 'mpi'"));
}

TEST_CASE("auto follows the tensors' device: plain gloo without a GPU", "[dist]") {
  skip_with_a_gpu();  // there it is gloo+nccl (tests/cuda/test_nccl.cpp)
  auto pg = init_process_group("auto", world_of_one());
  REQUIRE(pg->backend() == "gloo");
  Tensor t = full(Shape{3}, 2.0);
  default_group().all_reduce(t);
  REQUIRE(t.data<float>()[0] == 2.0f);
  destroy_process_group();
}
