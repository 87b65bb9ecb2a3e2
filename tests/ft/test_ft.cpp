// The fault-tolerance library (ft/ft.h) in one process: ft::save then ft::resume restores
// every part (weights, BatchNorm buffers, Adam's state, the position, the default
// generator, the loader's place), so a resumed run ends bit-identical to an uninterrupted
// one; a process SIGKILLed while it saves leaves the previous snapshot whole; a corrupt file
// and a non-finite tensor are refused with an error naming the file (and the tensor).
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/common/scratch.h"
#include <ddl/ddl.h>
#include <ddl/ft/ft.h>
#include <ddl/nn/safetensors.h>

using namespace ddl;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

// Every byte of the model's parameters and buffers and of the optimizer's state, by name.
std::map<std::string, std::string> state_bits(const nn::Module& m, const optim::Optimizer& opt) {
  std::map<std::string, std::string> out;
  for (const auto& [name, v] : m.named_state()) out["model." + name] = test::tensor_bits(v.data());
  for (const auto& [name, t] : opt.state_tensors()) out["optimizer." + name] = test::tensor_bits(t);
  return out;
}

// Linear, BatchNorm (running buffers), dropout (the default generator), linear.
std::shared_ptr<nn::Sequential> make_net() {
  return std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Linear>(6, 16), std::make_shared<nn::BatchNorm1d>(16), std::make_shared<nn::Dropout>(0.3),
      std::make_shared<nn::Linear>(16, 3)});
}

constexpr int64_t kSamples = 64, kBatch = 8, kEpochs = 2;
constexpr uint64_t kSeed = 11;

// A shuffled loader over fixed data: its order depends on seed and epoch only.
data::DataLoader make_loader() {
  Generator g(3);
  auto ds = std::make_shared<data::TensorDataset>(randn({kSamples, 6}, g), randint(0, 3, {kSamples}, g));
  auto sampler = std::make_shared<data::DistributedSampler>(kSamples, 1, 0, true, kSeed);
  return data::DataLoader(ds, data::DataLoaderOptions(kBatch).sampler(sampler));
}

void train_step(nn::Module& net, optim::Optimizer& opt, const data::Batch& b) {
  opt.zero_grad();
  cross_entropy(net(Variable(b.data)), b.target).backward();
  opt.step();
}

}  // namespace

