// ddl-bench loader: DataLoader throughput (images/s) on CIFAR-shaped uint8 data
// held in memory (as CIFAR10 holds it) with RandomCrop(32, pad 4) + flip +
// ToTensor + Normalize, batch 64, shuffled, for 0, 1 and 2 worker threads.
// Prints one JSON line. The loader must outrun a VGG-11 train step >= 10x.
#include <chrono>
#include <cstdio>
#include <memory>

#include <ddl/data/data.h>
#include <ddl/tensor/ops.h>

int loader_bench_main(int argc, char** argv) {
  using namespace ddl;
  using namespace ddl::data;
  const int64_t n = 10000;
  Generator gen(0);
  const Tensor images = randint(0, 256, {n, 3, 32, 32}, gen, DType::Int64).to(DType::UInt8);
  const Tensor labels = randint(0, 10, {n}, gen);
  auto ds = std::make_shared<TensorDataset>(images, labels,
                                            Compose({RandomCrop(32, 32, 4), RandomHorizontalFlip(), ToTensor(),
                                                     Normalize({0.4914, 0.4822, 0.4465}, {0.2470, 0.2435, 0.2616})}));
  std::printf("{\"bench\": \"loader\", \"images\": %lld, \"batch\": 64", static_cast<long long>(n));
  for (int64_t workers : {0, 1, 2}) {
    DataLoader loader(ds, {.batch_size = 64, .shuffle = true, .num_workers = workers});
    double best = 0;
    for (int rep = 0; rep < 3; ++rep) {
      loader.set_epoch(rep);
      const auto t0 = std::chrono::steady_clock::now();
      int64_t seen = 0;
      for (const Batch& b : loader) seen += b.target.size(0);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      best = std::max(best, static_cast<double>(seen) / s);
    }
    std::printf(", \"workers_%lld_images_per_s\": %.0f", static_cast<long long>(workers), best);
  }
  std::printf("}\n");
  return 0;
}
