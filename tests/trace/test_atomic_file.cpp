// Files ddl writes cannot be redirected by another local user (trace/atomic_file.h): a
// symlink planted at the temporary name a writer used to choose (PATH.tmp, PATH.tmp.PID,
// PATH.probe-PID) or at the final path never makes ddl write into the file it points to;
// a write that fails (directory gone) leaves the old file whole and no temporary file
// behind; a log opened to append refuses symlinks and FIFOs at once. A full disk and links
// another user plants are tests/apps/test_file_hijack.sh's (root).
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/common/error_of.h"
#include <ddl/ddl.h>
#include <ddl/dist/trace_merge.h>
#include <ddl/report/html_report.h>
#include <ddl/trace/atomic_file.h>

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using namespace ddl;
using ddl::test::error_of;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("ddl-atomic-" + std::to_string(::getpid()));
  fs::path victim = dir / "victim";  // what an attacker wants overwritten
  Scratch() {
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::permissions(dir, fs::perms::all);  // 0777 and not sticky: a shared checkpoint folder
    std::ofstream(victim) << "precious";
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  // Plants symlinks to the victim at every name `path`'s writers used to choose.
  void plant(const fs::path& path) const {
    const std::string p = path.string(), pid = std::to_string(::getpid());
    for (const std::string& name : {p + ".tmp", p + ".tmp." + pid, p + ".probe-" + pid})
      fs::create_symlink(victim, name);
  }
  // Files in dir other than those named, and the planted links: a leftover temporary file.
  std::vector<std::string> leftovers(std::initializer_list<std::string> expected) const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) {
      const std::string name = e.path().filename().string();
      if (e.is_symlink() || std::find(expected.begin(), expected.end(), name) != expected.end()) continue;
      out.push_back(name);
    }
    return out;
  }
};

}  // namespace

TEST_CASE("atomic file: writes whole files with the mode asked, less the umask", "[files]") {
  Scratch s;
  const fs::path path = s.dir / "out.txt";
  files::write_atomically(path.string(), "hello\n", "test", 0640);
  REQUIRE(slurp(path) == "hello\n");
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  REQUIRE((st.st_mode & 0777) == (0640 & ~mask));
  REQUIRE(s.leftovers({"out.txt", "victim"}).empty());

  files::AtomicFile f(path.string(), "test");
  f.stream() << "streamed " << 42;
  REQUIRE(slurp(path) == "hello\n");  // the old file stays whole until commit
  f.commit();
  REQUIRE(slurp(path) == "streamed 42");
}

TEST_CASE("atomic file: planted symlinks are replaced, never followed", "[files]") {
  Scratch s;
  const fs::path snap = s.dir / "snap.safetensors", report = s.dir / "report.html", trace = s.dir / "trace.json";
  s.plant(snap);
  s.plant(report);
  s.plant(trace);
  fs::create_symlink(s.victim, s.dir / "final.txt");  // at the final path itself

  nn::save_safetensors(snap.string(), {{"w", ones({3})}});
  report::HtmlReport::check_writable(report.string());
  report::HtmlReport r("t");
  r.write(report.string());
  dist::start_trace(trace.string());
  dist::write_trace(trace.string());
  files::write_atomically((s.dir / "final.txt").string(), "mine", "test");

  REQUIRE(slurp(s.victim) == "precious");
  REQUIRE(fs::is_regular_file(fs::symlink_status(snap)));
  REQUIRE(nn::load_safetensors(snap.string()).tensors.at(0).second.sum().item() == 3.0);
  REQUIRE(fs::is_regular_file(fs::symlink_status(report)));
  REQUIRE(fs::is_regular_file(fs::symlink_status(s.dir / "final.txt")));
  REQUIRE(fs::is_regular_file(fs::symlink_status(trace)));
  REQUIRE(slurp(trace).find("traceEvents") != std::string::npos);
  REQUIRE(s.leftovers({"snap.safetensors", "report.html", "trace.json", "final.txt", "victim"}).empty());
}

TEST_CASE("atomic file: a writer that fails or is abandoned leaves the old file and nothing else", "[files]") {
  Scratch s;
  const fs::path path = s.dir / "keep.txt";
  files::write_atomically(path.string(), "old", "test");
  {
    files::AtomicFile abandoned(path.string(), "test");
    abandoned.write("half");
  }
  REQUIRE(slurp(path) == "old");
  REQUIRE(s.leftovers({"keep.txt", "victim"}).empty());

  REQUIRE_THAT(error_of([&] { files::write_atomically((s.dir / "no/such/dir/x").string(), "x", "save_thing"); }),
               Contains("save_thing: cannot create a file beside '") && Contains("no/such/dir/x"));

  // A write the system refuses half-way (as on a full disk): here a file-size limit of 64 KiB,
  // which needs no root (write(2) fails with EFBIG once SIGXFSZ is ignored).
  struct rlimit old_limit {};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old_limit) == 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old_limit;
  small.rlim_cur = 64 << 10;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  const std::string big_error =
      error_of([&] { files::write_atomically(path.string(), std::string(1 << 20, 'x'), "save_thing"); });
  const std::string tensor_error = error_of([&] { nn::save_safetensors(path.string(), {{"w", ones({1 << 18})}}); });
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  REQUIRE_THAT(big_error, Contains("save_thing: writing '") && Contains("File too large"));
  REQUIRE_THAT(tensor_error, Contains("save_safetensors: writing '") && Contains("File too large"));
  REQUIRE(slurp(path) == "old");
  REQUIRE(s.leftovers({"keep.txt", "victim"}).empty());
}

TEST_CASE("atomic file: logs refuse links others could plant and FIFOs nobody reads, at once", "[files]") {
  Scratch s;
  const fs::path link = s.dir / "metrics.jsonl", fifo = s.dir / "fifo";
  fs::create_symlink(s.victim, link);
  REQUIRE(::mkfifo(fifo.c_str(), 0666) == 0);
  // Even this user's own link: in a folder others can write, they could swap it before the open.
  REQUIRE_THAT(
      error_of([&] { files::open_for_writing(link.string(), O_APPEND | O_CREAT, "metrics"); }),
      Contains("metrics: '") && Contains("is a symbolic link (made by user") && Contains("other users can write"));
  REQUIRE_THAT(error_of([&] { files::open_for_writing(fifo.string(), O_APPEND | O_CREAT, "metrics"); }),
               Contains("is a FIFO that nobody reads"));
  const int fd = files::open_for_writing((s.dir / "ok.log").string(), O_APPEND | O_CREAT, "metrics");
  REQUIRE(::write(fd, "x", 1) == 1);
  ::close(fd);
  REQUIRE(slurp(s.victim) == "precious");

  // A link in a directory only its owner can write is the user's own choice: followed,
  // as /dev/stdout (root's link in root's /dev) is.
  const fs::path own = s.dir / "private";
  fs::create_directories(own);
  fs::permissions(own, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec);
  fs::create_symlink(s.dir / "target.log", own / "log");
  const int fd2 = files::open_for_writing((own / "log").string(), O_CREAT | O_TRUNC, "metrics");
  REQUIRE(::write(fd2, "y", 1) == 1);
  ::close(fd2);
  REQUIRE(slurp(s.dir / "target.log") == "y");
  const int out = files::open_for_writing("/dev/stdout", O_APPEND, "metrics");
  ::close(out);
}
