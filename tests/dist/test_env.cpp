// The launch environment contract: torchrun/ddlrun, Open MPI and Slurm variables, clear
// errors for malformed values, and the job token: given, read from a private file, or
// derived per Slurm step / Open MPI job from a per-user secret.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "tests/common/dist_fixtures.h"
#include <ddl/base/error.h>
#include <ddl/dist/env.h>
#include <ddl/dist/gloo/process_group_gloo.h>
#include <ddl/dist/store/sha256.h>
#include <ddl/dist/store/store.h>

using namespace ddl::dist;

namespace {
// Clears every variable read_launch_env looks at, so cases do not leak into each other.
void clear_env() {
  for (const char* v : {"RANK",
                        "WORLD_SIZE",
                        "LOCAL_RANK",
                        "LOCAL_WORLD_SIZE",
                        "MASTER_ADDR",
                        "MASTER_PORT",
                        "OMPI_COMM_WORLD_RANK",
                        "OMPI_COMM_WORLD_SIZE",
                        "OMPI_COMM_WORLD_LOCAL_RANK",
                        "OMPI_COMM_WORLD_LOCAL_SIZE",
                        "SLURM_PROCID",
                        "SLURM_NTASKS",
                        "SLURM_LOCALID",
                        "SLURM_NTASKS_PER_NODE",
                        "SLURM_TASKS_PER_NODE",
                        "SLURM_JOB_NODELIST",
                        "SLURM_STEP_NODELIST",
                        "SLURM_JOB_ID",
                        "SLURM_STEP_ID",
                        "SLURM_STEPID",
                        "PMIX_NAMESPACE",
                        "OMPI_MCA_ess_base_jobid",
                        "DDL_RESTART_COUNT",
                        "TORCHELASTIC_RESTART_COUNT",
                        "DDL_JOB_TOKEN",
                        "DDL_JOB_TOKEN_FILE",
                        "DDL_STORE_SERVED"})
    unsetenv(v);
}

void slurm_task(const char* job, const char* step) {
  setenv("SLURM_PROCID", "1", 1);
  setenv("SLURM_NTASKS", "2", 1);
  setenv("SLURM_JOB_NODELIST", "node1", 1);
  setenv("SLURM_JOB_ID", job, 1);
  if (step)
    setenv("SLURM_STEP_ID", step, 1);
  else
    unsetenv("SLURM_STEP_ID");
}

void write_file(const std::string& path, const std::string& text, mode_t mode) {
  std::ofstream(path) << text;
  REQUIRE(chmod(path.c_str(), mode) == 0);
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
  // torchrun's own restart counter counts when ddlrun's is absent.
  setenv("TORCHELASTIC_RESTART_COUNT", "3", 1);
  CHECK(read_launch_env().restart_count == 2);
  unsetenv("DDL_RESTART_COUNT");
  CHECK(read_launch_env().restart_count == 3);
  setenv("TORCHELASTIC_RESTART_COUNT", "x", 1);
  CHECK_THROWS_WITH(read_launch_env(), Catch::Contains("TORCHELASTIC_RESTART_COUNT"));
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
  ddl::test::TempHome home;
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
  // No SLURM_STEP_ID: the batch script's own step (Slurm numbers it 0xfffffffb).
  CHECK(e.master_port == 20000 + (123456 + 7919ULL * (0xfffffffbULL % 12000)) % 12000);
  CHECK(e.job_id == "Slurm job 123456 step batch");
  CHECK(e.source == "slurm");
  // A step on part of the job's nodes: rank 0 runs on the step's first node.
  setenv("SLURM_STEP_NODELIST", "gpu08", 1);
  CHECK(read_launch_env().master_addr == "gpu08");
  clear_env();
  CHECK(ddl::dist::detail::first_slurm_host("node1,node2") == "node1");
  CHECK(ddl::dist::detail::first_slurm_host("a[3,5-6],b1") == "a3");
  CHECK(ddl::dist::detail::first_slurm_host("solo") == "solo");
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

TEST_CASE("env: absurd world sizes are refused at once, naming the variable", "[dist]") {
  // A lone rank told WORLD_SIZE=2147483647 used to allocate per rank while it waited.
  clear_env();
  setenv("RANK", "0", 1);
  setenv("WORLD_SIZE", "2147483647", 1);
  REQUIRE_THROWS_WITH(read_launch_env(), Catch::Contains("WORLD_SIZE=2147483647") && Catch::Contains("65536"));
  setenv("WORLD_SIZE", std::to_string(kMaxWorldSize + 1).c_str(), 1);
  REQUIRE_THROWS_WITH(read_launch_env(), Catch::Contains("WORLD_SIZE=65537"));
  setenv("WORLD_SIZE", std::to_string(kMaxWorldSize).c_str(), 1);
  REQUIRE(read_launch_env().world_size == kMaxWorldSize);
  setenv("WORLD_SIZE", "2", 1);
  setenv("LOCAL_WORLD_SIZE", "2147483647", 1);
  REQUIRE_THROWS_WITH(read_launch_env(), Catch::Contains("LOCAL_WORLD_SIZE=2147483647"));
  setenv("RANK", "2147483646", 1);
  unsetenv("LOCAL_WORLD_SIZE");
  REQUIRE_THROWS_WITH(read_launch_env(), Catch::Contains("rank 2147483646 is outside"));
  clear_env();
  setenv("OMPI_COMM_WORLD_RANK", "0", 1);
  setenv("OMPI_COMM_WORLD_SIZE", "100000", 1);
  REQUIRE_THROWS_WITH(read_launch_env(), Catch::Contains("OMPI_COMM_WORLD_SIZE=100000"));
  clear_env();
  slurm_task("7", "0");
  setenv("SLURM_NTASKS", "2147483647", 1);
  REQUIRE_THROWS_WITH(read_launch_env(), Catch::Contains("SLURM_NTASKS=2147483647"));
  clear_env();
  // Groups made directly are bounded too.
  REQUIRE_THROWS_WITH(std::make_shared<ProcessGroupGloo>(std::make_shared<HashStore>(), 0, 2147483647),
                      Catch::Contains("limit of 65536"));
}

TEST_CASE("env: Slurm steps get their own port and token; a step's tasks share them", "[dist]") {
  clear_env();
  ddl::test::TempHome home;
  slurm_task("4242", "0");
  LaunchEnv a = read_launch_env();
  LaunchEnv a2 = read_launch_env();
  slurm_task("4242", "1");
  LaunchEnv b = read_launch_env();
  slurm_task("4243", "0");
  LaunchEnv c = read_launch_env();
  CHECK(a.master_port == 20000 + 4242);
  CHECK(b.master_port == 20000 + (4242 + 7919) % 12000);
  CHECK(a.master_port != b.master_port);
  CHECK(a.master_port != c.master_port);
  REQUIRE(a.job_token.size() == 64);
  CHECK(a.job_token == a2.job_token);
  CHECK(a.master_port == a2.master_port);
  CHECK(a.job_token != b.job_token);
  CHECK(a.job_token != c.job_token);
  CHECK_THAT(a.token_source, Catch::Contains(home.dir + "/.ddl/secret") && Catch::Contains("Slurm job 4242 step 0"));
  // The old name of the variable works too.
  slurm_task("4242", nullptr);
  setenv("SLURM_STEPID", "1", 1);
  CHECK(read_launch_env().job_token == b.job_token);
  // Concurrent steps of one job never share a port (7919 is prime to 12000), and no derived
  // port is an ephemeral one (32768 and up).
  for (unsigned long long s = 1; s < 12000; ++s) {
    REQUIRE(ddl::dist::detail::slurm_port(99, 0) != ddl::dist::detail::slurm_port(99, s));
    REQUIRE(ddl::dist::detail::slurm_port(99, s) < 32768);
  }

  // The secret was created 0600 on first use and is what the token is keyed with.
  const std::string secret_path = home.dir + "/.ddl/secret";
  struct stat st {};
  REQUIRE(stat(secret_path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  const std::string secret = ddl::dist::detail::user_secret(secret_path);
  CHECK(secret.size() == 64);
  CHECK(a.job_token == ddl::dist::detail::derive_job_token(secret, "Slurm job 4242 step 0"));
  // Another user's secret (another home) gives another token for the same step.
  {
    ddl::test::TempHome other;
    slurm_task("4242", "0");
    CHECK(read_launch_env().job_token != a.job_token);
  }
  // A secret others can read is refused, not used.
  REQUIRE(chmod(secret_path.c_str(), 0644) == 0);
  slurm_task("4242", "0");
  REQUIRE_THROWS_WITH(read_launch_env(), Catch::Contains("chmod 600 " + secret_path));
  // DDL_JOB_TOKEN wins over the derived one (and then steps share it).
  setenv("DDL_JOB_TOKEN", "given", 1);
  LaunchEnv given = read_launch_env();
  CHECK(given.job_token == "given");
  CHECK(given.token_source == "DDL_JOB_TOKEN");
  clear_env();
}

TEST_CASE("env: Open MPI jobs derive a port and token from their PMIx namespace", "[dist]") {
  clear_env();
  ddl::test::TempHome home;
  setenv("OMPI_COMM_WORLD_RANK", "0", 1);
  setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  LaunchEnv none = read_launch_env();
  CHECK(none.job_token.empty());  // no id to derive from: loopback-only, as before
  CHECK(none.master_port == 29500);
  setenv("PMIX_NAMESPACE", "prterun-node1-1234@1", 1);
  LaunchEnv a = read_launch_env();
  setenv("PMIX_NAMESPACE", "prterun-node1-1235@1", 1);
  LaunchEnv b = read_launch_env();
  CHECK(a.job_id == "Open MPI job prterun-node1-1234@1");
  CHECK(a.job_token.size() == 64);
  CHECK(a.job_token != b.job_token);
  CHECK(a.master_port != b.master_port);
  CHECK(a.master_port >= 20000);
  CHECK(a.master_port < 40000);
  clear_env();
}

TEST_CASE("env: DDL_JOB_TOKEN_FILE must be private", "[dist]") {
  clear_env();
  ddl::test::TempHome home;
  const std::string path = home.dir + "/token";
  write_file(path, "file-token\n", 0600);
  setenv("DDL_JOB_TOKEN_FILE", path.c_str(), 1);
  LaunchEnv e = read_launch_env();
  CHECK(e.job_token == "file-token");
  CHECK(e.token_source == "DDL_JOB_TOKEN_FILE=" + path);
  write_file(path, "file-token\n", 0644);
  REQUIRE_THROWS_WITH(read_launch_env(), Catch::Contains("mode 0644") && Catch::Contains("chmod 600 " + path));
  write_file(path, "file-token\n", 0640);
  REQUIRE_THROWS_WITH(read_job_token(), Catch::Contains("chmod 600"));
  write_file(path, "\n", 0600);
  REQUIRE_THROWS_WITH(read_job_token(), Catch::Contains("is empty"));
  setenv("DDL_JOB_TOKEN_FILE", (home.dir + "/missing").c_str(), 1);
  REQUIRE_THROWS_WITH(read_job_token(), Catch::Contains("cannot open DDL_JOB_TOKEN_FILE"));
  // DDL_JOB_TOKEN, when also set, wins (ddlrun passes it to its workers).
  setenv("DDL_JOB_TOKEN", "env-token", 1);
  CHECK(read_job_token().value == "env-token");
  clear_env();
}

TEST_CASE("env: a token file someone else owns, could replace, or that is a FIFO is refused at once", "[dist]") {
  clear_env();
  ddl::test::TempHome home;
  const std::string path = home.dir + "/token";
  write_file(path, "file-token\n", 0600);
  setenv("DDL_JOB_TOKEN_FILE", path.c_str(), 1);
  REQUIRE(read_job_token().value == "file-token");
  if (geteuid() == 0) {  // as ssh refuses a key file another user owns, whatever its mode
    REQUIRE(chown(path.c_str(), 65534, 65534) == 0);
    REQUIRE_THROWS_WITH(read_job_token(), Catch::Contains(path) && Catch::Contains("is owned by user 65534"));
    REQUIRE(chown(path.c_str(), 0, 0) == 0);
  }
  // A directory on the way that others may write (and not sticky, as /tmp is): they could
  // replace the file.
  const std::string shared = home.dir + "/shared";
  REQUIRE(mkdir(shared.c_str(), 0700) == 0);
  REQUIRE(chmod(shared.c_str(), 0777) == 0);
  write_file(shared + "/token", "shared-token\n", 0600);
  setenv("DDL_JOB_TOKEN_FILE", (shared + "/token").c_str(), 1);
  REQUIRE_THROWS_WITH(read_job_token(), Catch::Contains("directory " + shared) && Catch::Contains("chmod o-w"));
  REQUIRE(chmod(shared.c_str(), 01777) == 0);  // sticky: others cannot replace this user's file
  REQUIRE(read_job_token().value == "shared-token");
  // A FIFO would block the open forever (and ddlrun with it).
  const std::string fifo = home.dir + "/fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  setenv("DDL_JOB_TOKEN_FILE", fifo.c_str(), 1);
  REQUIRE_THROWS_WITH(read_job_token(), Catch::Contains(fifo) && Catch::Contains("not a regular file"));
  // A NUL byte would cut the token short on one side of the handshake only.
  write_file(path, std::string("ab\0cd\n", 6), 0600);
  setenv("DDL_JOB_TOKEN_FILE", path.c_str(), 1);
  REQUIRE_THROWS_WITH(read_job_token(), Catch::Contains(path) && Catch::Contains("NUL byte"));
  clear_env();
}

TEST_CASE("env: SHA-256 and HMAC-SHA-256 match the published vectors", "[dist]") {
  CHECK(ddl::dist::detail::sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(ddl::dist::detail::sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // Several blocks (checked with Python's hashlib).
  CHECK(ddl::dist::detail::sha256_hex(std::string(1000, 'a')) ==
        "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
  // RFC 4231, test case 2; and a key longer than a block (hashed first; Python's hmac).
  CHECK(ddl::dist::detail::hmac_sha256_hex("Jefe", "what do ya want for nothing?") ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  CHECK(ddl::dist::detail::hmac_sha256_hex(std::string(100, 'k'), "ddl job token v1: Slurm job 77 step 1") ==
        "dd68c122a1e37dc74db21c69ad3709e257aef373600c20a4339622dd72adbee6");
}

TEST_CASE("env: ranks sharing a GPU get their own NCCL host id, and the one-node defaults", "[dist]") {
  const auto r0 = shared_gpu_nccl_env(0, true), r1 = shared_gpu_nccl_env(1, true);
  REQUIRE(r0.front().first == "NCCL_HOSTID");
  REQUIRE(r1.front().first == "NCCL_HOSTID");
  REQUIRE(r0.front().second != r1.front().second);  // else NCCL refuses the duplicate GPU
  std::map<std::string, std::string> defaults(r0.begin() + 1, r0.end());
  REQUIRE(defaults.size() == r0.size() - 1);
  CHECK(defaults["NCCL_SOCKET_IFNAME"] == "lo");
  CHECK(defaults["NCCL_NET"] == "Socket");
  CHECK(defaults["NCCL_MNNVL_ENABLE"] == "0");
  CHECK(defaults["NCCL_NVLS_ENABLE"] == "0");
  // Across nodes the loopback reaches no peer: only the host id.
  REQUIRE(shared_gpu_nccl_env(3, false).size() == 1);
}
