// libFuzzer target: dist::read_launch_env, the launcher's environment parsing (torchrun,
// Open MPI and Slurm variables). The input is lines "INDEX VALUE": the first byte of a line
// picks one of the variables below, the rest is its value. HOME is a private folder, so a
// derived token's ~/.ddl/secret is made there; DDL_JOB_TOKEN_FILE is not fuzzed (a path).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fuzz_util.h"
#include <ddl/base/error.h>
#include <ddl/dist/env.h>

namespace {
const char* const kNames[] = {"RANK",
                              "WORLD_SIZE",
                              "LOCAL_RANK",
                              "LOCAL_WORLD_SIZE",
                              "MASTER_ADDR",
                              "MASTER_PORT",
                              "DDL_RESTART_COUNT",
                              "TORCHELASTIC_RESTART_COUNT",
                              "DDL_JOB_TOKEN",
                              "DDL_STORE_SERVED",
                              "OMPI_COMM_WORLD_RANK",
                              "OMPI_COMM_WORLD_SIZE",
                              "OMPI_COMM_WORLD_LOCAL_RANK",
                              "OMPI_COMM_WORLD_LOCAL_SIZE",
                              "PMIX_NAMESPACE",
                              "OMPI_MCA_ess_base_jobid",
                              "SLURM_PROCID",
                              "SLURM_NTASKS",
                              "SLURM_LOCALID",
                              "SLURM_NTASKS_PER_NODE",
                              "SLURM_TASKS_PER_NODE",
                              "SLURM_STEP_NODELIST",
                              "SLURM_JOB_NODELIST",
                              "SLURM_JOB_ID",
                              "SLURM_STEP_ID",
                              "SLURM_STEPID"};
constexpr size_t kCount = sizeof kNames / sizeof kNames[0];
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ddl::fuzz::TempDir home;
  static const bool once = [] {
    setenv("HOME", home.path().c_str(), 1);
    unsetenv("DDL_JOB_TOKEN_FILE");
    return true;
  }();
  (void)once;
  for (const char* name : kNames) unsetenv(name);
  const std::string in(reinterpret_cast<const char*>(data), size);
  size_t at = 0;
  while (at < in.size()) {
    size_t end = in.find('\n', at);
    if (end == std::string::npos) end = in.size();
    if (end > at) {
      const size_t k = static_cast<uint8_t>(in[at]) % kCount;
      // putenv with strings this harness owns: glibc's setenv never frees a value it
      // copied (stdlib/setenv.c keeps them in known_values), past 2 GB in an hour here.
      // Unset first, so the environment never points at a string being replaced.
      static std::string slots[kCount];
      unsetenv(kNames[k]);
      std::string value = in.substr(at + 1, end - at - 1);
      value.resize(std::min(value.size(), value.find('\0')));  // a NUL ends it, as in a real environment
      slots[k] = std::string(kNames[k]) + "=" + value;
      putenv(slots[k].data());
    }
    at = end + 1;
  }
  try {
    const ddl::dist::LaunchEnv e = ddl::dist::read_launch_env();
    // The contract read_launch_env promises for what it accepts.
    if (e.world_size < 1 || e.rank < 0 || e.rank >= e.world_size || e.master_port < 1 || e.master_port > 65535)
      __builtin_trap();
  } catch (const ddl::Error&) {
  }
  return 0;
}
