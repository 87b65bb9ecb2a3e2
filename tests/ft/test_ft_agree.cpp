// ft::resume's agreement across real processes (ddlrun --nproc 2 running ft_agree_rank):
// ranks that hold the same snapshot resume, a rank without one receives rank 0's, and a
// rank with another run's snapshot makes every rank fail with an error naming it and its file.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

namespace {

struct Result {
  int code = -1;
  std::string out;
};

Result sh(const std::string& cmd) {  // with a hard limit, so a bug cannot hang CI
  Result r;
  FILE* p = popen(("timeout -s KILL 60 " + cmd + " 2>&1").c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

TEST_CASE("ft: ranks agree on the snapshot to resume, or all fail naming the rank that differs", "[ft][dist]") {
  const std::string ddlrun = env("DDLRUN"), rank_program = env("FT_AGREE_RANK");
  REQUIRE(!ddlrun.empty());
  REQUIRE(!rank_program.empty());
  for (const std::string which : {"same", "missing", "disagree"}) {
    DYNAMIC_SECTION(which) {
      const fs::path dir = fs::temp_directory_path() / ("ddl_ft_agree_" + std::to_string(::getpid()) + "_" + which);
      fs::remove_all(dir);
      fs::create_directories(dir);
      const Result r = sh(ddlrun + " --nproc 2 --all-ranks " + rank_program + " " + which + " " + dir.string());
      INFO(r.out);
      CHECK(r.code == 0);
      for (int rank : {0, 1}) CHECK_THAT(r.out, Contains("rank " + std::to_string(rank) + ": ok"));
      fs::remove_all(dir);
    }
  }
}
