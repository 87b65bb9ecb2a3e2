// train_cifar's snapshots and resume, below the program: 16-bit model and optimizer
// state keeps its dtype and bits; a resumed run of a model with dropout equals an
// uninterrupted one bit for bit (so the random-number state is restored, not only
// weights); a NaN or out-of-range value in any tensor a snapshot holds is refused; the
// resume agreement refuses, on every rank, ranks that still disagree on the position after
// rank 0 sent its snapshot (Note [Resume agreement]); and the transfer streams in pieces and
// leaves no temporary file, whatever stops the receiver.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "tests/common/dist_fixtures.h"
#include "tests/common/harness.h"
#include "tests/common/scratch.h"
#include <ddl/ddl.h>
#include <ddl/dist/agreement.h>
#include <ddl/dist/dist.h>
#include <ddl/ft/resume.h>
#include <ddl/ft/resume_transfer.h>
#include <ddl/ft/snapshot.h>

using namespace ddl;
namespace fs = std::filesystem;

namespace {

// Parameters of both 16-bit float dtypes.
struct HalfParams : nn::Module {
  HalfParams() : nn::Module("HalfParams") {
    Generator g(4);
    register_parameter("h", randn({3, 4}, g).to(DType::Float16));
    register_parameter("b", (randn({5}, g) * 1e10).to(DType::BFloat16));
  }
};

// SGD with momentum: its momentum buffers are state the snapshot holds too.
optim::SGD make_sgd(nn::Module& m) { return optim::SGD(m.parameters(), optim::SGDOptions(0.1).momentum(0.9)); }

// Linear, dropout, linear: every training forward draws a mask from the default generator.
std::shared_ptr<nn::Sequential> make_dropout_net() {
  return std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Linear>(6, 16), std::make_shared<nn::Dropout>(0.5), std::make_shared<nn::Linear>(16, 3)});
}

// Steps [from, to) on fixed batches of 4; the data never touches the default generator.
void train_steps(nn::Module& net, optim::Optimizer& opt, int64_t from, int64_t to) {
  Generator g(9);
  const Tensor x = randn({8 * 4, 6}, g), y = randint(0, 3, {8 * 4}, g);
  net.train();
  for (int64_t s = from; s < to; ++s) {
    opt.zero_grad();
    cross_entropy(net(Variable(x.narrow(0, (s % 8) * 4, 4))), y.narrow(0, (s % 8) * 4, 4)).backward();
    opt.step();
  }
}

std::string all_bits(const nn::Module& m) {
  std::string s;
  for (const auto& [name, v] : m.named_state()) s += test::tensor_bits(v.data());
  return s;
}

}  // namespace

TEST_CASE("snapshot: float16 and bfloat16 weights and momentum keep their dtype and bits", "[apps][snapshot]") {
  const std::string dir = test::fresh_dir("ddl_resume_test", "half");
  HalfParams saved;
  optim::SGD opt = make_sgd(saved);
  for (auto& p : saved.parameters()) p.set_grad(ones_like(p.data()));
  opt.step();  // momentum buffers, in the parameters' dtypes
  ft::save_snapshot(dir + "/snap", saved, opt, {.epoch = 1, .global_step = 3, .seed = 2, .batch_size = 8});

  HalfParams loaded;
  for (auto& p : loaded.parameters()) p.data().zero_();
  optim::SGD opt2 = make_sgd(loaded);
  ft::TrainingPosition pos{.seed = 2, .batch_size = 8};
  REQUIRE(ft::load_snapshot(dir + "/snap", loaded, opt2, pos));
  CHECK(pos.global_step == 3);
  const auto a = saved.named_parameters(), b = loaded.named_parameters();
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO(a[i].first);
    CHECK(b[i].second.dtype() == a[i].second.dtype());
    CHECK(test::tensor_bits(b[i].second.data()) == test::tensor_bits(a[i].second.data()));
  }
  const auto sa = opt.state_tensors(), sb = opt2.state_tensors();
  REQUIRE(sa.size() == sb.size());
  REQUIRE(sa.size() >= 2);
  for (size_t i = 0; i < sa.size(); ++i) {
    INFO(sa[i].first);
    CHECK(sb[i].second.dtype() == sa[i].second.dtype());
    CHECK(test::tensor_bits(sb[i].second) == test::tensor_bits(sa[i].second));
  }
  fs::remove_all(dir);
}

