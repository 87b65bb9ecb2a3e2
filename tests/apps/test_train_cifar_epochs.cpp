// train_cifar reshuffles every epoch, with the order DistributedSampler documents:
// torch_randperm(N, seed + epoch), PyTorch's permutation. The program trains with a learning rate too small
// to move float32 weights, so each step's logged loss is a function of its batch alone;
// this test computes every epoch's batches from that formula, evaluates them with the
// same initial model, and compares the per-step losses of --metrics. An epoch trained in
// another order (the loader's epoch never set, so every epoch repeats the first) fails.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <climits>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "apps/train_cifar/datasets.h"
#include "tests/common/skip.h"
#include <ddl/ddl.h>

using namespace ddl;
namespace fs = std::filesystem;

namespace {

// build/apps/train_cifar, found from this test's own path (build/apps/...).
std::string train_cifar_path() {
  char exe[PATH_MAX];
  const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0) return "";
  exe[len] = '\0';
  const auto p = fs::path(exe).parent_path() / "train_cifar";
  return fs::exists(p) ? p.string() : "";
}

}  // namespace

TEST_CASE("train_cifar: each epoch's batches follow the sampler's order for seed + epoch", "[apps][train_cifar]") {
  const std::string exe = train_cifar_path();
  if (exe.empty()) DDL_SKIP("train_cifar is not built in this build folder (build/apps/train_cifar)");
  apps::TrainOptions o;
  o.dataset = "synthetic";
  o.model = "mlp";
  o.train_samples = 48;
  o.test_samples = 16;
  o.batch_size = 8;
  o.seed = 5;
  const int64_t epochs = 3, steps = o.train_samples / o.batch_size;
  const fs::path dir = fs::temp_directory_path() / ("ddl_epochs_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string metrics = (dir / "m.jsonl").string();
  const std::string cmd = exe +
                          " --dataset synthetic --model mlp --train-samples 48 --test-samples 16 --batch-size 8"
                          " --seed 5 --epochs 3 --lr 1e-12 --momentum 0 --weight-decay 0 --threads 1"
                          " --loader-workers 1 --no-progress --metrics " +
                          metrics + " >" + (dir / "out.txt").string() + " 2>&1";
  const int status = std::system(cmd.c_str());
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);

  // The logged loss of every (epoch, step).
  std::map<std::pair<int64_t, int64_t>, double> logged;
  std::ifstream in(metrics);
  for (std::string line; std::getline(in, line);) {
    const auto e = nlohmann::json::parse(line);
    if (e["event"] == "step") logged[{e["epoch"].get<int64_t>(), e["step"].get<int64_t>()}] = e["loss"].get<double>();
  }
  REQUIRE(static_cast<int64_t>(logged.size()) == epochs * steps);

  // The reference: the program's data and initial model (seeded as main.cpp seeds it),
  // batches of torch_randperm(N, seed + epoch) in order.
  set_num_threads(1);
  const apps::DataSplits splits = apps::make_datasets(o);
  manual_seed(o.seed);
  const auto model = nn::make_model(o.model, splits.num_classes, splits.in_channels);
  model->train();
  std::vector<std::vector<double>> expected(epochs);
  for (int64_t epoch = 0; epoch < epochs; ++epoch) {
    const auto order = data::torch_randperm(o.train_samples, o.seed + static_cast<uint64_t>(epoch));
    for (int64_t s = 0; s < steps; ++s) {
      std::vector<Tensor> xs, ys;
      for (int64_t i = s * o.batch_size; i < (s + 1) * o.batch_size; ++i) {
        const data::Example ex = splits.train->get(order[i]);
        xs.push_back(ex.data);
        ys.push_back(ex.target);
      }
      NoGradGuard no_grad;
      const double loss = cross_entropy(model->forward(Variable(stack(xs))), stack(ys)).data().item();
      expected[epoch].push_back(loss);
      INFO("epoch " << epoch << ", step " << s);
      CHECK(logged.at({epoch, s}) == Approx(loss).epsilon(1e-5));
    }
  }
  // The check means something: the epochs' batches, and so their losses, differ.
  CHECK(expected[1] != expected[0]);
  CHECK(expected[2] != expected[1]);
  fs::remove_all(dir);
}
