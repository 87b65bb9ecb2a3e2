// init_process_group and the default group (see init.h).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

#include <ddl/base/error.h>
#include <ddl/dist/flight/recorder.h>
#include <ddl/dist/gloo/process_group_gloo.h>
#include <ddl/dist/hier/hierarchical_group.h>
#include <ddl/dist/init.h>
#include <ddl/dist/launch/torchrun_token.h>
#include <ddl/dist/process_group_auto.h>
#include <ddl/dist/store/file_store.h>
#include <ddl/dist/store/tcp_store.h>
#include <ddl/dist/store/torch_store.h>
#include <ddl/tensor/core/devices.h>

namespace ddl::dist {
namespace {

// A token every rank may give to run a store beyond loopback unauthenticated, on a network
// the user trusts (a Kubernetes pod network): named so that it reads as what it is.
constexpr const char* kInsecureNoToken = "insecure-none";

struct State {
  std::mutex mu;
  std::shared_ptr<ProcessGroup> group;
  std::shared_ptr<Store> store;       // the job's store, without the per-group prefix
  std::shared_ptr<Store> user_store;  // default_store()
  LaunchEnv env;
  // new_group_beside_default: the default group's factory, options and store key space.
  BackendFactory factory;
  InitOptions opts;
  std::shared_ptr<Store> side_store;
  int groups_created = 0;
  std::map<std::string, BackendFactory> backends;
};

State& state() {
  static State s;
  return s;
}

std::string env_or(const char* a, const char* b = nullptr) {
  if (const char* v = std::getenv(a); v && *v) return v;
  if (b)
    if (const char* v = std::getenv(b); v && *v) return v;
  return "";
}

// The host name errors give for this rank: the emulated host's (ddlrun --hosts), else the machine's.
std::string this_host() {
  if (std::string h = env_or("DDL_HOST"); !h.empty()) return h;
  char name[256] = "";
  gethostname(name, sizeof name - 1);
  return name;
}

// "tcp://host:port" → host, port.
void parse_tcp_url(const std::string& url, std::string& host, int& port) {
  std::string rest = url.substr(6);
  size_t colon = rest.rfind(':');
  DDL_CHECK(colon != std::string::npos && colon + 1 < rest.size(), "init_process_group: '", url,
            "' should look like tcp://host:port");
  host = rest.substr(0, colon);
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  port = std::atoi(rest.c_str() + colon + 1);
  DDL_CHECK(port > 0 && port < 65536, "init_process_group: bad port in '", url, "'");
}

std::shared_ptr<ProcessGroup> make_gloo(std::shared_ptr<Store> store, int rank, int size, const InitOptions& opts) {
  GlooOptions g;
  g.timeout = opts.timeout;
  g.hostname = opts.hostname;
  g.iface = opts.iface;
  g.deadline = opts.deadline;
  auto flat = std::make_shared<ProcessGroupGloo>(store, rank, size, g);
  // DDL_HIERARCHICAL=1: a host-aware all-reduce over several ranks per host (hier/).
  if (hierarchical_from_env()) return maybe_hierarchical(std::move(flat), std::move(store), g);
  return flat;
}

// The factory for `backend`, after checking it can work here (before any rendezvous, so a
// misconfigured job fails at once). Call with state().mu held.
BackendFactory find_backend(State& s, const std::string& backend) {
  s.backends.emplace("gloo", &make_gloo);
  const bool has_nccl = s.backends.count("nccl") > 0;
  DDL_CHECK(backend != "nccl" || has_nccl,
            "init_process_group: the nccl backend is not part of this build (it needs CUDA and NCCL: "
            "meson setup -Dcuda=enabled on a machine with the CUDA toolkit and NCCL); use \"gloo\" for CPU tensors");
  DDL_CHECK(backend != "nccl" || cuda::is_available(),
            "init_process_group: the nccl backend needs a CUDA GPU, but none is usable here "
            "(ddl::cuda::device_count() is 0); use \"gloo\" for CPU tensors");
  if (backend == "auto") {
    if (!has_nccl || !cuda::is_available()) return s.backends.at("gloo");
    // Each backend rendezvouses in its own key space of the group's store.
    return [gloo = s.backends.at("gloo"), nccl = s.backends.at("nccl")](
               std::shared_ptr<Store> store, int rank, int size,
               const InitOptions& opts) -> std::shared_ptr<ProcessGroup> {
      auto cpu = gloo(std::make_shared<PrefixStore>("gloo", store), rank, size, opts);
      auto cuda = nccl(std::make_shared<PrefixStore>("nccl", store), rank, size, opts);
      return std::make_shared<ProcessGroupAuto>(std::move(cpu), std::move(cuda));
    };
  }
  auto it = s.backends.find(backend);
  if (it != s.backends.end()) return it->second;
  std::string names = "auto";
  for (const auto& [name, f] : s.backends) names += ", " + name;
  DDL_CHECK(false, "init_process_group: unknown backend '", backend, "' (available: ", names, ")");
  return nullptr;
}

}  // namespace

bool is_backend_available(const std::string& name) {
  if (name == "gloo" || name == "auto") return true;
  std::lock_guard<std::mutex> lock(state().mu);
  return state().backends.count(name) > 0 && (name != "nccl" || cuda::is_available());
}

std::shared_ptr<ProcessGroup> new_group(const std::string& backend, std::shared_ptr<Store> store, int rank, int size,
                                        const InitOptions& opts) {
  BackendFactory factory;
  {
    std::lock_guard<std::mutex> lock(state().mu);
    factory = find_backend(state(), backend);
  }
  DDL_CHECK(store != nullptr, "new_group: a store is required");
  return factory(std::move(store), rank, size, opts);
}

void register_backend(const std::string& name, BackendFactory factory) {
  std::lock_guard<std::mutex> lock(state().mu);
  state().backends[name] = std::move(factory);
}

std::shared_ptr<ProcessGroup> init_process_group(const std::string& backend, InitOptions opts) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  DDL_CHECK(!s.group, "init_process_group: already initialized (call destroy_process_group first)");
  const BackendFactory factory = find_backend(s, backend);

