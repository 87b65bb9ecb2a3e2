// The multi-process harness itself (tests/common/harness.h): ranks are fresh processes of
// this program (exec, not a bare fork), their errors, exit statuses, deaths and lateness
// reach the parent, and a test case may call run_processes several times, in sections.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "tests/common/dist_fixtures.h"
#include "tests/common/harness.h"

using namespace ddl;
using test::contains;

namespace {

int set_by_the_parent = 0;  // set before run_processes in the test process only

// One line, appended atomically (O_APPEND, one short write).
void append_line(const std::string& path, const std::string& line) {
  const int fd = ::open(path.c_str(), O_CREAT | O_APPEND | O_WRONLY, 0600);
  DIST_EXPECT(fd >= 0, "open ", path);
  const std::string text = line + "\n";
  DIST_EXPECT(::write(fd, text.data(), text.size()) == ssize_t(text.size()), "write ", path);
  ::close(fd);
}

}  // namespace

TEST_CASE("harness: each rank is a fresh process of this program, child of the test process", "[dist]") {
  const std::string parent = test::from_parent("pid", [] { return std::to_string(getpid()); });
  if (!test::is_rank_process()) set_by_the_parent = 42;
  auto outs = test::run_processes(2, [&](int rank) {
    DIST_EXPECT(test::is_rank_process(), "rank ", rank);
    DIST_EXPECT(std::to_string(getppid()) == parent, "parent ", getppid(), ", test process ", parent);
    DIST_EXPECT(set_by_the_parent == 0, "the parent's memory was inherited: not a new program");
    DIST_EXPECT(std::getenv("DDL_TEST_RANK_PROCESS") == nullptr, "the harness's variable is left for children");
  });
  INFO(test::describe(outs));
  REQUIRE(test::all_ok(outs));
  CHECK(!test::is_rank_process());
}

TEST_CASE("harness: errors, exit statuses, signals and late ranks reach the parent", "[dist]") {
  const std::string long_text(200000, 'x');  // more than a pipe holds
  auto outs = test::run_processes(
      5,
      [&](int rank) {
        if (rank == 1) throw std::runtime_error("rank one failed");
        if (rank == 2) _exit(7);
        if (rank == 3) kill(getpid(), SIGKILL);
        if (rank == 4) throw std::runtime_error(long_text);
      },
      20);
  REQUIRE(outs.size() == 5);
  CHECK(outs[0].ok);
  CHECK((!outs[1].ok && outs[1].error == "rank one failed"));
  CHECK((!outs[2].ok && outs[2].error == "exit status 7"));
  CHECK((!outs[3].ok && outs[3].error == "killed by signal 9"));
  CHECK((!outs[4].ok && outs[4].error == long_text));
  auto late = test::run_processes(
      2, [](int rank) { std::this_thread::sleep_for(std::chrono::seconds(rank == 1 ? 30 : 0)); }, 1.5);
  CHECK(late[0].ok);
  CHECK((!late[1].ok && contains(late[1].error, "timed out")));
  CHECK(late[1].seconds < 5);
}

TEST_CASE("harness: several calls in one test case, inside nested sections", "[dist]") {
  static std::string made;  // one directory for every pass of this test case
  const std::string dir = test::from_parent("dir", [] {
    if (made.empty()) made = test::parent_temp_dir("made", "/tmp/ddl_harness_XXXXXX");
    return made;
  });
  auto run = [&](const std::string& what) {
    auto outs = test::run_processes(2, [&](int rank) { append_line(dir + "/log", what + " " + std::to_string(rank)); });
    INFO(what << test::describe(outs));
    REQUIRE(test::all_ok(outs));
  };
  // Catch2 runs this case three times: outer/inner 1, outer/inner 2, other.
  run("first");
  SECTION("outer") {
    run("outer");
    for (int i : {1, 2}) DYNAMIC_SECTION("inner " << i) {
        run("inner " + std::to_string(i));
      }
  }
  SECTION("other") {
    run("other");
    // Each rank function ran exactly where the test process called it, never again.
    std::map<std::string, int> count;
    std::ifstream f(dir + "/log");
    for (std::string line; std::getline(f, line);) ++count[line];
    CHECK(count == std::map<std::string, int>{{"first 0", 3},
                                              {"first 1", 3},
                                              {"outer 0", 2},
                                              {"outer 1", 2},
                                              {"inner 1 0", 1},
                                              {"inner 1 1", 1},
                                              {"inner 2 0", 1},
                                              {"inner 2 1", 1},
                                              {"other 0", 1},
                                              {"other 1", 1}});
    std::filesystem::remove_all(dir);
  }
}