TEST_CASE("snapshot: a resumed run with dropout equals an uninterrupted run bit for bit", "[apps][snapshot]") {
  const std::string dir = test::fresh_dir("ddl_resume_test", "dropout");
  const int64_t total = 6, cut = 3;
  // As train_cifar does: seed, build the model, train; a restart seeds and builds again.
  manual_seed(5);
  auto straight = make_dropout_net();
  optim::SGD opt_straight = make_sgd(*straight);
  train_steps(*straight, opt_straight, 0, total);

  manual_seed(5);
  auto first = make_dropout_net();
  optim::SGD opt_first = make_sgd(*first);
  train_steps(*first, opt_first, 0, cut);
  ft::save_snapshot(dir + "/snap", *first, opt_first,
                    {.global_step = cut, .seed = 5, .rng_offset = default_generator().offset(), .batch_size = 4});

  manual_seed(5);
  auto resumed = make_dropout_net();
  optim::SGD opt_resumed = make_sgd(*resumed);
  ft::TrainingPosition pos{.seed = 5, .batch_size = 4};
  REQUIRE(ft::load_snapshot(dir + "/snap", *resumed, opt_resumed, pos));
  CHECK(default_generator().offset() == pos.rng_offset);
  train_steps(*resumed, opt_resumed, pos.global_step, total);
  CHECK(all_bits(*resumed) == all_bits(*straight));
  // The check means something: without the generator's position the masks differ.
  manual_seed(5);
  auto unrestored = make_dropout_net();
  optim::SGD opt_unrestored = make_sgd(*unrestored);
  REQUIRE(ft::load_snapshot(dir + "/snap", *unrestored, opt_unrestored, pos));
  manual_seed(5);
  train_steps(*unrestored, opt_unrestored, cut, total);
  CHECK(all_bits(*unrestored) != all_bits(*straight));
  fs::remove_all(dir);
}

// Rewrites the snapshot at `path` with element 0 of tensor `name` set to `value`.
void poison(const std::string& path, const std::string& name, double value) {
  nn::TensorFile f = nn::load_safetensors(path);
  bool found = false;
  for (auto& [n, t] : f.tensors)
    if (n == name) {
      found = true;
      if (t.dtype() == DType::Float64)
        t.data<double>()[0] = value;
      else
        t.data<float>()[0] = static_cast<float>(value);
    }
  REQUIRE(found);
  nn::save_safetensors(path, f.tensors, f.metadata);
}

TEST_CASE("snapshot: non-finite optimizer state, buffers or weights are refused, naming file and tensor",
          "[apps][snapshot]") {
  const std::string dir = test::fresh_dir("ddl_resume_test", "nonfinite");
  manual_seed(5);
  auto net = make_dropout_net();
  optim::SGD opt = make_sgd(*net);
  train_steps(*net, opt, 0, 1);  // momentum buffers exist after one step
  const std::string path = dir + "/snap";
  std::vector<std::string> names;
  for (const auto& [name, t] : opt.state_tensors()) names.push_back("optimizer." + name);
  REQUIRE(!names.empty());
  names.push_back("0.weight");
  for (const std::string& name : names) {
    DYNAMIC_SECTION(name) {
      ft::save_snapshot(path, *net, opt, {.global_step = 1, .seed = 5, .batch_size = 4});
      poison(path, name, std::nan(""));
      const std::string before = all_bits(*net);
      ft::TrainingPosition pos{.seed = 5, .batch_size = 4};
      REQUIRE_THROWS_WITH(ft::load_snapshot(path, *net, opt, pos),
                          Catch::Contains(path) && Catch::Contains("'" + name + "'") && Catch::Contains("1 NaN") &&
                              Catch::Contains("--allow-nonfinite"));
      CHECK(all_bits(*net) == before);
      CHECK(pos.global_step == 0);
      REQUIRE(ft::load_snapshot(path, *net, opt, pos, /*allow_nonfinite=*/true));
      CHECK(pos.global_step == 1);
    }
  }
  fs::remove_all(dir);
}

