// ddlrun: environment and output prefixes (--all-ranks; the default console is
// tests/apps/test_ddlrun_output.sh's), a crashing worker stops the others and is named,
// signals, restarts up to the limit, a real all-reduce job on one "node" and on two (two
// launchers on localhost, sharing the token node 0 made), a node with the wrong token, and
// multi-node command lines without --master-addr.
// DDLRUN and DDL_TEST_HELPERS are set by apps/meson.build.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <ddl/dist/store/socket.h>

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
  Result r = sh(ddlrun() + " --nproc 3 --all-ranks " + helper("print_env"));
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
    CHECK_THAT(r.out, Contains(p + "DDL_PROGRESS=0"));  // no terminal here
  }
  CHECK_THAT(r.out, !Contains("MASTER_PORT=0"));
}

TEST_CASE("ddlrun: multi-node ranks come from --node-rank", "[dist]") {
  // Nodes meet before their workers start (apps/ddlrun/node_agreement.h): node 0 runs too.
  const std::string port = std::to_string(ddl::dist::detail::find_free_port());
  const std::string common = " --nproc 2 --nnodes 2 --master-addr 127.0.0.1 --master-port " + port + " ";
  const std::string args = common + "--node-rank 1 --all-ranks ";
  Result r = sh("export DDL_JOB_TOKEN=node0s; " + ddlrun() + common + "--node-rank 0 " + helper("print_env") +
                " >/dev/null 2>&1 & " + ddlrun() + args + helper("print_env") + "; b=$?; wait; exit $b");
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("[rank 2/4] TOKEN_SET=1"));
  // Without the token node 0 made, node 1 starts nothing.
  Result no_token = sh("unset DDL_JOB_TOKEN DDL_JOB_TOKEN_FILE; " + ddlrun() + args + helper("print_env"));
  INFO(no_token.out);
  CHECK(no_token.code == 2);
  CHECK_THAT(no_token.out, Contains("node 1 of 2 needs the job token that node 0") && Contains("DDL_JOB_TOKEN"));
  CHECK_THAT(no_token.out, !Contains("[rank"));
  CHECK_THAT(r.out, Contains("[rank 2/4] RANK=2"));
  CHECK_THAT(r.out, Contains("[rank 3/4] LOCAL_RANK=1"));
  CHECK_THAT(r.out, Contains("[rank 3/4] MASTER_PORT=" + port));
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
  CHECK_THAT(ok.out, Contains("\nattempt 2\n"));  // rank 0's line, as it printed it
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

TEST_CASE("ddlrun: SIGINT is forwarded to the workers", "[dist]") {
  Result r = sh(ddlrun() + " --nproc 2 --grace 5 " + helper("exit_code") +
                " 9 0 & pid=$!; sleep 1; kill -INT $pid; wait $pid; echo rc=$?");
  INFO(r.out);
  CHECK_THAT(r.out, Contains("got SIGINT, forwarding it to the workers"));
  CHECK_THAT(r.out, Contains("rc=130"));
  CHECK_THAT(r.out, !Contains("sending SIGKILL"));  // the workers stopped on SIGINT itself
  CHECK(r.seconds < 15);
}

