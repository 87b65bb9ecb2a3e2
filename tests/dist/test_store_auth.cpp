// Job tokens on the TCPStore (Note [Job tokens] in dist/env.cpp): a wrong or missing token
// is refused at once with a message naming the store, a server beyond loopback will not
// start without a token, token files must be private, and a rank of one Slurm step is
// refused by another step's store. A real non-loopback address is exercised in a network
// namespace by test_store_netns.sh.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tests/common/dist_fixtures.h"
#include <ddl/base/error.h>
#include <ddl/dist/env.h>
#include <ddl/dist/store/socket.h>
#include <ddl/dist/store/tcp_store.h>

using namespace ddl::dist;
using Catch::Contains;
using ddl::test::seconds_since;

namespace {

// A client whose timeout is long: a refusal that were only noticed at the timeout would
// show up as a slow test, not pass.
TCPStoreOptions client(const std::string& token, const std::string& source = "") {
  TCPStoreOptions o;
  o.timeout = Millis(60000);
  o.token = token;
  o.token_source = source;
  return o;
}

// Sets the environment of one Slurm task and a fresh HOME (for ~/.ddl/secret); undoes both.
struct SlurmTask {
  ddl::test::TempHome home;
  SlurmTask() {
    setenv("SLURM_PROCID", "1", 1);
    setenv("SLURM_NTASKS", "2", 1);
    setenv("SLURM_JOB_ID", "4242", 1);
  }
  LaunchEnv step(const char* id) {
    setenv("SLURM_STEP_ID", id, 1);
    return read_launch_env();
  }
  ~SlurmTask() {
    for (const char* v : {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_JOB_ID", "SLURM_STEP_ID"}) unsetenv(v);
  }
};

}  // namespace

TEST_CASE("store auth: a wrong token is refused within seconds, naming the store", "[dist]") {
  TCPStoreServer server("127.0.0.1", 0, "right");
  const std::string addr = "127.0.0.1:" + std::to_string(server.port());
  auto t0 = std::chrono::steady_clock::now();
  REQUIRE_THROWS_WITH(TCPStore("127.0.0.1", server.port(), client("wrong", "DDL_JOB_TOKEN")),
                      Contains("the store at " + addr + " refused this rank's job token (from DDL_JOB_TOKEN)"));
  CHECK(seconds_since(t0) < 5);
  CHECK(server.rejected_clients() == 1);
  // A prefix of the token is not the token.
  REQUIRE_THROWS_WITH(TCPStore("127.0.0.1", server.port(), client("righ")), Contains("refused this rank's job token"));
  // The server goes on serving the right token.
  TCPStore good("127.0.0.1", server.port(), client("right"));
  good.set("k", "v");
  CHECK(good.get("k") == "v");
  CHECK(server.rejected_clients() == 2);
}

TEST_CASE("store auth: a missing token is refused within seconds", "[dist]") {
  TCPStoreServer server("127.0.0.1", 0, "right");
  auto t0 = std::chrono::steady_clock::now();
  REQUIRE_THROWS_WITH(TCPStore("127.0.0.1", server.port(), client("")),
                      Contains("refused this rank's job token (this rank has none)") && Contains("DDL_JOB_TOKEN"));
  CHECK(seconds_since(t0) < 5);
  CHECK(server.rejected_clients() == 1);
}

TEST_CASE("store auth: beyond loopback a server needs a token; on loopback it may go without", "[dist]") {
  CHECK(ddl::dist::detail::is_loopback("127.0.0.1"));
  CHECK(ddl::dist::detail::is_loopback("127.0.0.2"));
  CHECK(ddl::dist::detail::is_loopback("localhost"));
  CHECK(ddl::dist::detail::is_loopback("::1"));
  CHECK_FALSE(ddl::dist::detail::is_loopback("0.0.0.0"));
  CHECK_FALSE(ddl::dist::detail::is_loopback("::"));
  CHECK_FALSE(ddl::dist::detail::is_loopback(""));
  CHECK_FALSE(ddl::dist::detail::is_loopback("10.1.2.3"));

  // Every interface, as ddlrun's node 0 without --master-addr would bind.
  REQUIRE_THROWS_WITH(TCPStoreServer("0.0.0.0", 0), Contains("refusing to serve on 0.0.0.0:0 without a job token") &&
                                                        Contains("DDL_JOB_TOKEN=") && Contains("DDL_JOB_TOKEN_FILE") &&
                                                        Contains("127.0.0.1"));
  // Rank 0's own server (init_process_group under srun/mpirun) goes through TCPStore.
  TCPStoreOptions rank0 = client("");
  rank0.is_server = true;
  REQUIRE_THROWS_WITH(TCPStore("0.0.0.0", 0, rank0), Contains("without a job token"));
  rank0.token = "t";
  TCPStore served("0.0.0.0", 0, rank0);
  served.set("a", "1");
  CHECK(served.get("a") == "1");
  // One host: no token needed, as before.
  TCPStoreServer local("127.0.0.1", 0);
  TCPStore c("127.0.0.1", local.port(), client(""));
  c.set("a", "1");
}

TEST_CASE("store auth: a token file readable by others is refused; a private one is used", "[dist]") {
  char tmpl[] = "/tmp/ddl_token_XXXXXX";
  REQUIRE(mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl, path = dir + "/token";
  std::ofstream(path) << "from-a-file\n";
  setenv("DDL_JOB_TOKEN_FILE", path.c_str(), 1);
  REQUIRE(chmod(path.c_str(), 0644) == 0);
  REQUIRE_THROWS_WITH(read_launch_env(),
                      Contains("DDL_JOB_TOKEN_FILE '" + path + "' has mode 0644") && Contains("chmod 600 " + path));
  REQUIRE(chmod(path.c_str(), 0600) == 0);
  LaunchEnv env = read_launch_env();
  unsetenv("DDL_JOB_TOKEN_FILE");
  std::filesystem::remove_all(dir);
  CHECK(env.job_token == "from-a-file");
  TCPStoreServer server("0.0.0.0", 0, env.job_token);
  TCPStore ok("127.0.0.1", server.port(), client(env.job_token, env.token_source));
  ok.set("k", "v");
  CHECK(ok.get("k") == "v");
}

TEST_CASE("store auth: a rank of one Slurm step is refused by another step's store", "[dist]") {
  SlurmTask task;
  LaunchEnv a = task.step("0");
  LaunchEnv b = task.step("1");
  REQUIRE_FALSE(a.job_token.empty());
  CHECK(a.job_token != b.job_token);
  CHECK(a.master_port != b.master_port);
  // Step A's store (on a free port here; the derived ones may be taken on a test machine).
  TCPStoreServer step_a("127.0.0.1", 0, a.job_token);
  auto t0 = std::chrono::steady_clock::now();
  REQUIRE_THROWS_WITH(TCPStore("127.0.0.1", step_a.port(), client(b.job_token, b.token_source)),
                      Contains("refused this rank's job token") && Contains("Slurm job 4242 step 1"));
  CHECK(seconds_since(t0) < 5);
  // Step A's own ranks join.
  TCPStore a_rank("127.0.0.1", step_a.port(), client(task.step("0").job_token));
  a_rank.set("k", "v");
  CHECK(step_a.rejected_clients() == 1);
}
