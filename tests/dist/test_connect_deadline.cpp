// A rank whose master address drops SYNs gives up at its timeout (DDL_TIMEOUT), not after
// the kernel's SYN retries (~2 min a try; 404 s for a 300 s timeout before). The address is
// 10.255.255.1 routed into loopback inside a network namespace this test creates (and the
// kernel removes when the child exits): packets to it vanish. Skipped (77) without root.
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <ddl/dist/dist.h>

using namespace ddl;

namespace {

// In a child: a namespace of its own where 10.255.255.1 drops everything, then init as rank 1.
// Exit codes: 0 as expected, 77 no namespace, 1 connected (impossible), 2 wrong error, 3 too slow.
int child() {
  if (unshare(CLONE_NEWNET) != 0) return 77;
  if (std::system("ip link set lo up && ip route add 10.255.255.0/24 dev lo") != 0) return 77;
  setenv("MASTER_ADDR", "10.255.255.1", 1);
  setenv("MASTER_PORT", "29577", 1);
  setenv("RANK", "1", 1);
  setenv("WORLD_SIZE", "2", 1);
  setenv("DDL_TIMEOUT", "2", 1);
  setenv("DDL_JOB_TOKEN", "test-token", 1);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    dist::init_process_group("gloo");
    return 1;
  } catch (const Error& e) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "after %.2f s: %s\n", s, e.what());
    if (std::string(e.what()).find("cannot connect to 10.255.255.1:29577") == std::string::npos) return 2;
    return s >= 1.5 && s < 3.0 ? 0 : 3;
  }
}

}  // namespace

TEST_CASE("connect: an address that drops SYNs fails at DDL_TIMEOUT", "[dist]") {
  if (geteuid() != 0) std::exit(77);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) _exit(child());
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) std::exit(77);
  CHECK(WEXITSTATUS(status) == 0);  // see child() for the codes; its stderr shows the message
}