  LaunchEnv env = read_launch_env();
  if (opts.rank >= 0) env.rank = opts.rank;
  if (opts.world_size >= 1) env.world_size = opts.world_size;
  DDL_CHECK(env.rank < env.world_size, "init_process_group: rank ", env.rank, " outside world size ", env.world_size);
  DDL_CHECK(env.world_size <= kMaxWorldSize, "init_process_group: world size ", env.world_size,
            " is more than ddl's limit of ", kMaxWorldSize, " ranks");  // See Note [World size limit]
  if (opts.iface.empty() && opts.hostname.empty()) opts.iface = env_or("DDL_GLOO_IFACE", "GLOO_SOCKET_IFNAME");
  // One deadline for all of the rendezvous: connecting to the store, its first reply and
  // the backend's exchange, so a slow store cannot make each step wait a full timeout.
  if (opts.deadline == std::chrono::steady_clock::time_point{})
    opts.deadline = std::chrono::steady_clock::now() + opts.timeout;

  std::shared_ptr<Store> store = opts.store;
  std::shared_ptr<Store> made;  // a store made here: its requests end by the deadline too
  if (!store) {
    const std::string& m = opts.init_method;
    if (m.rfind("file://", 0) == 0) {
      store = std::make_shared<FileStore>(m.substr(7), opts.timeout);
      if (opts.iface.empty() && opts.hostname.empty()) {
        DDL_CHECK(env.local_world_size == env.world_size,
                  "init_process_group: with a file store across nodes, set DDL_GLOO_IFACE (e.g. "
                  "eth0) so peers know which address reaches this rank");
        opts.hostname = "127.0.0.1";
      }
    } else {
      std::string host = env.master_addr;
      int port = env.master_port;
      if (m.rfind("tcp://", 0) == 0)
        parse_tcp_url(m, host, port);
      else
        DDL_CHECK(m == "env://", "init_process_group: init_method '", m,
                  "' is not env://, tcp://host:port or file:///dir");
      const std::string agent_store = env_or("TORCHELASTIC_USE_AGENT_STORE");
      if (agent_store == "True" || agent_store == "true" || agent_store == "1") {
        // Plain torchrun: its agent already serves a PyTorch TCPStore on MASTER_PORT, so no
        // rank serves one; all are clients (torch_store.h). Its restarts get fresh keys below
        // (TORCHELASTIC_RESTART_COUNT, read by read_launch_env).
        auto torch = std::make_shared<TorchStore>(host, port, opts.timeout, opts.deadline);
        if (opts.iface.empty() && opts.hostname.empty()) opts.hostname = torch->local_ip();
        store = torch;
      } else {
        // torchrun's elastic rendezvous: rank 0 serves this store, nobody gave a token.
        if (env.job_token.empty() && env.source == "torchrun")
          if (auto t = torchrun_job_token(env, opts.timeout, opts.deadline)) {
            env.job_token = t->value;
            env.token_source = t->source;
          }
        if (env.rank == 0 && !env.launcher_serves_store && env.job_token == kInsecureNoToken)
          std::fprintf(stderr,
                       "[rank 0/%d] DDL_JOB_TOKEN=%s: the store on %s:%d lets in any process that reaches "
                       "it (docs/dist.md, \"Launchers and the job token\")\n",
                       env.world_size, kInsecureNoToken, host.c_str(), port);
        TCPStoreOptions so;
        so.timeout = opts.timeout;
        so.token = env.job_token;
        so.token_source = env.token_source;
        so.who = "rank " + std::to_string(env.rank) + " on host " + this_host();
        so.is_server = env.rank == 0 && !env.launcher_serves_store;
        so.deadline = opts.deadline;
        auto tcp = std::make_shared<TCPStore>(host, port, so);
        if (opts.iface.empty() && opts.hostname.empty()) opts.hostname = tcp->local_ip();
        store = tcp;
      }
      made = store;
    }
  }
  // Each attempt (ddlrun restart) and each group gets its own key space in the store.
  std::string prefix = "ddl/attempt" + std::to_string(env.restart_count) + "/pg" + std::to_string(s.groups_created++);
  flight::begin_process(env.rank, env.world_size);  // the flight recorder (dist/flight/)
  std::shared_ptr<ProcessGroup> group;
  try {
    group = factory(std::make_shared<PrefixStore>(prefix, store), env.rank, env.world_size, opts);
  } catch (const std::exception& e) {
    flight::end_rendezvous(e.what());
    throw;
  }
  flight::end_rendezvous("");
  if (made) made->set_deadline({});  // later requests get their own timeouts
  s.group = group;
  s.store = std::make_shared<PrefixStore>(prefix + "/exit", store);
  s.user_store = std::make_shared<PrefixStore>(prefix + "/user", store);
  s.env = env;
  s.factory = factory;
  s.opts = opts;
  s.opts.deadline = {};  // a later group's rendezvous gets its own timeout
  s.side_store = std::make_shared<PrefixStore>(prefix + "/side", store);
  return group;
}

