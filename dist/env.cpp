// Reading the launch environment and the job token (see env.h). Per-job tokens are derived
// from a per-user secret with HMAC-SHA-256 (store/sha256.h), no general crypto.
#include <fcntl.h>
#include <pwd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <ddl/base/error.h>
#include <ddl/dist/env.h>
#include <ddl/dist/launch/munge_auth.h>
#include <ddl/dist/store/sha256.h>

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
  DDL_CHECK(ec == std::errc() && p == end, "dist: environment variable ", name, "='", value, "' is not an integer");
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

unsigned long long parse_u64(const char* name, const char* value) {
  unsigned long long v = 0;
  const char* end = value + std::char_traits<char>::length(value);
  auto [p, ec] = std::from_chars(value, end, v);
  DDL_CHECK(ec == std::errc() && p == end, "dist: environment variable ", name, "='", value,
            "' is not a non-negative integer");
  return v;
}

// Slurm's own step number for the batch script (SLURM_BATCH_SCRIPT in slurm.h), used when
// a task runs outside any srun step and has no SLURM_STEP_ID.
constexpr unsigned long long kSlurmBatchStep = 0xfffffffbULL;

// Throws unless every directory above `path` is one only its owner (this user or root) can
// change, or sticky as /tmp is: otherwise another user could replace the file (OpenSSH's
// safe_path check for key files, relaxed for sticky directories).
void check_directories_private(const std::string& path, const std::string& what) {
  const std::string full = std::filesystem::absolute(path).lexically_normal().string();
  std::string dir = full.substr(0, full.rfind('/'));
  for (int depth = 0; depth < 4096; ++depth) {
    if (dir.empty()) dir = "/";
    struct stat st {};
    DDL_CHECK(::stat(dir.c_str(), &st) == 0, "dist: cannot check the directory ", dir, " of ", what, " '", path,
              "': ", std::strerror(errno));
    const bool owner_ok = st.st_uid == 0 || st.st_uid == ::geteuid();
    const bool others_may_replace = (st.st_mode & 022) != 0 && (st.st_mode & S_ISVTX) == 0;
    DDL_CHECK(owner_ok && !others_may_replace, "dist: ", what, " '", path, "' is in the directory ", dir,
              owner_ok ? " which other users may write" : " which another user owns",
              ", so they could replace it with a token of their choosing. Move it, or: chmod o-w,g-w ", dir);
    if (dir == "/") return;
    dir = dir.substr(0, dir.rfind('/'));
  }
}

// Reads a file that holds a secret: a regular file this user (or root) owns, that neither
// the group nor others may read or write, in directories nobody else may change (as ssh
// demands of its keys). Returns its first line. A FIFO is refused, not waited on.
std::string read_private_file(const std::string& path, const std::string& what) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  DDL_CHECK(fd >= 0, "dist: cannot open ", what, " '", path, "': ", std::strerror(errno));
  struct stat st {};
  fstat(fd, &st);
  std::string text;
  char buf[4096];
  ssize_t n;
  while (S_ISREG(st.st_mode) && text.size() < 65536 && (n = read(fd, buf, sizeof buf)) > 0) text.append(buf, n);
  close(fd);
  DDL_CHECK(S_ISREG(st.st_mode), "dist: ", what, " '", path, "' is not a regular file");
  DDL_CHECK(st.st_uid == ::geteuid() || st.st_uid == 0, "dist: ", what, " '", path, "' is owned by user ", st.st_uid,
            ", not by this user (", ::geteuid(), "): whoever owns it chooses the job token");
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", unsigned(st.st_mode & 07777));
  DDL_CHECK((st.st_mode & 077) == 0, "dist: ", what, " '", path, "' has mode ", mode,
            ": other users could read the job token in it and join your jobs. Make it private: chmod 600 ", path);
  check_directories_private(path, what);
  std::string line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
  DDL_CHECK(!line.empty(), "dist: ", what, " '", path, "' is empty: write the token on its first line");
  DDL_CHECK(line.find('\0') == std::string::npos, "dist: ", what, " '", path,
            "' holds a NUL byte in its first line; a token is text");
  return line;
}

}  // namespace

