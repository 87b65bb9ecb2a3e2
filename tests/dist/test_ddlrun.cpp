// ddlrun: environment and output prefixes, a crashing worker stops the others and is
// named, signals, restarts up to the limit, and a real all-reduce job. DDLRUN and
// DDL_TEST_HELPERS are set by apps/meson.build.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

using Catch::Contains;

namespace {

struct Result {
  int code = -1;
  std::string out;  // stdout and stderr together
  double seconds = 0;
};

std::string helper(const std::string& name) {
  const char* dir = std::getenv("DDL_TEST_HELPERS");
  return std::string(dir ? dir : ".") + "/ddl_helper_" + name;
}

// Runs a shell command line (with a hard 60 s limit, so a bug cannot hang CI).
Result sh(const std::string& cmd) {
  Result r;
  auto t0 = std::chrono::steady_clock::now();
  FILE* p = popen(("timeout -s KILL 60 sh -c '" + cmd + "' 2>&1").c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

std::string ddlrun() {
  const char* p = std::getenv("DDLRUN");
  return p ? p : "ddlrun";
}

}  // namespace

TEST_CASE("ddlrun: environment and rank prefixes", "[dist]") {
  Result r = sh(ddlrun() + " --nproc 3 " + helper("print_env"));
  INFO(r.out);
  REQUIRE(r.code == 0);
  for (int k = 0; k < 3; ++k) {
    std::string p = "[rank " + std::to_string(k) + "/3] ";
    CHECK_THAT(r.out, Contains(p + "RANK=" + std::to_string(k)));
    CHECK_THAT(r.out, Contains(p + "LOCAL_RANK=" + std::to_string(k)));
    CHECK_THAT(r.out, Contains(p + "WORLD_SIZE=3"));
    CHECK_THAT(r.out, Contains(p + "LOCAL_WORLD_SIZE=3"));
    CHECK_THAT(r.out, Contains(p + "MASTER_ADDR=127.0.0.1"));
    CHECK_THAT(r.out, Contains(p + "DDL_STORE_SERVED=1"));
    CHECK_THAT(r.out, Contains(p + "TOKEN_SET=1"));
    CHECK_THAT(r.out, Contains(p + "to stderr"));
  }
  CHECK_THAT(r.out, !Contains("MASTER_PORT=0"));
}

TEST_CASE("ddlrun: multi-node ranks come from --node-rank", "[dist]") {
  Result r = sh(ddlrun() + " --nproc 2 --nnodes 2 --node-rank 1 --master-port 29999 " + helper("print_env"));
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("[rank 2/4] RANK=2"));
  CHECK_THAT(r.out, Contains("[rank 3/4] LOCAL_RANK=1"));
  CHECK_THAT(r.out, Contains("[rank 3/4] MASTER_PORT=29999"));
}

TEST_CASE("ddlrun: a failing worker stops the others and is named", "[dist]") {
  Result r = sh(ddlrun() + " --nproc 3 --grace 2 " + helper("exit_code") + " 1 3");
  INFO(r.out);
  CHECK(r.code == 3);
  CHECK_THAT(r.out, Contains("rank 1 (local rank 1") && Contains("exited with status 3"));
  CHECK(r.seconds < 15);  // the sleeping ranks were stopped, not waited for
}

TEST_CASE("ddlrun: a worker killed by a signal is reported with the signal", "[dist]") {
  Result r = sh(ddlrun() + " --nproc 2 --grace 2 " + helper("exit_code") + " 0 -6");
  INFO(r.out);
  CHECK(r.code == 128 + 6);
  CHECK_THAT(r.out, Contains("rank 0") && Contains("killed by signal 6 (SIGABRT)"));
}

TEST_CASE("ddlrun: restarts the group up to --max-restarts", "[dist]") {
  // Fails on attempts 0 and 1, succeeds on attempt 2.
  Result ok = sh(ddlrun() + " --nproc 2 --grace 2 --max-restarts 2 " + helper("exit_code") + " 1 4 2");
  INFO(ok.out);
  CHECK(ok.code == 0);
  CHECK_THAT(ok.out, Contains("restarting the group (restart 2 of 2)"));
  CHECK_THAT(ok.out, Contains("[rank 0/2] attempt 2"));
  // One restart is not enough.
  Result bad = sh(ddlrun() + " --nproc 2 --grace 2 --max-restarts 1 " + helper("exit_code") + " 1 4 2");
  INFO(bad.out);
  CHECK(bad.code == 4);
  CHECK_THAT(bad.out, Contains("giving up after 2 attempts"));
}

TEST_CASE("ddlrun: SIGTERM is forwarded to the workers", "[dist]") {
  Result r = sh(ddlrun() + " --nproc 2 --grace 2 " + helper("exit_code") +
                " 9 0 & pid=$!; sleep 1; kill -TERM $pid; wait $pid; echo rc=$?");
  INFO(r.out);
  CHECK_THAT(r.out, Contains("forwarding it to the workers"));
  CHECK_THAT(r.out, Contains("rc=143"));
  CHECK(r.seconds < 15);
}

TEST_CASE("ddlrun: a real job all-reduces its ranks", "[dist]") {
  Result r = sh(ddlrun() + " --nproc 3 " + helper("allreduce_rank"));
  INFO(r.out);
  REQUIRE(r.code == 0);
  for (int k = 0; k < 3; ++k) CHECK_THAT(r.out, Contains("[rank " + std::to_string(k) + "/3] sum ok"));
}

TEST_CASE("ddlrun: bad command lines", "[dist]") {
  CHECK(sh(ddlrun() + " --nproc 2").code != 0);
  CHECK(sh(ddlrun() + " --nproc 0 true").code != 0);
  Result r = sh(ddlrun() + " --nproc 1 /nonexistent/program");
  CHECK(r.code == 127);
  CHECK_THAT(r.out, Contains("cannot execute /nonexistent/program"));
}
