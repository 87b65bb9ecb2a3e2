// ddl's version of pytorch/examples' cpp/distributed (dist-mnist): the network of
// mnist/net.h trained data-parallel, each rank on its share of Fashion-MNIST
// (DistributedSampler) with a per-rank batch of 64 / world, averaging every gradient by
// hand with one all_reduce per parameter, as the original does with its process group
// (dist::DistributedDataParallel does the same with buckets and overlap). Rank 0 tests at
// the end; with --save DIR every rank writes its weights to DIR/rank<r>.safetensors, so a
// test can check that the ranks ended equal. The original uses MPI; this runs under ddlrun:
//   ddlrun --nproc 2 build/apps/examples/dist_mnist --epochs 1 --train-samples 6000
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <numeric>

#include "apps/examples/mnist/net.h"
#include <ddl/ddl.h>
#include <ddl/dist/dist.h>

using namespace ddl;

int main(int argc, char** argv) try {
  CLI::App app{"ddl's version of pytorch/examples cpp/distributed (run it under ddlrun)"};
  std::string root = "/usr/share/datasets/fashion-mnist", save_dir;
  int64_t epochs = 10, train_samples = 0, test_samples = 0, total_batch_size = 64, threads = 0;
  app.add_option("--data", root, "folder with the IDX files (plain or .gz)");
  app.add_option("--epochs", epochs, "epochs to train")->check(CLI::PositiveNumber);
  app.add_option("--train-samples", train_samples, "train on the first N images only (0: all 60,000)");
  app.add_option("--test-samples", test_samples, "test on the first N images only (0: all 10,000)");
  app.add_option("--batch-size", total_batch_size, "batch size summed over the ranks")->check(CLI::PositiveNumber);
  app.add_option("--save", save_dir, "write each rank's final weights to DIR/rank<r>.safetensors");
  app.add_option("--threads", threads, "CPU threads per rank (0: ddl's default)");
  CLI11_PARSE(app, argc, argv);
  if (threads > 0) set_num_threads(static_cast<int>(threads));

  const std::shared_ptr<dist::ProcessGroup> group = dist::init_process_group("gloo");
  const int rank = dist::get_rank(), world = dist::get_world_size();
  const auto start = std::chrono::steady_clock::now();
  const data::Transform transform = data::Compose({data::ToTensor(), data::Normalize({0.1307}, {0.3081})});
  std::shared_ptr<const data::Dataset> train_set = std::make_shared<data::MNIST>(root, true, transform);
  if (train_samples > 0 && train_samples < train_set->size()) {
    std::vector<int64_t> idx(static_cast<size_t>(train_samples));
    std::iota(idx.begin(), idx.end(), 0);
    train_set = std::make_shared<data::Subset>(train_set, idx);
  }
  const auto sampler = std::make_shared<data::DistributedSampler>(train_set->size(), world, rank);
  const auto loader_opts = data::DataLoaderOptions(total_batch_size / world).sampler(sampler);
  const auto sgd_opts = optim::SGDOptions(1e-2);
  data::DataLoader loader(train_set, loader_opts);

  manual_seed(0);  // the same seed on every rank: the replicas start equal
  auto model = std::make_shared<examples::Net>();
  optim::SGD optimizer(model->parameters(), sgd_opts);

  for (int64_t epoch = 1; epoch <= epochs; ++epoch) {
    loader.set_epoch(epoch);
    model->train();
    int64_t correct = 0;
    for (const data::Batch& batch : loader) {
      model->zero_grad();
      const Variable prediction = model->forward(Variable(batch.data));
      nll_loss(prediction, batch.target).backward();
      // Average the gradients over the ranks: sum them, then divide by the world size.
      for (const Variable& p : model->parameters()) group->all_reduce(p.grad(), dist::ReduceOp::Sum);
      for (const Variable& p : model->parameters()) p.grad().div_(double(world));
      optimizer.step();
      correct += static_cast<int64_t>(sum(eq(prediction.argmax(1), batch.target).to(DType::Int64)).item());
    }
    std::printf("Accuracy in rank %d in epoch %lld - %.2f\n", rank, (long long)epoch,
                100.0 * double(correct) / double(sampler->size()));
  }

  if (!save_dir.empty()) {
    std::filesystem::create_directories(save_dir);
    nn::save_state(*model, save_dir + "/rank" + std::to_string(rank) + ".safetensors");
  }
  if (rank == 0) {  // testing only on rank 0, as the original
    NoGradGuard no_grad;
    model->eval();
    const data::MNIST test_set(root, false, transform);
    const int64_t n = test_samples > 0 ? std::min(test_samples, test_set.size()) : test_set.size();
    std::vector<Tensor> images, labels;
    for (int64_t i = 0; i < n; ++i) {
      const data::Example e = test_set.get(i);
      images.push_back(e.data), labels.push_back(e.target);
    }
    const Tensor x = stack(images, 0), y = stack(labels, 0);
    const Variable prediction = model->forward(Variable(x));
    const int64_t correct = static_cast<int64_t>(sum(eq(prediction.argmax(1), y).to(DType::Int64)).item());
    std::printf("Test loss - %.4f\nNum correct - %lld\nTest Accuracy - %.2f\n", nll_loss(prediction, y).item(),
                (long long)correct, 100.0 * double(correct) / double(n));
    std::printf("time %.2f s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  dist::destroy_process_group();
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "dist_mnist: error: %s\n", e.what());
  return 1;
}