JobToken read_job_token() {
  JobToken t;
  if (const char* v = get("DDL_JOB_TOKEN")) {
    t = {v, "DDL_JOB_TOKEN"};
  } else if (const char* f = get("DDL_JOB_TOKEN_FILE")) {
    t = {read_private_file(f, "DDL_JOB_TOKEN_FILE"), std::string("DDL_JOB_TOKEN_FILE=") + f};
  }
  DDL_CHECK(t.value.size() <= 1024, "dist: the job token from ", t.source, " has ", t.value.size(),
            " bytes; the limit is 1024");
  return t;
}

namespace detail {

// Note [Job tokens]
// A TCPStore bound beyond loopback accepts only clients that present the job's token
// (docs/dist.md, "Who may join a job"). The token is, in order: DDL_JOB_TOKEN; the first
// line of DDL_JOB_TOKEN_FILE (mode 0600); under Slurm or Open MPI, HMAC-SHA-256 keyed by a
// per-user secret (~/.ddl/secret, 0600, created on first use; cluster home directories are
// shared, so every node derives the same value) over the launcher's job id — for Slurm the
// job and step ids, so a rank of one step is refused by another step's store. What it buys:
// only processes that can read the secret (its owner, and root) can join or read the store;
// what it does not: the token crosses the network in clear, once per connection, so anyone
// who can sniff the cluster network learns that step's token (not the secret: HMAC).

int slurm_port(unsigned long long job, unsigned long long step) {
  return 20000 + static_cast<int>((job % kPortSpan + 7919 * (step % kPortSpan)) % kPortSpan);
}

std::string default_secret_path() {
  std::string home;
  if (const char* h = get("HOME"))
    home = h;
  else if (const passwd* pw = getpwuid(getuid()))
    home = pw->pw_dir;
  DDL_CHECK(!home.empty(), "dist: cannot find a home directory for ~/.ddl/secret (HOME is unset): set DDL_JOB_TOKEN");
  return home + "/.ddl/secret";
}

std::string user_secret(const std::string& path) {
  if (access(path.c_str(), F_OK) != 0 && errno == ENOENT) {
    // Many tasks on many nodes may get here at once: each writes its own temporary file and
    // link() publishes exactly one of them (atomic, also on NFS); the others read the winner.
    const std::string dir = path.substr(0, path.rfind('/'));
    if (!dir.empty()) mkdir(dir.c_str(), 0700);
    char host[256] = "host";
    gethostname(host, sizeof host - 1);
    const std::string tmp = path + ".tmp." + host + "." + std::to_string(getpid());
    int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    DDL_CHECK(fd >= 0, "dist: cannot create the per-user secret ", tmp, ": ", std::strerror(errno),
              " (set DDL_JOB_TOKEN or DDL_JOB_TOKEN_FILE, the same on every node, instead)");
    unsigned char bytes[32];
    bool ok = getrandom(bytes, sizeof bytes, 0) == ssize_t(sizeof bytes);
    std::string hex;
    for (unsigned char b : bytes) {
      hex += "0123456789abcdef"[b >> 4];
      hex += "0123456789abcdef"[b & 15];
    }
    hex += "\n";
    ok = ok && write(fd, hex.data(), hex.size()) == ssize_t(hex.size()) && fsync(fd) == 0;
    close(fd);
    int rc = ok ? link(tmp.c_str(), path.c_str()) : -1;
    int err = errno;
    unlink(tmp.c_str());
    DDL_CHECK(ok && (rc == 0 || err == EEXIST), "dist: cannot create the per-user secret ", path, ": ",
              std::strerror(err), " (set DDL_JOB_TOKEN or DDL_JOB_TOKEN_FILE, the same on every node, instead)");
  }
  return read_private_file(path, "the per-user secret");
}

std::string derive_job_token(const std::string& secret, const std::string& job_id) {
  return hmac_sha256_hex(secret, "ddl job token v1: " + job_id);
}

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
    // Open MPI documents no job id; its PMIx runtime gives every process of one mpirun the
    // same PMIX_NAMESPACE (Open MPI 4 also OMPI_MCA_ess_base_jobid).
    const char* ns = get("PMIX_NAMESPACE") ? get("PMIX_NAMESPACE") : get("OMPI_MCA_ess_base_jobid");
    if (ns) {
      e.job_id = std::string("Open MPI job ") + ns;
      const std::string h = detail::sha256_hex(ns);
      if (!get("MASTER_PORT"))
        e.master_port = 20000 + static_cast<int>(std::stoul(h.substr(0, 8), nullptr, 16) % detail::kPortSpan);
    }
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
    // Every task of a step derives the same port and token from the job and step ids;
    // steps running at once get different ones (see Note [Job tokens]).
    if (const char* job = get("SLURM_JOB_ID")) {
      const char* step_var = get("SLURM_STEP_ID") ? "SLURM_STEP_ID" : "SLURM_STEPID";
      const char* step = get(step_var);
      const unsigned long long step_id = step ? parse_u64(step_var, step) : kSlurmBatchStep;
      e.job_id = std::string("Slurm job ") + job + " step " + (step ? step : "batch");
      if (!get("MASTER_PORT")) e.master_port = detail::slurm_port(parse_u64("SLURM_JOB_ID", job), step_id);
    }
  }
  if (const char* v = get("MASTER_ADDR")) e.master_addr = v;
  read_int("MASTER_PORT", e.master_port);
  // ddlrun's attempt number, or torchrun's (its agent restarts workers under --max-restarts).
  if (!read_int("DDL_RESTART_COUNT", e.restart_count)) read_int("TORCHELASTIC_RESTART_COUNT", e.restart_count);
  JobToken token = read_job_token();
  if (token.value.empty() && !e.job_id.empty() && detail::munge_available()) {
    // Slurm's own authentication, also on MPI clusters that run it: no shared home needed
    // (Note [MUNGE tokens] in dist/launch/munge_auth.cpp).
    token = {detail::kMungeTokenPrefix + e.job_id, "MUNGE credentials for the " + e.job_id};
  } else if (token.value.empty() && !e.job_id.empty()) {
    const std::string path = detail::default_secret_path();
    token = {detail::derive_job_token(detail::user_secret(path), e.job_id), path + " and the " + e.job_id};
  }
  e.job_token = token.value;
  e.token_source = token.source;
  if (const char* v = get("DDL_STORE_SERVED")) e.launcher_serves_store = std::string(v) == "1";

  // The variables the sizes came from, to name them in errors.
  const bool mpi = e.source == "openmpi", slurm = e.source == "slurm";
  const char* world_var = mpi ? "OMPI_COMM_WORLD_SIZE" : slurm ? "SLURM_NTASKS" : "WORLD_SIZE";
  const char* local_var = mpi     ? "OMPI_COMM_WORLD_LOCAL_SIZE"
                          : slurm ? (get("SLURM_NTASKS_PER_NODE") ? "SLURM_NTASKS_PER_NODE" : "SLURM_TASKS_PER_NODE")
                                  : "LOCAL_WORLD_SIZE";
  DDL_CHECK(e.world_size >= 1, "dist: world size must be >= 1, got ", e.world_size, " (from ", e.source, " variables)");
  // See Note [World size limit].
  DDL_CHECK(e.world_size <= kMaxWorldSize, "dist: ", world_var, "=", e.world_size, " is more than ddl's limit of ",
            kMaxWorldSize, " ranks");
  DDL_CHECK(e.local_world_size <= kMaxWorldSize, "dist: ", local_var, "=", e.local_world_size,
            " is more than ddl's limit of ", kMaxWorldSize, " ranks");
  DDL_CHECK(e.rank >= 0 && e.rank < e.world_size, "dist: rank ", e.rank, " is outside [0, world size ", e.world_size,
            ") (from ", e.source, " variables)");
  DDL_CHECK(e.local_rank >= 0 && e.local_world_size >= 1 && e.local_rank < e.local_world_size, "dist: local rank ",
            e.local_rank, " is outside [0, local world size ", e.local_world_size, ")");
  DDL_CHECK(e.master_port >= 1 && e.master_port <= 65535, "dist: MASTER_PORT ", e.master_port,
            " is outside [1, 65535]");
  return e;
}

std::vector<std::pair<std::string, std::string>> shared_gpu_nccl_env(int rank, bool one_node) {
  std::vector<std::pair<std::string, std::string>> env{{"NCCL_HOSTID", "ddl-shared-gpu-rank-" + std::to_string(rank)}};
  if (one_node)
    env.insert(env.end(), {{"NCCL_SOCKET_IFNAME", "lo"},
                           {"NCCL_IB_DISABLE", "1"},
                           {"NCCL_NET", "Socket"},
                           {"NCCL_MNNVL_ENABLE", "0"},
                           {"NCCL_NVLS_ENABLE", "0"}});
  return env;
}

}  // namespace ddl::dist
