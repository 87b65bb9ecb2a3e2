// Resuming at another world size (ft/elastic_resume.h, Note [Elastic resume]):
// a snapshot of world size 3 is refused at 2 unless the run is elastic; adapt_to_world moves a
// mid-epoch position to the next epoch's start and the schedule to epoch * steps_per_epoch,
// keeps an epoch-end position, leaves an unchanged world alone, and refuses strategies other
// than ddp and allreduce, naming them. The multi-process drill is tests/hosts/test_ddlrun_elastic.sh.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include <ddl/ddl.h>
#include <ddl/ft/elastic_resume.h>
#include <ddl/ft/snapshot.h>

using namespace ddl;
namespace fs = std::filesystem;

namespace {
struct Tiny : nn::Module {
  Tiny() : nn::Module("Tiny") {
    Generator g(7);
    register_parameter("w", randn({4, 3}, g));
  }
};
}  // namespace

TEST_CASE("a snapshot of another world size loads only in an elastic run") {
  const fs::path path = fs::temp_directory_path() / ("ddl_elastic_test_" + std::to_string(::getpid()) + ".safetensors");
  Tiny a;
  optim::SGD opt_a(a.parameters(), optim::SGDOptions(0.1).momentum(0.9));
  ft::save_snapshot(path.string(), a, opt_a,
                    {.epoch = 2,
                     .step_in_epoch = 5,
                     .global_step = 21,
                     .seed = 1,
                     .world_size = 3,
                     .rng_offset = 0,
                     .batch_size = 8});
  Tiny b;
  optim::SGD opt_b(b.parameters(), optim::SGDOptions(0.1).momentum(0.9));
  ft::TrainingPosition pos{.seed = 1, .world_size = 2, .batch_size = 8};
  REQUIRE_THROWS_WITH(ft::load_snapshot(path.string(), b, opt_b, pos),
                      Catch::Contains("world size 3") && Catch::Contains("world size 2"));
  pos.any_world_size = true;
  REQUIRE(ft::load_snapshot(path.string(), b, opt_b, pos));
  CHECK(pos.world_size == 3);
  CHECK(pos.epoch == 2);
  CHECK(pos.step_in_epoch == 5);
  fs::remove(path);
}

TEST_CASE("adapt_to_world: the next epoch boundary, the schedule at epoch * steps_per_epoch") {
  ft::TrainingPosition mid{.epoch = 2, .step_in_epoch = 5, .global_step = 21, .world_size = 3};
  const std::string note = ft::adapt_to_world(mid, 2, 10, "ddp");
  CHECK(mid.epoch == 3);
  CHECK(mid.step_in_epoch == 0);
  CHECK(mid.global_step == 30);
  CHECK(mid.world_size == 2);
  CHECK_THAT(note, Catch::Contains("world size 3 -> 2") && Catch::Contains("start of epoch 4"));

  ft::TrainingPosition end{.epoch = 2, .step_in_epoch = 0, .global_step = 14, .world_size = 2};
  CHECK_THAT(ft::adapt_to_world(end, 3, 4, "allreduce"), !Catch::Contains("skipped"));
  CHECK(end.epoch == 2);
  CHECK(end.global_step == 8);

  ft::TrainingPosition same{.epoch = 1, .step_in_epoch = 3, .global_step = 7, .world_size = 2};
  CHECK(ft::adapt_to_world(same, 2, 10, "param-server").empty());
  CHECK(same.step_in_epoch == 3);
  CHECK(same.global_step == 7);
}

TEST_CASE("adapt_to_world refuses strategies whose replicas are not interchangeable") {
  for (const char* sync : {"param-server", "gather-scatter", "ring"}) {
    ft::TrainingPosition pos{.epoch = 1, .world_size = 3};
    REQUIRE_THROWS_WITH(ft::adapt_to_world(pos, 2, 10, sync),
                        Catch::Contains(std::string("--sync ") + sync) && Catch::Contains("ddp and allreduce"));
    CHECK(pos.world_size == 3);
  }
}
