// sync_study: the gradient-synchronisation study of the coursework (seeds 002
// and 004). It runs the same short training once per strategy on N workers,
//   ddlrun --nproc N train_cifar --sync S --metrics DIR/S.jsonl ...
// reads every worker's metrics summary and writes DIR/study.csv and
// DIR/study.md: time per iteration, communication wait, bytes per worker,
// CPU %, peak memory, final loss and accuracy, and which strategy was fastest.
//   build/apps/sync_study --nproc 2 --dataset synthetic --out study/
// Flags after "--" go to train_cifar unchanged.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "apps/sync_study/study_table.h"

namespace fs = std::filesystem;

int main(int argc, char** argv) try {
  int nproc = 2;
  std::string out = "study", dataset = "synthetic", model = "mlp";
  std::vector<std::string> strategies = {"ddp", "allreduce", "gather-scatter", "ring", "param-server", "stepwise", "local-sgd:4"};
  int64_t epochs = 1, batch = 32, train_samples = 1024, test_samples = 256, seed = 0;
  bool shm = false;
  std::vector<std::string> extra;
  CLI::App app{"Run one short training per gradient-synchronisation strategy and compare them (study.md, study.csv)."};
  app.add_option("--nproc", nproc, "workers")->check(CLI::Range(2, 64))->capture_default_str();
  app.add_option("--out", out, "output directory")->capture_default_str();
  app.add_option("--dataset", dataset, "train_cifar --dataset")->capture_default_str();
  app.add_option("--model", model, "train_cifar --model")->capture_default_str();
  app.add_option("--strategies", strategies, "strategies to compare")->capture_default_str();
  app.add_option("--epochs", epochs, "epochs per run")->check(CLI::Range(int64_t{1}, int64_t{1000}))->capture_default_str();
  app.add_option("--batch-size", batch, "batch per worker")->check(CLI::Range(int64_t{1}, int64_t{1} << 20))->capture_default_str();
  app.add_option("--train-samples", train_samples, "training samples")->capture_default_str();
  app.add_option("--test-samples", test_samples, "test samples")->capture_default_str();
  app.add_option("--seed", seed, "seed (same for every strategy)")->capture_default_str();
  app.add_flag("--shm", shm,
               "let all_reduce run through shared memory (faster for ddp and allreduce on one host; by default "
               "every strategy uses TCP, so they compare on one transport)");
  app.add_option("extra", extra, "more train_cifar flags, after --");
  CLI11_PARSE(app, argc, argv);

  const fs::path self = fs::canonical("/proc/self/exe").parent_path();
  fs::create_directories(out);
  std::vector<ddl::apps::StudyRow> rows;
  for (const std::string& s : strategies) {
    const std::string metrics = (fs::path(out) / (s + ".jsonl")).string();
    // DDL_SHM (docs/dist.md): ring, param-server and the rest use send/recv or other
    // collectives, which always go over TCP; all_reduce would not, unless told.
    std::string cmd = std::string("DDL_SHM=") + (shm ? "1 " : "0 ") + (self / "ddlrun").string() + " --nproc " + std::to_string(nproc) + " " + (self / "train_cifar").string() +
                      " --sync " + s + " --dataset " + dataset + " --model " + model + " --epochs " + std::to_string(epochs) +
                      " --batch-size " + std::to_string(batch) + " --train-samples " + std::to_string(train_samples) +
                      " --test-samples " + std::to_string(test_samples) + " --seed " + std::to_string(seed) +
                      " --threads 1 --no-progress --metrics " + metrics;
    for (const auto& e : extra) cmd += " '" + e + "'";
    const std::string log = (fs::path(out) / (s + ".log")).string();
    std::cout << "sync_study: " << s << " ..." << std::flush;
    const int status = std::system((cmd + " > '" + log + "' 2>&1").c_str());
    if (status != 0) {
      std::cout << " failed (see " << log << ")\n";
      return 1;
    }
    rows.push_back(ddl::apps::read_study_row(s, metrics, nproc));
    std::cout << " " << rows.back().step_ms << " ms per iteration\n";
  }
  const std::string transport =
      shm ? "all_reduce went through shared memory (--shm); every other collective and send/recv over TCP loopback."
          : "Every strategy talked over TCP loopback (Gloo), all_reduce included (run with --shm for shared memory).";
  ddl::apps::write_study(out, rows, nproc, dataset, model, transport);
  std::cout << "sync_study: wrote " << (fs::path(out) / "study.md").string() << " and study.csv\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "sync_study: error: " << e.what() << "\n";
  return 1;
}