TEST_CASE("ft: a run resumed from ft::save equals an uninterrupted one bit for bit", "[ft]") {
  const std::string dir = test::fresh_dir("ddl_ft_test", "roundtrip"), path = dir + "/snap.safetensors";
  const int64_t steps_per_epoch = kSamples / kBatch, cut_epoch = 1, cut_step = 3;

  // Uninterrupted: two epochs.
  manual_seed(kSeed);
  auto straight = make_net();
  optim::Adam opt_straight(straight->parameters(), optim::AdamOptions(1e-2));
  data::DataLoader loader = make_loader();
  straight->train();
  for (int64_t e = 0; e < kEpochs; ++e) {
    loader.set_epoch(e);
    for (const data::Batch& b : loader) train_step(*straight, opt_straight, b);
  }

  // Interrupted after step cut_step of epoch cut_epoch, saved through the library.
  manual_seed(kSeed);
  auto first = make_net();
  optim::Adam opt_first(first->parameters(), optim::AdamOptions(1e-2));
  ft::State saved{.model = first.get(), .optimizer = &opt_first, .position = {.seed = kSeed, .batch_size = kBatch}};
  first->train();
  for (int64_t e = 0; e <= cut_epoch; ++e) {
    loader.set_epoch(e);
    int64_t s = 0;
    for (auto b = loader.begin(); b != loader.end() && (e < cut_epoch || s < cut_step); ++b, ++s) {
      train_step(*first, opt_first, *b);
      ++saved.position.global_step;
    }
  }
  saved.position.epoch = cut_epoch, saved.position.step_in_epoch = cut_step;
  const uint64_t offset_at_save = default_generator().offset();
  ft::save(path, saved);
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);  // a run's state is its owner's

  // A restart: the same construction, the generator elsewhere, then ft::resume.
  manual_seed(kSeed);
  auto resumed = make_net();
  optim::Adam opt_resumed(resumed->parameters(), optim::AdamOptions(1e-2));
  randn({100});  // moves the default generator: resume must put it back
  ft::State state{.model = resumed.get(), .optimizer = &opt_resumed, .position = {.seed = kSeed, .batch_size = kBatch}};
  REQUIRE(ft::resume(path, state).resumed);
  SECTION("every part holds what was saved") {
    CHECK(state.position.epoch == cut_epoch);
    CHECK(state.position.step_in_epoch == cut_step);
    CHECK(state.position.global_step == steps_per_epoch * cut_epoch + cut_step);
    CHECK(state.position.seed == kSeed);
    CHECK(state.position.batch_size == kBatch);
    CHECK(default_generator().offset() == offset_at_save);
    const auto want = state_bits(*first, opt_first), got = state_bits(*resumed, opt_resumed);
    CHECK(want.size() > 8);  // weights, BatchNorm's three buffers, Adam's moments and steps
    for (const auto& [name, b] : want) {
      INFO(name);
      REQUIRE(got.count(name) == 1);
      CHECK(got.at(name) == b);
    }
    // The loader resumes at the next batch: the one the interrupted run would have taken.
    auto next = ft::resume_batches(loader, state.position);
    loader.set_epoch(cut_epoch);
    auto expected = loader.begin();
    for (int64_t s = 0; s < cut_step; ++s) ++expected;
    CHECK(test::tensor_bits(next->target) == test::tensor_bits(expected->target));
  }
  SECTION("training on ends where the uninterrupted run ended") {
    resumed->train();
    for (int64_t e = state.position.epoch; e < kEpochs; ++e) {
      ft::Position at = state.position;
      if (e != state.position.epoch) at = {.epoch = e};
      for (auto b = ft::resume_batches(loader, at); b != loader.end(); ++b) train_step(*resumed, opt_resumed, *b);
    }
    CHECK(state_bits(*resumed, opt_resumed) == state_bits(*straight, opt_straight));
  }
  SECTION("another seed or batch size is refused, naming the file") {
    auto other = make_net();
    optim::Adam opt_other(other->parameters(), optim::AdamOptions(1e-2));
    ft::State wrong{
        .model = other.get(), .optimizer = &opt_other, .position = {.seed = kSeed + 1, .batch_size = kBatch}};
    CHECK_THROWS_WITH(ft::resume(path, wrong), Contains(path) && Contains("seed"));
    wrong.position = {.seed = kSeed, .batch_size = kBatch * 2};
    CHECK_THROWS_WITH(ft::resume(path, wrong), Contains(path) && Contains("--batch-size"));
  }
  fs::remove_all(dir);
}

TEST_CASE("ft: no snapshot means a fresh start; a state without model or optimizer is refused", "[ft]") {
  const std::string dir = test::fresh_dir("ddl_ft_test", "none");
  auto net = make_net();
  optim::SGD opt(net->parameters(), optim::SGDOptions(0.1));
  ft::State state{.model = net.get(), .optimizer = &opt, .position = {.seed = 1}};
  CHECK_FALSE(ft::resume(dir + "/absent", state).resumed);
  CHECK(state.position.global_step == 0);
  ft::State empty;
  CHECK_THROWS_WITH(ft::save(dir + "/x", empty), Contains("ft::save") && Contains("model"));
  CHECK_THROWS_WITH(ft::resume(dir + "/x", empty), Contains("ft::resume"));
  fs::remove_all(dir);
}

