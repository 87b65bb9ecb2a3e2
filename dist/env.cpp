// Reading the launch environment (see env.h).
#include "dist/env.h"

#include <charconv>
#include <cstdlib>

#include "tensor/error.h"

namespace ddl::dist {
namespace {

const char* get(const char* name) {
  const char* v = std::getenv(name);
  return (v && *v) ? v : nullptr;
}

int parse_int(const char* name, const char* value) {
  int v = 0;
  const char* end = value + std::char_traits<char>::length(value);
  auto [p, ec] = std::from_chars(value, end, v);
  DDL_CHECK(ec == std::errc() && p == end, "dist: environment variable ", name, "='", value,
            "' is not an integer");
  return v;
}

// Reads `name` into out when set; returns whether it was.
bool read_int(const char* name, int& out) {
  const char* v = get(name);
  if (v) out = parse_int(name, v);
  return v != nullptr;
}

// Slurm's SLURM_TASKS_PER_NODE looks like "4(x2),3": the first count is this job's usual one.
int leading_int(const char* name, const char* value) {
  int v = 0;
  const char* end = value + std::char_traits<char>::length(value);
  auto [p, ec] = std::from_chars(value, end, v);
  DDL_CHECK(ec == std::errc(), "dist: cannot read a task count from ", name, "='", value, "'");
  return v;
}

}  // namespace

namespace detail {
std::string first_slurm_host(const std::string& list) {
  size_t cut = list.find_first_of(",[");
  if (cut == std::string::npos || list[cut] == ',') return list.substr(0, cut);
  // prefix[03-05,7]: the prefix plus the first number of the first range, zeros kept.
  size_t end = list.find_first_of("-,]", cut + 1);
  return list.substr(0, cut) + list.substr(cut + 1, end - cut - 1);
}
}  // namespace detail

LaunchEnv read_launch_env() {
  LaunchEnv e;
  if (get("RANK") || get("WORLD_SIZE")) {
    e.source = "torchrun";
    read_int("RANK", e.rank);
    read_int("WORLD_SIZE", e.world_size);
    e.local_rank = e.rank;
    e.local_world_size = e.world_size;
    read_int("LOCAL_RANK", e.local_rank);
    read_int("LOCAL_WORLD_SIZE", e.local_world_size);
  } else if (get("OMPI_COMM_WORLD_RANK")) {
    e.source = "openmpi";
    read_int("OMPI_COMM_WORLD_RANK", e.rank);
    read_int("OMPI_COMM_WORLD_SIZE", e.world_size);
    read_int("OMPI_COMM_WORLD_LOCAL_RANK", e.local_rank);
    read_int("OMPI_COMM_WORLD_LOCAL_SIZE", e.local_world_size);
  } else if (get("SLURM_PROCID")) {
    e.source = "slurm";
    read_int("SLURM_PROCID", e.rank);
    read_int("SLURM_NTASKS", e.world_size);
    read_int("SLURM_LOCALID", e.local_rank);
    if (const char* v = get("SLURM_NTASKS_PER_NODE"))
      e.local_world_size = leading_int("SLURM_NTASKS_PER_NODE", v);
    else if (const char* v2 = get("SLURM_TASKS_PER_NODE"))
      e.local_world_size = leading_int("SLURM_TASKS_PER_NODE", v2);
    // Rank 0 serves the store; it runs on the first node of this step (srun may use fewer
    // nodes than the job holds), which only SLURM_STEP_NODELIST tells.
    const char* nodes = get("SLURM_STEP_NODELIST") ? get("SLURM_STEP_NODELIST") : get("SLURM_JOB_NODELIST");
    if (nodes && !get("MASTER_ADDR")) e.master_addr = detail::first_slurm_host(nodes);
    // Every task of the job derives the same port from the job id.
    if (const char* job = get("SLURM_JOB_ID"); job && !get("MASTER_PORT"))
      e.master_port = 20000 + parse_int("SLURM_JOB_ID", job) % 20000;
  }
  if (const char* v = get("MASTER_ADDR")) e.master_addr = v;
  read_int("MASTER_PORT", e.master_port);
  read_int("DDL_RESTART_COUNT", e.restart_count);
  if (const char* v = get("DDL_JOB_TOKEN")) e.job_token = v;
  if (const char* v = get("DDL_STORE_SERVED")) e.launcher_serves_store = std::string(v) == "1";

  DDL_CHECK(e.world_size >= 1, "dist: world size must be >= 1, got ", e.world_size, " (from ",
            e.source, " variables)");
  DDL_CHECK(e.rank >= 0 && e.rank < e.world_size, "dist: rank ", e.rank,
            " is outside [0, world size ", e.world_size, ") (from ", e.source, " variables)");
  DDL_CHECK(e.local_rank >= 0 && e.local_world_size >= 1 && e.local_rank < e.local_world_size,
            "dist: local rank ", e.local_rank, " is outside [0, local world size ",
            e.local_world_size, ")");
  DDL_CHECK(e.master_port >= 1 && e.master_port <= 65535, "dist: MASTER_PORT ", e.master_port,
            " is outside [1, 65535]");
  return e;
}

}  // namespace ddl::dist
