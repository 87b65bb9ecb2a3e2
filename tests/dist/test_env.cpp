// The launch environment contract: torchrun/ddlrun, Open MPI and Slurm variables, and
// clear errors for malformed values.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "dist/env.h"
#include "tensor/error.h"

using namespace ddl::dist;

namespace {
// Clears every variable read_launch_env looks at, so cases do not leak into each other.
void clear_env() {
  for (const char* v : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                        "MASTER_PORT", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                        "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", "SLURM_PROCID",
                        "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE",
                        "SLURM_TASKS_PER_NODE", "SLURM_JOB_NODELIST", "SLURM_STEP_NODELIST", "SLURM_JOB_ID",
                        "DDL_RESTART_COUNT", "DDL_JOB_TOKEN", "DDL_STORE_SERVED"})
    unsetenv(v);
}
}  // namespace

TEST_CASE("env: a single process by default", "[dist]") {
  clear_env();
  LaunchEnv e = read_launch_env();
  CHECK(e.rank == 0);
  CHECK(e.world_size == 1);
  CHECK(e.master_addr == "127.0.0.1");
  CHECK(e.source == "default");
}

TEST_CASE("env: torchrun / ddlrun variables", "[dist]") {
  clear_env();
  setenv("RANK", "5", 1);
  setenv("WORLD_SIZE", "8", 1);
  setenv("LOCAL_RANK", "1", 1);
  setenv("LOCAL_WORLD_SIZE", "4", 1);
  setenv("MASTER_ADDR", "10.1.2.3", 1);
  setenv("MASTER_PORT", "29555", 1);
  setenv("DDL_RESTART_COUNT", "2", 1);
  setenv("DDL_STORE_SERVED", "1", 1);
  LaunchEnv e = read_launch_env();
  CHECK(e.rank == 5);
  CHECK(e.world_size == 8);
  CHECK(e.local_rank == 1);
  CHECK(e.local_world_size == 4);
  CHECK(e.master_addr == "10.1.2.3");
  CHECK(e.master_port == 29555);
  CHECK(e.restart_count == 2);
  CHECK(e.launcher_serves_store);
  CHECK(e.source == "torchrun");
  clear_env();
}

TEST_CASE("env: Open MPI variables", "[dist]") {
  clear_env();
  setenv("OMPI_COMM_WORLD_RANK", "2", 1);
  setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "0", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2", 1);
  LaunchEnv e = read_launch_env();
  CHECK(e.rank == 2);
  CHECK(e.world_size == 4);
  CHECK(e.local_rank == 0);
  CHECK(e.local_world_size == 2);
  CHECK(e.source == "openmpi");
  clear_env();
}

TEST_CASE("env: Slurm variables, master from the node list, port from the job id", "[dist]") {
  clear_env();
  setenv("SLURM_PROCID", "3", 1);
  setenv("SLURM_NTASKS", "4", 1);
  setenv("SLURM_LOCALID", "1", 1);
  setenv("SLURM_TASKS_PER_NODE", "2(x2)", 1);
  setenv("SLURM_JOB_NODELIST", "gpu[07-08]", 1);
  setenv("SLURM_JOB_ID", "123456", 1);
  LaunchEnv e = read_launch_env();
  CHECK(e.rank == 3);
  CHECK(e.world_size == 4);
  CHECK(e.local_rank == 1);
  CHECK(e.local_world_size == 2);
  CHECK(e.master_addr == "gpu07");
  CHECK(e.master_port == 20000 + 123456 % 20000);
  CHECK(e.source == "slurm");
  // A step on part of the job's nodes: rank 0 runs on the step's first node.
  setenv("SLURM_STEP_NODELIST", "gpu08", 1);
  CHECK(read_launch_env().master_addr == "gpu08");
  clear_env();
  CHECK(detail::first_slurm_host("node1,node2") == "node1");
  CHECK(detail::first_slurm_host("a[3,5-6],b1") == "a3");
  CHECK(detail::first_slurm_host("solo") == "solo");
}

TEST_CASE("env: malformed values are named in the error", "[dist]") {
  clear_env();
  setenv("RANK", "one", 1);
  setenv("WORLD_SIZE", "2", 1);
  REQUIRE_THROWS_WITH(read_launch_env(), Catch::Contains("RANK='one'"));
  setenv("RANK", "2", 1);
  REQUIRE_THROWS_WITH(read_launch_env(), Catch::Contains("rank 2 is outside [0, world size 2)"));
  setenv("RANK", "0", 1);
  setenv("MASTER_PORT", "70000", 1);
  REQUIRE_THROWS_WITH(read_launch_env(), Catch::Contains("MASTER_PORT 70000"));
  clear_env();
}