TEST_CASE("ft: a corrupt snapshot or a non-finite tensor is refused, naming file and tensor", "[ft]") {
  const std::string dir = test::fresh_dir("ddl_ft_test", "corrupt"), path = dir + "/snap";
  manual_seed(1);
  auto net = make_net();
  optim::SGD opt(net->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  ft::State state{.model = net.get(), .optimizer = &opt, .position = {.global_step = 4, .seed = 1, .batch_size = 2}};
  ft::save(path, state);
  const auto size = fs::file_size(path);
  auto into = make_net();  // what a restart loads into
  optim::SGD into_opt(into->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  auto fresh = [&] {
    return ft::State{.model = into.get(), .optimizer = &into_opt, .position = {.seed = 1, .batch_size = 2}};
  };

  SECTION("cut short") {
    fs::resize_file(path, size - 5);
    ft::State s = fresh();
    CHECK_THROWS_WITH(ft::resume(path, s), Contains(path));
  }
  SECTION("its header garbled") {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(12);
    f.write("\x01\x02\x03\x04", 4);
    f.close();
    ft::State s = fresh();
    CHECK_THROWS_WITH(ft::resume(path, s), Contains(path));
  }
  SECTION("a NaN in a weight, an infinity in a BatchNorm buffer") {
    for (const char* name : {"0.weight", "1.running_var"}) {
      ft::save(path, state);
      nn::TensorFile f = nn::load_safetensors(path);
      for (auto& [n, t] : f.tensors)
        if (n == name) t.data<float>()[0] = std::string(name) == "0.weight" ? NAN : INFINITY;
      nn::save_safetensors(path, f.tensors, f.metadata);
      ft::State s = fresh();
      const std::string before = test::tensor_bits(into->named_state().front().second.data());
      CHECK_THROWS_WITH(ft::resume(path, s), Contains(path) && Contains(std::string("'") + name + "'"));
      CHECK(test::tensor_bits(into->named_state().front().second.data()) ==
            before);  // refused before anything was loaded
      s = fresh();
      CHECK(ft::resume(path, s, nullptr, {.allow_nonfinite = true}).resumed);
    }
  }
  fs::remove_all(dir);
}

TEST_CASE("ft: SIGKILL while ft::save writes leaves the previous snapshot whole", "[ft]") {
  const std::string dir = test::fresh_dir("ddl_ft_test", "kill"), path = dir + "/snap";
  // ~8 MB of weights, so a save takes long enough to be caught in the middle.
  auto big = std::make_shared<nn::Linear>(1024, 2048);
  optim::SGD opt(big->parameters(), optim::SGDOptions(0.1));
  ft::State state{.model = big.get(), .optimizer = &opt, .position = {.seed = 1}};
  // Snapshot k holds weights all equal to k and global step k: a torn file would mix them.
  auto fill = [&](int64_t k) {
    for (auto& p : big->parameters()) p.data().fill_(double(k));
    state.position.global_step = k;
  };
  fill(1);
  ft::save(path, state);
  bool caught_mid_save = false;
  for (int attempt = 0; attempt < 5 && !caught_mid_save; ++attempt) {
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      set_num_threads(1);  // no OpenMP pool in a forked child
      for (int64_t k = 2;; ++k) {
        fill(k);
        ft::save(path, state);
      }
    }
    // Kill it while one of its temporary files exists: mid-save.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!caught_mid_save && std::chrono::steady_clock::now() < deadline) {
      for (const auto& e : fs::directory_iterator(dir))
        if (e.path().filename().string().rfind(".snap.tmp.", 0) == 0) caught_mid_save = true;
      if (!caught_mid_save) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    REQUIRE(WIFSIGNALED(status));
  }
  REQUIRE(caught_mid_save);
  auto loaded = std::make_shared<nn::Linear>(1024, 2048);
  optim::SGD opt2(loaded->parameters(), optim::SGDOptions(0.1));
  ft::State back{.model = loaded.get(), .optimizer = &opt2, .position = {.seed = 1}};
  REQUIRE(ft::resume(path, back).resumed);  // whole: the last completed save's
  const int64_t k = back.position.global_step;
  CHECK(k >= 1);
  for (const auto& p : loaded->parameters()) {
    CHECK(p.data().max().item() == double(k));
    CHECK(p.data().min().item() == double(k));
  }
  // The dead writer's temporary file does not stop the next save.
  fill(100);
  ft::save(path, state);
  REQUIRE(ft::resume(path, back).resumed);
  CHECK(back.position.global_step == 100);
  fs::remove_all(dir);
}
