// The launch environment contract. ddlrun and torchrun set RANK, LOCAL_RANK, WORLD_SIZE,
// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT; srun (Slurm) and mpirun (Open MPI) set
// their own variables, which are understood too, so any of the three can launch ddl.
// Precedence: the torchrun names, then Open MPI's, then Slurm's, then a single process.
#pragma once

#include <string>

namespace ddl::dist {

struct LaunchEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  int restart_count = 0;          // DDL_RESTART_COUNT: which attempt of ddlrun --max-restarts
  std::string job_token;          // DDL_JOB_TOKEN: required by the store when set
  bool launcher_serves_store = false;  // DDL_STORE_SERVED=1: ddlrun runs the TCPStore server
  std::string source = "default";      // "torchrun", "openmpi", "slurm" or "default"
};

// Reads the variables above. Throws ddl::Error naming the variable when one is malformed
// (not an integer, rank outside [0, world size), port outside [1, 65535]).
LaunchEnv read_launch_env();

namespace detail {
// The first host of a Slurm host list: "node[03-05,7],gpu1" → "node03".
std::string first_slurm_host(const std::string& nodelist);
}  // namespace detail

}  // namespace ddl::dist