TEST_CASE("ddlrun: two launchers on localhost form one job of two nodes", "[dist]") {
  const std::string port = std::to_string(ddl::dist::detail::find_free_port());
  // Node 0 with or without --master-addr (without it, its store listens on every interface).
  const std::string node0_addr = GENERATE(std::string(" --master-addr 127.0.0.1"), std::string(""));
  const std::string common = " --nproc 2 --nnodes 2 --all-ranks --master-port " + port;
  // As a user would: start node 0 with no token, copy the command line it prints for node 1
  // (filling in node 0's address when it had none) and run that.
  Result r = sh("unset DDL_JOB_TOKEN DDL_JOB_TOKEN_FILE; out=$(mktemp); " + ddlrun() + common + " --node-rank 0" +
                node0_addr + " " + helper("allreduce_rank") +
                " >$out 2>&1 & a=$!; "
                "for i in $(seq 200); do line=$(grep -m1 \"^  DDL_JOB_TOKEN=\" $out) && break; sleep 0.05; done; "
                "echo \"node 1 runs: $line\"; "
                "eval \"$(echo \"$line\" | sed s/ADDRESS_OF_NODE_0/127.0.0.1/)\"; b=$?; "
                "wait $a; echo rc0=$? rc1=$b; cat $out; rm -f $out");
  INFO(r.out);
  CHECK_THAT(r.out, Contains("rc0=0 rc1=0"));
  CHECK_THAT(r.out, Contains("made this job's token"));
  CHECK_THAT(r.out, Contains("node 1 runs:   DDL_JOB_TOKEN=") && Contains("--node-rank 1"));
  // Every worker of both nodes is in one group of 4: each saw the sum 0 + 1 + 2 + 3.
  for (int k = 0; k < 4; ++k) CHECK_THAT(r.out, Contains("[rank " + std::to_string(k) + "/4] sum ok"));
  if (node0_addr.empty())
    CHECK_THAT(r.out,
               Contains("warning") && Contains("every interface") && Contains("--master-addr ADDRESS_OF_NODE_0"));
}

TEST_CASE("ddlrun: a node with the wrong job token is refused within seconds", "[dist]") {
  const std::string common = " --nproc 1 --nnodes 2 --master-addr 127.0.0.1 --grace 1 --master-port " +
                             std::to_string(ddl::dist::detail::find_free_port());
  Result r = sh("DDL_JOB_TOKEN=right " + ddlrun() + common + " --node-rank 0 " + helper("allreduce_rank") +
                " & a=$!; s=$(date +%s%N); DDL_JOB_TOKEN=wrong " + ddlrun() + common + " --node-rank 1 " +
                helper("allreduce_rank") + "; b=$?; e=$(date +%s%N); echo rc1=$b ms=$(( (e - s) / 1000000 )); " +
                "kill $a; wait $a");
  INFO(r.out);
  CHECK_THAT(r.out, !Contains("rc1=0"));
  // Node 1's launcher meets node 0's store first, so it is refused before any worker starts.
  CHECK_THAT(r.out, Contains("ddlrun: node 1 of 2") && Contains("refused this rank's job token (from DDL_JOB_TOKEN)"));
  const size_t at = r.out.find("ms=");
  REQUIRE(at != std::string::npos);
  CHECK(std::stoi(r.out.substr(at + 3)) < 5000);
}

TEST_CASE("ddlrun: a node that cannot start stops the other nodes at once, with its reason", "[dist]") {
  const std::string common = " --nproc 1 --nnodes 2 --master-addr 127.0.0.1 --grace 1 --all-ranks --master-port " +
                             std::to_string(ddl::dist::detail::find_free_port());
  // Node 0's rank fails at once (no such interface); node 1 starts a second later, after
  // that, and must still learn why from node 0's store (which its launcher keeps up).
  Result r = sh("export DDL_JOB_TOKEN=t; DDL_GLOO_IFACE=nosuchif0 " + ddlrun() + common + " --node-rank 0 " +
                helper("allreduce_rank") + " & a=$!; sleep 1; s=$(date +%s%N); " + ddlrun() + common +
                " --node-rank 1 " + helper("allreduce_rank") + "; b=$?; e=$(date +%s%N); wait $a; " +
                "echo rc0=$? rc1=$b ms=$(( (e - s) / 1000000 ))");
  INFO(r.out);
  CHECK_THAT(r.out, !Contains("rc0=0") && !Contains("rc1=0"));
  CHECK_THAT(r.out, Contains("[rank 0/2] ") && Contains("'nosuchif0'") && Contains("does not exist"));
  CHECK_THAT(r.out, Contains("[rank 1/2] ") && Contains("another rank could not start"));
  const size_t at = r.out.find("ms=");
  REQUIRE(at != std::string::npos);
  CHECK(std::stoi(r.out.substr(at + 3)) < 10000);
}