TEST_CASE("snapshot: float64 state beyond float32's range is refused after conversion", "[apps][snapshot]") {
  const std::string dir = test::fresh_dir("ddl_resume_test", "range");
  manual_seed(5);
  auto net = make_dropout_net();
  optim::SGD opt = make_sgd(*net);
  train_steps(*net, opt, 0, 1);
  const std::string path = dir + "/snap";
  ft::save_snapshot(path, *net, opt, {.global_step = 1, .seed = 5, .batch_size = 4});
  // The same file with every tensor in float64, one momentum value 1e300 (+inf as float32).
  nn::TensorFile f = nn::load_safetensors(path);
  std::string momentum;
  for (auto& [n, t] : f.tensors) {
    t = t.to(DType::Float64);
    if (momentum.empty() && n.rfind("optimizer.", 0) == 0) {
      momentum = n;
      t.data<double>()[0] = 1e300;
    }
  }
  nn::save_safetensors(path, f.tensors, f.metadata);
  ft::TrainingPosition pos{.seed = 5, .batch_size = 4};
  REQUIRE_THROWS_WITH(ft::load_snapshot(path, *net, opt, pos),
                      Catch::Contains(path) && Catch::Contains("'" + momentum + "'") && Catch::Contains("1 infinite") &&
                          Catch::Contains("float32"));
  fs::remove_all(dir);
}

TEST_CASE("resume agreement: ranks that still differ after rank 0 sent its snapshot all stop", "[apps][resume]") {
  test::ParentStoreServer server;
  const int port = server.port();
  const std::string dir = test::parent_temp_dir("resume_dir", "/tmp/ddl_resume_agree_XXXXXX");
  for (uint64_t seed1 : {5, 6}) {
    DYNAMIC_SECTION("rank 1 runs with seed " << seed1) {
      auto outs = test::run_processes(2, [&](int rank) {
        auto pg = test::gloo_group(port, rank, 2);
        // Each rank its own "node"; only rank 0 holds a snapshot, taken with seed 5 at step 8.
        const std::string node = dir + "/seed" + std::to_string(seed1) + "_node" + std::to_string(rank);
        fs::create_directories(node);
        manual_seed(5);
        auto net = make_dropout_net();
        optim::SGD opt = make_sgd(*net);
        if (rank == 0) ft::save_snapshot(node + "/snap", *net, opt, {.global_step = 8, .seed = 5, .batch_size = 4});
        pg->barrier_async()->wait();
        // Rank 1 with seed 6 cannot load rank 0's snapshot and would start at step 0.
        ft::TrainingPosition pos{.seed = rank == 0 ? 5 : seed1, .batch_size = 4};
        std::string error;
        ft::ResumeOutcome out;
        try {
          out = ft::resume_from_snapshot(node + "/snap", *net, opt, pos, pg.get());
        } catch (const Error& e) {
          error = e.what();
        }
        if (seed1 == 5) {
          DIST_EXPECT(error.empty(), "rank ", rank, ": ", error);
          DIST_EXPECT(out.resumed && pos.global_step == 8, "rank ", rank, " resumed at step ", pos.global_step);
        } else {
          DIST_EXPECT(error.find("still differ") != std::string::npos && error.find("seed 6") != std::string::npos,
                      "rank ", rank, " resumed at step ", pos.global_step, " (resumed ", out.resumed,
                      ") instead of stopping; error: \"", error, "\"");
        }
      });
      INFO(test::describe(outs));
      REQUIRE(test::all_ok(outs));
    }
  }
  if (!test::is_rank_process()) fs::remove_all(dir);
}

namespace {
// The ddl-resume-* files in `dir`.
std::vector<std::string> resume_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind("ddl-resume-", 0) == 0) out.push_back(e.path().string());
  return out;
}

int64_t max_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}
}  // namespace

