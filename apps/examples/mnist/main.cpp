// ddl's version of pytorch/examples' cpp/mnist: the convolutional network of net.h
// trained with SGD (lr 0.01, momentum 0.5) on Fashion-MNIST (Debian's
// dataset-fashion-mnist; MNIST itself has the same file layout), then tested after each
// epoch. The normalisation constants are the original's (MNIST's), so the two programs
// see the same inputs. Flags shorten the run for tests:
//   build/apps/examples/mnist --epochs 1 --train-samples 6000
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <numeric>

#include "apps/examples/mnist/net.h"
#include <ddl/ddl.h>

using namespace ddl;

namespace {

constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// The first `n` examples of `ds` (all of them when n <= 0).
std::shared_ptr<const data::Dataset> first(std::shared_ptr<const data::Dataset> ds, int64_t n) {
  if (n <= 0 || n >= ds->size()) return ds;
  std::vector<int64_t> idx(static_cast<size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  return std::make_shared<data::Subset>(ds, idx);
}

void train(int64_t epoch, examples::Net& model, const data::DataLoader& loader, optim::Optimizer& optimizer,
           int64_t log_interval) {
  model.train();
  int64_t batch_idx = 0, seen = 0;
  for (const data::Batch& batch : loader) {
    optimizer.zero_grad();
    const Variable loss = nll_loss(model.forward(Variable(batch.data)), batch.target);
    DDL_CHECK(std::isfinite(loss.item()), "mnist: the loss is not finite at batch ", batch_idx);
    loss.backward();
    optimizer.step();
    seen += batch.data.size(0);
    if (batch_idx++ % log_interval == 0)
      std::printf("Train Epoch: %lld [%5lld/%5lld] Loss: %.4f\n", (long long)epoch, (long long)seen,
                  (long long)loader.dataset().size(), loss.item());
  }
}

// Prints and returns the test accuracy (a fraction, as the original prints it).
double test(examples::Net& model, const data::DataLoader& loader) {
  NoGradGuard no_grad;
  model.eval();
  double loss_sum = 0;
  int64_t correct = 0;
  for (const data::Batch& batch : loader) {
    const Variable output = model.forward(Variable(batch.data));
    loss_sum += nll_loss(output, batch.target, Reduction::Sum).item();
    correct += static_cast<int64_t>(sum(eq(output.argmax(1), batch.target).to(DType::Int64)).item());
  }
  const double n = static_cast<double>(loader.dataset().size());
  std::printf("Test set: Average loss: %.4f | Accuracy: %.3f\n", loss_sum / n, double(correct) / n);
  return double(correct) / n;
}

}  // namespace

int main(int argc, char** argv) try {
  CLI::App app{"ddl's version of pytorch/examples cpp/mnist (on Fashion-MNIST)"};
  std::string root = kFashionMnistDir;
  int64_t epochs = 10, train_samples = 0, test_samples = 0, batch_size = 64, test_batch_size = 1000;
  int64_t log_interval = 10, threads = 0;
  app.add_option("--data", root, "folder with the IDX files (plain or .gz)");
  app.add_option("--epochs", epochs, "epochs to train")->check(CLI::PositiveNumber);
  app.add_option("--train-samples", train_samples, "train on the first N images only (0: all 60,000)");
  app.add_option("--test-samples", test_samples, "test on the first N images only (0: all 10,000)");
  app.add_option("--batch-size", batch_size, "training batch size")->check(CLI::PositiveNumber);
  app.add_option("--log-interval", log_interval, "batches between loss lines")->check(CLI::PositiveNumber);
  app.add_option("--threads", threads, "CPU threads (0: ddl's default)");
  CLI11_PARSE(app, argc, argv);
  if (threads > 0) set_num_threads(static_cast<int>(threads));

  manual_seed(1);
  const auto start = std::chrono::steady_clock::now();
  const data::Transform transform = data::Compose({data::ToTensor(), data::Normalize({0.1307}, {0.3081})});
  const auto train_set = first(std::make_shared<data::MNIST>(root, true, transform), train_samples);
  const auto test_set = first(std::make_shared<data::MNIST>(root, false, transform), test_samples);
  const auto train_opts = data::DataLoaderOptions(batch_size);
  const auto test_opts = data::DataLoaderOptions(test_batch_size);
  const auto sgd_opts = optim::SGDOptions(0.01).momentum(0.5);
  const data::DataLoader train_loader(train_set, train_opts), test_loader(test_set, test_opts);

  examples::Net model;
  optim::SGD optimizer(model.parameters(), sgd_opts);

  for (int64_t epoch = 1; epoch <= epochs; ++epoch) {
    train(epoch, model, train_loader, optimizer, log_interval);
    test(model, test_loader);
  }
  std::printf("time %.2f s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "mnist: error: %s\n", e.what());
  return 1;
}