TEST_CASE("ddlrun: several nodes without --master-addr", "[dist]") {
  const std::string args =
      " --nproc 1 --nnodes 2 --all-ranks --master-port " + std::to_string(ddl::dist::detail::find_free_port());
  // Elsewhere than node 0, 127.0.0.1 cannot be the store: a clear error, no workers.
  Result other = sh(ddlrun() + args + " --node-rank 1 " + helper("print_env"));
  INFO(other.out);
  CHECK(other.code == 2);
  CHECK_THAT(other.out, Contains("node 1 of 2 needs --master-addr"));
  CHECK_THAT(other.out, !Contains("[rank"));
  // With --rank0-store, rank 0 would serve the store on 127.0.0.1 only: an error too.
  Result rank0 = sh(ddlrun() + args + " --node-rank 0 --rank0-store " + helper("print_env"));
  INFO(rank0.out);
  CHECK(rank0.code == 2);
  CHECK_THAT(rank0.out, Contains("needs --master-addr"));
  // Node 0 serves the store itself: a warning, and its workers reach it locally. Node 1
  // starts with the token node 0 made and printed (the nodes meet before workers start).
  Result node0 = sh(ddlrun() + args + " --node-rank 0 " + helper("print_env") +
                    " >$$.node0 2>&1 & a=$!; for i in $(seq 100); do grep -q DDL_JOB_TOKEN= $$.node0 && break; " +
                    "sleep 0.1; done; DDL_JOB_TOKEN=$(grep -o \"DDL_JOB_TOKEN=[0-9a-f]*\" $$.node0 | head -1 | " +
                    "cut -d= -f2) " + ddlrun() + args + " --node-rank 1 --master-addr 127.0.0.1 " +
                    helper("print_env") + " >/dev/null 2>&1; wait $a; rc=$?; cat $$.node0; rm -f $$.node0; exit $rc");
  INFO(node0.out);
  CHECK(node0.code == 0);
  CHECK_THAT(node0.out, Contains("ddlrun: warning: --nnodes 2 without --master-addr"));
  CHECK_THAT(node0.out, Contains("made this job's token"));
  CHECK_THAT(node0.out, Contains("[rank 0/2] MASTER_ADDR=127.0.0.1"));
}

TEST_CASE("ddlrun: a real job all-reduces its ranks", "[dist]") {
  Result r = sh(ddlrun() + " --nproc 3 --all-ranks " + helper("allreduce_rank"));
  INFO(r.out);
  REQUIRE(r.code == 0);
  for (int k = 0; k < 3; ++k) CHECK_THAT(r.out, Contains("[rank " + std::to_string(k) + "/3] sum ok"));
}

TEST_CASE("ddlrun: bad command lines", "[dist]") {
  // Every flag error is a usage error, status 2 (CLI11's own codes, e.g. 105, never leak out).
  for (const char* args :
       {" --nproc 2", " --nproc 0 true", " --nproc x true", " --nproc", " --nproc 1 --master-port 70000 true",
        " --nproc 1 --timeout -1 true", " --hosts 0 true", " --nproc 1 --grace true"}) {
    Result bad = sh(ddlrun() + args);
    INFO("ddlrun" << args << "\n" << bad.out);
    CHECK(bad.code == 2);
  }
  CHECK(sh(ddlrun() + " --help").code == 0);
  Result r = sh(ddlrun() + " --nproc 1 /nonexistent/program");
  CHECK(r.code == 127);
  CHECK_THAT(r.out, Contains("cannot execute /nonexistent/program"));
  // Link rates are checked before anything is built (exit 2), overflowing ones included.
  for (const char* rate : {"99999999999gbit", "10mbps", "1kbit"}) {
    Result bad = sh(ddlrun() + " --hosts 2 --link " + rate + " true");
    INFO(bad.out);
    CHECK(bad.code == 2);
    CHECK_THAT(bad.out, Contains("link rate"));
  }
}