TEST_CASE("resume transfer: a large snapshot arrives whole while each rank holds one piece of it", "[apps][resume]") {
  test::ParentStoreServer server;
  const int port = server.port();
  const std::string dir = test::parent_temp_dir("transfer_dir", "/tmp/ddl_resume_transfer_XXXXXX");
  const int64_t size = 160 << 20;  // 10 pieces; the whole file held at once would show 160 MiB
  auto outs = test::run_processes(2, [&](int rank) {
    auto pg = test::gloo_group(port, rank, 2);
    const std::string src = dir + "/snap";
    if (rank == 0) {  // a pseudo-random file, written in pieces
      std::ofstream f(src, std::ios::binary);
      std::vector<uint64_t> block(1 << 17);
      uint64_t x = 88172645463325252ULL;
      for (int64_t done = 0; done < size; done += 1 << 20) {
        for (uint64_t& v : block) v = x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        f.write(reinterpret_cast<const char*>(block.data()), 1 << 20);
      }
      DIST_EXPECT(f.flush(), "cannot write ", src);
    }
    pg->barrier_async()->wait();
    setenv("TMPDIR", dir.c_str(), 1);
    const int64_t before = max_rss_kib();
    std::optional<ft::detail::ResumeTempFile> tmp;
    if (rank == 1) tmp.emplace();
    const std::string error = ft::detail::transfer_snapshot(*pg, src, tmp ? &*tmp : nullptr);
    const int64_t grew_mib = (max_rss_kib() - before) / 1024;
    DIST_EXPECT(error.empty(), "rank ", rank, ": ", error);
    // One 16 MiB piece and the transport's buffers; sending the file whole took 4-5x its size.
    DIST_EXPECT(grew_mib < 64, "rank ", rank, "'s peak RSS grew by ", grew_mib, " MiB for a ", size >> 20,
                " MiB transfer");
    std::printf("rank %d: peak RSS grew by %lld MiB\n", rank, static_cast<long long>(grew_mib));
    if (rank == 1) {
      std::ifstream a(src, std::ios::binary), b(tmp->path(), std::ios::binary);
      std::vector<char> x(1 << 20), y(1 << 20);
      int64_t same = 0;
      while (a.read(x.data(), x.size()) && b.read(y.data(), y.size()) && x == y) same += x.size();
      DIST_EXPECT(same == size && fs::file_size(tmp->path()) == uint64_t(size), "received ", same, " equal bytes of ",
                  size);
    }
  });
  INFO(test::describe(outs));
  REQUIRE(test::all_ok(outs));
  if (!test::is_rank_process()) {
    CHECK(resume_files(dir).empty());
    fs::remove_all(dir);
  }
}

TEST_CASE("resume transfer: a rank stopped at any phase of receiving leaves no temporary file", "[apps][resume]") {
  test::ParentStoreServer server;
  const int port = server.port();
  const std::string dir = test::parent_temp_dir("phase_dir", "/tmp/ddl_resume_phase_XXXXXX");
  for (std::string phase : {"created", "piece", "loading"})
    for (std::string how : {"SIGTERM", "exception"}) {
      DYNAMIC_SECTION(how << " at " << phase) {
        const std::string case_dir = dir + "/" + phase + "_" + how;
        fs::create_directories(case_dir + "/node0");
        fs::create_directories(case_dir + "/node1");
        auto outs = test::run_processes(2, [&](int rank) {
          auto pg = test::gloo_group(port, rank, 2);
          manual_seed(5);
          auto net = make_dropout_net();
          optim::SGD opt = make_sgd(*net);
          const std::string node = case_dir + "/node" + std::to_string(rank);
          if (rank == 0) ft::save_snapshot(node + "/snap", *net, opt, {.global_step = 8, .seed = 5, .batch_size = 4});
          setenv("TMPDIR", node.c_str(), 1);
          ::signal(SIGTERM, SIG_DFL);  // as in train_cifar, which has no handler (Catch installs one)
          ft::detail::resume_test_hook() = [&](const char* at) {
            if (rank != 1 || phase != at) return;
            if (how == "SIGTERM") ::raise(SIGTERM);
            throw Error("stopped by the test at " + phase);
          };
          ft::TrainingPosition pos{.seed = 5, .batch_size = 4};
          try {
            ft::resume_from_snapshot(node + "/snap", *net, opt, pos, pg.get());
          } catch (const Error&) {  // every rank stops when one could not load
          }
        });
        INFO(test::describe(outs));
        if (how == "SIGTERM") CHECK(outs[1].error.find("signal 15") != std::string::npos);
        if (!test::is_rank_process()) {
          CHECK(resume_files(case_dir + "/node1").empty());
          CHECK(resume_files(case_dir + "/node0").empty());
        }
      }
    }
  if (!test::is_rank_process()) fs::remove_all(dir);
}

