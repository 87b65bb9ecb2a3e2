// Job tokens under torchrun's c10d rendezvous (see torchrun_token.h).
#include <sys/random.h>
#include <unistd.h>

#include <fstream>
#include <iterator>

#include <ddl/base/error.h>
#include <ddl/dist/launch/torchrun_token.h>
#include <ddl/dist/store/sha256.h>
#include <ddl/dist/store/torch_store.h>

namespace ddl::dist {
namespace {

// Note [Tokens under torchrun]
// torchrun --rdzv_backend c10d runs an unauthenticated PyTorch TCPStore at --rdzv_endpoint:
// any process that reaches it may join the rendezvous and be handed a rank. So torchrun's
// trust path is "can reach the rendezvous endpoint", and ddl's store borrows it: rank 0
// makes a random token and sets it in that store under a key of this run, restart and
// MASTER_ADDR:MASTER_PORT; the other ranks read it there. Whoever can read torchrun's store
// can read the token, as they could join torchrun's job -- no more. torchrun gives workers
// neither the endpoint nor the backend (PyTorch 1.13 sets only the variables of
// local_elastic_agent.py), so they are read from the agent's command line, the worker's
// parent; DDL_TORCHRUN_RDZV_ENDPOINT overrides that. Without an endpoint (--standalone,
// other backends) the token is derived from ~/.ddl/secret over the run id (Note [Job
// tokens] in dist/env.cpp): right on one node, and across nodes sharing a home directory.

const char* get(const char* name) {
  const char* v = std::getenv(name);
  return (v && *v) ? v : nullptr;
}

std::vector<std::string> parent_args() {
  std::ifstream in("/proc/" + std::to_string(getppid()) + "/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (size_t at = 0; at < all.size();) {
    const size_t end = all.find('\0', at);
    args.push_back(all.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return args;
}

std::string random_hex() {
  unsigned char bytes[32];
  DDL_CHECK(getrandom(bytes, sizeof bytes, 0) == ssize_t(sizeof bytes), "init_process_group: getrandom failed");
  std::string hex;
  for (unsigned char b : bytes) {
    hex += "0123456789abcdef"[b >> 4];
    hex += "0123456789abcdef"[b & 15];
  }
  return hex;
}

}  // namespace

namespace detail {

std::string c10d_endpoint(const std::vector<std::string>& args) {
  std::string backend, endpoint;
  // Each flag as "--name value" or "--name=value", in torchrun's two spellings.
  auto value_of = [&](size_t i, const std::string& name, std::string& out) {
    for (const std::string& spelling : {name, std::string("--rdzv-") + name.substr(7)}) {
      if (args[i] == spelling && i + 1 < args.size()) out = args[i + 1];
      if (args[i].rfind(spelling + "=", 0) == 0) out = args[i].substr(spelling.size() + 1);
    }
  };
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") break;
    value_of(i, "--rdzv_backend", backend);
    value_of(i, "--rdzv_endpoint", endpoint);
  }
  if (backend != "c10d" || endpoint.empty()) return "";
  const size_t bracket = endpoint.rfind(']'), colon = endpoint.rfind(':');
  const bool has_port = colon != std::string::npos && (bracket == std::string::npos || colon > bracket);
  return has_port ? endpoint : endpoint + ":29400";
}

}  // namespace detail

std::optional<JobToken> torchrun_job_token(const LaunchEnv& env, Millis timeout,
                                           std::chrono::steady_clock::time_point deadline) {
  const char* run_id = get("TORCHELASTIC_RUN_ID");
  if (!run_id) return std::nullopt;
  const std::string job = std::string("torchrun run ") + run_id + " restart " + std::to_string(env.restart_count) +
                          " store " + env.master_addr + ":" + std::to_string(env.master_port);
  std::string endpoint = get("DDL_TORCHRUN_RDZV_ENDPOINT") ? get("DDL_TORCHRUN_RDZV_ENDPOINT") : "";
  if (endpoint.empty()) endpoint = detail::c10d_endpoint(parent_args());
  if (endpoint.empty()) {
    const std::string path = detail::default_secret_path();
    return JobToken{detail::derive_job_token(detail::user_secret(path), job), path + " and the " + job};
  }
  const size_t colon = endpoint.rfind(':');
  std::string host = endpoint.substr(0, colon);
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  const int port = std::atoi(endpoint.c_str() + colon + 1);
  DDL_CHECK(port > 0 && port < 65536, "init_process_group: torchrun's rendezvous endpoint '", endpoint,
            "' has no usable port (set DDL_TORCHRUN_RDZV_ENDPOINT=host:port, or DDL_JOB_TOKEN)");
  TorchStore rdzv(host, port, timeout, deadline);
  const std::string key = "ddl.job_token/" + detail::sha256_hex(job);
  std::string token;
  if (env.rank == 0) {
    token = random_hex();
    rdzv.set(key, token);
  } else {
    token = rdzv.get(key, timeout);
  }
  return JobToken{token, "torchrun's rendezvous store at " + endpoint};
}

}  // namespace ddl::dist