bool is_initialized() {
  std::lock_guard<std::mutex> lock(state().mu);
  return state().group != nullptr;
}

std::shared_ptr<ProcessGroup> default_group_ptr() {
  std::lock_guard<std::mutex> lock(state().mu);
  DDL_CHECK(state().group, "dist: no process group: call ddl::dist::init_process_group() first");
  return state().group;
}

ProcessGroup& default_group() { return *default_group_ptr(); }

int get_rank() {
  std::lock_guard<std::mutex> lock(state().mu);
  return state().group ? state().group->rank() : 0;
}

int get_world_size() {
  std::lock_guard<std::mutex> lock(state().mu);
  return state().group ? state().group->size() : 1;
}

const LaunchEnv& launch_env() { return state().env; }

std::shared_ptr<Store> default_store() {
  std::lock_guard<std::mutex> lock(state().mu);
  DDL_CHECK(state().user_store, "dist: no store: call ddl::dist::init_process_group() first");
  return state().user_store;
}

void destroy_process_group() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.group) return;
  // Rank 0 may be serving the store: it leaves only after every rank said goodbye, or after
  // the job's timeout (at most 30 s) when some rank left without one.
  try {
    if (!s.group->is_broken()) {
      s.store->add("done", 1);
      if (s.group->rank() == 0) {
        const auto grace = std::min<Millis>(s.store->timeout(), std::chrono::seconds(30));
        const auto deadline = std::chrono::steady_clock::now() + grace;
        while (s.store->add("done", 0) < s.group->size() && std::chrono::steady_clock::now() < deadline)
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
  } catch (const std::exception&) {
    // The store is gone already (rank 0 exited): nothing left to coordinate.
  }
  s.group.reset();
  s.store.reset();
  s.user_store.reset();
  s.side_store.reset();
  s.factory = nullptr;
}

std::shared_ptr<ProcessGroup> new_group_beside_default(const std::string& name) {
  BackendFactory factory;
  InitOptions opts;
  std::shared_ptr<Store> store;
  int rank = 0, size = 1;
  {
    std::lock_guard<std::mutex> lock(state().mu);
    const State& s = state();
    DDL_CHECK(s.group, "new_group_beside_default('", name, "'): call ddl::dist::init_process_group() first");
    factory = s.factory, opts = s.opts, store = s.side_store;
    rank = s.group->rank(), size = s.group->size();
  }
  return factory(std::make_shared<PrefixStore>(name, store), rank, size, opts);
}

}  // namespace ddl::dist