TEST_CASE("resume transfer: the temporary files of dead processes are removed, others kept", "[apps][resume]") {
  const std::string dir = test::fresh_dir("ddl_resume_test", "stale");
  const pid_t child = fork();
  if (child == 0) _exit(0);
  REQUIRE(child > 0);
  REQUIRE(waitpid(child, nullptr, 0) == child);
  const std::string dead_old = dir + "/ddl-resume-" + std::to_string(child) + "-aaaaaa";
  const std::string dead_new = dir + "/ddl-resume-" + std::to_string(child) + "-bbbbbb";
  const std::string live_old = dir + "/ddl-resume-" + std::to_string(::getpid()) + "-cccccc";
  const std::string other = dir + "/ddl-resume-XYZ123";  // not a name this code makes
  for (const auto& p : {dead_old, dead_new, live_old, other}) std::ofstream(p) << "x";
  const auto old_time = fs::file_time_type::clock::now() - std::chrono::minutes(5);
  for (const auto& p : {dead_old, live_old, other}) fs::last_write_time(p, old_time);
  CHECK(ft::detail::remove_stale_resume_files(dir, std::chrono::seconds(60)) == 1);
  CHECK(!fs::exists(dead_old));
  CHECK(fs::exists(dead_new));  // written a moment ago: perhaps a process in another PID namespace
  CHECK(fs::exists(live_old));
  CHECK(fs::exists(other));
  // Making a temporary file cleans up the same way, in $TMPDIR.
  fs::last_write_time(dead_new, old_time);
  setenv("TMPDIR", dir.c_str(), 1);
  {
    ft::detail::ResumeTempFile tmp;
    CHECK(tmp.path().rfind(dir + "/ddl-resume-" + std::to_string(::getpid()) + "-", 0) == 0);
    CHECK(!fs::exists(dead_new));
    CHECK(fs::exists(tmp.path()));
  }
  // A signal the process ignores stays ignored while a file exists, and after.
  ::signal(SIGHUP, SIG_IGN);
  {
    ft::detail::ResumeTempFile tmp;
    struct sigaction now {};
    ::sigaction(SIGHUP, nullptr, &now);
    CHECK(now.sa_handler == SIG_IGN);
    ::raise(SIGHUP);
    CHECK(fs::exists(tmp.path()));
  }
  ::signal(SIGHUP, SIG_DFL);
  // So does any run that resumes, with or without ranks to receive from.
  const std::string dead_again = dir + "/ddl-resume-" + std::to_string(child) + "-dddddd";
  std::ofstream(dead_again) << "x";
  fs::last_write_time(dead_again, old_time);
  manual_seed(5);
  auto net = make_dropout_net();
  optim::SGD opt = make_sgd(*net);
  ft::TrainingPosition pos{.seed = 5, .batch_size = 4};
  CHECK(!ft::resume_from_snapshot(dir + "/no-such-snapshot", *net, opt, pos, nullptr).resumed);
  CHECK(!fs::exists(dead_again));
  unsetenv("TMPDIR");
  CHECK(resume_files(dir).size() == 2);  // live_old and other
  fs::remove_all(dir);
}

// Not a test: the peak RSS of sending the same file whole (read into a string, then
// dist::broadcast_bytes), as resume did before it streamed; run with "[.bench]".
TEST_CASE("resume transfer: peak RSS of sending a file whole", "[.bench]") {
  test::ParentStoreServer server;
  const int port = server.port();
  const std::string dir = test::parent_temp_dir("whole_dir", "/tmp/ddl_resume_whole_XXXXXX");
  const int64_t size = 160 << 20;
  auto outs = test::run_processes(2, [&](int rank) {
    auto pg = test::gloo_group(port, rank, 2);
    const std::string src = dir + "/snap";
    if (rank == 0) {
      std::ofstream f(src, std::ios::binary);
      std::vector<char> block(1 << 20, 'x');
      for (int64_t done = 0; done < size; done += 1 << 20) f.write(block.data(), block.size());
    }
    pg->barrier_async()->wait();
    const int64_t before = max_rss_kib();
    std::string bytes;
    if (rank == 0) {
      std::ifstream f(src, std::ios::binary);
      std::ostringstream o;
      o << f.rdbuf();
      bytes = o.str();
    }
    bytes = dist::broadcast_bytes(*pg, bytes, 0);
    if (rank == 1) std::ofstream(dir + "/copy", std::ios::binary).write(bytes.data(), bytes.size());
    std::printf("rank %d: sending %lld MiB whole, peak RSS grew by %lld MiB\n", rank,
                static_cast<long long>(size >> 20), static_cast<long long>((max_rss_kib() - before) / 1024));
  });
  if (!test::is_rank_process()) fs::remove_all(dir);
}
