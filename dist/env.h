// The launch environment contract. ddlrun and torchrun set RANK, LOCAL_RANK, WORLD_SIZE,
// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT; srun (Slurm) and mpirun (Open MPI) set
// their own variables, which are understood too, so any of the three can launch ddl.
// Precedence: the torchrun names, then Open MPI's, then Slurm's, then a single process.
// Also the job token the store asks for (see Note [Job tokens] in env.cpp, docs/dist.md).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ddl::dist {

// Note [World size limit]
// Rendezvous allocates per rank before any peer has to answer (the mesh's list of every
// rank's store key in all_reached, Gloo's pair per rank), so a lone rank told
// WORLD_SIZE=2147483647 grew by ~0.4 GB/s while it waited. A full mesh of 65536 ranks
// already needs 65535 sockets a process, past any usual open-file limit (a lone rank at the
// limit holds 176 MB); a larger size is a mistake, refused at once naming its variable.
inline constexpr int kMaxWorldSize = 65536;

struct LaunchEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  int restart_count = 0;               // DDL_RESTART_COUNT (or torchrun's TORCHELASTIC_RESTART_COUNT): the attempt
  std::string job_token;               // what the store checks; "" = none (loopback-only stores)
  std::string token_source;            // where job_token came from, for error messages
  std::string job_id;                  // the launcher's id of this job ("slurm job 12 step 3"); "" = none
  bool launcher_serves_store = false;  // DDL_STORE_SERVED=1: ddlrun runs the TCPStore server
  std::string source = "default";      // "torchrun", "openmpi", "slurm" or "default"
};

// Reads the variables above. Throws ddl::Error naming the variable when one is malformed
// (not an integer, rank outside [0, world size), a world size over kMaxWorldSize, port outside
// [1, 65535]) or a token file
// is unreadable or readable by other users. Under Slurm or Open MPI without DDL_JOB_TOKEN(_FILE)
// it derives the token from ~/.ddl/secret, creating that file (mode 0600) on first use.
LaunchEnv read_launch_env();

struct JobToken {
  std::string value;   // "" when none was given
  std::string source;  // "DDL_JOB_TOKEN", "DDL_JOB_TOKEN_FILE=/path"
};
// The token the user gave: DDL_JOB_TOKEN, else the first line of the file DDL_JOB_TOKEN_FILE
// names, which must be readable by its owner only (else an error saying chmod 600).
JobToken read_job_token();

namespace detail {
// The first host of a Slurm host list: "node[03-05,7],gpu1" → "node03".
std::string first_slurm_host(const std::string& nodelist);
// Derived store ports lie in [20000, 20000 + kPortSpan): below Linux's ephemeral ports
// (32768 and up, ip_local_port_range), which listeners on port 0 and outgoing connections take.
inline constexpr unsigned long long kPortSpan = 12000;
// Store port of a Slurm job step: 20000 + (job + 7919 * step) % kPortSpan. Steps of one job
// that run at once never share a port (7919 is prime to 12000).
int slurm_port(unsigned long long job, unsigned long long step);
// The per-user secret file (default $HOME/.ddl/secret): read, or created 0600 with 256
// random bits if absent. Throws if it is readable by others or cannot be made.
std::string user_secret(const std::string& path);
std::string default_secret_path();
// The token of one launcher job: HMAC-SHA-256(secret, job id), hex.
std::string derive_job_token(const std::string& secret, const std::string& job_id);
}  // namespace detail

// Ranks of one NCCL communicator sharing a GPU (train_cifar --share-gpu, the NCCL rank
// tests): NCCL refuses two ranks on one GPU of one host ("Duplicate GPU detected",
// NVIDIA/nccl#418), so each rank gets a host id of its own (NCCL_HOSTID, read by NCCL's
// getHostHash) and NCCL joins them as hosts over its sockets. First NCCL_HOSTID, to be set
// always (an inherited one is the same in every rank); then, on one node, defaults to keep
// where the caller set them: the loopback, NCCL's own sockets (a net plugin may ignore
// NCCL_IB_DISABLE), no multi-node NVLink or NVLink SHARP between "hosts" that are one GPU.
std::vector<std::pair<std::string, std::string>> shared_gpu_nccl_env(int rank, bool one_node);

}  // namespace ddl::dist
